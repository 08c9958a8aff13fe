"""Reading a recording: open, index (or scan), gaps, markers, seek, play.

Opening checks the preamble (a file of another format version fails with
a message naming both versions), reads the header, then the index that a
clean close left; when there is none (a crash, a cut) the frames are found
by a scan. Every frame's checksum is verified at open, so damaged chunks
are known before playing and shown as gaps; a cut last frame is ignored.

Seeking to a time starts from the last keyframe at or before it and folds
only the events after that keyframe, decoded record by record up to the
target; runs of Lease renewals are folded whole (:meth:`.cursor.Cursor.fold`).

A recording is untrusted input (it arrives attached to bug reports). A fault that
leaves nothing to replay (the preamble, the header) is a :class:`FormatError` whose
message gives the offset and what was expected there; any later fault (an unreadable
index, marker, keyframe or chunk content) loses only that frame: it is listed in
:attr:`Recording.faults` (a lost chunk also as a gap) and what was read before it still
replays. Decompression and decoding are bounded per frame (:data:`MAX_CHUNK_BYTES`,
:data:`MAX_KEYFRAME_BYTES`, :data:`MAX_PLAIN_BYTES`, no more events than a chunk's
header declares, and no more msgpack values than its stored size allows:
:data:`ktop.input_limits.MAX_VALUES_PER_BYTE`).
"""

from __future__ import annotations

import contextlib
import gc
import mmap
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

from ktop.files import RECORDING, MiB, check_regular
from ktop.input_limits import MAX_EVENTS_PER_BYTE, MAX_INFLATE_RATIO, MAX_RECORDING_SPAN
from ktop.model.cluster import ClusterModel
from ktop.model.model_inputs import ModelConfig
from ktop.model.scrub_events import printable_plain
from ktop.model.state import import_state
from ktop.record.codec import Marker
from ktop.record.cursor import Cursor
from ktop.record.format import (
    FRAME_SIZE,
    PREAMBLE,
    SYNC,
    TRAILER,
    Codec,
    FormatError,
    FrameHeader,
    Kind,
    check_preamble,
    unpack_frame_header,
    unpack_trailer,
)
from ktop.record.frames import walk
from ktop.record.header import check_header, model_config
from ktop.record.payload import DECODE_ERRORS, inflate, most_events, most_inflated, unpack
from ktop.record.strict import RecordError, array, expected, finite_time

MAX_PLAIN_BYTES = 64 * MiB
"""The largest header, marker or index payload read (they are stored uncompressed)."""
MAX_CHUNK_BYTES = 64 * MiB
"""The largest chunk read, uncompressed (the writer cuts chunks at 4 MiB of records)."""
MAX_KEYFRAME_BYTES = 1024 * MiB
"""The largest keyframe read, uncompressed (a keyframe of 100,000 nodes is far smaller)."""
LIMITS = {Kind.CHUNK: MAX_CHUNK_BYTES, Kind.KEYFRAME: MAX_KEYFRAME_BYTES}
"""The most a frame of each kind may hold uncompressed (others: :data:`MAX_PLAIN_BYTES`)."""


@dataclass(frozen=True, slots=True)
class Gap:
    """A stretch of the recording whose data is lost (a damaged or missing chunk)."""

    start: float
    end: float
    reason: str


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off for a seek: decoding makes hundreds of thousands of
    short-lived objects, none in a cycle, and each collection they set off would walk the
    whole model again. Back on after, unless it was off before; what the seek made (the
    model, tens of thousands of objects that live on) is then moved to the oldest
    generation at once (``gc.freeze`` and ``unfreeze``), instead of being walked by the
    next young collection only to be found alive: a full collection walks it, as it walks
    every long-lived object.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def _marker(value: Any) -> Marker:
    """A MARKER payload (or an index's marker entry): ``[at, note]``."""
    items = array(value, "a marker [at, note]")
    if len(items) < 2:
        raise RecordError(f"expected a marker [at, note], got {len(items)} items")
    if type(items[1]) is not str:
        raise RecordError(f"marker note: {expected('a string', items[1])}")
    return Marker(finite_time(items[0]), items[1])


