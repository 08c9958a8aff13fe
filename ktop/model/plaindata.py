"""Frozen records to plain data and back, driven by their type hints.

A record (an event, a ``NodeRecord``, a ``Target``...) becomes a list of its
field values in declaration order; nested records become nested lists,
enums their string value, tuples lists. Decoding reads the field types, so
the plain form carries no type names and a file written by an older ktop
(fewer trailing fields) decodes with the newer fields at their defaults.

Integral floats are written as integers (they are shorter in msgpack) and
read back as floats, so the round trip is exact.

Which kinds of field type there are is known once, by :class:`TypeWalk`; the
encoding, the decoding here and the checked decoding of a recording
(:mod:`ktop.record.strict`) each say only what they build for each kind.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable
from enum import Enum
from typing import Any

from ktop.model.events import Sample

Convert = Callable[[Any], Any]
"""What a walk over a type builds: one value of that type (or its plain data) converted."""
Encode = Convert
Decode = Convert
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


_BUILDERS: dict[type[Any], Callable[..., Any]] = {}


def builder(cls: type[Any]) -> Callable[..., Any]:
    """A faster constructor of the frozen dataclass ``cls`` (same arguments, same record).

    A frozen dataclass stores each field through ``object.__setattr__``, about four times
    the cost of a plain store; decoding a recording makes hundreds of thousands of records.
    For a frozen dataclass with slots (and no ``__post_init__``) made directly on
    ``object``, this is a class with the same slots whose ``__init__`` stores the fields
    plainly and then makes the instance a ``cls`` (the layouts are the same, so Python
    allows it); for any other class, ``cls`` itself.
    """
    got = _BUILDERS.get(cls)
    if got is None:
        got = _BUILDERS[cls] = _make_builder(cls)
    return got


def _make_builder(cls: type[Any]) -> Callable[..., Any]:
    params = getattr(cls, "__dataclass_params__", None)
    fields = dataclasses.fields(cls) if params is not None else ()
    names = tuple(f.name for f in fields)
    if (
        params is None
        or not params.frozen
        or cls.__bases__ != (object,)
        or getattr(cls, "__slots__", None) != names
        or hasattr(cls, "__post_init__")
        or any(not f.init for f in fields)
    ):
        return cls
    env: dict[str, Any] = {"_cls": cls, "_MISSING": dataclasses.MISSING}
    args, body = [], []
    for f in fields:
        if f.default is not dataclasses.MISSING:
            env[f"_d_{f.name}"] = f.default
            args.append(f"{f.name}=_d_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            env[f"_f_{f.name}"] = f.default_factory
            args.append(f"{f.name}=_MISSING")
            body.append(f" if {f.name} is _MISSING: {f.name} = _f_{f.name}()")
        else:
            args.append(f.name)
        body.append(f" self.{f.name} = {f.name}")
    body.append(" self.__class__ = _cls")
    source = f"def __init__(self, {', '.join(args)}):\n" + "\n".join(body)
    exec(source, env)  # as dataclasses make their __init__
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return type(f"{cls.__name__}Builder", (object,), {"__slots__": names, "__init__": init})


def _optional_inner(tp: Any) -> Any | None:
    """``X`` when ``tp`` is ``X | None``; ``None`` otherwise."""
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            return args[0]
    return None


_SCALARS = (float, str, int, bool)


class TypeWalk(ABC):
    """Builds, once per type, the function that converts a value of that type (to plain
    data, or back): the type hint is taken apart here, the one place that knows which kinds
    of field a record may declare, and a subclass says what to build for each kind.

    The kinds are a scalar (``float``, ``str``, ``int``, ``bool``), ``X | None``, an enum,
    ``tuple[X, ...]``, a tuple of fixed length and a dataclass (a record). A new kind is
    added here; every walk must then say how it converts it (the hooks are abstract), so
    none of them (the encoding, the decoding, the checked decoding of a recording) can
    fall behind the others.
    """

    what = "conversion"
    """What the walk builds, for the error on a type it cannot convert."""

    def __init__(self) -> None:
        self.built: dict[Any, Convert] = {}
        """Every function built, by type."""

    def __call__(self, tp: Any) -> Convert:
        """The function for type ``tp`` (built on first use)."""
        out = self.built.get(tp)
        if out is None:
            out = self.built[tp] = self._make(tp)
        return out

    def _make(self, tp: Any) -> Convert:
        if tp in _SCALARS:
            return self.scalar(tp)
        inner = _optional_inner(tp)
        if inner is not None:
            return self.optional(inner, self(inner))
        if isinstance(tp, type) and issubclass(tp, Enum):
            return self.enum(tp)
        if typing.get_origin(tp) is tuple:
            args = typing.get_args(tp)
            if len(args) == 2 and args[1] is Ellipsis:
                return self.repeated(self(args[0]))
            return self.fixed([self(a) for a in args])
        if dataclasses.is_dataclass(tp):
            return self.record(typing.cast(type, tp))
        raise TypeError(f"no {self.what} for {tp!r}")

    def fields(self, cls: type[Any]) -> list[tuple[dataclasses.Field[Any], Convert]]:
        """The fields of dataclass ``cls`` in declaration order, each with its function."""
        hints = typing.get_type_hints(cls)
        return [(f, self(hints[f.name])) for f in dataclasses.fields(cls)]

    @abstractmethod
    def scalar(self, tp: type[Any]) -> Convert:
        """The function for ``float``, ``str``, ``int`` or ``bool``."""

    @abstractmethod
    def optional(self, inner_tp: Any, inner: Convert) -> Convert:
        """The function for ``inner_tp | None``, whose values not ``None`` ``inner`` converts."""

    @abstractmethod
    def enum(self, tp: type[Enum]) -> Convert:
        """The function for the enum ``tp``."""

    @abstractmethod
    def repeated(self, item: Convert) -> Convert:
        """The function for ``tuple[X, ...]``, whose items ``item`` converts."""

    @abstractmethod
    def fixed(self, items: list[Convert]) -> Convert:
        """The function for a tuple of fixed length, whose items ``items`` convert in turn."""

    @abstractmethod
    def record(self, cls: type[Any]) -> Convert:
        """The function for the dataclass ``cls`` (its fields: :meth:`fields`)."""


def _enum_value(v: Enum) -> Any:
    return v.value


class _Encoding(TypeWalk):
    """Values to plain data."""

    what = "plain encoding"

    def scalar(self, tp: type[Any]) -> Convert:
        return _enc_float if tp is float else _identity

    def optional(self, inner_tp: Any, inner: Convert) -> Convert:
        if inner_tp is float:
            return _enc_opt_float
        return lambda v: None if v is None else inner(v)

    def enum(self, tp: type[Enum]) -> Convert:
        return _enum_value

    def repeated(self, item: Convert) -> Convert:
        if item is _identity:
            return list
        return lambda v: [item(x) for x in v]

    def fixed(self, items: list[Convert]) -> Convert:
        return lambda v: [e(x) for e, x in zip(items, v, strict=True)]

    def record(self, cls: type[Any]) -> Convert:
        pairs = [(f.name, enc) for f, enc in self.fields(cls)]
        return lambda v: [e(getattr(v, n)) for n, e in pairs]


class _Decoding(TypeWalk):
    """Plain data back to values (trusting its types: a recording is read by
    :mod:`ktop.record.strict`, which checks them).
    """

    what = "plain decoding"

    def scalar(self, tp: type[Any]) -> Convert:
        return float if tp is float else _identity

    def optional(self, inner_tp: Any, inner: Convert) -> Convert:
        if inner_tp is float:
            return _dec_opt_float
        return lambda v: None if v is None else inner(v)

    def enum(self, tp: type[Enum]) -> Convert:
        return tp

    def repeated(self, item: Convert) -> Convert:
        if item is _identity:
            return tuple
        return lambda v: tuple([item(x) for x in v])

    def fixed(self, items: list[Convert]) -> Convert:
        if all(d is _identity for d in items):
            return tuple  # e.g. a label pair: nothing to convert
        return lambda v: tuple([d(x) for d, x in zip(items, v, strict=True)])

    def record(self, cls: type[Any]) -> Convert:
        if cls is Sample:
            # Samples are most of a recording's records: decoded without the generic path.
            return lambda v: Sample(v[0], tuple(map(tuple, v[1])), float(v[2]))
        decs = [dec for _, dec in self.fields(cls)]
        n = len(decs)
        make = builder(cls)

        def dec_record(v: Any) -> Any:
            # Trailing fields an older writer did not know keep their defaults;
            # fields a newer writer added after ours are ignored.
            return make(*[d(x) for d, x in zip(decs, v[:n], strict=False)])

        return dec_record


_ENCODING = _Encoding()
_DECODING = _Decoding()
_ENCODERS = _ENCODING.built
_DECODERS = _DECODING.built


def encoder(tp: Any) -> Encode:
    """A function from a value of type ``tp`` to plain data (built once per type)."""
    out = _ENCODERS.get(tp)
    if out is None:
        out = _ENCODING(tp)
    return out


def decoder(tp: Any) -> Decode:
    """A function from plain data back to a value of type ``tp`` (built once per type)."""
    out = _DECODERS.get(tp)
    if out is None:
        out = _DECODING(tp)
    return out


def to_plain(value: Any) -> Any:
    """A record as plain data (its class must be a dataclass with type hints)."""
    return encoder(type(value))(value)


def from_plain(cls: type[Any], data: Any) -> Any:
    """The record of class ``cls`` that ``data`` encodes."""
    return decoder(cls)(data)
