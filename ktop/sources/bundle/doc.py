"""``docs/bundle-format.md``, generated from the bundle layout (one fact, one place).

:func:`bundle_format_md` is the page's generated block (everything below the title);
``make docs`` (``ktop/docgen.py``) writes it.
"""

from __future__ import annotations

from ktop.sources.bundle import must_gather as mg
from ktop.sources.bundle.etcd_info import (
    ALARM_LIST,
    ENDPOINT_HEALTH,
    ENDPOINT_STATUS,
    ETCD_INFO,
    MEMBER_LIST,
)
from ktop.sources.bundle.layout import (
    APF_DIR,
    APF_REQUESTS_DIR,
    APF_SUFFIX,
    API_DIR,
    API_RESOURCES,
    COMPONENTS,
    FEEDS,
    METRICS_DIR,
    METRICS_SUFFIX,
)


def bundle_format_md() -> str:
    """The bundle format page, below its title."""
    api_rows = [
        f"| `{API_DIR}/{r}.json` | `kubectl get {r} -A -o json` | "
        + ("used for: " + ", ".join(FEEDS[r]) if r in FEEDS else "checked for validity only")
        + " |"
        for r in API_RESOURCES
    ]
    comps = ", ".join(f"`{c}`" for c in COMPONENTS)
    lines = [
        "An offline bundle is a directory that `ktop triage --bundle DIR` reads. A user can",
        "assemble one by hand with kubectl and curl; every file is optional.",
        "",
        "```",
        "DIR/",
        f"  {API_DIR}/<resource>.json",
        f"  {METRICS_DIR}/<component>/<instance>/<unix-seconds>{METRICS_SUFFIX}",
        f"  {APF_DIR}/<instance>/<unix-seconds>{APF_SUFFIX}",
        f"  {APF_REQUESTS_DIR}/<instance>/<unix-seconds>{APF_SUFFIX}",
        "```",
        "",
        "## API lists",
        "",
        "Each file is the List object exactly as kubectl prints it with `-o json`.",
        "",
        "| file | how to make it | what ktop reads from it |",
        "|---|---|---|",
        *api_rows,
        "",
        "## Metrics",
        "",
        f"`{METRICS_DIR}/<component>/<instance>/<unix-seconds>{METRICS_SUFFIX}` is the Prometheus",
        "text a component's `/metrics` endpoint returned, as scraped. `<component>` is one of",
        f"{comps}. `<instance>` names the target (it is the `instance` in the JSON",
        "output). `<unix-seconds>` is when it was scraped, for example:",
        "",
        "```",
        "curl -s --cacert ca.crt --cert c.crt --key c.key https://10.0.0.1:2379/metrics \\",
        f"  > {METRICS_DIR}/etcd/etcd-0/$(date +%s){METRICS_SUFFIX}",
        "kubectl get --raw /metrics \\",
        f"  > {METRICS_DIR}/apiserver/apiserver-a/$(date +%s){METRICS_SUFFIX}",
        "```",
        "",
        "Two or more scrapes of one target give rates, increases and quantiles over the window",
        "between the first and the last. A single scrape gives lifetime values, which are",
        'labelled as such (`window: "lifetime"` in the JSON); rates are then unknown.',
        "",
        "## APF dumps",
        "",
        f"`{APF_DIR}/<instance>/<unix-seconds>{APF_SUFFIX}` is the output of",
        "`kubectl get --raw /debug/api_priority_and_fairness/dump_priority_levels` on one",
        "apiserver instance. It is used for an instance whose metrics have no APF families;",
        "its waiting and executing counts are read, its counters are lifetime only, so",
        "rejection rates and wait times stay unknown.",
        "",
        f"`{APF_REQUESTS_DIR}/<instance>/<unix-seconds>{APF_SUFFIX}` is the output of",
        "`kubectl get --raw '/debug/api_priority_and_fairness/dump_requests"
        "?includeRequestDetails=1'`",
        "on one apiserver instance: the queued (and, from Kubernetes 1.28, executing) requests",
        "with their user, flow distinguisher, verb and resource. It names the top talkers of",
        "each priority level (`top_talkers` in the JSON, the `apf.top_talker` evidence); dumps",
        "within a minute of the bundle's time are averaged. Without it the top talkers are",
        "unknown.",
        "",
        "## Missing and malformed files",
        "",
        "- A missing file makes the evidence it feeds unknown, with the reason naming the file",
        "  (for example `api/leases.json is not in the bundle`); it is never an error.",
        "- A malformed file is reported as `<file>:<line>: <problem>` (in `errors` of the JSON",
        "  output and on standard error), and the rest of the bundle is still used. A metrics",
        "  file's malformed lines are skipped, each reported with its line number and the",
        "  parser's reason (every sample line is checked, of the families ktop reads or not; a",
        "  value beyond float64, such as `1e400`, is malformed as it is for Prometheus); its other",
        "  lines are used. A metrics file with no sample ktop reads (an error page saved as a",
        "  scrape) is one error naming its first malformed line. An `api/*.json` file with a",
        "  number longer than 100 digits, a number beyond float64, `NaN`/`Infinity` or nesting",
        "  deeper than the JSON parser follows is refused with its file and line; its evidence is",
        "  unknown.",
        "- `NaN`, `+Inf` and `-Inf` are legal sample values: NaN is unknown (shown `?`, never",
        "  graded ok), an infinity is shown `∞` and graded beyond any limit; a rate of a counter",
        "  with a NaN or infinite point and a quantile of a histogram with one are unknown.",
        "- A scrape file's name must be a Unix time (`inf.prom`, `nan.prom` and times past the",
        "  year 9999 are reported and not read).",
        "- A directory with none of the three parts is an error (exit code 2).",
        "",
        "## Which file each finding came from",
        "",
        "Each evidence in the JSON report names the files of its pane (`files`: the scrapes of",
        "the instances that feed it, its API lists, a must-gather's `etcd_info/*.json` or",
        "metrics slice); each suspect path of the text and Markdown reports ends with `read",
        "from:` and the files its evidence rests on. A directory's scrapes or dumps, named by",
        "their time, are one entry (`metrics/etcd/etcd-0/*.prom (12 files)`); a file that could",
        "not be used is named under the errors, never as a source.",
        "",
        "## The bundle's clock",
        "",
        "API objects carry no capture time. The bundle's time is its latest scrape or dump;",
        "without any, the newest Lease renewal or Warning event. Lease lag is measured",
        "against it.",
        "",
        "## Capturing a bundle",
        "",
        "`ktop bundle capture --context NAME DIR` writes this layout from a live cluster",
        "with ktop's own clients: each API list once (pages joined, as kubectl prints them),",
        "every reachable metrics target and APF dump (priority levels and requests) twice,",
        "10 s apart (`--scrapes`, `--interval`). Component endpoints are given as for the",
        "live view (`--etcd-metrics`, `--scheduler-metrics`, `--controller-manager-metrics`,",
        "`--apiserver`). A read that fails is left out and reported; its evidence is then",
        "unknown.",
        "",
    ]
    return "\n".join(lines)


