"""Reading a recording: open, index (or scan), gaps, markers, seek, play.

Opening checks the preamble (a file of another format version fails with
a message naming both versions), reads the header, then the index that a
clean close left; when there is none (a crash, a cut) the frames are found
by a scan. Every frame's checksum is verified at open, so damaged chunks
are known before playing and shown as gaps; a cut last frame is ignored.

Seeking to a time starts from the last keyframe at or before it and folds
only the events after that keyframe.
"""

from __future__ import annotations

import contextlib
import mmap
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import zstandard

from ktop.files import RECORDING, check_regular
from ktop.model import events as ev
from ktop.model.cluster import ClusterModel, ModelConfig
from ktop.model.plaindata import from_plain
from ktop.model.state import import_state
from ktop.record.codec import ChunkDecoder, Marker
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


@dataclass(frozen=True, slots=True)
class Gap:
    """A stretch of the recording whose data is lost (a damaged or missing chunk)."""

    start: float
    end: float
    reason: str


def _unpack(payload: bytes) -> Any:
    return msgpack.unpackb(payload, raw=False, strict_map_key=False)


def _stream(payload: bytes) -> Iterator[Any]:
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=len(payload) + 1)
    unpacker.feed(payload)
    yield from unpacker


class Recording:
    """An open recording (read-only)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        check_regular(self.path, RECORDING)  # a FIFO or a device would block or never end
        with open(self.path, "rb") as f:
            data = f.read(PREAMBLE.size)
            self.version = check_preamble(data)
            self.size = f.seek(0, 2)
        self._f = open(self.path, "rb")  # noqa: SIM115 - closed by close()
        self._map = mmap.mmap(self._f.fileno(), 0, access=mmap.ACCESS_READ) if self.size else None
        self._dctx = zstandard.ZstdDecompressor()
        first = self._header_at(PREAMBLE.size)
        if first is None or first.kind is not Kind.HEADER or not self._crc_ok(first):
            raise FormatError("damaged recording: its header frame cannot be read")
        self.header: dict[str, Any] = _unpack(self._payload(first))
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

    # ------------------------------------------------------------- bytes

    def _bytes(self, start: int, end: int) -> bytes:
        assert self._map is not None
        return self._map[start:end]

    def _header_at(self, offset: int) -> FrameHeader | None:
        if offset + FRAME_SIZE > self.size:
            return None
        return unpack_frame_header(self._bytes(offset, offset + FRAME_SIZE), offset)

    def _payload(self, h: FrameHeader) -> bytes:
        raw = self._bytes(h.offset + FRAME_SIZE, h.end)
        return self._dctx.decompress(raw) if h.codec is Codec.ZSTD else raw

    def _crc_ok(self, h: FrameHeader) -> bool:
        return h.end <= self.size and zlib.crc32(self._bytes(h.offset + FRAME_SIZE, h.end)) == h.crc

    # -------------------------------------------------------------- index

    def _load(self, start: int) -> None:
        index_at = None
        if self.size >= start + TRAILER.size:
            index_at = unpack_trailer(self._bytes(self.size - TRAILER.size, self.size))
        h = self._header_at(index_at) if index_at is not None else None
        if h is not None and h.kind is Kind.INDEX and self._crc_ok(h):
            index = _unpack(self._payload(h))
            frames: list[FrameHeader] = []
            for kind, offset, first, last, count in index["frames"]:
                got = self._header_at(int(offset))
                if got is None:  # a damaged frame header: the index still knows its times
                    got = FrameHeader(
                        Kind(kind), Codec.NONE, -1, int(count), float(first), float(last), 0, offset
                    )
                frames.append(got)
            self.markers = [Marker(float(a), str(n)) for a, n in index["markers"]]
            self.indexed = True
            self._check(frames)
            return
        self.truncated = True
        self._check(self._scan(start))
        self.markers = list(self._all_markers())

    def _scan(self, offset: int) -> list[FrameHeader]:
        """Every frame header from ``offset`` on, skipping damaged stretches by sync bytes."""
        assert self._map is not None
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

    def _check(self, frames: list[FrameHeader]) -> None:
        """Keep the frames whose payload is intact; the others become gaps."""
        good: list[FrameHeader] = []
        bad: list[tuple[int, FrameHeader]] = []
        for h in frames:
            if h.length >= 0 and self._crc_ok(h):
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
                with contextlib.suppress(ValueError, TypeError, msgpack.UnpackException):
                    at, note = _unpack(self._payload(h))[:2]
                    yield Marker(float(at), str(note))

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
        recorded = self.header.get("start_at") or 0.0
        return float(recorded) if recorded > 0 else min(first, default=0.0)

    @property
    def end(self) -> float:
        """The recording's last time (source clock)."""
        return max((f.last for f in self.frames), default=self.start)

    @property
    def model_config(self) -> ModelConfig:
        """The model settings the recording was made with."""
        m = self.header.get("settings", {}).get("model", {})
        base = ModelConfig()
        return ModelConfig(
            window_s=float(m.get("window_s", base.window_s)),
            rack_label=str(m.get("rack_label", base.rack_label)),
            unhealthy_zone_threshold=float(
                m.get("unhealthy_zone_threshold", base.unhealthy_zone_threshold)
            ),
            lease_renew_interval_s=float(
                m.get("lease_renew_interval_s", base.lease_renew_interval_s)
            ),
        )

    def describe(self) -> str:
        """One line: source, context, span."""
        src = self.header.get("source", {})
        span = self.end - self.start
        return f"{src.get('kind', '?')} {src.get('context', '?')}, {span:.0f} s"

    # -------------------------------------------------------------- play

    def cursor(self, at: float | None = None) -> Cursor:
        """A cursor whose model holds the state at ``at`` (default: the start)."""
        target = self.start if at is None else at
        key: FrameHeader | None = None
        for k in self.keyframes:
            if k.first <= target:
                key = k
        model: ClusterModel | None = None
        frame_pos = 0
        if key is not None:
            try:
                body = _unpack(self._payload(key))
                model = import_state(body["state"], self.model_config)
                frame_pos = self.frames.index(key) + 1
            except (zstandard.ZstdError, ValueError, KeyError, msgpack.UnpackException):
                model = None
        if model is None:
            model = ClusterModel(self.model_config)
            frame_pos = 0
        cur = Cursor(self, model, frame_pos)
        cur.advance(target)
        return cur

    def close(self) -> None:
        """Release the file."""
        if self._map is not None:
            self._map.close()
        self._f.close()

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Cursor:
    """A position in a recording: a model and the events still to fold."""

    def __init__(self, rec: Recording, model: ClusterModel, frame_pos: int) -> None:
        self.rec = rec
        self.model = model
        self._frames = rec.frames
        self._pos = frame_pos
        self._decoder = ChunkDecoder(dict(model.nodes.nodes))
        self._pending: list[ev.Event | Marker] = []
        self._i = 0
        self.folded = 0
        """Events folded by :meth:`advance` (a seek folds only those after its keyframe)."""

    @property
    def position(self) -> float:
        """The model's clock."""
        return self.model.now

    @property
    def finished(self) -> bool:
        """Whether every event has been folded."""
        return self._i >= len(self._pending) and not self._more()

    def _more(self) -> bool:
        return any(f.kind is Kind.CHUNK for f in self._frames[self._pos :])

    def _load_next(self) -> bool:
        while self._pos < len(self._frames):
            h = self._frames[self._pos]
            if self._pos in self.rec.lost_before:
                self._decoder.lose()
            self._pos += 1
            if h.kind is Kind.KEYFRAME and self._decoder.stale:
                self._pending, self._i = self._reestablish(h), 0
                return True
            if h.kind is not Kind.CHUNK:
                continue
            self._decoder.new_chunk()
            out: list[ev.Event | Marker] = []
            try:
                for rec in _stream(self.rec._payload(h)):
                    out.extend(self._decoder.decode(rec))
            except (
                zstandard.ZstdError,
                ValueError,
                TypeError,
                IndexError,
                msgpack.UnpackException,
            ):
                self._decoder.lose()  # keep what decoded; the rest is a loss like a gap
            self._pending, self._i = out, 0
            return True
        return False

    def _reestablish(self, h: FrameHeader) -> list[ev.Event | Marker]:
        """After lost data: the events that bring node records back to the keyframe's."""
        try:
            body = _unpack(self.rec._payload(h))
            rows = body["state"].get("nodes", {}).get("nodes", [])
            nodes = {n.name: n for n in (from_plain(ev.NodeRecord, r) for r in rows)}
        except (zstandard.ZstdError, ValueError, TypeError, KeyError, msgpack.UnpackException):
            return []  # stays stale until a later keyframe
        return list(self._decoder.reestablish(float(body.get("at", h.first)), nodes))

    def take(self, until: float) -> list[ev.Event]:
        """The next events up to time ``until`` (stopping at the first later one), in order."""
        out: list[ev.Event] = []
        while True:
            if self._i >= len(self._pending) and not self._load_next():
                return out
            while self._i < len(self._pending):
                item = self._pending[self._i]
                if item.at > until:
                    return out
                self._i += 1
                if not isinstance(item, Marker):
                    out.append(item)

    def advance(self, until: float) -> list[ev.Event]:
        """Fold the events up to ``until`` into the model; return them."""
        events = self.take(until)
        self.model.apply_all(events)
        self.folded += len(events)
        return events

    def next_time(self) -> float | None:
        """The time of the next event, or ``None`` at the end."""
        while True:
            if self._i < len(self._pending):
                return self._pending[self._i].at
            if not self._load_next():
                return None
