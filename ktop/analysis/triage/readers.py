"""Every evidence ID's reader: the areas' readers joined (one table, checked against the
paths' evidence by the tests).
"""

from __future__ import annotations

from ktop.analysis.triage.evidence import Reader, not_collected
from ktop.analysis.triage.evidence_api import API_READERS
from ktop.analysis.triage.evidence_audit import AUDIT_READERS
from ktop.analysis.triage.evidence_etcd import ETCD_READERS
from ktop.analysis.triage.evidence_ha import HA_READERS
from ktop.analysis.triage.evidence_nodes import NODE_READERS
from ktop.analysis.triage.evidence_pods import POD_READERS
from ktop.analysis.triage.evidence_readings import reading_evidence
from ktop.analysis.triage.paths import PATHS

NOT_COLLECTED_IDS = (
    "nodes.utilisation",
    "nodes.registration_rate",
    "dns.errors",
    "ha.standby_sync",
)
"""Evidence the paths name that ktop does not collect: always unknown, and says so."""

READERS: dict[str, Reader] = {
    **API_READERS,
    **ETCD_READERS,
    **POD_READERS,
    **NODE_READERS,
    **dict.fromkeys(NOT_COLLECTED_IDS, not_collected),
    **HA_READERS,
    **AUDIT_READERS,
    **{e.id: reading_evidence for p in PATHS for e in p.evidence if e.reading},
}
"""Evidence ID -> reader."""
