"""Prometheus text exposition parsing, filtered to the families ktop uses.

A kube-apiserver exposes megabytes of text per scrape, most of it families
ktop never reads. The parser therefore looks at each line's metric name
first (two string partitions and one set lookup) and parses labels and
values only for the lines it keeps.

Format handled (the Prometheus text format 0.0.4): comment, ``# HELP`` and
``# TYPE`` lines; blank lines; ``\\n`` or ``\\r\\n`` line ends, with or
without a final newline; ``name value``, ``name{} value`` and
``name{a="x",b="y",} value [timestamp]``; label values with the escapes
``\\\\``, ``\\"`` and ``\\n`` (any other escaped character is kept as is, as
Prometheus does) and with any other character, including ``,``, ``}``, ``=``
and NUL (the node lifecycle controller's ``zone`` label is
``region:\\x00:zone``); values ``+Inf``, ``-Inf``, ``NaN`` and scientific
notation. The timestamp is checked and dropped.
"""

from __future__ import annotations

import functools
import math
import re
import sys
from collections.abc import Collection
from dataclasses import dataclass

from ktop.model.events import Labels, Sample

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
"""Sample-name suffixes that belong to a histogram (or summary) family."""

_LABEL_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_LABEL_NAME_CHARS = _LABEL_NAME_START | frozenset("0123456789")
_INF_SPELLINGS = ("inf", "infinity")
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n"}
_BLANKS = " \t"
# Possessive quantifiers: a label block that does not match fails in linear time
# (with backtracking, a pair followed by many blanks took minutes).
_PAIR = r'[ \t]*+[a-zA-Z_][a-zA-Z0-9_]*+[ \t]*+=[ \t]*+"[^"\\]*+"[ \t]*+'
_SIMPLE_LABELS = re.compile(rf"(?:{_PAIR},)*+(?:{_PAIR})?+[ \t]*+")
"""A label set without escapes, validated in one C-level match (the fast path)."""
MAX_LINE_CHARS = 65536
"""A sample line longer than this is reported and skipped (real ones are < 1 KiB)."""
MAX_LABEL_VALUE_CHARS = 16384
"""A label value longer than this is reported and its line skipped."""
LABEL_BLOCK_CACHE = 8_192
"""Label blocks remembered across scrapes: a 10,000-node lab's apiserver keeps about
5,300 distinct blocks, shared by its instances, at about 600 bytes each (3.2 MB held,
measured with tracemalloc; at most about 5 MB). Halves the parse (52 to 25 ms for a real
1.9 MB exposition)."""
MAX_ERRORS = 100
"""At most this many malformed lines are described; the rest are counted."""
_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_SIMPLE_PAIR = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)[ \t]*=[ \t]*"([^"]*)"')


@dataclass(frozen=True, slots=True)
class ParsedExposition:
    """Samples kept, and the malformed lines met on the way (line number: problem)."""

    samples: tuple[Sample, ...]
    errors: tuple[str, ...]
    lines_total: int
    lines_kept: int


class _LineError(Exception):
    """A problem in one sample line (internal)."""


def skipped_count(errors: Collection[str]) -> int:
    """How many lines ``errors`` describes, counting those summarised as ``... and N more``."""
    items = list(errors)
    if items and items[-1].startswith("... and "):
        return len(items) - 1 + int(items[-1].split()[2])
    return len(items)


def accepted_names(wanted: Collection[str]) -> frozenset[str]:
    """The sample names that belong to the ``wanted`` families.

    A family ``x`` matches the sample name ``x`` (counters, gauges, summary
    quantiles) and ``x_bucket``, ``x_sum`` and ``x_count``.
    """
    names = set(wanted)
    names.update(w + s for w in wanted for s in HISTOGRAM_SUFFIXES)
    return frozenset(names)


