"""ktop: a terminal dashboard for very large Kubernetes control planes."""

__version__ = "0.1.0"
