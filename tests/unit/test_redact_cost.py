"""The redactor finds known names by dictionary lookups: its cost per text does not grow
with the number of names it knows (a recording of 100,000 nodes knows 100,000), and it
finds exactly what one regular expression of every name found.
"""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import tests.fuzzing  # noqa: F401  (registers and loads the profile)
from ktop.record.redact import Redactor
from ktop.record.redact_text import KnownNames

TEXT = (
    "0/5000 nodes are available: node worker-17 had untolerated taint, pod api-5d4f9c-x7k2p "
    "in team-a was evicted from worker-42.eu-west-1.compute.internal; ip-10-0-1-23 and "
    '10.0.0.7:6443 timed out (see https://10.0.0.7:6443/healthz); User "jane doe" '
) * 20


def _reference(names: dict[str, str], text: str) -> str:
    """What the redactor did before: one regular expression of every name, longest first."""
    if not names:
        return text
    pattern = re.compile(
        r"(?<![\w.-])(?P<base>"
        + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        + r")(?P<extra>(?:-[a-z0-9]{1,10}){0,2})(?![\w-])"
    )
    return pattern.sub(lambda m: f"<{m.group('base')}|{m.group('extra')}>", text)


def _redactor(n_nodes: int) -> Redactor:
    redactor = Redactor()
    for i in range(n_nodes):
        redactor.stand_in("node", f"node-{i:06d}.zone-{i % 7}.example")
    redactor.stand_in("node", "worker-17")
    redactor.stand_in("pod", "api-5d4f9c-x7k2p")
    redactor.stand_in("server", "10.0.0.7:6443")
    return redactor


def _cost(redactor: Redactor) -> float:
    """The least time of several redactions of :data:`TEXT` (each a fresh copy)."""
    best = float("inf")
    for i in range(5):
        text = TEXT + str(i)
        started = time.perf_counter()
        redactor.text(text)
        best = min(best, time.perf_counter() - started)
    return best


def test_cost_does_not_grow_with_the_names_known() -> None:
    # The issue: every known name was tried at each word start (one alternation of every
    # name), so 50,000 names made each message far slower than 100 did.
    few, many = _redactor(100), _redactor(50_000)
    assert few.text(TEXT) == few.text(TEXT)  # warm: stand-ins of the text learnt
    assert many.text(TEXT).count("node-") == few.text(TEXT).count("node-")
    assert _cost(many) < 3 * _cost(few)


_WORD = st.sampled_from(
    ["api", "api-5d4f9c", "web", "web-0", "a.b", "x:1", "jane doe", "[::1]", "n-1", "-q", "é"]
)


@pytest.mark.fuzz
@given(
    st.lists(_WORD, max_size=6, unique=True),
    st.lists(
        st.one_of(_WORD, st.sampled_from([" ", "-", ".", ":", "-7", "-5d4f9c-x7k2p", "/", '"'])),
        max_size=20,
    ),
)
@example(["api"], ["api", " "])  # a text ending where a name may start (once looped)
def test_finds_what_one_expression_of_every_name_found(names: list[str], parts: list[str]) -> None:
    index = KnownNames()
    for name in names:
        index.learn(name, name.upper())
    text = "".join(parts)
    got = index.replace(text, lambda base, extra: f"<{base}|{extra}>")
    assert got == _reference(dict.fromkeys(names, ""), text)
