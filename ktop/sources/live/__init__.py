"""The live cluster source: list+watch of the API and metrics scrapes, at a known cost."""
