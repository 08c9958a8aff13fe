"""Recording: the event stream written to disk (a sink) and read back (a source).

Not available yet: this package holds the place the layering contracts give it.
"""
