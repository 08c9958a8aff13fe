"""Which APF FlowSchema and priority level kube-apiserver gives a request.

A transcription of k8s.io/apiserver v0.36.1, ``pkg/util/flowcontrol``: the matching
of ``rule.go`` (subjects, resource and non-resource rules), the order of
``apihelpers.FlowSchemaSequence`` (``matchingPrecedence`` ascending, ties by name), the
mandatory ``exempt`` and ``catch-all`` schemas that ``digestFlowSchemasLocked`` supplies
when they are missing (first and last), the schemas it ignores because their priority
level does not exist, and ``startRequest``'s fall-back to ``catch-all`` when no schema
matches. Kubernetes' own bootstrap schemas ship as package data (:func:`bootstrap`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

EXEMPT = "exempt"
"""The name of the mandatory exempt FlowSchema (and of its priority level)."""
CATCH_ALL = "catch-all"
"""The name of the mandatory catch-all FlowSchema (and of its priority level)."""
DEFAULT_MATCHING_PRECEDENCE = 1000
"""What the API server's defaulting gives a schema whose ``matchingPrecedence`` is 0 or unset."""

_SA_PREFIX = "system:serviceaccount:"
_DATA = "data/bootstrap_flowschemas.json"


@dataclass(frozen=True, slots=True)
class RequestFacts:
    """What APF sees of a request; an audit event has it all.

    ``user`` and ``groups`` are those after impersonation (APF runs after it): the event's
    ``impersonatedUser`` if it has one, else its ``user``; the groups include
    ``system:authenticated`` or ``system:unauthenticated``. ``verb`` is the event's (get, list,
    watch, create, ..., deletecollection; the lower-case HTTP method for a non-resource
    request). ``api_group`` ``""`` is the core group, ``namespace`` ``""`` a cluster-scoped
    request; ``path`` is the URL path of a non-resource request.
    """

    user: str
    groups: tuple[str, ...]
    verb: str
    resource_request: bool
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    path: str = ""


@dataclass(frozen=True, slots=True)
class Classification:
    """The FlowSchema a request matched and the priority level that schema names."""

    flow_schema: str
    priority_level: str


class FlowSchemaError(ValueError):
    """No usable FlowSchema among the objects given; the message names their problems."""


class _MalformedError(Exception):
    """One object's problem: the field's path and what is wrong with it."""


Match = Callable[[RequestFacts], bool]
"""A compiled rule: does it match the request?"""

_RESOURCE_KEYS = ("verbs", "apiGroups", "resources", "namespaces")
_KINDS = {str: "a string", int: "an integer", bool: "true or false", list: "a list"}
_MEMBERS = {"User": "user", "Group": "group", "ServiceAccount": "serviceAccount"}


def _contains(x: str, values: tuple[str, ...], wildcard: str) -> bool:
    """``containsString``: the wildcard counts only as the list's sole member."""
    return (len(values) == 1 and values[0] == wildcard) or x in values


def _get(m: Mapping[str, Any], key: str, kind: type, where: str, default: Any = None) -> Any:
    """``m[key]`` if it is a ``kind`` (null or absent is ``default``, as Go reads JSON)."""
    value = m.get(key)
    if value is None:
        return default
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _MalformedError(f"{where}{key} is not {_KINDS.get(kind, 'an object')}")
    return value


def _each(
    m: Mapping[str, Any], key: str, where: str, compile_: Callable[..., Match]
) -> list[Match]:
    """``compile_(member, its path)`` for each member of the list of objects at ``key``."""
    found = []
    for i, value in enumerate(_get(m, key, list, where, [])):
        if not isinstance(value, Mapping):
            raise _MalformedError(f"{where}{key}[{i}] is not an object")
        found.append(compile_(value, f"{where}{key}[{i}]."))
    return found


