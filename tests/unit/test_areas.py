"""The area registry: every per-area table covers every area, and every area's facts
(codes, snapshot part, readable subjects) hold for each of them.

Expected values are the tables as they were written out per area before the registry
(the finding codes, the key bar's names), and the hand-built snapshot's own fields.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import replace
from types import ModuleType

import pytest

import ktop.analysis
import ktop.model
import ktop.ui
from ktop.analysis.catalogue import BASELINE_CODES, BY_CODE, CATALOGUE
from ktop.analysis.findings import Severity
from ktop.analysis.triage.evidence import Context, EvidenceReading
from ktop.analysis.triage.evidence_readings import reading_evidence
from ktop.analysis.triage.evidence_specs import EvidenceSpec, of_reading
from ktop.model.area_metrics_only import CANNOT_KNOW
from ktop.model.areas import AREAS, Readable
from ktop.model.cluster_views import BUILDERS
from ktop.model.events import Area
from ktop.model.grading import Threshold
from ktop.model.reading import Reading
from ktop.model.signals import SIGNALS
from ktop.model.snapshot import ClusterSnapshot
from ktop.ui.render.areas import AREA_KEYS, AREA_VIEWS
from ktop.ui.render.trend import AREA_CHARTS
from tests.unit.snapshots import healthy

AREA_TABLES: dict[str, Mapping[Area, object]] = {
    "model.areas.AREAS": AREAS,
    "model.cluster_views.BUILDERS": BUILDERS,
    "model.area_metrics_only.CANNOT_KNOW": CANNOT_KNOW,
    "ui.render.areas.AREA_VIEWS": AREA_VIEWS,
    "ui.render.areas.AREA_KEYS": AREA_KEYS,
    "ui.render.trend.AREA_CHARTS": AREA_CHARTS,
}
"""Every module-level table keyed by area, by where it is."""

PARTIAL_TABLES: dict[str, Mapping[Area, object]] = {
    "analysis.catalogue.BASELINE_CODES": BASELINE_CODES,
}
"""Area-keyed tables that hold only some areas, by design (the areas with a reading
compared with its own normal)."""


def _modules(package: ModuleType) -> list[ModuleType]:
    names = pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
    return [importlib.import_module(m.name) for m in names if not m.name.endswith("__main__")]


def _area_tables() -> dict[int, str]:
    """Every module-level dict of model, analysis and UI whose keys are all areas, by its
    identity (a table imported elsewhere is found once), with where it was found.
    """
    found: dict[int, str] = {}
    for package in (ktop.model, ktop.analysis, ktop.ui):
        for module in _modules(package):
            for attr, value in vars(module).items():
                if isinstance(value, dict) and value and all(isinstance(k, Area) for k in value):
                    found.setdefault(id(value), f"{module.__name__}.{attr}")
    return found


@pytest.mark.parametrize("name", sorted(AREA_TABLES))
def test_every_area_table_covers_every_area(name: str) -> None:
    assert set(AREA_TABLES[name]) == set(Area)


def test_the_registry_and_the_views_are_in_the_overviews_order() -> None:
    assert list(AREAS) == list(AREA_VIEWS) == list(AREA_KEYS) == list(Area)


def test_every_area_keyed_table_in_the_code_is_checked() -> None:
    checked = {id(t) for t in (*AREA_TABLES.values(), *PARTIAL_TABLES.values())}
    unchecked = [where for key, where in _area_tables().items() if key not in checked]
    assert not unchecked
    assert checked <= set(_area_tables())


def test_each_spec_is_its_own_area() -> None:
    assert all(spec.area is area for area, spec in AREAS.items())


def test_names_codes_and_keys() -> None:
    assert [s.short for s in AREAS.values()] == ["apf", "api", "etcd", "sched", "nodes"]
    assert list(AREA_KEYS.values()) == ["1", "2", "3", "4", "5"]
    assert [s.input_unknown_code for s in AREAS.values()] == [
        "KT-APF-010",
        "KT-API-010",
        "KT-ETCD-010",
        "KT-SCHED-010",
        "KT-NODE-010",
    ]
    for spec in AREAS.values():
        assert BY_CODE[spec.input_unknown_code].area is spec.area


def test_every_finding_code_names_its_area() -> None:
    for rule in CATALOGUE:
        if rule.area is not None:
            assert rule.code.startswith(f"KT-{AREAS[rule.area].code}-"), rule.code


def test_view_is_the_areas_part_of_the_snapshot() -> None:
    s = healthy()
    parts = {
        Area.APF: s.apf,
        Area.APISERVERS: s.apiservers,
        Area.ETCD: s.etcd,
        Area.SCHEDULER: s.scheduler,
        Area.NODES: s.nodes,
    }
    assert all(AREAS[area].view(s) is part for area, part in parts.items())


def test_unread() -> None:
    s = healthy()
    assert not any(spec.unread(s) for spec in AREAS.values())
    unread = _nodes_unread(s)
    assert [a for a, spec in AREAS.items() if spec.unread(unread)] == [Area.NODES]
    no_apf = replace(s, apf=replace(s.apf, unknown_reason="dump refused"))
    assert AREAS[Area.APF].unread(no_apf)


def test_readable_subjects() -> None:
    s = healthy()
    assert AREAS[Area.APF].readable(s) == Readable.only(["workload-low"])
    assert AREAS[Area.ETCD].readable(s) == Readable.only(["etcd-0"])
    failed = replace(s.apiservers.instances[1], error="connection refused")
    one_up = replace(
        s, apiservers=replace(s.apiservers, instances=(s.apiservers.instances[0], failed))
    )
    assert AREAS[Area.APISERVERS].readable(one_up) == Readable.only(
        [s.apiservers.instances[0].instance]
    )
    assert AREAS[Area.SCHEDULER].readable(s) == Readable.every()
    assert AREAS[Area.NODES].readable(s) == Readable.every()
    assert AREAS[Area.NODES].readable(_nodes_unread(s)) == Readable.none("nodes: 403 Forbidden")


def _nodes_unread(s: ClusterSnapshot) -> ClusterSnapshot:
    nodes = replace(s.nodes, nodes_known=False, nodes_reason="nodes: 403 Forbidden")
    return replace(s, nodes=nodes)


_STAND_IN = Threshold("stand-in", "", "test", warn=1e12)
"""A limit no reading of the healthy snapshot reaches, for readings graded by none."""


def _evidence_of(r: Reading) -> EvidenceSpec:
    spec = of_reading(f"test.{r.metric}", r.label, r.metric, "test", "test")
    return spec if r.threshold is not None else replace(spec, threshold=_STAND_IN)


@pytest.mark.parametrize(
    "reading", [r for r in SIGNALS if r.area and r.extract], ids=lambda r: r.metric
)
def test_evidence_reads_every_reading_of_every_area(reading: Reading) -> None:
    got = reading_evidence(Context(healthy()), _evidence_of(reading))
    assert isinstance(got, EvidenceReading)


def test_the_readings_read_cover_every_area() -> None:
    assert {r.area for r in SIGNALS if r.extract} == set(Area)


def test_nodes_evidence_is_the_lease_lag_or_why_nodes_are_not_read() -> None:
    spec = _evidence_of(next(r for r in SIGNALS if r.metric == "nodes.lease_lag_p99_s"))
    known = reading_evidence(Context(healthy()), spec)
    assert (known.severity, known.value) == (Severity.OK, 5.0)
    unread = reading_evidence(Context(_nodes_unread(healthy())), spec)
    assert (unread.severity, unread.value, unread.detail) == (
        Severity.UNKNOWN,
        None,
        "nodes: 403 Forbidden",
    )


def test_scheduler_evidence_is_its_worst_subject() -> None:
    spec = _evidence_of(next(r for r in SIGNALS if r.metric == "sched.attempts_per_s"))
    got = reading_evidence(Context(healthy()), spec)
    assert (got.severity, got.value, got.detail) == (Severity.OK, 1.0, "scheduled: 1.00/s")
