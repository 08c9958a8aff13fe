"""The live cluster source: list+watch of the API and metrics scrapes, at a known cost."""

DEFAULT_CLUSTER_LABEL = "cluster"
"""The label that names a cluster in a Prometheus that holds many (``--cluster-label``)."""
