"""The live cluster source: list+watch of the API and metrics scrapes, at a known cost."""

from ktop.sources.live import light_import

light_import.install()  # before any kubernetes-asyncio import of this package

DEFAULT_CLUSTER_LABEL = "cluster"
"""The label that names a cluster in a Prometheus that holds many (``--cluster-label``)."""
