"""Frozen records to plain data and back, driven by their type hints.

A record (an event, a ``NodeRecord``, a ``Target``...) becomes a list of its
field values in declaration order; nested records become nested lists,
enums their string value, tuples lists. Decoding reads the field types, so
the plain form carries no type names and a file written by an older ktop
(fewer trailing fields) decodes with the newer fields at their defaults.

Integral floats are written as integers (they are shorter in msgpack) and
read back as floats, so the round trip is exact.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable
from enum import Enum
from typing import Any

from ktop.model.events import Sample

Encode = Callable[[Any], Any]
Decode = Callable[[Any], Any]
_EXACT_INT = 2**53


def _enc_float(v: float) -> float | int:
    if not isinstance(v, float):
        return v  # an int where a float is declared: read back as float
    if v.is_integer() and -_EXACT_INT < v < _EXACT_INT and math.copysign(1.0, v) > 0:
        return int(v)
    if v.is_integer() and -_EXACT_INT < v < 0:
        return int(v)
    return v


def _enc_opt_float(v: float | None) -> float | int | None:
    return None if v is None else _enc_float(v)


def _identity(v: Any) -> Any:
    return v


def _dec_opt_float(v: Any) -> float | None:
    return None if v is None else float(v)


def _optional_inner(tp: Any) -> Any | None:
    """``X`` when ``tp`` is ``X | None``; ``None`` otherwise."""
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            return args[0]
    return None


_ENCODERS: dict[Any, Encode] = {}
_DECODERS: dict[Any, Decode] = {}


def encoder(tp: Any) -> Encode:
    """A function from a value of type ``tp`` to plain data (built once per type)."""
    out = _ENCODERS.get(tp)
    if out is None:
        out = _ENCODERS[tp] = _make_encoder(tp)
    return out


def decoder(tp: Any) -> Decode:
    """A function from plain data back to a value of type ``tp`` (built once per type)."""
    out = _DECODERS.get(tp)
    if out is None:
        out = _DECODERS[tp] = _make_decoder(tp)
    return out


def _make_encoder(tp: Any) -> Encode:
    if tp is float:
        return _enc_float
    if tp in (str, int, bool):
        return _identity
    inner = _optional_inner(tp)
    if inner is not None:
        if inner is float:
            return _enc_opt_float
        enc = encoder(inner)
        return lambda v: None if v is None else enc(v)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return lambda v: v.value
    origin = typing.get_origin(tp)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            item = encoder(args[0])
            if item is _identity:
                return list
            return lambda v: [item(x) for x in v]
        encs = [encoder(a) for a in args]
        return lambda v: [e(x) for e, x in zip(encs, v, strict=True)]
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        names = [f.name for f in dataclasses.fields(tp)]
        pairs = [(n, encoder(hints[n])) for n in names]
        return lambda v: [e(getattr(v, n)) for n, e in pairs]
    raise TypeError(f"no plain encoding for {tp!r}")


def _make_decoder(tp: Any) -> Decode:
    if tp is float:
        return float
    if tp in (str, int, bool):
        return _identity
    inner = _optional_inner(tp)
    if inner is not None:
        if inner is float:
            return _dec_opt_float
        dec = decoder(inner)
        return lambda v: None if v is None else dec(v)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp
    origin = typing.get_origin(tp)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            item = decoder(args[0])
            if item is _identity:
                return tuple
            return lambda v: tuple([item(x) for x in v])
        decs = [decoder(a) for a in args]
        if all(d is _identity for d in decs):
            return tuple  # e.g. a label pair: nothing to convert
        return lambda v: tuple([d(x) for d, x in zip(decs, v, strict=True)])
    if dataclasses.is_dataclass(tp):
        cls = typing.cast(type, tp)
        if cls is Sample:
            # Samples are most of a recording's records: decoded without the generic path.
            return lambda v: Sample(v[0], tuple(map(tuple, v[1])), float(v[2]))
        hints = typing.get_type_hints(cls)
        decs = [decoder(hints[f.name]) for f in dataclasses.fields(cls)]
        n = len(decs)

        def dec_record(v: Any) -> Any:
            # Trailing fields an older writer did not know keep their defaults;
            # fields a newer writer added after ours are ignored.
            return cls(*[d(x) for d, x in zip(decs, v[:n], strict=False)])

        return dec_record
    raise TypeError(f"no plain decoding for {tp!r}")


def to_plain(value: Any) -> Any:
    """A record as plain data (its class must be a dataclass with type hints)."""
    return encoder(type(value))(value)


def from_plain(cls: type[Any], data: Any) -> Any:
    """The record of class ``cls`` that ``data`` encodes."""
    return decoder(cls)(data)
