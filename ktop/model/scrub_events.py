"""The text of events made safe: free text scrubbed of secrets with a session's
:class:`~ktop.scrub.Secrets`, and every string printable (:func:`scrub_event`).

The text rules and the known values are in :mod:`ktop.scrub` (the ground floor); this
module knows which fields of which events carry free text. Every string of every event
(names and identifiers too, nested records and tuples included) has its control
characters escaped by :func:`~ktop.printable.printable` (:func:`printable_event`): a
Warning event's message, a node's name or a marker's note from a hostile cluster or
recording cannot set the clipboard (OSC 52), clear the screen or make a fake line in a
report, whether the dashboard, a recording, triage or JSON shows it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import replace
from enum import Enum
from typing import Any, cast

from ktop.model import events as ev
from ktop.model.events import Event, Sample
from ktop.model.plaindata import Convert, TypeWalk
from ktop.model.zones import ZONE_KEY_SEP
from ktop.printable import printable
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
    ev.ProviderDetected: _text_field("because"),
    ev.WarningEvent: _text_field("message"),
    ev.ObjectsSkipped: _text_field("example"),
    ev.MetricsScraped: _parse_errors,
}
"""The events that carry free text, and how to scrub each (one dict lookup per event)."""


def scrub_event(event: Event, secrets: Secrets) -> Event:
    """``event`` with every free-text field scrubbed with ``secrets`` and every string
    printable (:func:`printable_event`); the same object when nothing changed.

    The hub applies this to every event, so that nothing a source reports
    (a failure reason, a server URL, a Warning event's message) reaches the
    screen, a recording or a bundle with a secret or a control character in it.
    """
    scrubber = _EVENT_SCRUBBERS.get(type(event))
    if scrubber is not None:
        event = cast(Event, scrubber(event, secrets.scrub))
    return printable_event(event)


def printable_event(event: Event) -> Event:
    """``event`` with every string in it (nested records and tuples included) passed
    through :func:`~ktop.printable.printable`; the same object when none held a control
    character. Cheap when none does (one ``str.isprintable`` per string).
    """
    return cast(Event, _PRINTING(type(event))(event))


def printable_text(text: str) -> str:
    """``text`` with its control characters escaped (newlines too); ``text`` itself when it
    holds none (a name object stays the same object: lookups by identity keep working).
    The one control character real data holds is kept: the NUL of Kubernetes' zone keys
    (``region:\\x00:zone`` in the node lifecycle controller's labels, parsed before any is
    shown; a terminal does nothing with a NUL).
    """
    if text.isprintable():
        return text
    if ZONE_KEY_SEP in text:
        out = ZONE_KEY_SEP.join(printable(part) for part in text.split(ZONE_KEY_SEP))
    else:
        out = printable(text)
    return text if out == text else out


def _keep(value: Any) -> Any:
    return value


def _printable_strings(values: tuple[str, ...]) -> tuple[str, ...]:
    if "".join(values).isprintable():
        return values
    return tuple([printable_text(v) for v in values])


def _printable_samples(samples: tuple[Sample, ...]) -> tuple[Sample, ...]:
    """The hot path: a scrape's samples, their names and labels checked in C when clean."""
    for s in samples:
        if not s.name.isprintable():
            break
        labels = s.labels
        if labels and not "".join([a + b for a, b in labels]).isprintable():
            break
    else:
        return samples
    return tuple([_printable_sample(s) for s in samples])


def printable_samples(
    names: tuple[str, ...], labels: tuple[ev.Labels, ...]
) -> tuple[tuple[str, ...], tuple[ev.Labels, ...]]:
    """A scrape's sample names and labels (a recording's layout) made printable; the same
    objects when they hold no control character.
    """
    flat = "".join(names) + "".join([a + b for pairs in labels for a, b in pairs])
    if flat.isprintable():
        return names, labels
    return _printable_strings(names), tuple(
        tuple((printable_text(a), printable_text(b)) for a, b in pairs) for pairs in labels
    )


def _printable_sample(s: Sample) -> Sample:
    if s.name.isprintable() and "".join([a + b for a, b in s.labels]).isprintable():
        return s
    labels = tuple((printable_text(a), printable_text(b)) for a, b in s.labels)
    return Sample(printable_text(s.name), labels, s.value)


class _Printing(TypeWalk):
    """Builds, once per type, the function that makes every string of a value printable
    (the value itself when nothing changed; :func:`_keep` for types without strings).
    """

    what = "printable text"

    def scalar(self, tp: type[Any]) -> Convert:
        return printable_text if tp is str else _keep

    def optional(self, inner_tp: Any, inner: Convert) -> Convert:
        if inner is _keep:
            return _keep
        return lambda v: None if v is None else inner(v)

    def enum(self, tp: type[Enum]) -> Convert:
        return _keep

    def repeated(self, item: Convert) -> Convert:
        if item is _keep:
            return _keep
        if item is printable_text:
            return _printable_strings
        if item is _printable_sample:
            return _printable_samples

        def each(values: tuple[Any, ...]) -> tuple[Any, ...]:
            out = tuple([item(v) for v in values])
            return values if all(map(operator.is_, out, values)) else out

        return each

    def fixed(self, items: list[Convert]) -> Convert:
        if all(i is _keep for i in items):
            return _keep

        def each(values: tuple[Any, ...]) -> tuple[Any, ...]:
            out = tuple([i(v) for i, v in zip(items, values, strict=True)])
            return values if all(map(operator.is_, out, values)) else out

        return each

    def record(self, cls: type[Any]) -> Convert:
        if cls is Sample:
            return _printable_sample
        fields = [(f.name, c) for f, c in self.fields(cls) if c is not _keep]
        if not fields:
            return _keep

        def each(value: Any) -> Any:
            changed = {}
            for name, convert in fields:
                old = getattr(value, name)
                new = convert(old)
                if new is not old:
                    changed[name] = new
            return replace(value, **changed) if changed else value

        return each


_PRINTING = _Printing()


_NUMBERS = (int, float, bool)


def printable_plain(value: Any) -> Any:
    """Plain data (a recording keyframe's model state: strings, numbers, lists and
    string-keyed maps) with every string's control characters escaped, keys included.

    Lists and maps are changed in place (the state was just decoded and is not shared);
    a string with no control character stays the same object. Numbers are passed over,
    so a column of a million values costs one type test each.
    """
    kind = type(value)
    if kind is str:
        return printable_text(value)
    if kind is list:
        for i, item in enumerate(value):
            if item is None or type(item) in _NUMBERS:
                continue
            new = printable_plain(item)
            if new is not item:
                value[i] = new
        return value
    if kind is dict:
        if not all(type(k) is not str or k.isprintable() for k in value):
            value = {printable_plain(k): v for k, v in value.items()}
        for k, item in value.items():
            if item is None or type(item) in _NUMBERS:
                continue
            new = printable_plain(item)
            if new is not item:
                value[k] = new
        return value
    return value
