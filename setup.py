"""Packages: ``ktop*``, plus the top-level ``themes/`` directory installed as ``ktop.themes``.

The theme files are meant to be found and edited at the top of a checkout, and
still install with the package (``pip install`` puts them in ``ktop/themes/``).
Everything else is in pyproject.toml.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["ktop", "ktop.*"]), "ktop.themes", "ktop.model.data"],
    package_dir={"ktop.themes": "themes"},
)
