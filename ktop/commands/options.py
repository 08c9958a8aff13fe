"""Options several commands share, defined once: the simulated cluster's size and seed."""

from __future__ import annotations

import argparse

from ktop import bounds
from ktop.bounds import bounded_int

DEFAULT_NODES = 5000
DEFAULT_ZONES = 3
DEFAULT_SEED = 1


def simulator_options(
    p: argparse.ArgumentParser, *, when: str = "", nodes: int = DEFAULT_NODES
) -> None:
    """``--nodes``, ``--zones`` and ``--seed`` of the built-in simulated cluster.

    ``when`` says when they apply (``"with --demo"``) for commands that also read live
    clusters; ``nodes`` is the default node count (``fleet --demo`` runs several).
    """
    note = f"{when}: " if when else ""
    p.add_argument(
        "--nodes",
        type=bounded_int(bounds.NODES),
        default=nodes,
        help=f"{note}simulated nodes, {bounds.NODES.text()} (default {nodes})",
    )
    p.add_argument(
        "--zones",
        type=bounded_int(bounds.ZONES),
        default=DEFAULT_ZONES,
        help=f"{note}simulated zones, {bounds.ZONES.text()} (default {DEFAULT_ZONES})",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help=f"{note}simulator random seed (default {DEFAULT_SEED})",
    )
