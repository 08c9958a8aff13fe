"""``record --from --redact`` hides every kind of identifier a cluster's messages carry, in
time linear in the text, and what is printed of the copy shows none of them.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from ktop.input_limits import LIMITS, MAX_REDACT_WORD
from ktop.model import events as ev
from ktop.record.redact import Redactor
from tests.unit.redact_plant import file_bytes, printed, record, redacted_copy

DEPLOY = "origdeploy-api"
RS = f"{DEPLOY}-5d4f"
POD = f"{RS}-x7k2p"
PLANTED = {
    "service account": "system:serviceaccount:payments:billing-reader",
    "user": "alice.smith@corp-secret.example",
    "group": "oidc:payments-admins",
    "ipv6": "fd00:10:96::a1",
    "ipv6 (full)": "2001:db8:85a3:0:0:8a2e:370:7334",
    "ec2 host": "ip-10-0-1-23",
    "ec2 host (domain)": "ip-10-0-1-24.eu-west-1.compute.internal",
    "pvc": "data-ledger-0",
    "secret": "stripe-live-key",
    "service": "billing-gateway",
    "hostname label": "worker-secret-9",
    "replicaset": RS,
    "pod": POD,
}
"""One identifier of every class the issue lists (the leak checks look for these)."""
LEAKS = [*PLANTED.values(), "payments", "billing-reader", "alice.smith", DEPLOY]


def _messages() -> list[str]:
    p = PLANTED
    return [
        f'pods is forbidden: User "{p["service account"]}" cannot list resource "pods" in '
        'API group "" in the namespace "payments"',
        f'User "{p["user"]}" groups ["{p["group"]}" "system:authenticated"] denied',
        f"token of {p['service account']} expired; user={p['user']}",
        f"dial tcp {p['ipv6']} port 443: refused; peer {p['ipv6 (full)']} gone",
        f"node {p['ec2 host']} and {p['ec2 host (domain)']} NotReady; {p['ec2 host']} again",
        f'persistentvolumeclaim "{p["pvc"]}" not found',
        f'MountVolume.SetUp failed for volume "creds" : secret "{p["secret"]}" not found',
        f'service "{p["service"]}" has no endpoints',
        f"didn't match selector kubernetes.io/hostname={p['hostname label']}",
        f"Scaled up replica set {RS} to 3",
        f"Created pod: {POD}",
    ]


def _events() -> list[ev.Event]:
    messages = _messages()
    out: list[ev.Event] = [
        ev.WarningEvent(5.0, "ScalingReplicaSet", "prod", "Deployment", DEPLOY, "scaled"),
        ev.NodeReadinessByLabel(
            5.0, "kubernetes.io/hostname", ((PLANTED["hostname label"], 1, 0),)
        ),
    ]
    out += [
        ev.WarningEvent(6.0 + i, "Failed", "prod", "Pod", f"web-{i}-abcde", m)
        for i, m in enumerate(messages)
    ]
    return out


def test_every_identifier_class_leaves_the_copy_and_what_is_printed_of_it(tmp_path: Path) -> None:
    orig = tmp_path / "orig.ktrec"
    record(orig, _events(), notes=[_messages()[0], f"rollout of {RS} stuck"])
    copy = redacted_copy(orig)
    blob, said = file_bytes(copy), printed(copy)
    assert [s for s in LEAKS if s.encode() in blob] == []
    assert [s for s in LEAKS if s in said] == []


def test_one_identifier_gets_one_stand_in_everywhere_and_derived_names_follow_the_owner() -> None:
    r = Redactor()
    deploy = r.event(ev.WarningEvent(1.0, "X", "ns", "Deployment", DEPLOY, ""))
    assert isinstance(deploy, ev.WarningEvent)
    one = r.text(f"Scaled up replica set {RS} to 3; pod {POD} and {POD}; deployment {DEPLOY}")
    two = r.text(f"{POD} failed ({RS})")
    rs, pod = r.stand_in("owner", RS), r.stand_in("pod", POD)
    assert one == (
        f"Scaled up replica set {rs} to 3; pod {pod} and {pod}; deployment {deploy.object_name}"
    )
    assert two == f"{pod} failed ({rs})"
    sa = r.text(f"by {PLANTED['service account']}")
    assert sa == f"by system:serviceaccount:{r.stand_in('ns', 'payments')}:sa-1"
    assert r.text("pod ns-1/pod-1 on node node-1") == "pod ns-1/pod-1 on node node-1"  # kept


def test_ordinary_words_versions_and_times_stay() -> None:
    r = Redactor()
    text = (
        "0/3 nodes are available: 3 node(s) had untolerated taint "
        "{node.kubernetes.io/unreachable: }. v1.35.0-gke.12 at 10:30:00 took 0.005 s; "
        'the user cannot list, groups are fine, User "system:anonymous"'
    )
    assert r.text(text) == text


def _baseline_s(text: str, rounds: int = 3) -> float:
    """The fastest of ``rounds`` plain regular-expression passes over ``text`` that match
    every character once: linear work, with the engine's cost per match.
    """
    every = re.compile(".", re.DOTALL)
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        every.findall(text)
        best = min(best, time.perf_counter() - t0)
    return best


LINEAR_FACTOR = 40
"""Redaction may cost this many plain passes (it measures about 5 on a developer's machine:
a few passes, each trying a handful of patterns where a word starts)."""


def test_a_long_word_is_redacted_in_linear_time() -> None:
    # 1 MB of text: 100 kB words (the issue's), and words just under the bound made of the
    # shapes the patterns read furthest into (hyphenated labels, dotted names, digits).
    limit = MAX_REDACT_WORD.value
    shapes = ["a-", "ab.", "1.", "x", "a:", "a@"]
    words = [(shape * limit)[:limit] for shape in shapes] * 600
    text = " ".join(["q" * 100_000, *words, "z-" * 50_000])
    assert len(text) > 1_000_000
    r = Redactor()
    r.stand_in("owner", "a-a-a")  # a known name the text starts with, again and again
    t0 = time.perf_counter()
    out = r.text(text)
    took = time.perf_counter() - t0
    # Quadratic work on one 100 kB word alone is 10^10 steps: minutes, not this bound.
    assert took < LINEAR_FACTOR * _baseline_s(text)
    assert "qqqq" not in out and "z-z-" not in out  # the long words are gone whole


def test_the_word_bound_is_a_named_parser_limit() -> None:
    assert MAX_REDACT_WORD in LIMITS
    assert "<300 characters>" in Redactor().text("x" * 300)
