"""The findings catalogue is data: codes are unique, documented and all reachable."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from ktop.analysis import rules
from ktop.analysis.catalogue import BY_CODE, CATALOGUE

DOC = Path(__file__).resolve().parents[2] / "docs" / "findings.md"


def test_codes_are_unique_and_well_formed() -> None:
    codes = [r.code for r in CATALOGUE]
    assert len(codes) == len(set(codes)) == len(BY_CODE)
    assert all(re.fullmatch(r"KT-[A-Z]+-\d{3}", c) for c in codes)


def test_every_code_is_documented() -> None:
    text = DOC.read_text()
    missing = [r.code for r in CATALOGUE if f"`{r.code}`" not in text]
    assert missing == []


def test_every_code_has_a_rule_and_every_rule_code_is_catalogued() -> None:
    used = set(re.findall(r'"(KT-[A-Z]+-\d{3})"', inspect.getsource(rules)))
    assert used == set(BY_CODE)
