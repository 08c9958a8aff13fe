"""Bundled theme files (``*.toml``), shipped as package data."""
