"""Pure analysis: turns snapshots into findings with stable codes."""
