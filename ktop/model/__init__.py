"""Pure model: events, metric math, per-area state and immutable snapshots.

Nothing here does I/O or imports Textual.
"""