def _strs(m: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    values = _get(m, key, list, where, [])
    if not all(isinstance(v, str) for v in values):
        raise _MalformedError(f"{where}{key} has a member that is not a string")
    return tuple(values)


def _subject(m: Mapping[str, Any], where: str) -> Match:
    """``matchesSubject``; a service account matches by user name only, its namespace literal."""
    kind = _get(m, "kind", str, where, "")
    member = _MEMBERS.get(kind, "")
    body = _get(m, member, Mapping, where) if member else None
    if body is None:  # an unknown kind, or no member for it
        return lambda r: False
    name: str = _get(body, "name", str, f"{where}{member}.", "")
    if kind == "User":
        return lambda r: name in ("*", r.user)
    if kind == "Group":
        return lambda r: name == "*" or name in r.groups
    prefix = f"{_SA_PREFIX}{_get(body, 'namespace', str, f'{where}{member}.', '')}:"
    if name == "*":
        return lambda r: r.user.startswith(prefix)
    return lambda r: r.user == prefix + name


def _resource_rule(m: Mapping[str, Any], where: str) -> Match:
    """``matchesResourcePolicyRule``: resources may be ``resource/subresource``."""
    verbs, groups, resources, namespaces = (_strs(m, key, where) for key in _RESOURCE_KEYS)
    cluster_scope: bool = _get(m, "clusterScope", bool, where, False)

    def match(r: RequestFacts) -> bool:
        joined = f"{r.resource}/{r.subresource}" if r.subresource else r.resource
        return (
            _contains(r.verb, verbs, "*")
            and _contains(joined, resources, "*")
            and _contains(r.api_group, groups, "*")
            and (_contains(r.namespace, namespaces, "*") if r.namespace else cluster_scope)
        )

    return match


def _non_resource_rule(m: Mapping[str, Any], where: str) -> Match:
    """``matchesNonResourcePolicyRule``: a URL (``/x`` or ``/x/*``) matches the paths under it.

    ``/healthz`` matches ``/healthz/etcd`` too; ``/apis/*`` matches ``/apis/x``, not ``/apis``.
    """
    verbs, urls = _strs(m, "verbs", where), _strs(m, "nonResourceURLs", where)
    prefixes = tuple(u if u.endswith("/") else u + "/" for u in (u.removesuffix("*") for u in urls))

    def match(r: RequestFacts) -> bool:
        return _contains(r.verb, verbs, "*") and (
            "*" in urls or r.path in urls or r.path.startswith(prefixes)
        )

    return match


def _policy_rule(m: Mapping[str, Any], where: str) -> Match:
    """``matchesPolicyRule``: one of its subjects, then a rule of the request's kind."""
    subjects = _each(m, "subjects", where, _subject)
    resource_rules = _each(m, "resourceRules", where, _resource_rule)
    non_resource_rules = _each(m, "nonResourceRules", where, _non_resource_rule)

    def match(r: RequestFacts) -> bool:
        rules = resource_rules if r.resource_request else non_resource_rules
        return any(s(r) for s in subjects) and any(rule(r) for rule in rules)

    return match


@dataclass(frozen=True, slots=True)
class FlowSchema:
    """One FlowSchema, as far as classification needs it; ``rules`` are compiled."""

    name: str
    priority_level: str
    matching_precedence: int
    rules: tuple[Match, ...]

    def matches(self, r: RequestFacts) -> bool:
        """``matchesFlowSchema``: any of its rules."""
        return any(rule(r) for rule in self.rules)


def _schema(item: object) -> FlowSchema:
    if not isinstance(item, Mapping):
        raise _MalformedError("is not an object")
    if _get(item, "kind", str, "", "FlowSchema") != "FlowSchema":
        raise _MalformedError(f"is a {item['kind']}, not a FlowSchema")
    name = _get(_get(item, "metadata", Mapping, "", {}), "name", str, "metadata.", "")
    spec = _get(item, "spec", Mapping, "")
    if not name or spec is None:
        raise _MalformedError("has no metadata.name" if not name else f"{name}: has no spec")
    try:
        ref = _get(spec, "priorityLevelConfiguration", Mapping, "spec.", {})
        level = _get(ref, "name", str, "spec.priorityLevelConfiguration.", "")
        if not level:
            raise _MalformedError("has no spec.priorityLevelConfiguration.name")
        precedence = _get(spec, "matchingPrecedence", int, "spec.", 0)
        rules = tuple(_each(spec, "rules", "spec.", _policy_rule))
    except _MalformedError as e:
        raise _MalformedError(f"{name}: {e}") from None
    return FlowSchema(name, level, precedence or DEFAULT_MATCHING_PRECEDENCE, rules)


@dataclass(frozen=True)
class FlowSchemas:
    """An ordered set of FlowSchemas, as the apiserver orders them."""

    schemas: tuple[FlowSchema, ...] = ()
    """In matching order."""
    problems: tuple[str, ...] = ()
    """One line per object left out (malformed, a repeated name, a missing priority level)."""

    @classmethod
    def from_objects(
        cls,
        items: Iterable[Mapping[str, Any]],
        *,
        priority_levels: Collection[str] | None = None,
        supply_mandatory: bool = True,
    ) -> FlowSchemas:
        """Order FlowSchema objects (``kubectl get flowschemas -o json``'s items, v1 or v1beta3).

        A malformed item, or one whose name an earlier item had, is left out and its problem
        kept in :attr:`problems`. Given ``priority_levels`` (the names of the
        PriorityLevelConfigurations), a schema naming another level is left out too, as the
        apiserver ignores it (``exempt`` and ``catch-all`` always exist). With
        ``supply_mandatory``, a missing ``exempt`` schema is put first and a missing
        ``catch-all`` last, as the apiserver does. Raises :class:`FlowSchemaError` only when
        items were given and not one of them is well-formed.
        """
        levels = None if priority_levels is None else {*priority_levels, EXEMPT, CATCH_ALL}
        kept: dict[str, FlowSchema] = {}
        problems: list[str] = []
        count = well_formed = 0
        for index, item in enumerate(items):
            count += 1
            try:
                schema = _schema(item)
            except _MalformedError as e:
                problems.append(f"FlowSchema #{index} {e}; left out")
                continue
            well_formed += 1
            if schema.name in kept:
                problems.append(f"FlowSchema #{index} {schema.name}: a repeated name; left out")
            elif levels is not None and schema.priority_level not in levels:
                problems.append(
                    f"FlowSchema #{index} {schema.name}: priority level "
                    f"{schema.priority_level} does not exist; left out, as the apiserver does"
                )
            else:
                kept[schema.name] = schema
        if count and not well_formed:
            raise FlowSchemaError(f"no usable FlowSchema in {count}: " + "; ".join(problems[:3]))
        ordered = sorted(kept.values(), key=lambda s: (s.matching_precedence, s.name))
        if supply_mandatory:
            mandatory = {s.name: s for s in bootstrap().schemas}
            head = [] if EXEMPT in kept else [mandatory[EXEMPT]]
            ordered = head + ordered + ([] if CATCH_ALL in kept else [mandatory[CATCH_ALL]])
        return cls(tuple(ordered), tuple(problems))

    def classify(self, r: RequestFacts) -> Classification | None:
        """The first schema in order that matches; else ``catch-all`` if present; else None."""
        fallback = None
        for schema in self.schemas:
            if schema.matches(r):
                return Classification(schema.name, schema.priority_level)
            if schema.name == CATCH_ALL:
                fallback = schema
        return None if fallback is None else Classification(fallback.name, fallback.priority_level)

    def __len__(self) -> int:
        """How many schemas take part in matching."""
        return len(self.schemas)


@cache
def bootstrap() -> FlowSchemas:
    """Kubernetes' own mandatory and suggested FlowSchemas (k8s.io/apiserver v0.36.1).

    Read from ``ktop/model/data/bootstrap_flowschemas.json``, made from the Go source by
    ``scripts/flowschemas`` (its ``.source.txt`` says how).
    """
    document = json.loads(files("ktop.model").joinpath(_DATA).read_text(encoding="utf-8"))
    return FlowSchemas.from_objects(document["items"], supply_mandatory=False)