def _index_entries(value: Any, start: int, end: int) -> list[tuple[Kind, int, float, float, int]]:
    """The frames an INDEX payload lists, checked: known kinds, offsets in order inside
    ``start``-``end`` (so no frame is listed twice), times in order.
    """
    if type(value) is not dict:
        raise expected("a map", value)
    out = []
    last = start
    for entry in array(value.get("frames"), "frames: an array"):
        items = array(entry, "a frame entry [kind, offset, first, last, count]")
        if len(items) < 5:
            raise RecordError("expected a frame entry [kind, offset, first, last, count]")
        kind, offset, first, last_t, count = items[:5]
        if type(kind) is not int or kind not in {k.value for k in Kind} - {Kind.INDEX.value}:
            raise RecordError(f"frame entry: expected a frame kind, got {kind!r}")
        if type(offset) is not int or not last <= offset < end:
            raise RecordError(f"frame entry: expected an offset from {last} to {end}")
        if type(count) is not int or count < 0:
            raise RecordError(f"frame entry: expected a record count, got {count!r}")
        a, b = finite_time(first), finite_time(last_t)
        if a > b:
            raise RecordError("frame entry: expected its first time before its last")
        out.append((Kind(kind), offset, a, b, count))
        last = offset + FRAME_SIZE
    return out


