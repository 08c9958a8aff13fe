"""Offline bundles: a directory of API lists, metrics scrapes and APF dumps.

The layout is in ``docs/bundle-format.md``; :func:`.reader.read_bundle` turns a
bundle into the same events a live cluster gives.
"""
