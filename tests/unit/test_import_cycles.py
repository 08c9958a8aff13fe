"""No module of ktop imports itself back, through any chain of imports.

The ``acyclic_siblings`` contract in ``pyproject.toml`` forbids cycles between the
children of every package; a cycle through a package's own ``__init__`` is not a cycle
between its children, so this test checks every module, with the contract's list of
ignored (annotation-only) imports.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]


def _ignored() -> set[tuple[str, str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = (
        c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "acyclic_siblings"
    )
    pairs = (line.split(" -> ") for line in contract.get("ignore_imports", []))
    return {(a.strip(), b.strip()) for a, b in pairs}


def test_no_module_is_part_of_an_import_cycle() -> None:
    graph = grimp.build_graph("ktop", cache_dir=None)
    for importer, imported in _ignored():
        graph.remove_import(importer=importer, imported=imported)
    cycles = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back is not None:
                cycles.append(" -> ".join((module, *back)))
    assert cycles == []
