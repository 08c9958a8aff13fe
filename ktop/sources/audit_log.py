"""Read apiserver audit logs (JSON lines, gzipped or not, several files or a
must-gather's ``audit_logs/``) into an :class:`~ktop.model.audit_digest.AuditDigest`,
streaming: memory stays bounded on multi-gigabyte logs.

Nothing is lost silently: a malformed line is named by file and line and the rest of
the file is read; a cut gzip file keeps what came before the cut and says so; an
unreadable file is named and the others are read. The requests are classified into
their APF FlowSchema and priority level by the FlowSchemas given (a bundle's, a
must-gather's, ``--flowschemas FILE``), else by Kubernetes' own defaults, and the digest
says which.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from ktop.files import BUNDLE_FILE, bounded_lines, gunzipped, read_bounded
from ktop.model.audit_digest import MAX_PROBLEMS, AuditDigest, AuditFold
from ktop.model.audit_event import MAX_LINE_BYTES, AuditLineError, parse_line
from ktop.model.flow_match import FlowSchemaError, FlowSchemas, bootstrap
from ktop.sources.bundle.must_gather import AUDIT_LOGS, FLOWSCHEMAS_DIR, gathered_dirs
from ktop.structured import InputRefusedError, load_json

BOOTSTRAP_WORDS = (
    "Kubernetes' default FlowSchemas (the cluster's own were not given: --flowschemas FILE)"
)


class AuditInputError(Exception):
    """No audit log could be read at all (each reason named)."""


def audit_files(paths: Sequence[str]) -> tuple[list[Path], list[str]]:
    """The files to read, in order, and the problems met finding them: a file is itself; a
    directory holding a must-gather's ``audit_logs/kube-apiserver`` (at its root or one
    level down, the image directory) gives those; another directory gives its files.
    """
    found: list[Path] = []
    problems: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_file():
            found.append(p)
            continue
        if not p.is_dir():
            problems.append(f"{raw}: no such file or directory")
            continue
        for d in gathered_dirs(p, AUDIT_LOGS) or [p]:
            files = sorted(f for f in d.iterdir() if f.is_file())
            if not files:
                problems.append(f"{d}: no audit log files in it")
            found.extend(files)
    return found, problems


PROGRESS_EVERY_LINES = 1 << 20
"""How often a long read says how far it is (about half a minute of reading)."""


class _Reader:
    """Folds files one by one, keeping every problem's words (the first few)."""

    def __init__(self, fold: AuditFold, progress: Callable[[str], None] | None) -> None:
        self.fold = fold
        self.progress = progress
        self.problems: list[str] = []
        self.malformed = 0
        self.other_stages = 0
        self.read: list[str] = []

    def problem(self, words: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(words)

    def file(self, path: Path) -> None:
        n = 0
        try:
            with path.open("rb") as raw:
                for n, line in enumerate(bounded_lines(gunzipped(raw), MAX_LINE_BYTES), 1):
                    self._line(path, n, line)
                    if self.progress is not None and not n % PROGRESS_EVERY_LINES:
                        self.progress(f"{path}: {n:,} lines read")
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            self.problem(
                f"{path}: cut or corrupt after line {n} ({exc}); the lines before it are counted"
            )
        except OSError as exc:
            self.problem(f"{path}: {exc.strerror or exc}")
            return
        self.read.append(str(path))

    def _line(self, path: Path, n: int, line: bytes | None) -> None:
        try:
            if line is None:
                raise AuditLineError(f"over {MAX_LINE_BYTES} bytes")
            record = parse_line(line)
        except AuditLineError as exc:
            self.malformed += 1
            self.problem(f"{path} line {n}: {exc}")
            return
        if record is None:
            self.other_stages += bool(line and line.strip())
            return
        self.fold.add(record)


def load_flowschemas(path: str | Path) -> FlowSchemas:
    """FlowSchemas from a file (``kubectl get flowschemas -o json`` or ``-o yaml``; a
    bundle's ``api/flowschemas.json``) or a must-gather directory (one YAML per object).
    """
    p = Path(path)
    items: list[Any] = []
    if p.is_dir():
        root = next(iter(gathered_dirs(p, FLOWSCHEMAS_DIR)), p)
        for f in sorted(root.glob("*.yaml")):
            items.extend(_objects(f))
    else:
        items = _objects(p)
    try:
        return FlowSchemas.from_objects(items)
    except FlowSchemaError as exc:
        raise InputRefusedError(f"{path}: {exc}") from None


def _objects(path: Path) -> list[Any]:
    raw = read_bounded(path, BUNDLE_FILE)
    try:
        doc = load_json(raw, str(path))
    except InputRefusedError:
        try:
            doc = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise InputRefusedError(f"{path}: neither JSON nor YAML ({exc})") from None
    if isinstance(doc, dict) and isinstance(doc.get("items"), list):
        return list(doc["items"])
    if isinstance(doc, dict) and doc.get("kind") == "FlowSchema":
        return [doc]
    raise InputRefusedError(f"{path}: not a FlowSchema or a list of them")


def read_audit_logs(
    paths: Sequence[str],
    flowschemas: FlowSchemas | None = None,
    flowschemas_from: str = "",
    start: float | None = None,
    end: float | None = None,
    progress: Callable[[str], None] | None = None,
) -> AuditDigest:
    """Read every audit log in ``paths`` (files or directories) into one digest, the
    requests received in ``[start, end)`` counted; :class:`AuditInputError` when none of
    them could be read; ``progress`` hears how far a long read is.
    """
    schemas = flowschemas if flowschemas is not None else bootstrap()
    words = flowschemas_from if flowschemas is not None else BOOTSTRAP_WORDS
    files, found_problems = audit_files(paths)
    reader = _Reader(AuditFold(schemas.classify, start, end), progress)
    for problem in found_problems:
        reader.problem(problem)
    for problem in schemas.problems:
        reader.problem(f"FlowSchemas: {problem}")
    for f in files:
        reader.file(f)
    if not reader.read:
        raise AuditInputError("; ".join(reader.problems) or "no audit log given")
    return reader.fold.digest(
        reader.read, words, reader.problems, reader.malformed, reader.other_stages
    )
