"""The global Prometheus configuration that merges several labs' scrape configurations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ktop.lab import components as comp
from ktop.lab.config import Layout
from ktop.lab.global_prom import global_prometheus_config
from ktop.lab.util import LabError

OWN_JOBS = ("apiserver", "kube-scheduler", "kube-controller-manager", "etcd", "kwok")


def _lab_config(root: Path, cluster: str, base: int) -> str:
    """A lab's own configuration, as the lab writes it (ports from ``base`` on)."""
    ep = comp.Endpoint
    return comp.prometheus_config(
        Layout(root),
        [ep("apiserver-a", base), ep("apiserver-b", base + 1)],
        [comp.EtcdMember("etcd-0", base + 2, base + 3)],
        ep("kube-scheduler", base + 4),
        ep("kube-controller-manager", base + 5),
        {"zone-a": ep("kwok-zone-a", base + 6, "http")},
        ep("prometheus", base + 7, "http"),
        cluster,
    )


def _merged(tmp_path: Path) -> dict[str, Any]:
    text = global_prometheus_config(
        {
            "lab-a": _lab_config(tmp_path / "a", "lab-a", 1000),
            "lab-b": _lab_config(tmp_path / "b", "lab-b", 2000),
        }
    )
    config: dict[str, Any] = json.loads(text)
    return config


def test_every_job_of_every_lab_once_with_a_unique_name(tmp_path: Path) -> None:
    jobs = _merged(tmp_path)["scrape_configs"]
    names = [j["job_name"] for j in jobs]
    assert len(set(names)) == len(names)
    assert sorted(names) == sorted(f"{c}/{j}" for c in ("lab-a", "lab-b") for j in OWN_JOBS)


def test_the_relabel_rule_gives_back_the_canonical_job(tmp_path: Path) -> None:
    for job in _merged(tmp_path)["scrape_configs"]:
        canonical = job["job_name"].split("/", 1)[1]
        # Prometheus' default relabel action is "replace" with regex (.*) over no source
        # labels: it always matches, so `job` becomes the replacement.
        assert job["relabel_configs"] == [{"target_label": "job", "replacement": canonical}]


def test_each_lab_keeps_its_own_targets_labels_and_token(tmp_path: Path) -> None:
    jobs = {j["job_name"]: j for j in _merged(tmp_path)["scrape_configs"]}
    for cluster, base, root in (("lab-a", 1000, "a"), ("lab-b", 2000, "b")):
        api = jobs[f"{cluster}/apiserver"]
        assert api["authorization"]["credentials_file"] == str(tmp_path / root / "admin.token")
        assert [sc["targets"] for sc in api["static_configs"]] == [
            [f"127.0.0.1:{base}"],
            [f"127.0.0.1:{base + 1}"],
        ]
        for job in OWN_JOBS:
            for sc in jobs[f"{cluster}/{job}"]["static_configs"]:
                assert sc["labels"]["cluster"] == cluster
        assert jobs[f"{cluster}/kwok"]["static_configs"][0]["targets"] == [f"127.0.0.1:{base + 6}"]


def test_the_labs_own_prometheus_is_not_scraped(tmp_path: Path) -> None:
    text = json.dumps(_merged(tmp_path))
    assert "127.0.0.1:1007" not in text and "127.0.0.1:2007" not in text


def test_a_lab_whose_targets_carry_another_cluster_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LabError, match="lab-b"):
        global_prometheus_config(
            {
                "lab-a": _lab_config(tmp_path / "a", "lab-a", 1000),
                "lab-b": _lab_config(tmp_path / "b", "lab-a", 2000),
            }
        )


def test_the_scrape_interval_is_the_labs(tmp_path: Path) -> None:
    own = json.loads(_lab_config(tmp_path / "own", "lab-own", 3000))["global"]
    merged = _merged(tmp_path)["global"]
    for key in ("scrape_interval", "scrape_timeout", "evaluation_interval"):
        assert merged[key] == own[key], key
