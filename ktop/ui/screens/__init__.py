"""ktop's screens: overview, one drill-down per area, findings, help."""
