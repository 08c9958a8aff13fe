"""A password in a URL given on the command line is never printed or written, by any
command (``ktop --prometheus 'https://admin:S3cret@127.0.0.1:1' fleet`` printed it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ktop.cli import main
from ktop.scrub import url_credentials

PASSWORD = "S3cretPassw0rd"
URL = f"https://admin:{PASSWORD}@127.0.0.1:1"
COMMANDS: dict[str, list[str]] = {
    "dashboard": [],
    "snapshot": ["snapshot", "--timeout", "1"],
    "triage": ["triage", "--window", "1"],
    "record": ["record", "-o", "{out}/rec.ktop", "--duration", "1"],
    "bundle capture": ["bundle", "capture", "{out}/bundle", "--scrapes", "1"],
    "fleet": ["fleet"],
}


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KTOP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    # As the author ran it, in a terminal: the fleet gets past its terminal check.
    monkeypatch.setattr("ktop.compose.terminal_problem", lambda: None)


@pytest.mark.parametrize("cluster", [[], ["--cluster", "c1"]])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_no_command_shows_a_url_password(
    command: str, cluster: list[str], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    if command in ("dashboard", "fleet") and cluster:
        pytest.skip("a dashboard of one Prometheus cluster would take the terminal")
    out = tmp_path / "out"
    out.mkdir()
    argv = [a.format(out=out) for a in COMMANDS[command]]
    code = main(["--prometheus", URL, *cluster, *argv])
    said = "".join(capfd.readouterr())
    assert code != 70, said
    assert said.strip(), "the command said nothing: the check would prove nothing"
    assert PASSWORD not in said
    for f in tmp_path.rglob("*"):
        if f.is_file():
            assert PASSWORD.encode() not in f.read_bytes(), f


def test_url_credentials() -> None:
    assert set(url_credentials(f"https://u:{PASSWORD}@h:1/p?access_token=t0k&x=1")) == {
        f"u:{PASSWORD}",
        PASSWORD,
        "t0k",
    }
    assert url_credentials("https://h:1/p?x=1") == []
    assert url_credentials("http://[::1") == []
