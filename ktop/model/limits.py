"""Every numeric limit ktop grades a reading with, defined once with its unit and source.

Thresholds are starting points (the seeds insist the real baseline is the cluster's own
normal window); where a threshold comes from an upstream alert, ``source`` names it. The
readings registry (:mod:`ktop.model.readings`) attaches them to readings; the finding
catalogue (:mod:`ktop.analysis.catalogue`) to its rules; the screen colours by them.
"""

from __future__ import annotations

from ktop.model.grading import Threshold, WarmUp
from ktop.model.snapshot import STALE_AFTER_S

APF_REJECTIONS = Threshold(
    "rejections per second in a priority level",
    "/s",
    "triage P1 (000 §4.3): APF only decides who waits; any rejection is a client-visible 429",
    critical=0.0,
)
APF_IN_QUEUE = Threshold(
    "requests waiting in a priority level's queues",
    "count",
    "triage P1: a request waits only when its level is at its concurrency limit",
    warn=0.0,
)
APF_WAIT_P99 = Threshold(
    "APF queue wait p99",
    "s",
    "triage P1; request_wait_duration_seconds buckets 1 s and 5 s (ktop starting point)",
    warn=1.0,
    critical=5.0,
)
APF_SEATS = Threshold(
    "seats in use / seat limit",
    "ratio",
    "triage P1: a level at its concurrency limit queues everything new",
    warn=0.9,
    inclusive=True,
)
SKEW_FLOOR = 50.0
"""The least load an apiserver is compared with in a skew (requests/s or watches): a
smaller load, none (an idle or just restarted instance) included, counts as this much, so
that noise near idle is no skew and one instance holding everything is a finite one. At
10 a healthy lab's pair of apiservers (29 and 14 requests/s, every client on one) read
2.1x and crossed 2.5x now and then: an imbalance that costs nothing."""
API_SKEW = Threshold(
    f"busiest instance / mean of its peers, or mean of its peers / idlest instance, "
    f"whichever is larger (loads under {SKEW_FLOOR:g} count as {SKEW_FLOOR:g})",
    "x",
    "triage: uneven apiserver load (003 §3.2); against its peers, so that two instances can "
    "show it: a healthy pair of apiservers splits up to about 64/36 (1.8x), a rolling "
    "restart leaves one with nearly all and the last one back idle (ktop starting point)",
    warn=2.5,
    critical=5.0,
)
API_UPTIME = Threshold(
    "apiserver uptime",
    "s",
    "triage: uneven load step 3 (line imbalance up with restarts)",
    warn=600.0,
    below=True,
)
API_THROTTLED = Threshold(
    "HTTP 429 responses per second",
    "/s",
    "triage P1, P5: 429s and client retries",
    warn=0.0,
)
API_TERMINATIONS = Threshold(
    "requests terminated per second",
    "/s",
    "apiserver_request_terminations_total; mixin KubeAPITerminatedRequests",
    warn=0.0,
)
ETCD_LEADER_CHANGES = Threshold(
    "leader changes in the window",
    "count",
    "etcd mixin etcdHighNumberOfLeaderChanges (>= 4 in 15 m)",
    warn=0.0,
    critical=3.0,
)
ETCD_FSYNC_P99 = Threshold(
    "WAL fsync p99",
    "s",
    "etcd mixin etcdHighFsyncDurations",
    warn=0.5,
    critical=1.0,
)
ETCD_COMMIT_P99 = Threshold(
    "backend commit p99",
    "s",
    "etcd mixin etcdHighCommitDurations",
    warn=0.25,
    critical=0.5,
)
ETCD_QUOTA = Threshold(
    "db size / quota",
    "ratio",
    "etcd mixin etcdDatabaseQuotaLowSpace",
    warn=0.8,
    critical=0.95,
)
ETCD_FRAGMENTATION = Threshold(
    "fragmentation (1 - in use / size)",
    "ratio",
    "etcd mixin etcdDatabaseHighFragmentationRatio",
    warn=0.5,
)
ETCD_FRAG_MIN_IN_USE = Threshold(
    "db in use (fragmentation is only reported above this)",
    "bytes",
    "etcd mixin etcdDatabaseHighFragmentationRatio (104857600 bytes)",
    warn=104857600.0,
)
ETCD_DEFRAG_INFLIGHT = Threshold(
    "defragmentation in progress (etcd_disk_defrag_inflight)",
    "count",
    "etcd maintenance guide: a member blocks reads and writes while it defragments",
    warn=0.0,
)
ETCD_ALARMS = Threshold(
    "etcd alarms standing (etcd_debugging_server_alarms)",
    "count",
    "etcd maintenance guide: a NOSPACE alarm makes the cluster refuse writes until disarmed",
    critical=0.0,
)
ETCD_FAILED_PROPOSALS = Threshold(
    "failed proposals per second",
    "/s",
    "etcd mixin etcdHighNumberOfFailedProposals",
    warn=0.0,
)
ETCD_CLIENT_ERRORS = Threshold(
    "etcd requests failing per second, as the apiservers see them",
    "/s",
    "etcd health (000 §4.4): any failing storage request fails an API call",
    warn=0.0,
)
ETCD_PEER_RTT_P99 = Threshold(
    "peer round-trip p99",
    "s",
    "etcd mixin etcdMemberCommunicationSlow",
    warn=0.15,
)
SCHED_UNSCHEDULABLE = Threshold(
    "pods unschedulable",
    "count",
    "triage P2, P6",
    warn=0.0,
)
SCHED_GATED = Threshold(
    "pods held by scheduling gates",
    "count",
    "triage P2: quota and admission are a different layer",
    info=0.0,
)
SCHED_QUOTA_REJECTIONS = Threshold(
    "pod creations refused for exceeded quota",
    "count",
    "triage P2",
    warn=0.0,
)
SCHED_QUOTA_USED = Threshold(
    "ResourceQuota used / hard",
    "ratio",
    "triage P2: at 100 % new pods asking for the resource are refused",
    info=0.9,
    warn=1.0,
    inclusive=True,
)
NODE_DOMAIN_SHARE = Threshold(
    "share of unhealthy nodes in the worst zone (at least 3 unhealthy, 2 zones)",
    "ratio",
    "triage P4: correlation before blame (000 §8.1)",
    info=0.9,
    inclusive=True,
)
NODE_DOMAIN_MIN_UNHEALTHY = 3
"""Fewer unhealthy nodes than this say nothing about a failure domain."""
ETCD_NO_LEADER_BELOW = 0.5
"""``etcd_server_has_leader`` is 0 or 1: a member's history below this is "no leader"."""
NODE_UNHEALTHY_ABOVE = 0.0
"""A zone's history of not-Ready nodes above this is a disruption under way."""
NODE_LEASE_LAG_P99 = Threshold(
    "node Lease lag p99",
    "s",
    "kubelet renews every 10 s (2 missed renewals: warning); lease duration 40 s: critical",
    warn=20.0,
    critical=40.0,
)
API_WRITE_P99 = Threshold(
    "mutating request latency p99",
    "s",
    "sig-scalability SLO: mutating single-object calls <= 1 s (p99); half of it is a warning",
    warn=0.5,
    critical=1.0,
)
FLOW_DOMINANCE = Threshold(
    "one flow schema's share of its priority level's queue",
    "ratio",
    "triage: queueing and more 429s (who sends the requests)",
    warn=0.5,
    inclusive=True,
)
API_SLO = Threshold(
    "API call p99 / its SLO's limit (mutating 1 s; reads 1 s, 5 s, 30 s by scope)",
    "x",
    "sig-scalability/slos api_call_latency (5-minute windows)",
    warn=1.0,
    critical=2.0,
)
API_SLO_BUDGET = Threshold(
    "share of an API call SLO's error budget burned today (Prometheus) or since ktop's "
    "first scrape, the most burned SLO of an instance",
    "ratio",
    "sig-scalability/slos api_call_latency (99 % of calls within the limit: 1 % is the "
    "budget); SRE workbook error budgets: past the whole budget the SLO is missed over the "
    "span, half of it burned is a warning (ktop starting point)",
    warn=0.5,
    critical=1.0,
)
"""Grades the budget rows of the drill-down (``ktop/model/slo_budget.py``), finding
KT-API-006 and evidence ``api.slo_budget``."""
API_SLO_BUDGET_WARM_UP = WarmUp(
    300.0,
    100,
    "sig-scalability/slos api_call_latency (5-minute windows; 100 calls make the 1 % one call)",
)
"""An SLO's budget burned is graded once its count spans 300 s and holds 100 calls; until
then it is unknown, warming up (``ktop/model/slo_budget.py``)."""
BASELINE_MARK = 10.0
"""A graded reading under its warning limit is marked at this many times its own normal
(``ktop/analysis/baseline_marks.py``)..."""
BASELINE_MARK_FLOOR = 0.1
"""...when it is also at least this share of its warning limit (noise near zero is not)."""
BASELINE_SUSPECT = 5.0
"""Triage evidence of a graded reading under its limits is suspect at this many times its
recent normal (``ktop/analysis/triage/baseline_normal.py``; ktop starting point: a leader
whose commit p99 went from 17 ms to 88 ms on a slowing disk, while the steady simulator
at every size never passes it)..."""
BASELINE_SUSPECT_FLOOR = 0.1
"""...when it is also at least this share of its warning limit: an etcd backend commit p99
of 25 ms or more, a WAL fsync p99 of 50 ms or more. At 0.02 (5 ms of commit) a healthy
lab's etcd on two busy cores, its commit p99 from under 1 ms to a few ms and back, made
ETCD suspect; noise near zero is not a failing disk."""
TALKER_DOMINANCE = Threshold(
    "one client's share of its priority level's seats (or queue)",
    "ratio",
    "triage: queueing and more 429s (who sends the requests: the client to limit)",
    warn=0.5,
    inclusive=True,
)
BASELINE_RATIO = Threshold(
    "reading / its median in the baseline",
    "x",
    "triage: thresholds relative to the cluster's own normal window (seeds); ktop starting point",
    warn=1.5,
    critical=2.0,
)
POD_START_FAILURES = Threshold(
    "bound pods not started with a start Warning",
    "count",
    "triage P3",
    warn=0.0,
)
CONSTRAINT_SHARE = Threshold(
    "unschedulable pods refused by constraints or shape rather than plain cpu/memory",
    "ratio",
    "triage P6: fragmentation and policy constraints",
    warn=0.5,
    inclusive=True,
)
HEARTBEAT_SHARE = Threshold(
    "Lease renewals / apiserver writes",
    "ratio",
    "triage axes (002): Lease renewals about 70 % of writes in one node-bound case",
    info=0.5,
    inclusive=True,
)
HA_INSTANCES = Threshold(
    "apiserver instances running",
    "count",
    "triage HA readiness (003 §3.3): a single instance has no fail-over",
    warn=2.0,
    critical=1.0,
    below=True,
)
HA_ETCD_MARGIN = Threshold(
    "etcd members that may still fail before quorum is lost",
    "count",
    "etcd: N members keep quorum with N // 2 + 1 answering (000 §4.4, 003 §6)",
    warn=1.0,
    critical=0.0,
    below=True,
)
ETCD_MEMBERS_LOST = Threshold(
    "etcd members lost: not answering while others do, or without a leader",
    "count",
    "etcd: each lost member takes a failure of fault tolerance; below quorum "
    "(N // 2 + 1 counting) etcd accepts no write (000 §4.4, 003 §6)",
    warn=0.0,
)
HA_LEADERS = Threshold(
    "instances of a leader-elected component that hold its Lease",
    "count",
    "client-go leader election: exactly one instance leads (leader_election_master_status)",
    critical=1.0,
    below=True,
)
STALE_AFTER = Threshold(
    "age of an area's stalest input",
    "s",
    "ktop: a scrape or feed silent for 6 polls is stale",
    warn=STALE_AFTER_S,
)
"""Not a finding: an area whose stalest input is older than this is shown stale."""
PENDING_MIN_PODS = 10
"""Never 'many' pods (triage P2, P3, P6) at this many or fewer, whatever the cluster's size."""
PENDING_PER_NODE = Threshold(
    f"pods waiting for one cause per node (and more than {PENDING_MIN_PODS} pods)",
    "ratio",
    "ktop starting point for 'many pods' (triage P2, P3, P6): one pod per 100 nodes; a few "
    "long-waiting pods (a selector no node matches, a request no node can fill) are the normal "
    "of a large cluster, not a symptom",
    warn=0.01,
)
"""Waiting pods are 'many' past this share of the nodes (and :data:`PENDING_MIN_PODS`), or
well above the cluster's own baseline (:data:`BASELINE_RATIO`); fewer are a note."""
