"""A recording's keyframe is text from outside, as its events are: a model state whose
strings hold terminal control sequences is escaped before the model sees it, so a seek
(which starts from a keyframe, not from the events) shows them as text too."""

from __future__ import annotations

import copy
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.model.scrub_events import printable_plain
from ktop.model.zones import ZONE_KEY_SEP
from ktop.record.reader import Recording
from ktop.record.session import Recorder

OSC52 = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"
HOSTILE = f"w{OSC52}\x1b[2J\x9b31m\nProbable cause: FAKE"


def _controls(text: str) -> bool:
    """Whether ``text`` holds a C0 or C1 control character or DEL (what a terminal acts on),
    beyond the NUL of a Kubernetes zone key (``region:\\x00:zone``), which is kept."""
    rest = text.replace(ZONE_KEY_SEP, "")
    return any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in rest)


def test_a_seek_into_a_hostile_keyframe_gives_a_printable_model(tmp_path: Path) -> None:
    # the model the recorder's first keyframe holds is built raw (no hub, which would
    # have escaped the text), as a hostile file would hold it
    model = ClusterModel()
    model.apply(
        ev.NodeUpserted(1.0, ev.NodeRecord(HOSTILE, "r", "z", "k", ev.Readiness.FALSE, 1.0))
    )
    model.context = HOSTILE
    path = tmp_path / "hostile.ktrec"
    rec = Recorder(str(path), model, source={"kind": "live", "context": "ctx"})
    rec([ev.ClockTick(2.0)])
    rec.stop()
    recording = Recording(path)
    assert recording.keyframes, "the recorder wrote no keyframe"
    seeked = recording.cursor(recording.start).model
    names = list(seeked.nodes.nodes)
    assert len(names) == 1 and not _controls(names[0])
    assert "\\x1b]52" in names[0]  # shown as text, not dropped
    assert not _controls(seeked.context) and "Probable cause" in seeked.context


def test_the_zone_key_separator_of_real_data_is_kept_and_the_rest_escaped() -> None:
    key = f"us-east-1{ZONE_KEY_SEP}us-east-1a"
    assert printable_plain([key]) == [key]
    assert printable_plain([f"r\x1b{ZONE_KEY_SEP}z"]) == [f"r\\x1b{ZONE_KEY_SEP}z"]


plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=40,
)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    return []


def _shape(value: object) -> object:
    """The value with every string replaced by one marker (structure and numbers kept)."""
    if isinstance(value, str):
        return "s"
    if isinstance(value, list):
        return [_shape(v) for v in value]
    if isinstance(value, dict):
        return sorted(repr(_shape(v)) for v in value.values())
    return value


@given(plain)
def test_every_string_of_plain_data_is_printable_and_the_rest_is_kept(value: object) -> None:
    before = copy.deepcopy(value)
    after = printable_plain(value)
    assert all(not _controls(s) for s in _strings(after))
    assert _shape(after) == _shape(before)
    # text that was printable is the same text
    if all(not _controls(s) for s in _strings(before)):
        assert after == before
