"""Checked decoding of a recording's records: plain data to events, refusing wrong types.

A recording is untrusted input (it arrives attached to bug reports), so nothing it holds
reaches the model unchecked: every field must have the type its event class declares
(a string where ``str`` is declared, an integer and not a boolean where ``int`` is, a
number where ``float`` is, a known value where an enum is), every nested record must be
an array with at least its required fields. A value that does not fit raises
:class:`RecordError`, whose message names the field and what was expected.

The rules on length are those of the format (docs/recording-format.md): missing trailing
fields take their defaults, extra trailing items are ignored.

The field types are taken apart by :class:`ktop.model.plaindata.TypeWalk`, as for the
plain encoding and decoding; this module says only how each kind is checked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from enum import Enum
from typing import Any

from ktop.model.events import Sample
from ktop.model.plaindata import TypeWalk, builder
from ktop.record.format import LATEST_TIME

Check = Callable[[Any], Any]


class RecordError(ValueError):
    """A record whose data does not fit its declared type; the message says which field."""


def _kind(value: Any) -> str:
    """What a value is, in the format's words (msgpack types)."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bytes):
        return "binary data"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a map"
    return type(value).__name__


def expected(what: str, value: Any) -> RecordError:
    """The error for ``value`` where ``what`` was expected."""
    return RecordError(f"expected {what}, got {_kind(value)}")


def number(value: Any) -> float:
    """A msgpack number as a float (a boolean or anything else is refused)."""
    if type(value) is float:
        return value
    if type(value) is int:
        return float(value)
    raise expected("a number", value)


def finite_time(value: Any) -> float:
    """A time: a finite number between 0 and the year 9999."""
    t = number(value)
    if not 0.0 <= t <= LATEST_TIME:  # also false for NaN
        raise RecordError(f"expected a time (Unix seconds), got {t!r}")
    return t


def _str(value: Any) -> str:
    if type(value) is not str:
        raise expected("a string", value)
    return value


def _int(value: Any) -> int:
    if type(value) is not int:
        raise expected("an integer", value)
    return value


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise expected("a boolean", value)
    return value


def array(value: Any, what: str = "an array") -> list[Any]:
    """``value`` when it is an array (msgpack arrays decode as lists), else an error."""
    if type(value) is not list:
        raise expected(what, value)
    return value


_SAMPLE = builder(Sample)


def _sample(v: Any) -> Sample:
    """The hot path: most records of a recording are samples."""
    if type(v) is not list or len(v) < 3:
        raise expected("a Sample array of 3 items", v)
    name = v[0]
    if type(name) is not str:
        raise RecordError(f"Sample.name: {expected('a string', name)}")
    try:
        pairs = tuple(map(tuple, v[1]))
        for a, b in pairs:
            if type(a) is not str or type(b) is not str:
                raise TypeError
    except (TypeError, ValueError):
        raise RecordError("Sample.labels: expected an array of [name, value] strings") from None
    sample: Sample = _SAMPLE(name, pairs, number(v[2]))
    return sample


def _fails(dec: Check, value: Any) -> bool:
    try:
        dec(value)
    except RecordError:
        return True
    return False


_SCALARS: dict[Any, Check] = {float: number, str: _str, int: _int, bool: _bool}


class _Checking(TypeWalk):
    """Plain data to values, refusing wrong types with :class:`RecordError`."""

    what = "checked decoding"

    def scalar(self, tp: type[Any]) -> Check:
        return _SCALARS[tp]

    def optional(self, inner_tp: Any, inner: Check) -> Check:
        return lambda v: None if v is None else inner(v)

    def enum(self, tp: type[Enum]) -> Check:
        enum = tp
        names = " / ".join(str(m.value) for m in enum)
        members = {m.value: m for m in enum if type(m.value) is str}

        def dec_enum(v: Any) -> Any:
            got = members.get(v) if type(v) is str else None
            if got is not None:
                return got
            try:
                return enum(_str(v))
            except ValueError:
                raise RecordError(f"expected one of {names}, got {str(v)[:40]!r}") from None

        return dec_enum

    def repeated(self, item: Check) -> Check:
        return lambda v: tuple([item(x) for x in array(v)])

    def fixed(self, items: list[Check]) -> Check:
        n = len(items)

        def dec_tuple(v: Any) -> tuple[Any, ...]:
            if len(array(v)) != n:
                raise RecordError(f"expected an array of {n} items, got {len(v)}")
            return tuple([d(x) for d, x in zip(items, v, strict=True)])

        return dec_tuple

    def record(self, cls: type[Any]) -> Check:
        if cls is Sample:
            return _sample
        return _record(cls, self.fields(cls))


