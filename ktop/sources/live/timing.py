"""How long the live source waits for Prometheus at start (one place: the source, the
component reader, the sampling commands and the tests' deadlines read them here).
"""

from __future__ import annotations

FIRST_POLL_WAIT_S = 15.0
"""How long discovery waits for Prometheus' first answer before reading instances itself."""
BACKFILL_TIMEOUT_S = 60.0
"""The time limit of the history backfill at start (the apiserver discovery waits for it)."""
