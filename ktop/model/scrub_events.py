"""The free text of events scrubbed of secrets: :func:`scrub_event`, with a session's
:class:`~ktop.scrub.Secrets`.

The text rules and the known values are in :mod:`ktop.scrub` (the ground floor); this
module knows which fields of which events carry free text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

from ktop.model import events as ev
from ktop.model.events import Event
from ktop.scrub import Secrets

Scrub = Callable[[object], str]
_Scrubber = Callable[[Any, Scrub], Any]


def _text_field(name: str) -> _Scrubber:
    def scrub_field(event: Any, scrub: Scrub) -> Any:
        text = getattr(event, name)
        clean = scrub(text)
        return event if clean == text else replace(event, **{name: clean})

    return scrub_field


def _parse_errors(event: ev.MetricsScraped, scrub: Scrub) -> ev.MetricsScraped:
    if not event.parse_errors:
        return event
    errors = tuple(scrub(e) for e in event.parse_errors)
    return event if errors == event.parse_errors else replace(event, parse_errors=errors)


def _pending_pod_message(event: ev.PendingPodUpserted, scrub: Scrub) -> ev.PendingPodUpserted:
    message = event.pod.message
    if not message:
        return event
    clean = scrub(message)
    if clean == message:
        return event
    return replace(event, pod=replace(event.pod, message=clean))


_EVENT_SCRUBBERS: dict[type, _Scrubber] = {
    ev.FeedFailed: _text_field("reason"),
    ev.ScrapeFailed: _text_field("reason"),
    ev.TargetGone: _text_field("reason"),
    ev.MetricsOnlyMode: _text_field("why"),
    ev.PendingPodUpserted: _pending_pod_message,
    ev.ApfDumpFailed: _text_field("reason"),
    ev.ApfRequestsFailed: _text_field("reason"),
    ev.SourceStarted: _text_field("detail"),
    ev.WarningEvent: _text_field("message"),
    ev.ObjectsSkipped: _text_field("example"),
    ev.MetricsScraped: _parse_errors,
}
"""The events that carry free text, and how to scrub each (one dict lookup per event)."""


def scrub_event(event: Event, secrets: Secrets) -> Event:
    """``event`` with every free-text field scrubbed with ``secrets`` (the same object
    when nothing changed).

    The hub applies this to every event, so that nothing a source reports
    (a failure reason, a server URL, a Warning event's message) reaches the
    screen, a recording or a bundle with a secret in it.
    """
    scrubber = _EVENT_SCRUBBERS.get(type(event))
    return event if scrubber is None else cast(Event, scrubber(event, secrets.scrub))
