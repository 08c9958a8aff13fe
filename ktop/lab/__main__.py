"""CLI: `python -m ktop.lab up|down|inject|recover|status`."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from ktop.bounds import FLOOD_DURATION, bounded_float
from ktop.lab.cluster import Lab, stop_lab, wait_forever_then_stop
from ktop.lab.config import LabConfig
from ktop.lab.inject import DURATION_SCENARIOS, SCENARIOS, inject, recover
from ktop.lab.procs import record_supervisor, running_components, signal_supervisor
from ktop.lab.scenarios_api import MAX_FLOOD_S, WATCH_FLOOD_S
from ktop.lab.target import FORCE_FLAG, resolve_target
from ktop.lab.util import LabError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ktop.lab", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start a lab control plane in the foreground (Ctrl-C stops)")
    up.add_argument("--dir", type=Path, required=True, help="work dir (kubeconfig, logs, data)")
    up.add_argument("--nodes", type=int, default=200)
    up.add_argument("--etcd-members", type=int, choices=(1, 3), default=1)
    up.add_argument("--no-prometheus", action="store_true")
    up.add_argument(
        "--kubeadm-hosts",
        action="store_true",
        help="lay the control plane out as kubeadm does (an address per host; needs root)",
    )
    up.add_argument(
        "--openshift-layout",
        action="store_true",
        help="with --kubeadm-hosts: the components' pods where OpenShift keeps them",
    )
    up.add_argument(
        "--eks-layout",
        action="store_true",
        help="with --kubeadm-hosts: no component pods; scheduler and controller-manager "
        "metrics through an aggregated metrics.eks.amazonaws.com API, as on EKS",
    )
    up.add_argument(
        "--audit-log",
        action="store_true",
        help="the apiservers keep an audit log (paths in cluster-info.json's audit_logs)",
    )
    up.add_argument(
        "--etcd-fsync",
        action="store_true",
        help="etcd fsyncs its WAL as a real cluster does (default: --unsafe-no-fsync)",
    )
    down = sub.add_parser("down", help="stop every process of the lab in --dir")
    down.add_argument("--dir", type=Path, required=True)
    status = sub.add_parser("status", help="list the running processes of the lab in --dir")
    status.add_argument("--dir", type=Path, required=True)
    for name, helptext in (("inject", "make a scenario happen"), ("recover", "undo a scenario")):
        s = sub.add_parser(name, help=helptext)
        s.add_argument("scenario", choices=SCENARIOS)
        s.add_argument("--kubeconfig", type=Path, required=True)
        s.add_argument(
            "--dir",
            type=Path,
            default=None,
            help="lab dir (default: the kubeconfig's dir when it is a lab dir)",
        )
        s.add_argument("--context", default=None)
        s.add_argument("--zone", default="zone-a", help="zone for zone-outage")
        s.add_argument(
            FORCE_FLAG,
            dest="force",
            action="store_true",
            help="inject even without the ktop lab marker (dangerous)",
        )
        if name == "recover":
            s.add_argument("--member", default=None, help="etcd member to restart")
        else:
            s.add_argument(
                "--duration",
                type=bounded_float(FLOOD_DURATION),
                default=None,
                metavar="SECONDS",
                help=(
                    f"apf-saturation: flood for this long; apiserver-skew: hold the load on "
                    f"the apiserver that stayed up this long after the restart (default "
                    f"{WATCH_FLOOD_S:g} s, at most {MAX_FLOOD_S:g} s)"
                ),
            )
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    args = _parser().parse_args(argv)
    try:
        if args.cmd == "up":
            cfg = LabConfig(
                nodes=args.nodes,
                etcd_members=args.etcd_members,
                prometheus=not args.no_prometheus,
                kubeadm_hosts=args.kubeadm_hosts or args.openshift_layout or args.eks_layout,
                openshift_layout=args.openshift_layout,
                eks_layout=args.eks_layout,
                etcd_unsafe_no_fsync=not args.etcd_fsync,
                audit_log=args.audit_log,
            )
            lab = Lab(args.dir, cfg)
            info = lab.start()
            record_supervisor(lab.dir)
            print(
                json.dumps(
                    {
                        k: info[k]
                        for k in (
                            "kubeconfig",
                            "context",
                            "prometheus_url",
                            "apiservers",
                            "start_seconds",
                        )
                    },
                    indent=2,
                )
            )
            print(f"cluster info: {lab.layout.cluster_info}\nCtrl-C to stop.", flush=True)
            wait_forever_then_stop(lab)
            return 0
        if args.cmd == "down":
            lab_dir = args.dir.resolve()
            stopped = []
            # Ask a foreground `up` to stop its own lab first (it then exits 0), then
            # stop whatever is left (e.g. the lab of a crashed `up` or of a pytest fixture).
            if signal_supervisor(lab_dir, wait_s=60.0):
                stopped.append("the foreground `up` process and its lab")
            stopped += stop_lab(lab_dir)
            print(f"stopped: {', '.join(stopped) or 'nothing was running'}")
            return 0
        if args.cmd == "status":
            print("\n".join(running_components(args.dir.resolve())) or "nothing running")
            return 0
        target = resolve_target(args.kubeconfig, args.dir, args.context)
        if args.cmd == "inject":
            duration = args.duration
            if duration is None and args.scenario in DURATION_SCENARIOS:
                duration = WATCH_FLOOD_S
            result = asyncio.run(
                inject(args.scenario, target, force=args.force, zone=args.zone, duration_s=duration)
            )
        else:
            result = asyncio.run(
                recover(args.scenario, target, force=args.force, zone=args.zone, member=args.member)
            )
        print(json.dumps(result, indent=2))
        return 0
    except LabError as exc:
        print(f"ktop.lab: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
