"""The skew Prometheus computes for the history (``ktop/model/promql.py``'s ``peer_skew``)
is the model's (``ktop/model/area_apiservers.py``'s ``skew``): Prometheus' own engine
(``promtool test rules``, from the Debian package CI installs) evaluates the query over
the loads, and must return what the model computes from the same loads.
"""

from __future__ import annotations

import math
import subprocess
from dataclasses import replace
from pathlib import Path

import yaml

from ktop.model.area_apiservers import WATCH_LOAD, skew
from ktop.model.limits import SKEW_FLOOR
from ktop.model.promql import WATCH_SKEW
from ktop.model.values import Val
from tests.binaries import required_binary
from tests.functional.factories import AT, apiserver

LOADS = [
    (640.0, 360.0),  # two instances: the same either way
    (150.0, 150.0, 0.0),  # the last one back from a restart: the idlest decides
    (300.0, 320.0, 20.0),
    (200.0, 100.0, 0.0),
    (100.0, 100.0, 130.0),  # the busiest decides
    (500.0, *([100.0] * 9)),
    (4.0, 0.0),  # under the floor: 1
]


def promtool() -> str:
    """promtool's path (Debian's prometheus package)."""
    return required_binary("promtool", "prometheus")


def model_skew(watches: tuple[float, ...]) -> float:
    rows = tuple(
        replace(apiserver(i, rps=100, start=AT - 86400), watches=Val.of(w))
        for i, w in enumerate(watches)
    )
    got = skew(rows, WATCH_LOAD.of).value
    assert got is not None
    return got


def test_prometheus_computes_the_models_skew(tmp_path: Path) -> None:
    tests = []
    for watches in LOADS:
        expected = model_skew(watches)
        assert math.isfinite(expected) and expected >= 1.0
        series = [
            {
                "series": "apiserver_longrunning_requests"
                f'{{job="apiserver",instance="apiserver-{i}",verb="WATCH"}}',
                "values": f"{w:g}x3",
            }
            for i, w in enumerate(watches)
        ]
        tests.append(
            {
                "interval": "1m",
                "input_series": series,
                "promql_expr_test": [
                    {
                        "expr": WATCH_SKEW.format(job="apiserver", w=60),
                        "eval_time": "2m",
                        "exp_samples": [{"labels": "{}", "value": expected}],
                    }
                ],
            }
        )
    spec = tmp_path / "skew.yml"
    spec.write_text(yaml.safe_dump({"evaluation_interval": "1m", "tests": tests}))
    done = subprocess.run(
        [promtool(), "test", "rules", str(spec)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_one_instance_has_no_skew_in_prometheus(tmp_path: Path) -> None:
    """No peer: the query gives no finite number (the model's skew is unknown)."""
    spec = tmp_path / "one.yml"
    spec.write_text(
        yaml.safe_dump(
            {
                "evaluation_interval": "1m",
                "tests": [
                    {
                        "interval": "1m",
                        "input_series": [
                            {
                                "series": 'apiserver_longrunning_requests{job="apiserver",'
                                'instance="a",verb="WATCH"}',
                                "values": f"{SKEW_FLOOR * 4:g}x3",
                            }
                        ],
                        "promql_expr_test": [
                            {
                                # NaN is never equal to itself: keep only finite values
                                "expr": f"({WATCH_SKEW.format(job='apiserver', w=60)}) == "
                                f"({WATCH_SKEW.format(job='apiserver', w=60)})",
                                "eval_time": "2m",
                                "exp_samples": [],
                            }
                        ],
                    }
                ],
            }
        )
    )
    done = subprocess.run(
        [promtool(), "test", "rules", str(spec)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
