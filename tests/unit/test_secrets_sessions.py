"""The known secrets live in the instance a session makes, never in the process: two
sessions (or two cells of a fleet) do not see each other's credentials, whoever reads a
credential records it into the instance it is given, and every place that writes text in
ktop is handed one (:mod:`ktop.scrub`)."""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
from pathlib import Path

import pytest

import ktop.model.scrub_events as event_scrub
import ktop.scrub as scrub_module
from ktop.compose import Live, SourceError, live_options, open_source
from ktop.fleet import CellSpec, CellUnavailableError, Fleet, OpenedCell
from ktop.scrub import MASK, Secrets, scrub_shapes
from ktop.sources.kubeconfig import context_names, load_context
from ktop.sources.live import client
from ktop.sources.live.exec_plugin import parse_exec_credential

ROOT = Path(__file__).resolve().parents[2]
ONE = "abcd1234efgh5678ONE7f3a9c"
TWO = "wxyz9876vuts5432TWO1b2c3d"
"""Two credentials no shape rule knows: only the instance that read one removes it."""


def _kubeconfig(path: Path, token: str, server: str = "https://127.0.0.1:1") -> Path:
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "clusters": [{"name": "k", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": token}}],
                "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
            }
        )
    )
    return path


def test_two_instances_do_not_see_each_others_secrets() -> None:
    first, second = Secrets(), Secrets()
    first.add(ONE)
    second.add(TWO)
    assert first.scrub(f"a {ONE} b") == f"a {MASK} b"
    assert second.scrub(f"a {TWO} b") == f"a {MASK} b"
    assert first.scrub(TWO) == TWO
    assert second.scrub(ONE) == ONE
    assert scrub_shapes(f"{ONE} {TWO}") == f"{ONE} {TWO}"  # the shapes know neither


def test_a_child_records_into_its_parent_and_not_into_its_siblings() -> None:
    fleet = Secrets()
    a, b = fleet.child(), fleet.child()
    a.add(ONE)
    b.add(TWO)
    assert fleet.scrub(f"{ONE} {TWO}") == f"{MASK} {MASK}"
    assert a.scrub(f"{ONE} {TWO}") == f"{MASK} {TWO}"
    assert b.scrub(f"{ONE} {TWO}") == f"{ONE} {MASK}"
    fleet.add("fleet-only-value-42")
    assert a.scrub("fleet-only-value-42") == "fleet-only-value-42"  # not pushed down


def test_an_instance_never_shows_a_value() -> None:
    secrets = Secrets()
    secrets.add(ONE)
    assert ONE not in repr(secrets) and ONE not in str(secrets)


def test_the_scrubbing_modules_hold_no_known_value() -> None:
    """Nothing at module level of either module can hold a credential: no instance, no
    mutable collection (the only tables are the shape rules and the event dispatch)."""
    for module in (scrub_module, event_scrub):
        for name, value in vars(module).items():
            assert not isinstance(value, Secrets | set | list), f"{module.__name__}.{name}"


def test_the_kubeconfig_loader_records_into_the_instance_it_is_given(tmp_path: Path) -> None:
    cfg = _kubeconfig(tmp_path / "config", ONE)
    session, other = Secrets(), Secrets()
    load_context(str(cfg), None, env={}, secrets=session)
    assert session.scrub(ONE) == MASK
    assert other.scrub(ONE) == ONE
    listing = Secrets()
    assert context_names(str(cfg), env={}, secrets=listing) == ["c"]
    assert listing.scrub(ONE) == MASK


def test_an_exec_plugin_token_is_recorded_into_the_instance_it_is_given() -> None:
    out = json.dumps(
        {
            "apiVersion": "client.authentication.k8s.io/v1",
            "kind": "ExecCredential",
            "status": {"token": ONE},
        }
    ).encode()
    session = Secrets()
    assert parse_exec_credential(out, "p", "client.authentication.k8s.io/v1", session).token
    assert session.scrub(f"echo {ONE}") == f"echo {MASK}"
    assert Secrets().scrub(ONE) == ONE


async def _no_probe(conn: client.Connection, timeout_s: float = 0.0) -> str:
    return "v1.33.0"


def test_each_session_of_the_composition_root_knows_only_what_it_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two sessions opened through the composition root, one after the other in one
    process: each one's hub scrubs what it read, and neither what the other read."""
    from ktop.cli import parse_args
    from ktop.model.events import FEED_NODES, FeedFailed

    monkeypatch.setattr(client, "probe", _no_probe)
    sessions = []
    for name, token in (("one", ONE), ("two", TWO)):
        cfg = _kubeconfig(tmp_path / name, token)
        args = parse_args(["--kubeconfig", str(cfg)])

        async def go(args: argparse.Namespace = args) -> Secrets:
            secrets = Secrets()
            async with await open_source(Live(live_options(args)), secrets) as opened:
                assert opened.hub.secrets is secrets
                assert opened.connection is not None and opened.connection.secrets is secrets
                seen: list[object] = []
                opened.hub.add_sink(seen.extend)
                opened.hub.ingest([FeedFailed(1.0, FEED_NODES, f"401: {ONE} {TWO}")])
                assert repr(seen).count(MASK) == 1
            return secrets

        sessions.append(asyncio.run(go()))
    first, second = sessions
    assert first.scrub(f"{ONE} {TWO}") == f"{MASK} {TWO}"
    assert second.scrub(f"{ONE} {TWO}") == f"{ONE} {MASK}"