class Recording:
    """An open recording (read-only)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        check_regular(self.path, RECORDING)  # a FIFO or a device would block or never end
        self._f = open(self.path, "rb")  # noqa: SIM115 - closed by close()
        try:
            self.version = check_preamble(self._f.read(PREAMBLE.size))
            self.size = self._f.seek(0, 2)
            self._map = mmap.mmap(self._f.fileno(), 0, access=mmap.ACCESS_READ)
        except BaseException:
            self._f.close()
            raise
        self._dctx = zstandard.ZstdDecompressor()
        self.faults: list[str] = []
        """Frames that could not be used, each as ``offset N: KIND: what was expected``."""
        try:
            first = self._header_at(PREAMBLE.size)
            if first is None or first.kind is not Kind.HEADER or not self._crc_ok(first):
                raise FormatError(
                    f"offset {PREAMBLE.size}: expected an intact HEADER frame (the header "
                    "is damaged or missing)"
                )
            try:
                self.header: dict[str, Any] = check_header(
                    unpack(self._payload(first), first.length)
                )
            except DECODE_ERRORS as exc:
                raise FormatError(f"offset {first.offset + FRAME_SIZE}: HEADER: {exc}") from None
            self.model_config: ModelConfig = model_config(self.header)
            """The model settings the recording was made with."""
            self.indexed = False
            """Whether a clean close left an index (else it was rebuilt by a scan)."""
            self.truncated = False
            """Whether the file ends in a partial frame or without an index (a crash or a cut)."""
            self.frames: list[FrameHeader] = []
            self.gaps: list[Gap] = []
            self.lost_before: set[int] = set()
            """Positions in :attr:`frames` of the frames that follow lost events."""
            self.markers: list[Marker] = []
            self._load(first.end)
            self._check_span()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------- bytes

    def _bytes(self, start: int, end: int) -> bytes:
        return self._map[start:end]

    def _header_at(self, offset: int) -> FrameHeader | None:
        if offset < 0 or offset + FRAME_SIZE > self.size:
            return None
        return unpack_frame_header(self._bytes(offset, offset + FRAME_SIZE), offset)

    def _payload(self, h: FrameHeader) -> bytes:
        """A frame's payload, decompressed; :class:`RecordError` over its kind's limit."""
        limit = LIMITS.get(h.kind, MAX_PLAIN_BYTES)
        if h.codec is Codec.NONE and h.length > limit:
            raise RecordError(f"expected at most {limit:,} bytes, the frame declares {h.length:,}")
        raw = self._bytes(h.offset + FRAME_SIZE, h.end)
        if h.codec is not Codec.ZSTD:
            return raw
        most = most_inflated(len(raw))
        if most < limit:
            try:
                return inflate(self._dctx, raw, most)
            except RecordError:
                raise RecordError(
                    f"expected {MAX_INFLATE_RATIO.expected} ({most:,} bytes from {len(raw):,}), "
                    "it decompresses to more"
                ) from None
        return inflate(self._dctx, raw, limit)

    def _crc_ok(self, h: FrameHeader) -> bool:
        if h.end > self.size:
            return False
        with memoryview(self._map) as whole, whole[h.offset + FRAME_SIZE : h.end] as payload:
            return zlib.crc32(payload) == h.crc

    def fault(self, h: FrameHeader, problem: object) -> str:
        """Note that frame ``h`` could not be used (once); the line that says so."""
        line = f"offset {h.offset}: {h.kind.name}: {problem}"
        if line not in self.faults:
            self.faults.append(line)
        return line

    # -------------------------------------------------------------- index

    def _load(self, start: int) -> None:
        index_at = None
        if self.size >= start + TRAILER.size:
            index_at = unpack_trailer(self._bytes(self.size - TRAILER.size, self.size))
        h = self._header_at(index_at) if index_at is not None else None
        if h is not None and h.kind is Kind.INDEX and self._crc_ok(h):
            try:
                self._from_index(h, start)
                return
            except DECODE_ERRORS as exc:
                self.fault(h, f"{exc}; the frames were found by a scan instead")
                self.gaps, self.lost_before, self.markers = [], set(), []
        self.truncated = h is None or h.kind is not Kind.INDEX
        self._check(self._scan(start))
        self.markers = list(self._all_markers())

    def _from_index(self, h: FrameHeader, start: int) -> None:
        index = unpack(self._payload(h), h.length)
        frames: list[FrameHeader] = []
        for kind, offset, first, last, count in _index_entries(index, start, h.offset):
            got = self._header_at(offset)
            if got is None:  # a damaged frame header: the index still knows its times
                got = FrameHeader(kind, Codec.NONE, -1, count, first, last, 0, offset)
            elif got.kind is not kind or got.end > h.offset:
                raise RecordError(f"expected a {kind.name} frame at offset {offset}")
            frames.append(got)
        markers = [_marker(m) for m in array(index.get("markers"), "markers: an array")]
        self._check(frames)
        self.markers = markers
        self.indexed = True

    def _scan(self, offset: int) -> list[FrameHeader]:
        """Every frame header from ``offset`` on, skipping damaged stretches by sync bytes."""
        out: list[FrameHeader] = []
        while offset + FRAME_SIZE <= self.size:
            h = self._header_at(offset)
            if h is not None and h.kind is not Kind.INDEX:
                out.append(h)
                offset = h.end
                continue
            if h is not None:  # an index frame: the trailer was damaged
                offset = h.end
                continue
            nxt = self._map.find(SYNC, offset + 1)
            if nxt < 0:
                break
            out.append(FrameHeader(Kind.CHUNK, Codec.NONE, -1, 0, 0.0, 0.0, 0, offset))
            offset = nxt
        return out

    def _check_span(self) -> None:
        """:class:`FormatError` when the recording spans more than :data:`MAX_RECORDING_SPAN`
        (a command that steps through its time would step for ever).
        """
        if self.end - self.start > MAX_RECORDING_SPAN.value:
            raise FormatError(
                f"expected {MAX_RECORDING_SPAN.expected}, its times run from "
                f"{self.start:,.0f} to {self.end:,.0f} (Unix seconds)"
            )

    def _too_many_events(self, h: FrameHeader) -> bool:
        """Whether chunk ``h`` declares more events than its size allows (noted as a fault:
        its decoding would be work out of all proportion to its bytes).
        """
        if h.kind is not Kind.CHUNK or h.count <= most_events(h.length):
            return False
        self.fault(
            h,
            f"expected {MAX_EVENTS_PER_BYTE.expected}, it declares {h.count:,} events "
            f"in {h.length:,} bytes",
        )
        return True

    def _check(self, frames: list[FrameHeader]) -> None:
        """Keep the frames whose payload is intact; the others become gaps."""
        good: list[FrameHeader] = []
        bad: list[tuple[int, FrameHeader]] = []
        for h in frames:
            if h.length >= 0 and self._too_many_events(h):
                bad.append((len(good), h))
            elif h.length >= 0 and self._crc_ok(h):
                good.append(h)
            elif h.length >= 0 and h.end > self.size and h is frames[-1]:
                self.truncated = True  # the last frame was cut mid-write: not a gap
            else:
                bad.append((len(good), h))
        for pos, h in bad:
            before = good[pos - 1].last if pos > 0 else self.start_guess(good)
            after = good[pos].first if pos < len(good) else before
            if h.length < 0 and h.count:  # known from the index
                before, after = min(before, h.first), max(after, h.last)
            self.gaps.append(Gap(before, max(before, after), "damaged data skipped"))
            if h.kind is Kind.CHUNK:  # events lost (a lost keyframe or marker loses none)
                self.lost_before.add(pos)
        self.frames = good

    @staticmethod
    def start_guess(frames: list[FrameHeader]) -> float:
        """The first time among ``frames`` (0 when there are none)."""
        return min((f.first for f in frames if f.kind is not Kind.HEADER), default=0.0)

    def _all_markers(self) -> Iterator[Marker]:
        for h in self.frames:
            if h.kind is Kind.MARKER:
                try:
                    yield _marker(unpack(self._payload(h), h.length))
                except DECODE_ERRORS as exc:
                    self.fault(h, exc)

    def lose_chunk(self, h: FrameHeader, after: float, problem: object) -> None:
        """The rest of chunk ``h`` (after time ``after``) cannot be decoded: a gap."""
        line = self.fault(h, problem)
        gap = Gap(min(after, h.last), h.last, line)
        if gap not in self.gaps:
            self.gaps.append(gap)
            self.gaps.sort(key=lambda g: g.start)

    # ------------------------------------------------------------- facts

    @property
    def chunks(self) -> list[FrameHeader]:
        """The intact chunk frames, in file order."""
        return [f for f in self.frames if f.kind is Kind.CHUNK]

    @property
    def keyframes(self) -> list[FrameHeader]:
        """The intact keyframes, in file order."""
        return [f for f in self.frames if f.kind is Kind.KEYFRAME]

    @property
    def start(self) -> float:
        """The recording's first time (source clock)."""
        first = [f.first for f in self.frames if f.kind is Kind.CHUNK]
        recorded = float(self.header.get("start_at") or 0.0)
        return recorded if recorded > 0 else min(first, default=0.0)

    @property
    def end(self) -> float:
        """The recording's last time (source clock; never before its start)."""
        return max((f.last for f in self.frames), default=self.start)

    def describe(self) -> str:
        """One line: source, context, span."""
        src = self.header.get("source", {})
        span = self.end - self.start
        return f"{src.get('kind', '?')} {src.get('context', '?')}, {span:.0f} s"

    # -------------------------------------------------------------- play

    def _import(self, key: FrameHeader) -> ClusterModel | None:
        """The model a keyframe holds, or ``None`` (noted as a fault) when it cannot be read."""
        try:
            body = unpack(self._payload(key), key.length)
            if type(body) is not dict or type(body.get("state")) is not dict:
                raise expected('a map {"at": time, "state": map}', body)
            # a keyframe is text from outside, as events are: escaped before the model
            return import_state(printable_plain(body["state"]), self.model_config)
        except DECODE_ERRORS as exc:
            self.fault(key, exc)
            return None

    def cursor(
        self,
        at: float | None = None,
        progress: Callable[[float], None] | None = None,
        *,
        frames: bool = False,
    ) -> Cursor:
        """A cursor whose model holds the state at ``at`` (default: the start), built from
        the last readable keyframe at or before it; ``progress`` hears the fraction done.

        With ``frames`` (a replay's seek), built from the last keyframe before the
        history's retention ahead of ``at`` instead, taking a history frame every
        :data:`~ktop.record.frames.RECORDING_STEP_S` on the recording's grid over that
        retention (:func:`~ktop.record.frames.walk`), as ``ktop triage --recording``
        builds it: the same trends and onsets at the same moment.
        """
        with _collector_paused():
            return self._cursor(self.start if at is None else at, progress, frames)

    def _cursor(
        self, target: float, progress: Callable[[float], None] | None, frames: bool
    ) -> Cursor:
        model: ClusterModel | None = None
        frame_pos = 0
        kept = target
        if frames:
            kept -= ClusterModel(self.model_config).history.retention_s
        for key in reversed([k for k in self.keyframes if k.first <= kept]):
            model = self._import(key)
            if model is not None:
                frame_pos = self.frames.index(key) + 1
                break
        if model is None:
            model = ClusterModel(self.model_config)
            frame_pos = 0
        cur = Cursor(self, model, frame_pos)
        if frames:
            walk(cur, self.start, target, progress)
        else:
            cur.fold(target, progress)
        return cur

    def close(self) -> None:
        """Release the file."""
        if getattr(self, "_map", None) is not None:
            self._map.close()
        self._f.close()

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