_CHECKING = _Checking()
_CHECKS = _CHECKING.built


def checked(tp: Any) -> Check:
    """A function from plain data to a value of type ``tp`` that refuses wrong types with
    :class:`RecordError` (built once per type).
    """
    out = _CHECKS.get(tp)
    if out is None:
        out = _CHECKING(tp)
    return out


def _record(cls: type[Any], fields: list[tuple[dataclasses.Field[Any], Check]]) -> Check:
    decs = [(f.name, dec) for f, dec in fields]
    n = len(decs)
    required = sum(
        1
        for f, _ in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    )
    timed = bool(fields) and fields[0][0].name == "at"
    name = cls.__name__
    make = builder(cls)

    def dec_record(v: Any) -> Any:
        items = array(v, f"a {name} array")
        if len(items) < required:
            raise RecordError(f"{name}: expected at least {required} fields, got {len(items)}")
        try:
            values = [dec(x) for (_, dec), x in zip(decs, items[:n], strict=False)]
        except RecordError as exc:  # name the field (found again: errors are rare)
            field = next(f for (f, d), x in zip(decs, items, strict=False) if _fails(d, x))
            raise RecordError(f"{name}.{field}: {exc}") from None
        if timed:
            try:
                finite_time(values[0])
            except RecordError as exc:
                raise RecordError(f"{name}.at: {exc}") from None
        return make(*values)

    return _fast(decs, timed, make, dec_record)


_EXACT = {_str: "str", _int: "int", _bool: "bool"}
"""The checks that are a type test (a float field also takes an integer)."""


def _fast(decs: list[tuple[str, Check]], timed: bool, make: Check, slow: Check) -> Check:
    """``slow`` (a record's checked decoding) with a first try made for the usual record,
    every field present and of its type: each scalar field's type tested inline, nested
    records decoded by their own check, the record made. Anything else (a missing or
    wrong field, a nested fault) goes to ``slow``, which decodes it or says what is wrong.
    """
    env: dict[str, Any] = {"_make": make, "_slow": slow, "_E": RecordError, "_L": LATEST_TIME}
    load, tests, nested, names = [], [], [], []
    for i, (_, dec) in enumerate(decs):
        x = f"x{i}"
        names.append(x)
        load.append(f" {x} = v[{i}]")
        if dec is number:
            load.append(f" if type({x}) is int: {x} = float({x})")
            tests.append(f"type({x}) is float")
        elif dec in _EXACT:
            tests.append(f"type({x}) is {_EXACT[dec]}")
        else:
            env[f"_d{i}"] = dec
            nested.append(f"  {x} = _d{i}({x})")
    if timed and decs and decs[0][1] is number:
        tests.append("0.0 <= x0 <= _L")  # also false for NaN
    source = [
        "def dec_fast(v):",
        f" if type(v) is not list or len(v) < {len(decs)}: return _slow(v)",
        *load,
        f" if not ({' and '.join(tests) or 'True'}): return _slow(v)",
    ]
    if nested:
        source += [" try:", *nested, " except _E: return _slow(v)"]
    source.append(f" return _make({', '.join(names)})")
    exec("\n".join(source), env)  # one function per record class, as dataclasses make theirs
    fast: Check = env["dec_fast"]
    return fast
