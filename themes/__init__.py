"""ktop's bundled themes (``*.toml``); this directory installs as the package ``ktop.themes``."""
