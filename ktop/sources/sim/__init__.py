"""The built-in simulated cluster behind ``ktop demo``.

Pure and deterministic: a :class:`Simulator` unfolds one of
:data:`SCENARIOS` on a virtual clock and returns events; a
:class:`SimulatorSource` plays it in real time as a ``Source``.
"""

from ktop.sources.sim.scenarios import SCENARIOS, Phase, ScenarioSpec
from ktop.sources.sim.simulator import Simulator
from ktop.sources.sim.source import SimulatorSource

__all__ = ["SCENARIOS", "Phase", "ScenarioSpec", "Simulator", "SimulatorSource"]
