"""Fuzzing ``record --from --redact``: identifiers of every class the redactor knows,
drawn by Hypothesis, planted in every string of every record type of a recording (built
with the repo's writer), its markers and its source; none of them, nor a name derived from
them, is left in the copy's bytes (frames decompressed) or in what ``replay --info`` and
``triage --recording`` print of it, and the copy still reads and triages.
"""

from __future__ import annotations

import itertools
import tempfile
import typing
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tests.fuzzing  # noqa: F401  (registers and loads the profile)
from ktop.model import events as ev
from ktop.record.reader import Recording
from ktop.record.redact import VERBATIM_FIELDS
from tests.unit.redact_plant import file_bytes, printed, record, redacted_copy
from tests.unit.test_redact import Planter

pytestmark = pytest.mark.fuzz

_NAME = st.from_regex(r"zq[a-pr-z0-9]{5,10}q", fullmatch=True)
"""A distinctive name (``zq`` cannot occur by chance in a recording's other bytes), which
no other is the beginning of (one ``q`` ends it)."""
_HASH = st.from_regex(r"[a-z0-9]{4,10}", fullmatch=True)
_OCTET = st.integers(0, 255)


@dataclass(frozen=True)
class Planted:
    """One identifier of every class, as a cluster's objects and messages carry them."""

    ns: str
    sa: str
    user: str
    group: str
    ipv6: str
    ec2: str
    pvc: str
    secret: str
    service: str
    host: str
    deploy: str
    rs: str
    pod: str

    @property
    def names(self) -> list[str]:
        """The identifiers as they stand alone (for name fields)."""
        return [
            f"system:serviceaccount:{self.ns}:{self.sa}",
            self.user,
            self.ipv6,
            self.ec2,
            self.pvc,
            self.secret,
            self.service,
            self.host,
            self.rs,
            self.pod,
        ]

    @property
    def leaks(self) -> list[str]:
        """Every string none of which may be left."""
        return [*vars(self).values(), self.user.split("@")[0], self.user.split("@")[1]]

    def sentence(self) -> str:
        """A message naming every identifier in the ways the control plane writes them."""
        return (
            f'deployment "{self.deploy}" scaled replica set {self.rs}; Created pod: {self.pod}; '
            f'{self.pod} is forbidden: User "system:serviceaccount:{self.ns}:{self.sa}" '
            f'cannot list resource "pods" in the namespace "{self.ns}"; User "{self.user}" '
            f'groups ["{self.group}" "system:authenticated"]; user={self.user}; dial tcp '
            f"{self.ipv6} port 443 refused on {self.ec2}; "
            f'persistentvolumeclaim "{self.pvc}" not found; secret "{self.secret}" not found; '
            f'service "{self.service}" has no endpoints; kubernetes.io/hostname={self.host}'
        )


@st.composite
def planted(draw: st.DrawFn) -> Planted:
    """Identifiers of every class, distinct from each other."""
    names = draw(st.lists(_NAME, min_size=10, max_size=10, unique=True))
    ns, sa, user, dom, group, pvc, secret, service, host, deploy = names
    octets = draw(st.tuples(_OCTET, _OCTET, _OCTET))
    ec2 = f"ip-10-{octets[0]}-{octets[1]}-{octets[2]}"
    if draw(st.booleans()):
        ec2 += ".ec2.internal"
    ipv6 = draw(st.ip_addresses(v=6).map(str).filter(lambda a: sum(c.isalnum() for c in a) >= 8))
    rs = f"{deploy}-{draw(_HASH)}"
    pod = f"{rs}-{draw(st.from_regex(r'[a-z0-9]{5}', fullmatch=True))}"
    return Planted(
        ns, sa, f"{user}@{dom}.example", f"oidc:{group}", ipv6, ec2, pvc, secret, service,
        host, deploy, rs, pod,
    )  # fmt: skip


class IdentifierPlanter(Planter):
    """Test_redact's planter, with the drawn identifiers in every string field."""

    def __init__(self, ids: Planted) -> None:
        super().__init__()
        self.ids = ids
        self._names = itertools.cycle(ids.names)

    def value(self, tp: typing.Any, owner: str, field: str) -> typing.Any:
        """As the planter's, but the fields triage groups by hold an address (redaction
        keeps their words on purpose, never an address).
        """
        if tp is str and (owner, field) in VERBATIM_FIELDS:
            return f"kept-{self.ids.ipv6}"
        return super().value(tp, owner, field)

    def _secret(self, owner: str, field: str) -> str:
        return next(self._names)

    def _text(self) -> str:
        return self.ids.sentence()


def _events(ids: Planted) -> list[ev.Event]:
    planter = IdentifierPlanter(ids)
    events: list[ev.Event] = [planter.build(cls) for cls in typing.get_args(ev.Event)]
    events.append(ev.NodeReadinessByLabel(11.0, "kubernetes.io/hostname", ((ids.host, 1, 0),)))
    return events


@settings(
    max_examples=max(3, settings().max_examples // 8),
    suppress_health_check=[HealthCheck.too_slow],
)
@given(planted())
def test_no_planted_identifier_survives_redaction(ids: Planted) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        orig = Path(tmp) / "orig.ktrec"
        record(orig, _events(ids), [ids.sentence()], context=ids.ns, detail=ids.sentence())
        copy = redacted_copy(orig)
        blob, said = file_bytes(copy), printed(copy)
        with Recording(copy) as rec:
            got = list(rec.cursor(rec.start - 1.0).take(rec.end))
    assert {type(e) for e in got} == set(typing.get_args(ev.Event))
    assert [s for s in ids.leaks if s.encode() in blob] == []
    assert [s for s in ids.leaks if s in said] == []
