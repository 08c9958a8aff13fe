"""APF classification (ktop.model.flow_match).

The expected classifications of the bootstrap set are written out by hand from
k8s.io/apiserver v0.36.1 pkg/apis/flowcontrol/bootstrap/default.go (its subjects, rules and
matching precedences) and the matching rules of pkg/util/flowcontrol/rule.go, not taken
from the code under test.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.fuzzing  # noqa: F401  (registers and loads the profile)
from ktop.model.flow_match import (
    Classification,
    FlowSchemaError,
    FlowSchemas,
    RequestFacts,
    bootstrap,
)

AUTH = "system:authenticated"
UNAUTH = "system:unauthenticated"
NODE = RequestFacts("system:node:n1", ("system:nodes", AUTH), "get", True)
KSYS_SA = "system:serviceaccount:kube-system:deployment-controller"
KSYS_SA_GROUPS = ("system:serviceaccounts", "system:serviceaccounts:kube-system", AUTH)


def res(
    user: str,
    groups: tuple[str, ...],
    verb: str,
    resource: str,
    namespace: str = "",
    *,
    group: str = "",
    sub: str = "",
) -> RequestFacts:
    return RequestFacts(user, groups, verb, True, group, resource, sub, namespace)


def nonres(user: str, groups: tuple[str, ...], verb: str, path: str) -> RequestFacts:
    return RequestFacts(user, groups, verb, False, path=path)


def c(flow_schema: str, priority_level: str | None = None) -> Classification:
    return Classification(flow_schema, priority_level or flow_schema)


# (name, priority level, matching precedence) of each bootstrap FlowSchema, from default.go.
DEFAULT_GO = {
    "exempt": ("exempt", 1),
    "catch-all": ("catch-all", 10000),
    "probes": ("exempt", 2),
    "system-leader-election": ("leader-election", 100),
    "system-node-high": ("node-high", 400),
    "system-nodes": ("system", 500),
    "kube-controller-manager": ("workload-high", 800),
    "kube-scheduler": ("workload-high", 800),
    "kube-system-service-accounts": ("workload-high", 900),
    "service-accounts": ("workload-low", 9000),
    "global-default": ("global-default", 9900),
}


def test_bootstrap_data_is_default_go() -> None:
    document = json.loads(
        files("ktop.model").joinpath("data/bootstrap_flowschemas.json").read_text("utf-8")
    )
    assert document["kind"] == "FlowSchemaList"
    names = [item["metadata"]["name"] for item in document["items"]]
    # MandatoryFlowSchemas, then SuggestedFlowSchemas, in their declared order.
    assert names[:2] == ["exempt", "catch-all"]
    assert sorted(names) == sorted(DEFAULT_GO)
    schemas = bootstrap()
    assert schemas.problems == ()
    assert len(schemas) == 11
    got = {s.name: (s.priority_level, s.matching_precedence) for s in schemas.schemas}
    assert got == DEFAULT_GO
    # matchingPrecedence ascending, the two at 800 by name.
    assert [s.name for s in schemas.schemas] == [
        "exempt",
        "probes",
        "system-leader-election",
        "system-node-high",
        "system-nodes",
        "kube-controller-manager",
        "kube-scheduler",
        "kube-system-service-accounts",
        "service-accounts",
        "global-default",
        "catch-all",
    ]


BOOTSTRAP_CASES = [
    # system:masters is exempt, before anything else, probes included.
    (res("admin", ("system:masters", AUTH), "delete", "pods", "x"), c("exempt")),
    (nonres("admin", ("system:masters", AUTH), "get", "/healthz"), c("exempt")),
    (res("system:apiserver", ("system:masters", AUTH), "list", "nodes"), c("exempt")),
    # Probes: get of /healthz, /readyz, /livez (and the paths under them), by anyone.
    (nonres("system:anonymous", (UNAUTH,), "get", "/healthz"), c("probes", "exempt")),
    (nonres("alice", (AUTH,), "get", "/readyz"), c("probes", "exempt")),
    (nonres("alice", (AUTH,), "get", "/livez/ping"), c("probes", "exempt")),
    (nonres("alice", (AUTH,), "post", "/livez"), c("global-default")),
    (nonres("alice", (AUTH,), "get", "/healthzx"), c("global-default")),
    (nonres("system:node:n1", ("system:nodes", AUTH), "get", "/healthz"), c("probes", "exempt")),
    # Nodes: their Node objects and leases at node-high, everything else at system.
    (
        res("system:node:n1", ("system:nodes", AUTH), "get", "pods", "default"),
        c("system-nodes", "system"),
    ),
    (
        res("system:node:n1", ("system:nodes", AUTH), "get", "nodes"),
        c("system-node-high", "node-high"),
    ),
    (
        res("system:node:n1", ("system:nodes", AUTH), "patch", "nodes", sub="status"),
        c("system-node-high", "node-high"),
    ),
    (
        res(
            "system:node:n1",
            ("system:nodes", AUTH),
            "update",
            "leases",
            "kube-node-lease",
            group="coordination.k8s.io",
        ),
        c("system-node-high", "node-high"),
    ),
    # nodes/proxy is not among node-high's resources.
    (
        res("system:node:n1", ("system:nodes", AUTH), "get", "nodes", sub="proxy"),
        c("system-nodes", "system"),
    ),
    # Core-group "leases" is not coordination.k8s.io's.
    (
        res("system:node:n1", ("system:nodes", AUTH), "update", "leases", "kube-node-lease"),
        c("system-nodes", "system"),
    ),
    (
        nonres("system:node:n1", ("system:nodes", AUTH), "get", "/version"),
        c("system-nodes", "system"),
    ),
    # Leader election: get/create/update of namespaced leases by the scheduler, the
    # controller manager and kube-system's service accounts.
    (
        res(
            "system:kube-scheduler",
            (AUTH,),
            "get",
            "leases",
            "kube-system",
            group="coordination.k8s.io",
        ),
        c("system-leader-election", "leader-election"),
    ),
    (
        res(
            "system:kube-controller-manager",
            (AUTH,),
            "update",
            "leases",
            "kube-system",
            group="coordination.k8s.io",
        ),
        c("system-leader-election", "leader-election"),
    ),
    (
        res(
            KSYS_SA, KSYS_SA_GROUPS, "create", "leases", "kube-system", group="coordination.k8s.io"
        ),
        c("system-leader-election", "leader-election"),
    ),
    (
        res(
            "system:kube-scheduler",
            (AUTH,),
            "watch",
            "leases",
            "kube-system",
            group="coordination.k8s.io",
        ),
        c("kube-scheduler", "workload-high"),
    ),
    (
        res("system:kube-scheduler", (AUTH,), "get", "leases", group="coordination.k8s.io"),
        c("kube-scheduler", "workload-high"),
    ),
    (
        res("system:kube-scheduler", (AUTH,), "create", "pods", "x", sub="binding"),
        c("kube-scheduler", "workload-high"),
    ),
    (
        nonres("system:kube-scheduler", (AUTH,), "get", "/metrics"),
        c("kube-scheduler", "workload-high"),
    ),
    (
        res("system:kube-controller-manager", (AUTH,), "list", "replicasets", group="apps"),
        c("kube-controller-manager", "workload-high"),
    ),
    # Service accounts: kube-system's at workload-high, the others at workload-low.
    (
        res(KSYS_SA, KSYS_SA_GROUPS, "list", "pods"),
        c("kube-system-service-accounts", "workload-high"),
    ),
    (
        res(
            "system:serviceaccount:default:app",
            ("system:serviceaccounts", "system:serviceaccounts:default", AUTH),
            "get",
            "configmaps",
            "default",
        ),
        c("service-accounts", "workload-low"),
    ),
    # A namespace that only begins with "kube-system" is another namespace.
    (
        res(
            "system:serviceaccount:kube-system-x:app",
            ("system:serviceaccounts", AUTH),
            "get",
            "pods",
            "kube-system-x",
        ),
        c("service-accounts", "workload-low"),
    ),
    # kube-system's service-account subject matches by user name, not by group.
    (
        res("mallory", ("system:serviceaccounts:kube-system", AUTH), "get", "pods", "x"),
        c("global-default"),
    ),
    # Anyone else, authenticated or not, is at global-default.
    (res("alice", (AUTH,), "list", "pods", "default"), c("global-default")),
    (res("system:anonymous", (UNAUTH,), "get", "namespaces"), c("global-default")),
    (nonres("system:anonymous", (UNAUTH,), "get", "/api"), c("global-default")),
    # Neither group: nothing matches, and the apiserver falls back to catch-all.
    (res("ghost", (), "get", "pods", "default"), c("catch-all")),
    (nonres("ghost", (), "get", "/healthz"), c("catch-all")),
]


@pytest.mark.parametrize(("request_", "expected"), BOOTSTRAP_CASES)
def test_bootstrap_classification(request_: RequestFacts, expected: Classification) -> None:
    assert bootstrap().classify(request_) == expected


def fs(
    name: str,
    *rules: dict[str, Any],
    precedence: int | None = 100,
    level: str = "pl",
    api_version: str = "flowcontrol.apiserver.k8s.io/v1",
) -> dict[str, Any]:
    spec: dict[str, Any] = {"priorityLevelConfiguration": {"name": level}, "rules": list(rules)}
    if precedence is not None:
        spec["matchingPrecedence"] = precedence
    return {
        "apiVersion": api_version,
        "kind": "FlowSchema",
        "metadata": {"name": name},
        "spec": spec,
    }


def user(name: str) -> dict[str, Any]:
    return {"kind": "User", "user": {"name": name}}


def group(name: str) -> dict[str, Any]:
    return {"kind": "Group", "group": {"name": name}}


def sa(namespace: str, name: str) -> dict[str, Any]:
    return {"kind": "ServiceAccount", "serviceAccount": {"namespace": namespace, "name": name}}


def rule(
    subjects: list[dict[str, Any]],
    resource: list[dict[str, Any]] | None = None,
    non_resource: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"subjects": subjects}
    if resource is not None:
        out["resourceRules"] = resource
    if non_resource is not None:
        out["nonResourceRules"] = non_resource
    return out


def rr(
    verbs: list[str] | None = None,
    groups: list[str] | None = None,
    resources: list[str] | None = None,
    namespaces: list[str] | None = None,
    cluster: bool = False,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "verbs": verbs or ["*"],
        "apiGroups": groups or ["*"],
        "resources": resources or ["*"],
    }
    if namespaces is not None:
        out["namespaces"] = namespaces
    if cluster:
        out["clusterScope"] = True
    return out


def nr(urls: list[str], verbs: list[str] | None = None) -> dict[str, Any]:
    return {"verbs": verbs or ["*"], "nonResourceURLs": urls}


ANYONE = [group("*")]
EVERYTHING = rule(ANYONE, [rr(namespaces=["*"], cluster=True)], [nr(["*"])])


def only(*items: dict[str, Any]) -> FlowSchemas:
    return FlowSchemas.from_objects(items, supply_mandatory=False)


def name_of(schemas: FlowSchemas, r: RequestFacts) -> str | None:
    got = schemas.classify(r)
    return None if got is None else got.flow_schema


POD = res("alice", (AUTH,), "get", "pods", "ns1")


def test_precedence_then_name() -> None:
    schemas = only(
        fs("b", EVERYTHING, precedence=50),
        fs("a", EVERYTHING, precedence=50),
        fs("0-first-by-name", EVERYTHING, precedence=60),
    )
    assert [s.name for s in schemas.schemas] == ["a", "b", "0-first-by-name"]
    assert schemas.classify(POD) == Classification("a", "pl")
    # An unset (or 0) matchingPrecedence is defaulted to 1000.
    assert (
        name_of(
            only(fs("z", EVERYTHING, precedence=None), fs("y", EVERYTHING, precedence=999)), POD
        )
        == "y"
    )
    assert (
        name_of(only(fs("z", EVERYTHING, precedence=0), fs("y", EVERYTHING, precedence=1001)), POD)
        == "z"
    )


def test_subjects() -> None:
    schemas = only(
        fs("bob", rule([user("bob")], [rr(namespaces=["*"])]), precedence=1),
        fs("sa-one", rule([sa("ns1", "one")], [rr(namespaces=["*"])]), precedence=2),
        fs("sa-ns2", rule([sa("ns2", "*")], [rr(namespaces=["*"])]), precedence=3),
        fs("devs", rule([group("devs")], [rr(namespaces=["*"])]), precedence=4),
        fs(
            "odd",
            rule(
                [{"kind": "Robot", "robot": {"name": "*"}}, {"kind": "User"}],
                [rr(namespaces=["*"])],
            ),
            precedence=5,
        ),
        fs("any-user", rule([user("*")], [rr(namespaces=["*"])]), precedence=6),
    )

    def who(name: str, *groups: str) -> str | None:
        return name_of(schemas, res(name, groups, "get", "pods", "ns1"))

    assert who("bob") == "bob"
    assert who("system:serviceaccount:ns1:one") == "sa-one"
    assert who("system:serviceaccount:ns1:two") == "any-user"
    assert who("system:serviceaccount:ns2:two") == "sa-ns2"
    assert who("system:serviceaccount:ns22:two") == "any-user"
    # A service-account subject never matches through the groups.
    assert who("carol", "system:serviceaccounts:ns2", "system:serviceaccounts") == "any-user"
    assert who("carol", "devs") == "devs"
    assert who("carol") == "any-user"


def test_resource_rules() -> None:
    def match(rule_: dict[str, Any], r: RequestFacts) -> bool:
        return only(fs("x", rule(ANYONE, [rule_]))).classify(r) is not None

    get_pods = res("u", (), "get", "pods", "ns1")
    assert match(rr(["get"], [""], ["pods"], ["ns1"]), get_pods)
    assert not match(rr(["list"], [""], ["pods"], ["ns1"]), get_pods)
    assert not match(rr(["get"], ["apps"], ["pods"], ["ns1"]), get_pods)
    # A "*" is a wildcard only as the list's sole member.
    assert not match(rr(["*", "list"], ["*"], ["*"], ["*"]), get_pods)
    assert not match(rr(namespaces=["*", "ns2"]), get_pods)
    # Subresources: "pods" is not "pods/status"; "*" covers both.
    status = res("u", (), "update", "pods", "ns1", sub="status")
    assert not match(rr(resources=["pods"], namespaces=["*"]), status)
    assert match(rr(resources=["pods/status"], namespaces=["*"]), status)
    assert not match(rr(resources=["pods/status"], namespaces=["*"]), get_pods)
    assert match(rr(namespaces=["*"]), status)
    # Cluster scope against namespaces.
    nodes = res("u", (), "list", "nodes")
    assert not match(rr(namespaces=["*"]), nodes)
    assert match(rr(cluster=True), nodes)
    assert not match(rr(cluster=True), get_pods)
    assert match(rr(namespaces=["ns1"]), get_pods)
    assert not match(rr(namespaces=["ns2"], cluster=True), get_pods)
    # A resource rule never matches a non-resource request, nor the other way round.
    assert not match(rr(namespaces=["*"], cluster=True), nonres("u", (), "get", "/api"))
    non_resource_only = only(fs("x", rule(ANYONE, non_resource=[nr(["*"])])))
    assert non_resource_only.classify(nodes) is None


def test_non_resource_urls() -> None:
    def match(
        urls: list[str], path: str, verb: str = "get", verbs: list[str] | None = None
    ) -> bool:
        schemas = only(fs("x", rule(ANYONE, non_resource=[nr(urls, verbs)])))
        return schemas.classify(nonres("u", (), verb, path)) is not None

    assert match(["/apis/*"], "/apis/apps")
    assert match(["/apis/*"], "/apis/apps/v1")
    assert not match(["/apis/*"], "/apis")
    assert match(["/metrics"], "/metrics")
    assert match(["/metrics"], "/metrics/cadvisor")
    assert not match(["/metrics"], "/metricsx")
    assert match(["*"], "/anything/at/all")
    assert match(["/version", "/openapi/*"], "/openapi/v3")
    assert not match(["/version"], "/versions")
    assert not match(["/healthz"], "/healthz", verb="post", verbs=["get"])
    assert match(["/healthz"], "/healthz", verb="post", verbs=["*"])


def test_malformed_items_are_left_out() -> None:
    good = fs("good", EVERYTHING)
    bad: list[Any] = [
        {"kind": "FlowSchema", "spec": good["spec"]},  # no name
        {"kind": "FlowSchema", "metadata": {"name": "no-spec"}},
        fs("no-level", EVERYTHING, level=""),
        fs("verbs-string", rule(ANYONE, [{"verbs": "get", "resources": ["*"]}])),
        fs("precedence-string", EVERYTHING) | {"spec": good["spec"] | {"matchingPrecedence": "5"}},
        fs("precedence-bool", EVERYTHING) | {"spec": good["spec"] | {"matchingPrecedence": True}},
        fs("rules-object", EVERYTHING) | {"spec": good["spec"] | {"rules": {}}},
        fs("scope-string", rule(ANYONE, [rr(namespaces=["*"]) | {"clusterScope": "yes"}])),
        fs("subject-name", rule([{"kind": "User", "user": {"name": 7}}], [rr(namespaces=["*"])])),
        {"kind": "PriorityLevelConfiguration", "metadata": {"name": "pl"}, "spec": {}},
        "not an object",
        fs("good", EVERYTHING, precedence=1),  # a repeated name
    ]
    schemas = only(good, *bad)
    assert [s.name for s in schemas.schemas] == ["good"]
    assert len(schemas.problems) == len(bad)
    for problem, name in zip(
        schemas.problems[1:10],
        [
            "no-spec",
            "no-level",
            "verbs-string",
            "precedence-string",
            "precedence-bool",
            "rules-object",
            "scope-string",
            "subject-name",
            "PriorityLevelConfiguration",
        ],
        strict=True,
    ):
        assert name in problem
    assert "metadata.name" in schemas.problems[0]
    assert "repeated" in schemas.problems[-1]
    assert schemas.classify(POD) == Classification("good", "pl")


def test_nothing_usable_raises() -> None:
    with pytest.raises(FlowSchemaError, match="no-spec"):
        FlowSchemas.from_objects([{"kind": "FlowSchema", "metadata": {"name": "no-spec"}}])
    empty = only()
    assert len(empty) == 0
    assert empty.classify(POD) is None


def test_null_lists_and_v1beta3() -> None:
    item = fs(
        "x",
        rule(ANYONE, [rr(namespaces=["*"])]),
        api_version="flowcontrol.apiserver.k8s.io/v1beta3",
    )
    item["spec"]["rules"][0]["nonResourceRules"] = None
    schemas = only(item)
    assert schemas.problems == ()
    assert name_of(schemas, POD) == "x"
    assert name_of(schemas, nonres("u", (), "get", "/api")) is None


def test_mandatory_schemas_are_supplied_first_and_last() -> None:
    mine = fs("aaa", EVERYTHING, precedence=1)
    masters = res("root", ("system:masters", AUTH), "get", "pods", "ns1")
    supplied = FlowSchemas.from_objects([mine])
    assert [s.name for s in supplied.schemas] == ["exempt", "aaa", "catch-all"]
    assert supplied.classify(masters) == Classification("exempt", "exempt")
    # Given as objects, exempt is ordered like any other (1, "aaa" < "exempt").
    exempt_object = {
        "metadata": {"name": "exempt"},
        "spec": {
            "priorityLevelConfiguration": {"name": "exempt"},
            "matchingPrecedence": 1,
            "rules": [rule([group("system:masters")], [rr(namespaces=["*"], cluster=True)])],
        },
    }
    given_ = FlowSchemas.from_objects([mine, exempt_object])
    assert [s.name for s in given_.schemas] == ["aaa", "exempt", "catch-all"]
    assert name_of(given_, masters) == "aaa"
    # Nothing matches: the catch-all is the fall-back, wherever it is.
    narrow = FlowSchemas.from_objects([fs("bob", rule([user("bob")], [rr(namespaces=["*"])]))])
    assert narrow.classify(res("ghost", (), "get", "pods", "ns1")) == Classification(
        "catch-all", "catch-all"
    )
    assert narrow.classify(res("bob", (), "get", "pods", "ns1")) == Classification("bob", "pl")
    assert len(FlowSchemas.from_objects([])) == 2


def test_dangling_priority_level_is_ignored() -> None:
    items = [
        fs("a", EVERYTHING, precedence=1, level="gone"),
        fs("b", EVERYTHING, precedence=2, level="pl"),
    ]
    schemas = FlowSchemas.from_objects(items, priority_levels=["pl"], supply_mandatory=False)
    assert [s.name for s in schemas.schemas] == ["b"]
    assert "gone" in schemas.problems[0]
    # Without the levels known, the reference is taken as good.
    assert name_of(only(*items), POD) == "a"


WORDS = st.sampled_from(
    [
        "",
        "*",
        "get",
        "list",
        "pods",
        "status",
        "kube-system",
        "system:masters",
        "system:nodes",
        AUTH,
        UNAUTH,
        "system:serviceaccount:kube-system:x",
        "system:kube-scheduler",
        "/healthz",
        "/",
        "/healthz/etcd",
        "leases",
        "coordination.k8s.io",
    ]
) | st.text(max_size=30)
FACTS = st.builds(
    RequestFacts,
    user=WORDS,
    groups=st.lists(WORDS, max_size=4).map(tuple),
    verb=WORDS,
    resource_request=st.booleans(),
    api_group=WORDS,
    resource=WORDS,
    subresource=WORDS,
    namespace=WORDS,
    path=WORDS,
)
HAND_BUILT = only(
    fs(
        "a",
        rule(
            [sa("ns1", "*"), user("bob")],
            [rr(["get"], [""], ["pods/status"], ["ns1"])],
            [nr(["/apis/*"])],
        ),
    ),
    fs("b", rule([group("devs")], [rr(cluster=True)]), precedence=7),
)


@pytest.mark.fuzz
@given(FACTS)
def test_classify_never_raises(r: RequestFacts) -> None:
    got = bootstrap().classify(r)
    assert got is not None
    assert got.flow_schema in DEFAULT_GO
    assert got.priority_level == DEFAULT_GO[got.flow_schema][0]
    HAND_BUILT.classify(r)
