"""Certificates and keys given inline (``client-key-data``, an exec plugin's
``clientKeyData``) handed to TLS as files that exist nowhere on disk.

kubernetes-asyncio writes each inline certificate or key to a temporary file
(``FileOrData._create_temp_file_with_content``) and removes it only at a normal exit: a
SIGTERM, a SIGHUP or a kill -9 would leave the private key readable in ``$TMPDIR``. On
Linux ktop replaces that method (the library itself is not edited) with an anonymous
file in memory (``memfd_create``), named to TLS as ``/proc/self/fd/N``: there is nothing
to remove, whatever ends the process. The file stays open for the session (clients built
later, such as one per apiserver instance, load it again) and is closed on exec.
Elsewhere the library's temporary files are kept.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from kubernetes_asyncio.config import kube_config

_held: dict[bytes, int] = {}
"""Each content handed out, and the descriptor of its file in memory."""
_lock = threading.Lock()


def supported() -> bool:
    """Whether anonymous memory files can be named by path here (Linux with /proc)."""
    return hasattr(os, "memfd_create") and Path("/proc/self/fd").is_dir()


def memory_file(content: bytes) -> str:
    """A path that reads ``content`` from a file held only in memory (one per content)."""
    with _lock:
        fd = _held.get(content)
        if fd is None:
            fd = os.memfd_create("ktop-credential", os.MFD_CLOEXEC)
            view = memoryview(content)
            while view:
                view = view[os.write(fd, view) :]
            _held[content] = fd
    return f"/proc/self/fd/{fd}"


def _in_memory(self: Any, content: str | bytes) -> str:
    return memory_file(content.encode() if isinstance(content, str) else content)


def install() -> None:
    """Make kubernetes-asyncio write inline certificates and keys to memory, not
    ``$TMPDIR`` (where :func:`supported`; idempotent).
    """
    if supported():
        kube_config.FileOrData._create_temp_file_with_content = _in_memory  # type: ignore[method-assign]
