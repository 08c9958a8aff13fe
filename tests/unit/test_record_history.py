"""``ktop record --from-prometheus``: its options are checked before anything is read,
and a Prometheus that cannot be read stops the rebuild with a readable file that says
why and what history could not hold. (The rebuild itself is tested on the lab's real
Prometheus: tests/e2e/test_after_the_fact_lab.py.)
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.unit.test_triage_json_errors import run, triage_json

T0 = 1_796_612_400.0
PROM = ("--from-prometheus", "http://127.0.0.1:9")


def _closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--start", str(T0)], "--start and --end go with --from-prometheus"),
        (
            ["--from-prometheus", "http://127.0.0.1:9", "--start", str(T0)],
            "needs --start and --end",
        ),
        (
            ["--from-prometheus", "http://127.0.0.1:9", "--start", str(T0), "--end", str(T0 - 1)],
            "--end must be after --start",
        ),
        (
            ["--from-prometheus", "http://127.0.0.1:9", "--demo", "zone-outage"],
            "cannot be combined",
        ),
    ],
)
def test_bad_options_are_refused_before_anything_is_read(
    tmp_path: Path, args: list[str], words: str
) -> None:
    out = tmp_path / "x.ktrec"
    code, _, err = run(["record", "-o", str(out), *args])
    assert code == 2 and words in err
    assert not out.exists()


def test_an_unreachable_prometheus_leaves_a_file_that_says_why(tmp_path: Path) -> None:
    out = tmp_path / "night.ktrec"
    url = f"http://127.0.0.1:{_closed_port()}"
    args = ["--start", str(T0), "--end", str(T0 + 600)]
    code, _, err = run(["record", "-o", str(out), "--from-prometheus", url, *args])
    assert code == 1 and "stopped before --end" in err and url in err
    triage_code, doc, _ = triage_json("--recording", str(out))
    assert triage_code == 0 and doc["cause"] is None
    assert all(p["verdict"] == "unknown" for p in doc["paths"])
    p4 = next(p for p in doc["paths"] if p["id"] == "P4")
    # nodes are known only from the control plane's metrics, as in metrics-only mode
    assert any("rebuilt from Prometheus history" in e["detail"] for e in p4["evidence"])
    assert "prometheus-history" in str(doc["source"]["recorded"])