def parse_exposition(
    text: str, wanted: Collection[str], *, check_all: bool = False
) -> ParsedExposition:
    """Parse the samples of the wanted metric families out of an exposition.

    ``wanted`` holds family names; a histogram family ``x`` matches the
    sample names ``x_bucket``, ``x_sum`` and ``x_count``. Lines of other
    families are skipped before any parsing. A malformed line is recorded in
    ``errors`` and skipped; it never stops the rest from being read.

    Only kept lines are checked, so a malformed line of an unwanted family is not
    reported, unless ``check_all`` is set (a bundle's files, read once): then every sample
    line is checked (its metric name too) and only the wanted ones are kept.

    ``lines_total`` counts every line of the text (a final newline does not start another
    line); ``lines_kept`` counts the samples
    returned. Labels are sorted by name; names and label strings are
    interned, since the same few hundred strings recur in every scrape.
    """
    accept = accepted_names(wanted)
    lines = text.split("\n")
    lines_total = len(lines) - 1 if text.endswith("\n") else len(lines)
    if not text:
        lines_total = 0
    samples: list[Sample] = []
    errors: list[str] = []
    errors_total = 0
    seen: set[tuple[str, Labels]] = set()
    label_names: dict[str, str] = {}
    intern = sys.intern
    for lineno, line in enumerate(lines, 1):
        if not line or line[0] == "#":
            continue
        if line[-1] == "\r":
            line = line[:-1]
        if not line or line[0] in _BLANKS:
            line = line.lstrip(_BLANKS)
            if not line or line[0] == "#":
                continue
        name = line.partition(" ")[0].partition("{")[0]
        if "\t" in name:
            name = name.partition("\t")[0]
        if name not in accept and not check_all:
            continue
        try:
            if len(line) > MAX_LINE_CHARS:
                raise _LineError(f"longer than {MAX_LINE_CHARS} characters")
            if name not in accept:
                _check_unwanted(line, name, label_names)
                continue
            labels, value = _parse_sample(line, len(name), label_names)
        except _LineError as exc:
            errors_total += 1
            if len(errors) < MAX_ERRORS:
                errors.append(f"line {lineno}: {exc}")
            continue
        key = (name, labels)
        if key in seen:
            # Prometheus rejects a repeated series; ktop keeps the first and says so
            # (summing the two doubled the rate).
            errors_total += 1
            if len(errors) < MAX_ERRORS:
                errors.append(f"line {lineno}: duplicate series {name}, kept the first")
            continue
        seen.add(key)
        samples.append(Sample(intern(name), labels, value))
    if errors_total > len(errors):
        errors.append(f"... and {errors_total - len(errors)} more")
    return ParsedExposition(tuple(samples), tuple(errors), lines_total, len(samples))


def _check_unwanted(line: str, name: str, label_names: dict[str, str]) -> None:
    """Check a sample line of a family ktop does not read (its sample is dropped)."""
    if not _METRIC_NAME.fullmatch(name):
        what = "no metric name" if not name else f"invalid metric name {name[:80]!r}"
        raise _LineError(f"{what}; expected <name>[{{labels}}] <value> [timestamp]")
    _parse_sample(line, len(name), label_names)


def _parse_sample(line: str, i: int, label_names: dict[str, str]) -> tuple[Labels, float]:
    """Labels and value of a sample line whose metric name ends at ``i``."""
    n = len(line)
    while i < n and line[i] in _BLANKS:
        i += 1
    labels: Labels = ()
    if i < n and line[i] == "{":
        close = line.rfind("}")
        simple = _simple_block(line[i + 1 : close]) if close > i else None
        if simple is not None:
            labels = simple
            i = close + 1
        else:
            labels, i = _parse_labels(line, i + 1, label_names)
    rest = line[i:].split()
    if not rest:
        raise _LineError("missing value")
    if len(rest) > 2:
        raise _LineError("unexpected text after value and timestamp")
    value = _parse_float(rest[0])
    if len(rest) == 2:
        stamp = rest[1]
        digits = stamp[1:] if stamp[0] in "+-" else stamp
        if not digits.isdigit() or not digits.isascii():
            raise _LineError(f"invalid timestamp {stamp!r}")
    return labels, value


def _parse_float(token: str) -> float:
    """A sample value as Go's ``strconv.ParseFloat`` reads it (no digit underscores)."""
    if "_" in token:
        raise _LineError(f"invalid value {token!r}")
    try:
        value = float(token)
    except ValueError:
        raise _LineError(f"invalid value {token!r}") from None
    if math.isinf(value) and token.lstrip("+-").lower() not in _INF_SPELLINGS:
        # Go's ParseFloat says "value out of range" (Prometheus refuses the line)
        raise _LineError(f"value {token[:40]!r} out of range (larger than a float64)")
    return value