def test_a_refusal_of_the_composition_root_is_scrubbed_with_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ktop.cli import parse_args

    async def echo(conn: client.Connection, timeout_s: float = 0.0) -> str:
        raise client.ConnectError(f"{conn.server} answered: unknown user {ONE}")

    monkeypatch.setattr(client, "probe", echo)
    args = parse_args(["--kubeconfig", str(_kubeconfig(tmp_path / "config", ONE))])
    with pytest.raises(SourceError) as refused:
        asyncio.run(open_source(Live(live_options(args)), Secrets()))
    assert ONE not in str(refused.value) and f"unknown user {MASK}" in str(refused.value)


def test_a_fleet_cell_keeps_its_credentials_and_the_fleet_scrubs_every_cells() -> None:
    """Each cell reads into its own child of the fleet's instance: its hub knows its own
    credential only; a cell's error, which the fleet view shows, is scrubbed of all."""
    fleet_secrets = Secrets()
    a, b = fleet_secrets.child(), fleet_secrets.child()

    async def open_b() -> OpenedCell:
        b.add(TWO)  # cell b read its credential
        return OpenedCell([])

    async def open_a() -> OpenedCell:
        a.add(ONE)
        raise CellUnavailableError(a.scrub(f"refused {ONE}, and quoted {TWO}"))

    async def broken() -> OpenedCell:
        raise RuntimeError(f"unexpected {ONE} {TWO}")

    specs = [
        CellSpec("b", open_b, secrets=b),
        CellSpec("a", open_a, secrets=a),
        CellSpec("c", broken, secrets=fleet_secrets.child()),
    ]
    fleet = Fleet(specs, fleet_secrets)

    async def run() -> None:
        for name in ("b", "a", "c"):
            await fleet.cell(name).run()

    asyncio.run(run())
    for cell in fleet.cells[1:]:
        assert ONE not in cell.error and TWO not in cell.error and MASK in cell.error
    assert fleet.cell("a").hub.secrets is a and fleet.cell("b").hub.secrets is b
    assert a.scrub(TWO) == TWO and b.scrub(ONE) == ONE


# ----------------------------------------------------------------- the wiring in ktop

HANDED = {
    "Hub": "policy",
    "HubPolicy": "secrets",
    "LiveSource": "secrets",
    "LeaseSampler": "secrets",
    "NodeDetails": "secrets",
    "PrometheusMetrics": "secrets",
    "PrometheusBackfill": "secrets",
    "Connection": "secrets",
    "Fleet": "secrets",
    "CellSpec": "secrets",
    "Cell": "fleet_secrets",
}
"""What takes the session's secrets but may be made without (a new instance, which removes
the shapes only: tests make them by the hundred), and the parameter's name."""
POSITION = {"Hub": 1, "HubPolicy": 0, "LiveSource": 4, "NodeDetails": 2, "Fleet": 1}
"""Where a positional argument is the secrets (counted from 0)."""
EXEMPT = {
    ("ktop/hub.py", "HubPolicy"): "the policy of a hub made without one (tests)",
}


def _calls() -> list[tuple[str, str, ast.Call]]:
    found = []
    for path in sorted((ROOT / "ktop").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name in HANDED:
                found.append((rel, name, node))
    return found


def test_everything_that_may_default_its_secrets_is_handed_the_sessions_in_ktop() -> None:
    calls = _calls()
    assert {name for _, name, _ in calls} >= {"Hub", "HubPolicy", "LiveSource", "Fleet", "CellSpec"}
    missing = []
    for rel, name, call in calls:
        if (rel, name) in EXEMPT:
            continue
        keyword = any(k.arg == HANDED[name] for k in call.keywords)
        positional = name in POSITION and len(call.args) > POSITION[name]
        if not (keyword or positional):
            missing.append(f"{rel}:{call.lineno} {name}(...) without {HANDED[name]}")
    assert missing == [], "hand it the session's Secrets (or exempt it with the reason)"


def test_a_broken_sinks_error_keeps_no_known_secret() -> None:
    from ktop.hub import Hub, HubPolicy
    from ktop.model.events import ClockTick

    session = Secrets()
    session.add("tok-0123456789")

    def broken(_events: object) -> None:
        raise OSError("disk full writing tok-0123456789")

    hub = Hub(policy=HubPolicy(secrets=session))
    hub.add_sink(broken)
    hub.ingest([ClockTick(1.0)])
    assert len(hub.sink_errors) == 1
    assert "tok-0123456789" not in hub.sink_errors[0] and "disk full" in hub.sink_errors[0]
