"""``ktop fleet``: which cells it reads, and a cell that cannot be opened."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from ktop.cli import main, parse_args
from ktop.commands.fleet import cell_contexts, demo_plays, live_specs
from ktop.fleet import Cell, Fleet
from ktop.scrub import Secrets
from ktop.sources.sim.scenarios import SCENARIOS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
KUBECONFIG = FIXTURES / "kubeconfig_k8s-docs_config-demo_view.yaml"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """An environment whose config directory is empty and private to the test."""
    return {"KTOP_CONFIG_DIR": str(tmp_path)}


def _contexts_in_file() -> list[str]:
    doc = yaml.safe_load(KUBECONFIG.read_text(encoding="utf-8"))
    return [c["name"] for c in doc["contexts"]]


def test_every_context_option_is_a_cell(env: dict[str, str]) -> None:
    args = parse_args(["fleet", "--context", "a", "--context", "b", "--context", "a"], env)
    assert args.context == "a"  # other commands keep reading the last one
    assert cell_contexts(args, Secrets()) == ["a", "b"]


def test_glob_and_all_contexts_of_the_kubeconfig(env: dict[str, str]) -> None:
    names = _contexts_in_file()
    args = parse_args(["fleet", "--kubeconfig", str(KUBECONFIG)], env)
    assert cell_contexts(args, Secrets()) == names
    args = parse_args(["fleet", "--kubeconfig", str(KUBECONFIG), "--context-glob", "dev-*"], env)
    assert cell_contexts(args, Secrets()) == [n for n in names if n.startswith("dev-")]
    assert len(cell_contexts(args, Secrets())) >= 2


def test_context_choices_that_cannot_work_say_why(env: dict[str, str]) -> None:
    args = parse_args(["fleet", "--kubeconfig", str(KUBECONFIG), "--context-glob", "prod-*"], env)
    with pytest.raises(ValueError, match=r"no context matches 'prod-\*' \(known: dev-frontend"):
        cell_contexts(args, Secrets())
    args = parse_args(["fleet", "--context", "a", "--context-glob", "b*"], env)
    with pytest.raises(ValueError, match="cannot be combined"):
        cell_contexts(args, Secrets())


def test_demo_and_contexts_do_not_mix(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fleet", "--demo", "--context", "a"]) == 2
    assert "--demo cannot be combined with contexts" in capsys.readouterr().err


def test_demo_plays_every_scenario_once_and_one_twice() -> None:
    plays = demo_plays(1)
    assert [s for _, s, _ in plays[: len(SCENARIOS)]] == list(SCENARIOS)
    assert len({name for name, _, _ in plays}) == len(plays)
    assert plays[-1][1] in SCENARIOS and plays[-1][2] != 1


def test_a_context_that_cannot_be_opened_is_a_cell_with_the_reason(env: dict[str, str]) -> None:
    args = parse_args(["fleet", "--kubeconfig", str(KUBECONFIG), "--context", "gone"], env)

    async def run() -> Cell:
        specs = await live_specs(args, ["gone"], Secrets())
        fleet = Fleet(specs)
        await fleet.cells[0].run()
        return fleet.cells[0]

    cell = asyncio.run(run())
    assert "context 'gone' not found" in cell.error
    summary = cell.summary()
    assert summary.reason == cell.error and not summary.not_ready.known


async def test_the_query_listing_a_prometheus_clusters_is_counted_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ktop.commands.fleet import prometheus_specs
    from ktop.sources.live import prometheus_connect
    from ktop.sources.live.source import LiveSource
    from tests.unit.test_live_prometheus import FakeHttp, faked, vector

    def answer(query: str) -> dict[str, object]:
        return vector([({"cluster": "east"}, 3), ({"cluster": "west"}, 2)])

    real = prometheus_connect.prometheus_client
    monkeypatch.setattr(
        prometheus_connect,
        "prometheus_client",
        lambda *a, **kw: faked(real(*a, **kw), FakeHttp(answer)),
    )
    args = parse_args(["fleet", "--prometheus", "http://global:9090"])
    specs = await prometheus_specs(args, Secrets())
    assert [s.name for s in specs] == ["east", "west"]
    meters = []
    for spec in specs:
        opened = await spec.open()
        source = opened.sources[0]
        assert isinstance(source, LiveSource)
        meters.append(source.meter.requests_by_destination)
    # One request to one Prometheus, in the totals of exactly one cell.
    assert meters == [{"prometheus": 1}, {}]