@functools.lru_cache(maxsize=LABEL_BLOCK_CACHE)
def _simple_block(block: str) -> Labels | None:
    """Labels of an escape-free label block (the text between the braces); None when it
    needs the full parser. Cached: the same blocks come back in every scrape of every
    instance, so most lines cost a lookup (a block that raises is not cached).
    """
    if not _SIMPLE_LABELS.fullmatch(block):
        return None
    return _simple_labels(block)


def _simple_labels(block: str) -> Labels:
    """Labels of a validated escape-free label block (text between the braces)."""
    intern = sys.intern
    pairs = [(intern(k), intern(v)) for k, v in _SIMPLE_PAIR.findall(block)]
    if len(pairs) > 1:
        pairs.sort()
        _check_unique(pairs)
    if len(block) > MAX_LABEL_VALUE_CHARS and any(len(v) > MAX_LABEL_VALUE_CHARS for _, v in pairs):
        raise _LineError(f"a label value longer than {MAX_LABEL_VALUE_CHARS} characters")
    return tuple(pairs)


def _check_unique(pairs: list[tuple[str, str]]) -> None:
    """Reject a sorted label list that repeats a name."""
    for k in range(1, len(pairs)):
        if pairs[k][0] == pairs[k - 1][0]:
            raise _LineError(f"duplicate label {pairs[k][0]!r}")


def _parse_labels(line: str, i: int, label_names: dict[str, str]) -> tuple[Labels, int]:
    """Parse labels from just after ``{``; return them sorted and the index after ``}``."""
    intern = sys.intern
    pairs: list[tuple[str, str]] = []
    n = len(line)
    while True:
        while i < n and line[i] in _BLANKS:
            i += 1
        if i >= n:
            raise _LineError("unterminated label set")
        if line[i] == "}":
            i += 1
            break
        eq = line.find("=", i)
        if eq < 0:
            raise _LineError("label without '='")
        raw_name = line[i:eq].rstrip(_BLANKS)
        name = label_names.get(raw_name)
        if name is None:
            if not _valid_label_name(raw_name):
                raise _LineError(f"invalid label name {raw_name!r}")
            name = label_names[raw_name] = intern(raw_name)
        j = eq + 1
        while j < n and line[j] in _BLANKS:
            j += 1
        if j >= n or line[j] != '"':
            raise _LineError(f"label {name!r} value is not quoted")
        j += 1
        quote = line.find('"', j)
        if quote < 0:
            raise _LineError("unterminated label value")
        if line.find("\\", j, quote) < 0:
            value = line[j:quote]
            i = quote + 1
        else:
            value, i = _unescape(line, j)
        if len(value) > MAX_LABEL_VALUE_CHARS:
            raise _LineError(f"label {name!r} value longer than {MAX_LABEL_VALUE_CHARS} characters")
        pairs.append((name, intern(value)))
        while i < n and line[i] in _BLANKS:
            i += 1
        if i >= n:
            raise _LineError("unterminated label set")
        if line[i] == ",":
            i += 1
        elif line[i] == "}":
            i += 1
            break
        else:
            raise _LineError(f"expected ',' or '}}' after label {name!r}")
    if len(pairs) > 1:
        pairs.sort()
        _check_unique(pairs)
    return tuple(pairs), i


def _unescape(line: str, j: int) -> tuple[str, int]:
    """Read an escaped label value from just after its opening quote.

    The next quote and backslash are searched for again only once passed, so
    a value made of many escapes is read in linear time.
    """
    out: list[str] = []
    n = len(line)
    start = j
    quote = slash = -2
    while True:
        if quote != -1 and quote < j:
            quote = line.find('"', j)
        if slash != -1 and slash < j:
            slash = line.find("\\", j)
        if slash < 0 or (0 <= quote < slash):
            if quote < 0:
                raise _LineError("unterminated label value")
            out.append(line[start:quote])
            return "".join(out), quote + 1
        if slash + 1 >= n:
            raise _LineError("unterminated label value")
        out.append(line[start:slash])
        esc = line[slash + 1]
        out.append(_ESCAPES.get(esc, "\\" + esc))
        j = start = slash + 2


def _valid_label_name(name: str) -> bool:
    """``[a-zA-Z_][a-zA-Z0-9_]*``."""
    return bool(name) and name[0] in _LABEL_NAME_START and all(c in _LABEL_NAME_CHARS for c in name)
