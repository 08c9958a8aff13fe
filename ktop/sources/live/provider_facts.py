"""What the cluster says about itself that names its provider (``ktop/model/providers.py``).

Three small reads, once per session: the API group list (``/apis``), the apiserver's
``/version``, and one node (``limit=1``: its ``providerID`` and labels). A read that
fails (refused, timed out, unreadable) leaves its fact empty, with its reason; detection
then goes by the others. Everything here but
:func:`cluster_facts` is pure.
"""

from __future__ import annotations

from typing import Any

from ktop.model.providers import ClusterFacts
from ktop.sources.convert import ObjectError, mapping, sequence, text
from ktop.sources.live.errors import ApiError
from ktop.sources.live.reads import API_GROUPS, ONE_NODE, VERSION
from ktop.sources.live.transport import KubeTransport


def api_groups(body: Any) -> frozenset[str]:
    """The group names of an ``APIGroupList``."""
    return frozenset(name for g in sequence(body, "groups") if (name := text(g, "name")))


def git_version(body: Any) -> str:
    """``gitVersion`` of a ``/version`` answer."""
    return text(body, "gitVersion")


def first_node(body: Any) -> tuple[str, dict[str, str]]:
    """The ``providerID`` and labels of the first node of a ``NodeList``."""
    items = sequence(body, "items")
    if not items:
        return "", {}
    node = items[0]
    labels = mapping(mapping(node, "metadata"), "labels")
    provider_id = text(mapping(node, "spec"), "providerID")
    return provider_id, {str(k): str(v) for k, v in labels.items()}


def _why(e: Exception) -> str:
    """A failed read's reason: the API's words, else the exception's kind and message."""
    if isinstance(e, ApiError | ObjectError):
        return str(e)
    return f"{type(e).__name__}: {e}".rstrip(": ")


async def cluster_facts(
    t: KubeTransport, version: str = ""
) -> tuple[ClusterFacts, tuple[str, ...]]:
    """The facts, and a line per read that failed (its fact left empty); ``version`` is
    the ``gitVersion`` the connection's probe already read (read again only without it).
    """
    failed: list[str] = []
    groups: frozenset[str] = frozenset()
    provider_id = ""
    labels: dict[str, str] = {}
    try:
        groups = api_groups((await t.get(API_GROUPS)).json())
    except Exception as e:  # any failure leaves this fact out, with its reason
        failed.append(f"{API_GROUPS}: {_why(e)}")
    if not version:
        try:
            version = git_version((await t.get(VERSION)).json())
        except Exception as e:
            failed.append(f"{VERSION}: {_why(e)}")
    try:
        provider_id, labels = first_node((await t.get(ONE_NODE, [("limit", 1)])).json())
    except Exception as e:
        failed.append(f"{ONE_NODE}: {_why(e)}")
    return ClusterFacts(groups, version, provider_id, labels), tuple(failed)
