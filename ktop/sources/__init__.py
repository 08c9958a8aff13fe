"""Sources: everything that reads the outside world and emits events.

This is the only package that does network I/O.
"""
