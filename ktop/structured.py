"""Structured text ktop did not write (JSON, TOML), parsed within named limits.

Python's own parsers fail on hostile input with their own words and no file name: a
number of more than 4,300 digits is a ``ValueError`` about ``sys.set_int_max_str_digits``,
deep nesting a ``RecursionError``. Every JSON and TOML document from outside (config.toml,
themes, bundle files, exec plugin output) is parsed here instead, and each such failure is
an :class:`InputRefusedError` whose message names the file and what was expected. The
limits are data in :mod:`ktop.input_limits`.
"""

from __future__ import annotations

import json
import math
import re
import sys
import tomllib
from typing import Any

from ktop.input_limits import MAX_NESTING, MAX_NUMBER_DIGITS


class InputRefusedError(ValueError):
    """A document ktop will not read; the message names its origin and the problem."""


_TOML_DIGITS = re.compile(rf"[0-9][0-9_]{{{MAX_NUMBER_DIGITS.value},}}")
_TOML_OPEN = re.compile(r"[\[{]")
_JSON_DIGITS = re.compile(rf"[0-9.]{{{MAX_NUMBER_DIGITS.value + 1},}}")


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _toml_depth(text: str) -> tuple[int, int]:
    """The deepest bracket nesting of a TOML text (strings skipped) and where it is.

    Linear in the text (config and theme files are at most a MiB).
    """
    depth = deepest = where = 0
    quote = ""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == "#":
            nl = text.find("\n", i)
            i = n if nl < 0 else nl
            continue
        elif c in "[{":
            depth += 1
            if depth > deepest:
                deepest, where = depth, i
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return deepest, where


def load_toml(text: str, origin: str) -> dict[str, Any]:
    """Parse TOML ``text`` from ``origin`` (a path, for messages).

    Raises :class:`InputRefusedError` for a number longer than
    :data:`~ktop.input_limits.MAX_NUMBER_DIGITS` or nesting deeper than
    :data:`~ktop.input_limits.MAX_NESTING`, and ``tomllib.TOMLDecodeError`` for TOML
    that is not valid (its message has line and column).
    """
    long_number = _TOML_DIGITS.search(text)
    if long_number is not None:
        raise InputRefusedError(
            f"{origin} line {_line_of(text, long_number.start())}: a number longer than "
            f"{MAX_NUMBER_DIGITS.value} digits; expected {MAX_NUMBER_DIGITS.expected}"
        )
    if len(_TOML_OPEN.findall(text)) > MAX_NESTING.value:
        deepest, where = _toml_depth(text)
        if deepest > MAX_NESTING.value:
            raise InputRefusedError(
                f"{origin} line {_line_of(text, where)}: nested {deepest} levels deep; "
                f"expected {MAX_NESTING.expected}"
            )
    return tomllib.loads(text)


class _NotJsonNumberError(ValueError):
    """A JSON number ktop refuses, with what was expected instead."""

    def __init__(self, problem: str, expected: str = MAX_NUMBER_DIGITS.expected) -> None:
        super().__init__(f"{problem}; expected {expected}")


def _refuse_constant(name: str) -> Any:
    raise _NotJsonNumberError(f"{name} is not JSON", "a number (JSON has no NaN or Infinity)")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_NUMBER_DIGITS.value:
        raise _NotJsonNumberError(f"a number of {len(text.lstrip('-'))} digits")
    return int(text)


def _bounded_float(text: str) -> float:
    mantissa = re.split(r"[eE]", text.lstrip("-"), maxsplit=1)[0].replace(".", "")
    if len(mantissa) > MAX_NUMBER_DIGITS.value:
        raise _NotJsonNumberError(f"a number of {len(mantissa)} digits")
    value = float(text)
    if math.isinf(value):
        raise _NotJsonNumberError("a number out of range", "a number within float64's range")
    return value


def load_json(raw: bytes | str, origin: str) -> Any:
    """Parse JSON ``raw`` from ``origin`` (a path or a description, for messages).

    Numbers are bounded by :data:`~ktop.input_limits.MAX_NUMBER_DIGITS`; ``NaN`` and
    ``Infinity`` (not JSON) are refused; nesting deeper than the parser can follow is
    refused with :data:`~ktop.input_limits.MAX_NESTING`'s words. Every failure, the
    ``json.JSONDecodeError`` and ``UnicodeDecodeError`` included, is an
    :class:`InputRefusedError` naming ``origin`` (and the line where known).
    """
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        raise InputRefusedError(f"{origin}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        return json.loads(
            text,
            parse_int=_bounded_int,
            parse_float=_bounded_float,
            parse_constant=_refuse_constant,
        )
    except json.JSONDecodeError as exc:
        raise InputRefusedError(f"{origin} line {exc.lineno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        deepest, deepest_at = _toml_depth(text)
        raise InputRefusedError(
            f"{origin} line {_line_of(text, deepest_at)}: nested {deepest} levels deep, "
            f"deeper than the JSON parser follows (about {sys.getrecursionlimit()} levels); "
            f"expected {MAX_NESTING.expected}"
        ) from None
    except _NotJsonNumberError as exc:
        long_number = _JSON_DIGITS.search(text)
        where = "" if long_number is None else f" line {_line_of(text, long_number.start())}"
        raise InputRefusedError(f"{origin}{where}: {exc}") from None
