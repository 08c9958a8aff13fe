"""ktop.lab: a real Kubernetes control plane on loopback for tests and demos.

It imports from the rest of ktop only the facts it shares with it: the zone-state
threshold its controller-manager is given (``ktop.model.zones``) and the scenario list
(``ktop.sources.sim.scenarios``). See docs/testing.md.
"""

from ktop.lab.binaries import Binaries, find_binaries, missing_binaries
from ktop.lab.cluster import Lab, load_info, stop_lab
from ktop.lab.config import LabConfig
from ktop.lab.inject import SCENARIOS, inject, recover
from ktop.lab.target import LabTarget, NotALabClusterError, resolve_target

__all__ = [
    "SCENARIOS",
    "Binaries",
    "Lab",
    "LabConfig",
    "LabTarget",
    "NotALabClusterError",
    "find_binaries",
    "inject",
    "load_info",
    "missing_binaries",
    "recover",
    "resolve_target",
    "stop_lab",
]
