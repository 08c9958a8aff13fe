"""Removing secrets from any text ktop writes: the one entry point is :func:`scrub`.

Every message that leaves ktop (an error on the command line, a crash
report, a log record, a failure shown in a pane, and anything a recording or
bundle stores) must pass through :func:`scrub`. It removes two kinds of
secret:

* **known values**: the credentials ktop itself read (kubeconfig tokens,
  passwords, client keys, auth-provider settings, exec-plugin environment,
  arguments and the token the plugin printed) are registered with
  :func:`register_secret` when they are read, and every later occurrence is
  replaced, whatever text it appears in (a library's exception, a URL, a
  server's echo);
* **shapes**: ``Authorization:`` headers, ``Bearer``/``Basic`` credentials,
  ``key: value`` / ``key=value`` pairs whose key names a secret (token,
  password, client-key-data, ...), URL user-info (``https://user:pass@``),
  URL query parameters that name a secret (``?token=``), PEM private keys
  and JWTs, even when ktop never saw the value before.

The module is pure (no I/O) so that every layer may import it. The registry
of known values is process-wide and only grows; values shorter than
:data:`MIN_SECRET_LEN` are not registered (replacing every ``"ab"`` would
garble all text and hide nothing).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, cast

from ktop.model import events as ev
from ktop.model.events import Event

MASK = "<redacted>"
MIN_SECRET_LEN = 4
"""Known values shorter than this are not registered."""

_SECRET_WORD = re.compile(
    r"token|passw|passphrase|secret|api[_-]?key|apikey|private[_-]?key"
    r"|client[_-]?key|credential|cookie|session[_-]?id|access[_-]?key|signature|sig"
)
"""Words (in lower case) that make a key (YAML/JSON, query parameter, flag, env var) name a
secret; ``sig`` (a signed URL's signature) only as the whole name. Matched on lower-cased
text without IGNORECASE, which is ten times faster."""


def _names_secret(name: str) -> bool:
    lower = name.lower()
    found = _SECRET_WORD.search(lower)
    return found is not None and (found.group(0) != "sig" or lower == "sig")


# Every pattern is linear in the text (a message from a cluster can be megabytes of
# anything): a key is matched only from the start of a run of name characters (the
# look-behind), never from each position inside it, and checked afterwards.
_PAIR_KEY = re.compile(r"(?<![A-Za-z0-9_-])([A-Za-z0-9_-]+)[\"']?\s*[:=]\s*[\"']?")
"""``key: value``, ``key=value``, ``"key": "value"`` (YAML, JSON, query strings, env)."""
_FLAG_KEY = re.compile(r"(?<![A-Za-z0-9_-])--([A-Za-z0-9_-]+)\s+(?=[^\s\"'-])")
"""``--token VALUE`` (a command line quoted in a message)."""
_PAIR_VALUE = re.compile(r"[^\s\"'&,;}\])]+")
_FLAG_VALUE = re.compile(r"[^\s\"']+")


def _mask_values(text: str, key: re.Pattern[str], value: re.Pattern[str]) -> str:
    """Mask the value after every ``key`` whose name is a secret's.

    Keys are found without consuming their values, so that a key inside a value
    (``https://host/?token=...``) is found too.
    """
    out: list[str] = []
    pos = 0
    for m in key.finditer(text):
        if m.start() < pos or not _names_secret(m.group(1)):
            continue
        v = value.match(text, m.end())
        if v is None:
            continue
        out.append(text[pos : m.end()])
        out.append(MASK)
        pos = v.end()
    out.append(text[pos:])
    return "".join(out)


_PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    # PEM private keys (any kind), whole block.
    (
        "private key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----.*?"
            r"(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|$)",
            re.DOTALL,
        ),
        MASK,
    ),
    # HTTP Authorization / Proxy-Authorization headers, in any quoting.
    (
        "authorization",
        re.compile(
            r"((?:proxy-)?authorization['\"]?\s*[:=]\s*['\"]?)[^'\",}\r\n]+",
            re.IGNORECASE,
        ),
        rf"\1{MASK}",
    ),
    # Bearer / Basic credentials wherever they appear.
    ("bearer", re.compile(r"\b(Bearer)\s+[A-Za-z0-9._~+/=-]+", re.IGNORECASE), rf"\1 {MASK}"),
    ("basic", re.compile(r"\b(Basic)\s+[A-Za-z0-9._~+/=-]+", re.IGNORECASE), rf"\1 {MASK}"),
    # JWTs (header.payload.signature, base64url).
    (
        "eyj",
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"),
        MASK,
    ),
    # URL user-info: scheme://user:password@host  ->  scheme://<redacted>@host
    ("@", re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]{0,30}://)[^/\s@'\"]{1,2000}@"), rf"\1{MASK}@"),
)


class _Registry:
    """The credentials read so far, and one pattern matching any of them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.values: set[str] = set()
        self.pattern: re.Pattern[str] | None = None

    def add(self, value: str) -> None:
        with self.lock:
            self.values.add(value)
            # Longest first, so that a secret containing another is removed whole.
            ordered = sorted(self.values, key=len, reverse=True)
            self.pattern = re.compile("|".join(re.escape(v) for v in ordered))

    def clear(self) -> None:
        with self.lock:
            self.values.clear()
            self.pattern = None


_REGISTRY = _Registry()


def register_secret(value: object) -> None:
    """Remember a credential so that :func:`scrub` removes it from any later text."""
    if not isinstance(value, str):
        return
    value = value.strip()
    if len(value) < MIN_SECRET_LEN or value in _REGISTRY.values:
        return
    _REGISTRY.add(value)
    if value.startswith(("Bearer ", "Basic ")):
        _REGISTRY.add(value.split(" ", 1)[1].strip())


def register_secrets(values: Iterable[object]) -> None:
    """:func:`register_secret` for each value."""
    for value in values:
        register_secret(value)


def forget_secrets() -> None:
    """Empty the registry (for tests)."""
    _REGISTRY.clear()


def scrub(text: object) -> str:
    """``text`` (anything, as ``str()``) with every known and recognisable secret masked."""
    out = text if isinstance(text, str) else _safe_str(text)
    known = _REGISTRY.pattern
    if known is not None:
        out = known.sub(MASK, out)
    lower = out.lower()
    for trigger, pattern, replacement in _PATTERNS:
        if trigger in lower:  # a cheap test first: most messages hold no secret at all
            out = pattern.sub(replacement, out)
    if _SECRET_WORD.search(lower):
        out = _mask_values(out, _PAIR_KEY, _PAIR_VALUE)
        out = _mask_values(out, _FLAG_KEY, _FLAG_VALUE)
    return out


_TOKENISH = re.compile(r"[A-Za-z0-9+/_=.~-]{20,}")


def scrub_opaque(text: object) -> str:
    """:func:`scrub`, and also mask every long token-like word (letters and digits mixed).

    For text whose author ktop does not know, such as an exec credential
    plugin's standard error: a plugin may print the very token it failed to
    deliver, in no recognisable shape.
    """

    def mask(m: re.Match[str]) -> str:
        word = m.group(0)
        has_alpha = any(c.isalpha() for c in word)
        has_digit = any(c.isdigit() for c in word)
        return MASK if has_alpha and has_digit else word

    return _TOKENISH.sub(mask, scrub(text))


def _safe_str(value: object) -> str:
    try:
        return str(value)
    except Exception:  # a broken __str__ must not hide the original error
        return f"<{type(value).__name__}>"


def _text_field(name: str) -> Callable[[Any], Any]:
    def scrub_field(event: Any) -> Any:
        text = getattr(event, name)
        clean = scrub(text)
        return event if clean == text else replace(event, **{name: clean})

    return scrub_field


def _parse_errors(event: ev.MetricsScraped) -> ev.MetricsScraped:
    if not event.parse_errors:
        return event
    errors = tuple(scrub(e) for e in event.parse_errors)
    return event if errors == event.parse_errors else replace(event, parse_errors=errors)


def _pending_pod_message(event: ev.PendingPodUpserted) -> ev.PendingPodUpserted:
    message = event.pod.message
    if not message:
        return event
    clean = scrub(message)
    if clean == message:
        return event
    return replace(event, pod=replace(event.pod, message=clean))


_EVENT_SCRUBBERS: dict[type, Callable[[Any], Any]] = {
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


def scrub_event(event: Event) -> Event:
    """``event`` with every free-text field scrubbed (the same object when nothing changed).

    The hub applies this to every event, so that nothing a source reports
    (a failure reason, a server URL, a Warning event's message) reaches the
    screen, a recording or a bundle with a secret in it.
    """
    scrubber = _EVENT_SCRUBBERS.get(type(event))
    return event if scrubber is None else cast(Event, scrubber(event))