def must_gather_md() -> str:
    """The section on reading a must-gather as a bundle: the paths read, from the reader's
    own constants.
    """
    rows = [
        f"| `{mg.TIMESTAMP}` | the bundle's time (its first time; the APF dumps are taken then) |",
        f"| `{mg.NODES_DIR}/<node>.yaml` | nodes (one object per file) |",
        *(f"| `{pattern}` | {name} |" for name, pattern in mg.NAMESPACED.items()),
        f"| `{mg.APF_DUMPS}/priority_levels` | an APF dump per kube-apiserver pod |",
        f"| `{mg.APF_DUMPS}/requests` | the same pod's request dump (no user names: "
        "gathered without request details, so clients are flow distinguishers) |",
        f"| `{ETCD_INFO}/{MEMBER_LIST}`, `{ENDPOINT_STATUS}`, `{ENDPOINT_HEALTH}`, "
        f"`{ALARM_LIST}` | each etcd member's leader, database size and use, quota (etcd "
        "3.6), version, health and the alarms standing (NOSPACE, CORRUPT; etcdctl `-w "
        "json`), as one scrape at the must-gather's time |",
        f"| `{mg.METRICS_SLICE}` (or `.gz`) | with `gather_metrics`: the slice's scrapes of "
        "the components (docs/history.md), so readings have a window |",
        f"| `{mg.FLOWSCHEMAS_DIR}/*.yaml` | with `--audit-log`: the FlowSchemas that classify "
        "each client |",
        f"| `{mg.AUDIT_LOGS}/*` | with `--audit-log DIR` (the must-gather): the "
        "kube-apiservers' audit logs (docs/audit-logs.md) |",
    ]
    return (
        "\n".join(
            [
                "`ktop triage --bundle DIR` also reads an OpenShift must-gather as it is, with no",
                "conversion: `DIR` is the `must-gather.local.<id>/` directory or the image",
                f"directory inside it (the one with the `{mg.TIMESTAMP}` file). Read:",
                "",
                "| path | what it gives |",
                "|---|---|",
                *rows,
                "",
                "A part it lacks is listed in `missing` and its evidence is unknown with the",
                "reason: Leases are gathered only with every namespace inspected, pods and events",
                "only of the namespaces inspected; a file that is not YAML is named with its line",
                "and the rest is read. An etcd member that failed its health check, or gave no",
                "status, is lost. Without the metrics slice the apiservers', scheduler's and",
                "controller-manager's readings, and etcd's latencies and counters, are unknown.",
                "A member whose health check failed only because an alarm stands is read,",
                "and the alarm is the finding (KT-ETCD-009).",
                "",
                "`ktop replay DIR` plays a bundle or a must-gather as it is: its scrapes (the",
                "metrics slice) and dumps in time order from the first, its objects at its",
                "time, the end; it is rebuilt as a recording in a temporary directory, removed",
                "when the replay ends, so it seeks and rewinds as any recording does. What it",
                "lacks is said first (and by `--info`) and, on screen, by each pane that needed",
                "it. A must-gather without a slice is one moment.",
            ]
        )
        + "\n"
    )
