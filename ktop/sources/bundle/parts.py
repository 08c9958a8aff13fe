"""What reading a bundle gives and what went wrong, shared by the bundle's readers (its
own layout, and a must-gather read as one).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ktop.model.events import Area, Event, Target


def relative(root: Path, path: Path) -> str:
    """``path`` as an error names it: relative to the bundle's root, with ``/``."""
    return path.relative_to(root).as_posix()


@dataclass(frozen=True, slots=True)
class BundleError:
    """A malformed part of a bundle."""

    file: str
    """Path relative to the bundle directory."""
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.message}"


@dataclass(slots=True)
class BundleRead:
    """What a bundle gave: events in time order, errors, and its clock."""

    events: list[Event] = field(default_factory=list)
    errors: list[BundleError] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    at: float = 0.0
    """The bundle's time: the latest scrape or dump, else the API files' write time."""
    scrape_windows: dict[Target, tuple[float, float, int]] = field(default_factory=dict)
    """Per metrics target: first and last scrape time and the number of scrapes."""
    list_sizes: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per API file: objects and bytes of the List as kubectl printed it (full-LIST size)."""
    files: dict[Area, dict[str, None]] = field(default_factory=dict)
    """Per area: the files whose contents feed it (relative paths, in reading order)."""

    def read_from(self, path: str, areas: Iterable[Area]) -> None:
        """Note that the file ``path`` was read and feeds ``areas``."""
        for area in areas:
            self.files.setdefault(area, {})[path] = None

    def files_by_area(self) -> dict[Area, tuple[str, ...]]:
        """Per area, its files as :func:`file_groups` names them."""
        return {area: file_groups(paths) for area, paths in self.files.items()}

    @property
    def window_s(self) -> float:
        """The longest span between a target's first and last scrape (0 with single scrapes)."""
        return max((b - a for a, b, _ in self.scrape_windows.values()), default=0.0)


def file_groups(paths: Iterable[str]) -> tuple[str, ...]:
    """``paths`` named briefly, in first-seen order: files named by their time (a number,
    as the bundle's scrapes and dumps are), more than one in a directory with one suffix,
    as ``dir/*.suffix (N files)``; every other file by its path.
    """
    groups: dict[tuple[str, str], list[str]] = {}
    for path in paths:
        p = PurePosixPath(path)
        timed = p.stem.replace(".", "", 1).isdigit()
        key = (str(p.parent), p.suffix) if timed else (path, "")
        groups.setdefault(key, []).append(path)
    return tuple(
        f"{folder}/*{suffix} ({len(members)} files)" if len(members) > 1 else members[0]
        for (folder, suffix), members in groups.items()
    )
