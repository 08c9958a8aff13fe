"""Every free-text field of every event is scrubbed before a sink sees it, or is named
here as exempt with the reason: a new event (or field) cannot slip through unclassified."""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
import unicodedata
from collections.abc import Iterator

import pytest

from ktop.model import events as ev
from ktop.model.scrub_events import scrub_event
from ktop.scrub import Secrets

SECRET = "abcd1234efgh5678SEKRIT7f3a9c"

IDENTIFIER = "a name or key ktop reads as an identifier (shown and matched as is)"
EXEMPT: dict[str, str] = {
    "MetricsScraped.target.instance": IDENTIFIER,
    "ScrapeFailed.target.instance": IDENTIFIER,
    "TargetGone.target.instance": IDENTIFIER,
    "ApfDumpRead.instance": IDENTIFIER,
    "ApfDumpFailed.instance": IDENTIFIER,
    "ApfRequestsRead.instance": IDENTIFIER,
    "ApfRequestsFailed.instance": IDENTIFIER,
    "SloDayCounted.instance": IDENTIFIER,
    "NodeUpserted.node.name": IDENTIFIER,
    "NodeUpserted.node.region": IDENTIFIER,
    "NodeUpserted.node.zone": IDENTIFIER,
    "NodeUpserted.node.rack": IDENTIFIER,
    "NodeDeleted.name": IDENTIFIER,
    "LeaseRenewed.node": IDENTIFIER,
    "PendingPodUpserted.pod.namespace": IDENTIFIER,
    "PendingPodUpserted.pod.name": IDENTIFIER,
    "PendingPodUpserted.pod.node": IDENTIFIER,
    "PendingPodDeleted.namespace": IDENTIFIER,
    "PendingPodDeleted.name": IDENTIFIER,
    "WarningEvent.reason": IDENTIFIER + " (a CamelCase reason such as FailedScheduling)",
    "WarningEvent.namespace": IDENTIFIER,
    "WarningEvent.object_kind": IDENTIFIER,
    "WarningEvent.object_name": IDENTIFIER,
    "QuotaUpserted.quota.namespace": IDENTIFIER,
    "QuotaUpserted.quota.name": IDENTIFIER,
    "QuotaDeleted.namespace": IDENTIFIER,
    "QuotaDeleted.name": IDENTIFIER,
    "ApiserverIdentities.identities": IDENTIFIER + " (apiserver identity Lease names)",
    "SourceStarted.kind": "one of ktop's own source kinds (live, demo, bundle, replay)",
    "SourceStarted.context": IDENTIFIER + " (the kubeconfig context's name)",
    "ProviderDetected.provider": "one of ktop's own provider names (model.providers.Provider)",
    "FeedSynced.feed": "one of ktop's own feed names (events.FEED_*)",
    "FeedProgress.feed": "one of ktop's own feed names (events.FEED_*)",
    "FeedFailed.feed": "one of ktop's own feed names (events.FEED_*)",
    "ObjectsSkipped.feed": "one of ktop's own feed names (events.FEED_*)",
    "SelfCost.priority_level": IDENTIFIER + " (an APF object's name from a response header)",
    "SelfCost.flow_schema": IDENTIFIER + " (an APF object's name from a response header)",
    "NodeReadinessByLabel.label": IDENTIFIER + " (a node label key)",
}
"""``Event.field`` (``Event.record_field.field`` inside a record) that is not scrubbed, and why."""


def _event_types() -> list[type]:
    return list(typing.get_args(ev.Event))


def _hints(cls: type) -> dict[str, object]:
    return typing.get_type_hints(cls, vars(ev))


def _is_text(hint: object) -> bool:
    """``str``, or a tuple of them (free text in a list, such as parse errors)."""
    return hint is str or (typing.get_origin(hint) is tuple and typing.get_args(hint) == (str, ...))


def _text_paths(cls: type, prefix: str) -> Iterator[str]:
    for f in dataclasses.fields(cls):
        hint = _hints(cls)[f.name]
        if _is_text(hint):
            yield f"{prefix}.{f.name}"
        elif isinstance(hint, type) and dataclasses.is_dataclass(hint):
            yield from _text_paths(hint, f"{prefix}.{f.name}")


def _value(hint: object, path: str, target: str) -> object:
    """A plain value of type ``hint``; the secret where ``path`` is ``target``."""
    if path == target:
        return f"failed: token {SECRET}" if hint is str else (f"failed: token {SECRET}",)
    if hint is str:
        return "x"
    if hint is bool:
        return False
    if hint in (int, float):
        return typing.cast(type, hint)(0)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return next(iter(hint))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _build(hint, path, target)
    if typing.get_origin(hint) is tuple:
        return ()
    if isinstance(hint, types.UnionType) and type(None) in typing.get_args(hint):
        return None
    raise AssertionError(f"{path}: no test value for {hint!r}; teach _value about it")


