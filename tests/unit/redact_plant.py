"""Helpers of the redaction tests: a recording of planted identifiers, its redacted copy,
and what ``replay --info`` and ``triage --recording`` print of the copy.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterable
from pathlib import Path

import zstandard

from ktop.cli import main
from ktop.hub import Hub
from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.record.format import FRAME_SIZE, Codec
from ktop.record.reader import Recording
from ktop.record.session import Recorder


def record(
    path: Path, events: Iterable[ev.Event], notes: Iterable[str] = (), **source: str
) -> None:
    """A recording of ``events`` (one batch each) and markers, as the app writes it."""
    hub = Hub(ClusterModel())
    rec = Recorder(str(path), hub.model, source={"kind": "live", "context": "ctx", **source})
    hub.add_sink(rec)
    for e in events:
        hub.ingest([e])
    for note in notes:
        rec.mark(note)
    rec.stop()


def run(*argv: str) -> tuple[int, str]:
    """``ktop argv``: its exit code and everything it printed (standard output and error)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(argv))
    return code, out.getvalue()


def redacted_copy(orig: Path) -> Path:
    """``ktop record --from orig --redact``'s copy (the copy must succeed)."""
    copy = orig.with_name(orig.stem + "-redacted.ktrec")
    code, said = run("record", "-o", str(copy), "--from", str(orig), "--redact")
    assert code == 0, said
    return copy


def printed(path: Path) -> str:
    """What ``replay --info`` and ``triage --recording`` (text and Markdown) print of it;
    the recording must read and triage (exit 0 or 1).
    """
    out = []
    for argv in (
        ("replay", "--info", str(path)),
        ("triage", "--recording", str(path)),
        ("triage", "--recording", str(path), "--output", "markdown"),
    ):
        code, said = run(*argv)
        assert code in (0, 1), said
        out.append(said)
    return "\n".join(out)


def file_bytes(path: Path) -> bytes:
    """Every frame of the file, decompressed, and the raw bytes."""
    out = [path.read_bytes()]
    with Recording(path) as rec:
        for h in rec.frames:
            raw = rec._bytes(h.offset + FRAME_SIZE, h.end)
            zstd = h.codec is Codec.ZSTD
            out.append(zstandard.ZstdDecompressor().decompress(raw) if zstd else raw)
    return b"".join(out)
