"""ktop's widgets: one per module."""
