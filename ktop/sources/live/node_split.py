"""The node list split by zone: Table rows without objects, each zone's place known from
its label selector, instead of every node's metadata.

A node's place (region, zone, rack, excluded from disruption counts) comes from its
labels, and labels only come with object metadata: hundreds of bytes of ``managedFields``
and annotations a node, most of a whole node's size. A Table *without* objects is a
tenth of it, but names no label. So the list asks, per zone, for exactly the nodes whose
place the selector itself decides, without their objects. The legacy keys decide when
set (:func:`ktop.sources.convert.first_label`, as the node lifecycle controller reads
them), so a cluster whose nodes carry both zone keys (most real ones) is asked

    failure-domain.beta.kubernetes.io/zone=Z, failure-domain.beta.kubernetes.io/region=R,
    !node.kubernetes.io/exclude-disruption, !<rack label>

and one with the standard keys only ``!failure-domain.beta.kubernetes.io/zone,
topology.kubernetes.io/zone=Z, ...``. Every node such a list returns has the place
``(R, Z, "", False)`` by the very rule that reads labels. Every other node is in at least
one of a few *rest* lists, listed with metadata (so read exactly as before): excluded,
racked, a zone none of the zone lists names (or decided by the other key), or a zone
they name with another region. Listing a node twice is harmless (the same place either
way), and the union of the lists is every node.

The zones (and each one's region) are learnt from the list's first page, which is asked
for with metadata as always; the split is used only when that page is *plain*: no node
excluded or racked, one key deciding every node's zone, and one region (decided by one
key) per zone. Otherwise (a cluster that labels racks, say) the list goes on as before.
A first page in name order can miss zones (nodes named by zone: it holds zone a only);
the rest list of nodes in zones no zone list names is then split the same way from its
own first page (:attr:`SubList.resplit`), until it ends or a page of it is not plain.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ktop.sources.convert import EXCLUDE_DISRUPTION, REGION_LABELS, ZONE_LABELS, mapping, text

LEGACY_ZONE, ZONE = ZONE_LABELS
LEGACY_REGION, REGION = REGION_LABELS

Place = tuple[str, str, str, bool]
"""(region, zone, rack, excluded from disruption counts): what a node's labels say."""


@dataclass(frozen=True, slots=True)
class SubList:
    """One list of the split: a label selector, and the place its rows have (rows are
    then asked for without objects), or None (rows with metadata: their labels say).
    """

    selector: str
    place: Place | None
    resplit: Callable[[Sequence[dict[str, Any]]], tuple[SubList, ...] | None] | None = field(
        default=None, compare=False
    )
    """For the list of nodes in zones no zone list names: given its first page (with
    metadata), the lists to read instead of its other pages (None: page on). A first page
    of 500 in name order can hold one zone only (nodes named by zone, as many are); the
    zones it missed are learnt from this list's own first page, again and again."""


Known = tuple[str, tuple[str, ...]]
"""The zone key every zone list pins, and the zones already listed."""


def _unwanted(rack_label: str) -> tuple[str, ...]:
    """Label keys a node of a zone list must not have (their holders are rest lists)."""
    return (EXCLUDE_DISRUPTION, rack_label) if rack_label else (EXCLUDE_DISRUPTION,)


def _decided(labels: dict[str, Any], legacy: str, standard: str) -> tuple[str, str] | None:
    """Which key decides (``legacy``, ``standard``, or "" for neither) and its value, as
    :func:`ktop.sources.convert.first_label` reads them; None for an empty value (no
    selector pins it).
    """
    for key in (legacy, standard):
        if key in labels:
            value = text(labels, key)
            return (key, value) if value else None
    return "", ""


def _pin(key: str, value: str, legacy: str, standard: str) -> list[str]:
    """Selector terms that hold exactly for the nodes whose ``key`` decides ``value``."""
    if key == legacy:
        return [f"{legacy}={value}"]
    if key == standard:
        return [f"!{legacy}", f"{standard}={value}"]
    return [f"!{legacy}", f"!{standard}"]


def _not_pinned(key: str, value: str, legacy: str, standard: str) -> list[list[str]]:
    """Selectors whose union holds every node that :func:`_pin` leaves out."""
    if key == legacy:
        return [[f"{legacy}!={value}"]]
    if key == standard:
        return [[legacy], [f"{standard}!={value}"]]
    return [[legacy], [standard]]


def plan(
    items: Sequence[dict[str, Any]], rack_label: str, known: Known | None = None
) -> tuple[SubList, ...] | None:
    """The lists that together hold every node, from the first page's items (with their
    metadata); None when the page is not plain (see the module's docstring) and the list
    must go on with metadata.

    ``known``: the items are the first page of the list of nodes in no zone of ``known``
    (:attr:`SubList.resplit`); the lists returned then hold every node of that list:
    their zones' lists, the region rests of those zones, and the nodes in no zone known
    yet. The rest lists that do not depend on the zones were listed already.

    Plain: no node is excluded or racked, one key decides every node's zone (the legacy
    one, or the standard one with no legacy key), and within a zone one key decides the
    region, to one value. Real clusters often carry both zone keys with equal values; the
    legacy one decides then, and the selectors pin it.
    """
    zone_key: str | None = None
    regions: dict[str, tuple[str, str]] = {}
    for item in items:
        labels = mapping(mapping(item, "metadata"), "labels")
        if any(k in labels for k in _unwanted(rack_label)):
            return None
        decides_zone = _decided(labels, LEGACY_ZONE, ZONE)
        decides_region = _decided(labels, LEGACY_REGION, REGION)
        if decides_zone is None or decides_region is None or not decides_zone[1]:
            return None
        key, value = decides_zone
        zone_key = key if zone_key is None else zone_key
        if key != zone_key or regions.setdefault(value, decides_region) != decides_region:
            return None
    if zone_key is None or (known is not None and known[0] != zone_key):
        return None
    listed = known[1] if known is not None else ()
    if any(zone in listed for zone in regions):  # cannot be: the selector left them out
        return None
    unwanted = [f"!{key}" for key in _unwanted(rack_label)]
    lists: list[SubList] = []
    rest: list[list[str]] = [] if known else [[key] for key in _unwanted(rack_label)]
    zones = tuple(sorted({*regions, *listed}))
    if zone_key == ZONE and known is None:
        rest.append([LEGACY_ZONE])
    for zone, (region_key, region) in sorted(regions.items()):
        in_zone = _pin(zone_key, zone, LEGACY_ZONE, ZONE)
        terms = [*in_zone, *_pin(region_key, region, LEGACY_REGION, REGION), *unwanted]
        lists.append(SubList(",".join(terms), (region, zone, "", False)))
        rest += [
            [*in_zone, *other] for other in _not_pinned(region_key, region, LEGACY_REGION, REGION)
        ]
    lists.extend(SubList(",".join(terms), None) for terms in rest)
    others = f"{zone_key} notin ({','.join(zones)})"
    lists.append(
        SubList(others, None, partial(plan, rack_label=rack_label, known=(zone_key, zones)))
    )
    return tuple(lists)
