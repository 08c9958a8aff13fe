"""NaN, +Inf and -Inf in the metrics: legal exposition values, never a crash.

NaN is an unknown value (shown ``?``, never graded ok, ``null`` in JSON); an infinity is
shown as one (``∞``, ``"+Inf"`` in JSON). The families come from ktop's own registry
(:data:`ktop.model.wanted.FAMILIES`), so a family added later is covered too.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ktop.model.exposition import parse_exposition
from ktop.model.text import fmt_bytes, fmt_count, fmt_duration, fmt_rate, fmt_si
from ktop.model.values import Val
from ktop.model.wanted import FAMILIES
from tests.unit.bundles import real_bundle, with_value
from tests.unit.test_bundle_triage import run

SPECIALS = ("NaN", "+Inf", "-Inf")
EXIT_CRASH = 70
REAL_AT = 1_782_468_800
"""The real bundle's scrape time (tests/unit/bundles.py)."""


def _no_constants(name: str) -> Any:
    raise AssertionError(f"{name} is not JSON")


def special_bundle(root: Path, value: str, *, scrapes: int) -> Path:
    """The real dumps, then (with ``scrapes`` 2) a second scrape 60 s later; the last scrape
    of every component has every family ktop reads set to ``value``.
    """
    real_bundle(root)
    for comp, families in FAMILIES.items():
        for f in sorted((root / "metrics" / comp.value).glob(f"*/{REAL_AT}.prom")):
            last = f if scrapes == 1 else f.with_name(f"{REAL_AT + 60}.prom")
            last.write_text(with_value(f.read_text(), families, value))
    return root


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], Path]:
    out = {}
    for value in SPECIALS:
        for scrapes in (1, 2):
            root = tmp_path_factory.mktemp(f"special-{value}-{scrapes}")
            out[value, scrapes] = special_bundle(root, value, scrapes=scrapes)
    return out


@pytest.mark.parametrize("scrapes", [1, 2])
@pytest.mark.parametrize("value", SPECIALS)
def test_triage_json_is_valid_and_nan_is_unknown(
    bundles: dict[tuple[str, int], Path], value: str, scrapes: int
) -> None:
    code, out, err = run(["triage", "--bundle", str(bundles[value, scrapes]), "--output", "json"])
    assert code in (0, 1), err
    doc = json.loads(out, parse_constant=_no_constants)
    members = doc["signals"]["etcd"]
    assert members
    # etcd_mvcc_db_total_size_in_bytes is a gauge: its value as the exposition gives it
    expected = {"NaN": None, "+Inf": "+Inf", "-Inf": "-Inf"}[value]
    assert {m["db_size_bytes"] for m in members} == {expected}
    for p in doc["paths"]:
        for e in p["evidence"]:
            assert e["value"] is None or isinstance(e["value"], int | float | str)
            if e["status"] == "ok":
                assert "NaN" not in e["detail"], e


@pytest.mark.parametrize("scrapes", [1, 2])
@pytest.mark.parametrize("value", SPECIALS)
def test_triage_text_shows_nan_as_unknown_and_inf_as_infinite(
    bundles: dict[tuple[str, int], Path], value: str, scrapes: int
) -> None:
    code, out, err = run(["triage", "--bundle", str(bundles[value, scrapes])])
    assert code in (0, 1) and code != EXIT_CRASH, err
    # Python's own spellings (str(float)) never reach the page; ktop's reasons say "NaN"
    assert re.search(r"\b(nan|inf)\b", out) is None
    if value == "NaN":
        assert "NaN (not a number)" in out
    elif value == "+Inf":
        assert "∞ bytes" in out  # the full-LIST sizes (apiserver_resource_size_estimate_bytes)


def test_one_nan_family_at_a_time_never_crashes_triage(tmp_path: Path) -> None:
    """The issue's reproduction: a single gauge family NaN (the rest real) crashed the JSON."""
    base = real_bundle(tmp_path / "base")
    for comp, family in (
        ("apiserver", "apiserver_current_inflight_requests"),
        ("etcd", "etcd_server_quota_backend_bytes"),
        ("scheduler", "scheduler_pending_pods"),
    ):
        root = tmp_path / family
        shutil.copytree(base, root)
        f = next((root / "metrics" / comp).glob(f"*/{REAL_AT}.prom"))
        f.write_text(with_value(f.read_text(), [family], "NaN"))
        code, out, err = run(["triage", "--bundle", str(root), "--output", "json"])
        assert code in (0, 1), err
        json.loads(out, parse_constant=_no_constants)


def test_scrape_named_inf_is_not_a_time(tmp_path: Path) -> None:
    """``"at": Infinity`` came from a metrics file named ``inf.prom``."""
    real_bundle(tmp_path)
    src = next((tmp_path / "metrics" / "etcd").glob(f"*/{REAL_AT}.prom"))
    shutil.copyfile(src, src.with_name("inf.prom"))
    _, out, _ = run(["triage", "--bundle", str(tmp_path), "--output", "json"])
    doc = json.loads(out, parse_constant=_no_constants)
    assert doc["at"] == REAL_AT
    assert any("inf.prom: name must be <unix-seconds>.prom" in e for e in doc["errors"])


def test_nan_val_is_unknown_and_inf_is_known() -> None:
    assert Val.of(math.nan).value is None and "NaN" in Val.of(math.nan).reason
    assert Val.of(math.inf).value == math.inf
    for fmt in (fmt_bytes, fmt_count, fmt_duration, fmt_si):
        assert (fmt(math.inf), fmt(-math.inf), fmt(math.nan)) == ("∞", "-∞", "?")
    assert fmt_rate(math.inf) == "∞/s"


VALUE_SPELLINGS = ("NaN", "+Inf", "-Inf", "Inf", "nan", "inf", "+inf", "-inf", "Infinity")


@pytest.mark.fuzz
@given(
    value=st.sampled_from(VALUE_SPELLINGS),
    family=st.sampled_from(sorted({f for fs in FAMILIES.values() for f in fs})),
    suffix=st.sampled_from(["", "_bucket", "_sum", "_count"]),
    le=st.sampled_from(["", "0.5", "+Inf", "NaN", "-Inf"]),
    stamp=st.sampled_from(["", " 1782468800000", " -5"]),
)
def test_parser_reads_nan_and_inf_in_every_position(
    value: str, family: str, suffix: str, le: str, stamp: str
) -> None:
    labels = f'{{le="{le}"}}' if le else ""
    line = f"{family}{suffix}{labels} {value}{stamp}"
    parsed = parse_exposition(f"# TYPE {family} untyped\n{line}\n", [family])
    assert parsed.errors == ()
    (sample,) = parsed.samples
    expected = float(value)  # Python reads every spelling Go's ParseFloat does here
    assert math.isnan(sample.value) if math.isnan(expected) else sample.value == expected
    assert dict(sample.labels).get("le", "") == le
