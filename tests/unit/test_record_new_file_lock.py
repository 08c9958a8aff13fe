"""A new file of a record directory holds its writer's lock before another session can
see it: a retention pass running between the file's creation and its lock cannot delete
it (it was created by name, then locked a moment later)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.record import recdir, writer
from ktop.record.rotating import Retention, RotatingRecorder

DAY = 86_400.0
NONE_KEPT = Retention(retain_s=0.0, max_bytes=0)
"""Another session's retention that deletes every file no live writer holds."""


def _recorder(directory: Path, retention: Retention) -> RotatingRecorder:
    return RotatingRecorder(
        directory, Hub(ClusterModel()).model, source={"kind": "demo"}, retention=retention
    )


@pytest.mark.skipif(recdir.unnamed(".") is None, reason="no O_TMPFILE on this filesystem")
def test_retention_between_create_and_lock_cannot_delete_the_new_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = _recorder(tmp_path, NONE_KEPT)  # another session, recording into the same dir
    deleted: list[list[Path]] = []

    def flock(fd: int, op: int) -> None:
        if op & fcntl.LOCK_EX and not deleted:  # the writer locks its new file
            deleted.append(other.enforce())  # the other session's retention, just then
        fcntl.flock(fd, op)

    monkeypatch.setattr(writer, "fcntl", SimpleNamespace(flock=flock, **{
        k: getattr(fcntl, k) for k in ("LOCK_EX", "LOCK_NB", "LOCK_UN")
    }))  # fmt: skip
    mine = _recorder(tmp_path, Retention(DAY, 1 << 30))
    assert deleted == [[]]
    assert mine.active and mine.files_written == 1
    st = os.stat(mine.path)
    assert st.st_size > 0 and st.st_nlink == 1  # named once its header and keyframe are in
    mine.stop()
    other.stop()


def test_without_o_tmpfile_a_new_file_is_created_by_name_then_locked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer, "unnamed", lambda *a: None)
    rec = _recorder(tmp_path, Retention(DAY, 1 << 30))
    assert rec.active and os.path.getsize(rec.path) > 0
    fd = os.open(rec.path, os.O_RDONLY)
    try:
        assert not recdir.lock(fd)  # the writer holds it
    finally:
        os.close(fd)
    rec.stop()
