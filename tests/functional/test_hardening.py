"""The app under hostile conditions: a crash shows no traceback (its locals may hold
credentials), a failing source's message is scrubbed, unreadable objects are shown."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from ktop.hub import Hub, HubPolicy
from ktop.model.cluster import ClusterModel
from ktop.model.events import FEED_NODES, Event, ObjectsSkipped
from ktop.scrub import Secrets
from ktop.ui.app import KtopApp
from tests.functional.screen import screen_text

SECRET = "abcd1234efgh5678SEKRIT7f3a9c"


class _Failing:
    name = "live"

    async def run(self, emit: object) -> None:
        raise RuntimeError(f"GET https://admin:{SECRET}@10.0.0.1:6443/api failed")


async def test_a_crash_leaves_no_traceback_and_is_handed_to_the_command_line() -> None:
    app = KtopApp(Hub(ClusterModel()), refresh_s=0.1)

    def boom(*args: object, **kwargs: object) -> None:
        token = SECRET  # a local a traceback printer with locals would show
        raise ValueError(f"boom {len(token)}")

    app.present = boom  # type: ignore[method-assign]  # what the refresh timer calls
    with pytest.raises(ValueError, match="boom"):
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(1.0)
    assert isinstance(app.crash, ValueError)
    assert app._exit_renderables == []


async def test_a_failing_source_message_is_scrubbed() -> None:
    app = KtopApp(Hub(ClusterModel(), HubPolicy(secrets=Secrets())), [_Failing()])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.3)
        assert app.source_errors
        assert all(SECRET not in e for e in app.source_errors)
        assert "10.0.0.1:6443" in app.source_errors[0]


class _Echoing:
    """A source whose library echoes the credential it was given, in no shape a rule knows."""

    name = "live"

    async def run(self, emit: object) -> None:
        raise RuntimeError(f"server refused the token {SECRET} (expired)")


async def test_a_credential_the_composition_root_read_is_scrubbed_from_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kubeconfig read through the real entry point records its token into the
    session's secrets; the app shown on that session's hub scrubs a failure quoting it."""
    from ktop.cli import parse_args
    from ktop.compose import Live, live_options, open_source
    from ktop.sources.live import client

    async def no_probe(conn: client.Connection, timeout_s: float = 0.0) -> str:
        return "v1.33.0"

    monkeypatch.setattr(client, "probe", no_probe)
    cfg = tmp_path / "config"
    cfg.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        f"users: [{{name: u, user: {{token: {SECRET}}}}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
    )
    args = parse_args(["--kubeconfig", str(cfg)])
    async with await open_source(Live(live_options(args)), Secrets()) as opened:
        app = KtopApp(opened.hub, [_Echoing()])
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause(0.3)
            assert app.source_errors
            assert all(SECRET not in e for e in app.source_errors)
            assert "server refused the token <redacted> (expired)" in app.source_errors[0]
    # Another session (a new app on a hub of its own) never read it.
    other = KtopApp(Hub(ClusterModel(), HubPolicy(secrets=Secrets())), [_Echoing()])
    async with other.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.3)
        assert SECRET in other.source_errors[0]


async def test_skipped_objects_are_shown_in_the_drill_down() -> None:
    secrets = Secrets()
    secrets.add(SECRET)
    hub = Hub(ClusterModel(), HubPolicy(secrets=secrets))
    batch: Sequence[Event] = [
        ObjectsSkipped(1.0, FEED_NODES, 3, f"ObjectError: labels is list ({SECRET})")
    ]
    hub.ingest(batch)
    app = KtopApp(hub)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("5")
        await pilot.pause(0.3)
        text = screen_text(app)
        assert "3 object(s) skipped" in text
        assert SECRET not in text