def _build(cls: type, prefix: str, target: str) -> object:
    hints = _hints(cls)
    fields = dataclasses.fields(cls)
    return cls(**{f.name: _value(hints[f.name], f"{prefix}.{f.name}", target) for f in fields})


@pytest.fixture
def secrets() -> Secrets:
    """A session that read the secret (a new one for each case)."""
    known = Secrets()
    known.add(SECRET)
    return known


CASES = [(cls, path) for cls in _event_types() for path in _text_paths(cls, cls.__name__)]


def test_the_walk_sees_every_event_and_the_known_free_text() -> None:
    assert {c.__name__ for c in _event_types()} >= {"FeedFailed", "PendingPodUpserted"}
    paths = {p for _, p in CASES}
    assert {"TargetGone.reason", "MetricsOnlyMode.why", "MetricsScraped.parse_errors"} <= paths
    assert "PendingPodUpserted.pod.message" in paths
    assert set(EXEMPT) <= paths, "an exempt field no longer exists"


@pytest.mark.parametrize(("cls", "path"), CASES, ids=[p for _, p in CASES])
def test_every_free_text_field_is_scrubbed_or_exempt(
    cls: type, path: str, secrets: Secrets
) -> None:
    event = _build(cls, cls.__name__, path)
    out = repr(scrub_event(typing.cast(ev.Event, event), secrets))
    if path in EXEMPT:
        return
    assert SECRET not in out, f"{path} reaches sinks unscrubbed: scrub it or exempt it"
    assert "failed: token" in out  # the rest of the text is kept


HOSTILE = "a\x1b]52;c;ZXZpbA==\x07b\x1b[2J\nProbable cause: FAKE\x9b31m\r\x7f"
"""OSC 52 (set the clipboard), CSI 2J (clear the screen), a newline making a fake line,
a C1 CSI, CR and DEL."""


def _hostile(hint: object) -> object:
    """A value of type ``hint`` whose every string is :data:`HOSTILE` (every tuple holds
    one item, so that strings nested in tuples of records are planted too)."""
    if hint is str:
        return HOSTILE
    if hint is bool:
        return False
    if hint in (int, float):
        return typing.cast(type, hint)(1)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return next(iter(hint))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        hints = _hints(hint)
        return hint(**{f.name: _hostile(hints[f.name]) for f in dataclasses.fields(hint)})
    if typing.get_origin(hint) is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return (_hostile(args[0]),)
        return tuple(_hostile(a) for a in args)
    if isinstance(hint, types.UnionType) and type(None) in typing.get_args(hint):
        return _hostile(next(a for a in typing.get_args(hint) if a is not type(None)))
    raise AssertionError(f"no hostile value for {hint!r}; teach _hostile about it")


def _strings(value: object) -> Iterator[str]:
    """Every string in ``value`` (records and tuples walked), by an independent walk."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, tuple):
        for v in value:
            yield from _strings(v)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _strings(getattr(value, f.name))


WITH_TEXT = [c for c in _event_types() if any(True for _ in _strings(_hostile(c)))]


@pytest.mark.parametrize("cls", WITH_TEXT, ids=lambda c: c.__name__)
def test_every_string_of_every_event_is_made_printable(cls: type, secrets: Secrets) -> None:
    # The issue: a node's name, a Warning event's message, an APF dump's level name... from a
    # hostile cluster or recording reached the dashboard with ESC in it (Rich strips only
    # BEL, BS, VT, FF and CR), and a newline made a fake line in triage's report.
    event = typing.cast(ev.Event, _hostile(cls))
    planted = list(_strings(event))
    out = list(_strings(scrub_event(event, secrets)))
    assert len(out) == len(planted)
    for text in out:
        assert not any(unicodedata.category(c) == "Cc" for c in text), (cls.__name__, text)
    assert any("\\x1b]52;c;" in t and "\\x0aProbable cause" in t for t in out)  # shown


def test_printable_text_is_the_same_object_and_wide_text_untouched(secrets: Secrets) -> None:
    node = ev.NodeRecord("節点-é\u0301-👩‍💻", "r", "z", "k", ev.Readiness.TRUE, None)
    event = ev.NodeUpserted(1.0, node)
    assert scrub_event(event, secrets) is event  # nothing to escape: not copied
