"""Hypothesis profiles for the fuzz suite, chosen with ``HYPOTHESIS_PROFILE``.

* ``ci`` (the default under ``CI=true``): few examples, no deadline, so the
  suite stays bounded on a shared runner;
* ``dev`` (the default otherwise): Hypothesis' usual 100 examples;
* ``nightly``: 2,000 examples per property (a few minutes);
* ``long``: 20,000 examples per property, for a soak run before a release
  (docs/testing.md says how).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile(
    "nightly", max_examples=2_000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.register_profile(
    "long", max_examples=20_000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") == "true" else "dev")
)
