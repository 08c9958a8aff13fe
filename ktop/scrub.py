"""Removing secrets from any text ktop writes: the shape rules, and the credentials one
session read (:class:`Secrets`).

Every message that leaves ktop (an error on the command line, a crash report, a log
record, a failure shown in a pane, and anything a recording or bundle stores) must pass
through :meth:`Secrets.scrub` of the session's instance. It removes two kinds of secret:

* **known values**: the credentials ktop itself read (kubeconfig tokens, passwords,
  client keys, auth-provider settings, exec-plugin environment, arguments and the token
  the plugin printed) are recorded with :meth:`Secrets.add` into the instance of the
  session that read them, and every later occurrence is replaced, whatever text it
  appears in (a library's exception, a URL, a server's echo);
* **shapes**: ``Authorization:`` headers, ``Bearer``/``Basic`` credentials,
  ``key: value`` / ``key=value`` pairs whose key names a secret (token, password,
  client-key-data, ...), URL user-info (``https://user:pass@``), URL query parameters
  that name a secret (``?token=``), PEM private keys and JWTs, even when ktop never saw
  the value before. :func:`scrub_shapes` applies these alone, for text made before
  any credential can have been read (the config file, as the command line is parsed).

The module is pure (no I/O) and on the ground floor, so that every layer may use it. It
holds no state of its own: the known values live in the :class:`Secrets` a session
makes (``ktop.cli.main``, once per run) and hands down to everything that reads
credentials or writes text. Values shorter than :data:`MIN_SECRET_LEN` are not recorded
(replacing every ``"ab"`` would garble all text and hide nothing).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlsplit

MASK = "<redacted>"
MIN_SECRET_LEN = 4
"""Known values shorter than this are not recorded."""

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
_PAIR_KEY = re.compile(r"(?<![A-Za-z0-9_/\\-])([A-Za-z0-9_-]+)[\"']?\s*[:=]\s*[\"']?")
"""``key: value``, ``key=value``, ``"key": "value"`` (YAML, JSON, query strings, env).
A name right after a path separator is a file's name, not a key: in
``cannot read /run/token: No such file or directory`` nothing is a secret."""
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
            r"(?<![/\\])((?:proxy-)?authorization['\"]?\s*[:=]\s*['\"]?)[^'\",}\r\n]+",
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


def _safe_str(value: object) -> str:
    try:
        return str(value)
    except Exception:  # a broken __str__ must not hide the original error
        return f"<{type(value).__name__}>"


def _text(value: object) -> str:
    return value if isinstance(value, str) else _safe_str(value)


def _shapes(text: str) -> str:
    lower = text.lower()
    for trigger, pattern, replacement in _PATTERNS:
        if trigger in lower:  # a cheap test first: most messages hold no secret at all
            text = pattern.sub(replacement, text)
    if _SECRET_WORD.search(lower):
        text = _mask_values(text, _PAIR_KEY, _PAIR_VALUE)
        text = _mask_values(text, _FLAG_KEY, _FLAG_VALUE)
    return text


def scrub_shapes(text: object) -> str:
    """``text`` (anything, as ``str()``) with everything shaped like a secret masked.

    Only for text made where no credential can have been read yet; everywhere else use
    the session's :meth:`Secrets.scrub`, which applies these rules too.
    """
    return _shapes(_text(text))


def url_credentials(url: str) -> list[str]:
    """The credentials a URL given to ktop carries: the password (and the whole user
    information) before the host, and the value of every query parameter whose name is a
    secret's (``?token=``). Recorded into the session's :class:`Secrets` as the command
    line is read, so that no message shows them, however a library reshapes the URL.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        found += [userinfo, userinfo.partition(":")[2]]
    found += [v for k, v in parse_qsl(parts.query) if _names_secret(k)]
    return [v for v in found if v]


_TOKENISH = re.compile(r"[A-Za-z0-9+/_=.~-]{20,}")


def _mask_tokenish(m: re.Match[str]) -> str:
    word = m.group(0)
    has_alpha = any(c.isalpha() for c in word)
    has_digit = any(c.isdigit() for c in word)
    return MASK if has_alpha and has_digit else word


class Secrets:
    """The credentials one session read, and the scrubbing that removes them (and every
    shape of secret) from text.

    Whoever reads a credential records it with :meth:`add`; everything that writes text
    scrubs it with :meth:`scrub`. Instances share nothing: a value added to one is
    unknown to another, except that a :meth:`child` also records what it is given into
    its parent (a fleet's cells each read their own credentials, and the fleet's own
    text is scrubbed of all of them). Thread-safe (log records are scrubbed in any
    thread); the set of values only grows. Its ``repr`` never shows a value.
    """

    __slots__ = ("_lock", "_parent", "_pattern", "_values")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        """One pattern matching any known value (None: none known)."""
        self._parent: Secrets | None = None

    def child(self) -> Secrets:
        """A new instance whose values are recorded into this one too (not the reverse)."""
        kid = Secrets()
        kid._parent = self
        return kid

    def add(self, value: object) -> None:
        """Remember a credential so that :meth:`scrub` removes it from any later text.

        Anything but text, and text shorter than :data:`MIN_SECRET_LEN` (stripped), is
        ignored; of ``Bearer X`` / ``Basic X`` both the whole and ``X`` are recorded.
        """
        if not isinstance(value, str):
            return
        value = value.strip()
        if len(value) < MIN_SECRET_LEN:
            return
        self._record(value)
        if value.startswith(("Bearer ", "Basic ")):
            bare = value.split(" ", 1)[1].strip()
            if len(bare) >= MIN_SECRET_LEN:
                self._record(bare)

    def add_all(self, values: Iterable[object]) -> None:
        """:meth:`add` for each value."""
        for value in values:
            self.add(value)

    def _record(self, value: str) -> None:
        with self._lock:
            if value not in self._values:
                self._values.add(value)
                # Longest first, so that a secret containing another is removed whole.
                ordered = sorted(self._values, key=len, reverse=True)
                self._pattern = re.compile("|".join(re.escape(v) for v in ordered))
        if self._parent is not None:
            self._parent._record(value)

    def scrub(self, text: object) -> str:
        """``text`` (anything, as ``str()``) with every known and recognisable secret
        masked.
        """
        out = _text(text)
        known = self._pattern
        if known is not None:
            out = known.sub(MASK, out)
        return _shapes(out)

    def scrub_opaque(self, text: object) -> str:
        """:meth:`scrub`, and also mask every long token-like word (letters and digits
        mixed).

        For text whose author ktop does not know, such as an exec credential plugin's
        standard error: a plugin may print the very token it failed to deliver, in no
        recognisable shape.
        """
        return _TOKENISH.sub(_mask_tokenish, self.scrub(text))

    def __repr__(self) -> str:
        return f"<Secrets: {len(self._values)} known values>"
