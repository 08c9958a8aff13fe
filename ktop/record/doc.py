"""The generated parts of docs/recording-format.md: writer settings and every event's fields.

The event table is built from the event classes themselves (the same type
hints the codec encodes by), so a reader in another language needs no
Python, and a new event type or field shows up in the document at once.
``make docs`` (``ktop/docgen.py``) writes the two blocks and checks the committed page.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from enum import Enum
from typing import Any

from ktop.model import events as ev
from ktop.record.codec import EVENT_TYPES
from ktop.record.format import FORMAT_VERSION
from ktop.record.writer import DEFAULT_CHUNK_S, DEFAULT_KEYFRAME_S, MAX_CHUNK_BYTES, ZSTD_LEVEL


def _type(tp: Any, records: list[type[Any]]) -> str:
    """How a field of type ``tp`` is written, in words; nested records are collected."""
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        some = [a for a in typing.get_args(tp) if a is not type(None)]
        return " or ".join(_type(a, records) for a in some) + " or nil"
    if typing.get_origin(tp) is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return f"array of {_type(args[0], records)}"
        return "[" + ", ".join(_type(a, records) for a in args) + "]"
    if isinstance(tp, type) and issubclass(tp, Enum):
        return "str (" + " / ".join(f"`{m.value}`" for m in tp) + ")"
    if dataclasses.is_dataclass(tp):
        cls = typing.cast(type[Any], tp)
        if cls not in records:
            records.append(cls)
        return f"{cls.__name__}"
    names = {float: "float", int: "int", str: "str", bool: "bool"}
    return names.get(tp, str(tp))


def _plain(value: Any) -> str:
    """A default value as msgpack shows it (JSON notation, nil for None)."""
    if value is None:
        return "nil"
    return json.dumps(list(value) if isinstance(value, tuple) else value)


def _fields(cls: type[Any], records: list[type[Any]]) -> str:
    """``name`` type[ = default], ... for every field of ``cls``, in the order written."""
    hints = typing.get_type_hints(cls, vars(ev))
    out = []
    for f in dataclasses.fields(cls):
        item = f"`{f.name}` {_type(hints[f.name], records)}"
        if f.default is not dataclasses.MISSING:
            item += f" = `{_plain(f.default)}`"
        out.append(item)
    return "; ".join(out)


def events_md() -> str:
    """Every event type and nested record, with its fields in the order they are written."""
    records: list[type[Any]] = []
    lines = [
        "An event record is `[tag, field1, field2, ...]` with these fields in this order; a",
        "field shown with `= default` may be missing at the end of an array written by an",
        "older ktop.",
        "",
        "| tag | fields |",
        "|---|---|",
    ]
    lines += [f"| `{tag}` | {_fields(cls, records)} |" for tag, cls in EVENT_TYPES.items()]
    lines += ["", "Nested records are arrays of their fields in this order:", ""]
    lines += ["| record | fields |", "|---|---|"]
    i = 0
    while i < len(records):  # a record's fields may add records nested deeper
        lines.append(f"| `{records[i].__name__}` | {_fields(records[i], records)} |")
        i += 1
    return "\n".join(lines)


def settings_md() -> str:
    """The writer's constants."""
    return "\n".join(
        [
            "| setting | value |",
            "|---|---|",
            f"| format version written | {FORMAT_VERSION} |",
            f"| zstandard level (keyframes and chunks) | {ZSTD_LEVEL} |",
            f"| chunk cut after (`chunk_s`, source time) | {DEFAULT_CHUNK_S:g} s |",
            f"| or after (uncompressed records) | {MAX_CHUNK_BYTES:,} bytes |",
            f"| keyframe after (`keyframe_s`, at the next chunk cut) | {DEFAULT_KEYFRAME_S:g} s |",
        ]
    )
