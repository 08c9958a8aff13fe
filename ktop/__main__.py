"""``python -m ktop``."""

from ktop.console import run

run()
