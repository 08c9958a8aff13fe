"""The triage screen: every path's verdict, most severe first; a path opens into its evidence."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from ktop.analysis.triage.types import PathResult, TriageReport
from ktop.ui.frame import Frame
from ktop.ui.render.triage import evidence_table, headline, path_since, paths_table
from ktop.ui.screens.base import KtopScreen
from ktop.ui.widgets.snapshot_table import SnapshotTable


class TriageScreen(KtopScreen):
    """Paths on top, the highlighted path's evidence below; enter on evidence opens its pane."""

    def __init__(self) -> None:
        super().__init__(name="triage")
        self._shown: object = None
        self._shown_width = 0
        self.report: TriageReport | None = None
        self._path_id = ""

    def compose_body(self) -> ComposeResult:
        """Title, headline, the paths table and the evidence table."""
        yield Static(
            Text.assemble(
                ("t Triage", "bold"),
                ("   enter/tab evidence · enter on evidence: its pane · esc/o overview", "dim"),
            ),
            id="triage-title",
        )
        yield Static("", id="triage-headline")
        with Vertical(id="triage-tables"):
            yield SnapshotTable(id="triage-paths", rows_only=True)
            yield Static("", id="triage-evidence-title", classes="table-title")
            yield SnapshotTable(id="triage-evidence", rows_only=True)

    def show_body(self, frame: Frame) -> None:
        """Re-run triage when the snapshot changed."""
        width = self.size.width
        if frame.snapshot is self._shown and width == self._shown_width:
            return
        self._shown, self._shown_width = frame.snapshot, width
        # the hub's report: the snapshot's history is the baseline (Prometheus' last hour
        # from the first frame when --prometheus backfilled it, else what this run, or
        # the recording, measured)
        self.report = frame.triage
        line = headline(self.report)
        line.append(f"\nbaseline: {self.report.baseline}", style="dim")
        self.query_one("#triage-headline", Static).update(line)
        self.query_one("#triage-paths", SnapshotTable).show(paths_table(self.report, width))
        self._show_evidence(self._path_id or self.report.paths[0].id)

    def _path(self, path_id: str) -> PathResult | None:
        if self.report is None:
            return None
        return next((p for p in self.report.paths if p.id == path_id), None)

    def _show_evidence(self, path_id: str) -> None:
        path = self._path(path_id)
        if path is None:
            return
        self._path_id = path_id
        spec = evidence_table(path)
        title = Text(spec.title, style="bold")
        if self.report is not None and (since := path_since(path, self.report.at)) is not None:
            title.append("  ")
            title.append_text(since)
        title.append(f"  first direction: {path.direction}", style="dim")
        self.query_one("#triage-evidence-title", Static).update(title)
        self.query_one("#triage-evidence", SnapshotTable).show(spec)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Follow the highlighted path with its evidence."""
        if event.data_table.id == "triage-paths" and event.row_key.value:
            self._show_evidence(str(event.row_key.value))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a path: focus its evidence; enter on evidence: open the pane that shows it."""
        if event.data_table.id == "triage-paths":
            if event.row_key.value:
                self._show_evidence(str(event.row_key.value))
            self.query_one("#triage-evidence", SnapshotTable).focus()
            return
        path = self._path(self._path_id)
        key = str(event.row_key.value or "")
        if path is None or ":" not in key:
            return
        evidence = path.evidence[int(key.split(":", 1)[0])]
        if evidence.pane is not None:
            self.ktop.action_goto(evidence.pane.value)
        else:
            self.notify(f"{evidence.title}: {evidence.detail}", title="no pane shows this")

    def table(self, name: str) -> SnapshotTable:
        """``paths`` or ``evidence``."""
        return self.query_one(f"#triage-{name}", SnapshotTable)

    @property
    def headline_text(self) -> str:
        """The headline as plain text."""
        content = self.query_one("#triage-headline", Static).content
        return content.plain if isinstance(content, Text) else str(content)
