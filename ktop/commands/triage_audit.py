"""``ktop triage``'s audit-log options and their reading: ``--audit-log FILE...``,
``--flowschemas FILE``, ``--start`` and ``--end`` (docs/audit-logs.md).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from ktop.commands.options import moment
from ktop.model.audit_digest import AuditDigest
from ktop.model.flow_match import FlowSchemas, bootstrap
from ktop.printable import printable
from ktop.scrub import Secrets
from ktop.sources.audit_log import load_flowschemas, read_audit_logs
from ktop.sources.bundle.layout import API_DIR
from ktop.sources.bundle.must_gather import FLOWSCHEMAS_DIR, gathered_dirs
from ktop.sources.live.scrape import failure_reason


def add_audit_options(p: argparse.ArgumentParser) -> None:
    """Register the audit-log options."""
    p.add_argument(
        "--audit-log",
        nargs="+",
        action="extend",
        metavar="FILE",
        help="apiserver audit logs (JSON lines, gzipped or not; a directory, or a "
        "must-gather's): the clients that called, their 429s and latencies, as evidence "
        "on the APF paths; alone, or with --bundle, --recording or a live cluster",
    )
    p.add_argument(
        "--flowschemas",
        metavar="FILE",
        help="with --audit-log: the cluster's FlowSchemas ('kubectl get flowschemas -o "
        "json') to give each client its APF level (default: a --bundle's or must-gather's, "
        "the live cluster's with --context, else Kubernetes' defaults)",
    )
    p.add_argument("--start", type=moment, metavar="TIME", help="with --audit-log: count from TIME")
    p.add_argument("--end", type=moment, metavar="TIME", help="with --audit-log: count until TIME")


def audit_misuse(args: argparse.Namespace) -> str:
    """Why the audit options given cannot be used together (empty when they can)."""
    if not args.audit_log and (args.flowschemas or args.start is not None or args.end is not None):
        return "--flowschemas, --start and --end go with --audit-log"
    if args.start is not None and args.end is not None and args.end <= args.start:
        return "--end must be after --start"
    return ""


def _flowschemas_file(args: argparse.Namespace) -> str:
    """Where the cluster's FlowSchemas are: given, a bundle's, a must-gather's; else ""."""
    if args.flowschemas:
        return str(args.flowschemas)
    if args.bundle and (f := Path(args.bundle) / API_DIR / "flowschemas.json").is_file():
        return str(f)
    for raw in [*([args.bundle] if args.bundle else []), *args.audit_log]:
        if found := gathered_dirs(Path(raw), FLOWSCHEMAS_DIR):
            return str(found[0])
    return ""


def _live_flowschemas(args: argparse.Namespace, secrets: Secrets) -> tuple[FlowSchemas, str]:
    """The live cluster's FlowSchemas (``--context``), read once, and where they came from;
    Kubernetes' own when they cannot be read, with why.
    """
    from ktop.sources.live.discovery import cluster_flowschemas

    try:
        items = asyncio.run(cluster_flowschemas(args.kubeconfig, args.context, secrets))
        return FlowSchemas.from_objects(
            items
        ), f"the cluster's FlowSchemas (--context {args.context})"
    except Exception as exc:  # any failure to read them: classify with the defaults, say why
        why = secrets.scrub(failure_reason(exc, secrets))
        return (
            bootstrap(),
            f"Kubernetes' default FlowSchemas (the cluster's could not be read: {why})",
        )


def read_audit(args: argparse.Namespace, secrets: Secrets) -> AuditDigest:
    """The audit logs of ``--audit-log``, classified by the cluster's FlowSchemas where
    they are found (:class:`~ktop.sources.audit_log.AuditInputError`,
    :class:`~ktop.structured.InputRefusedError` or :class:`OSError` when they cannot be
    read); with ``--context`` and no FlowSchemas file, the live cluster's.
    """
    where = _flowschemas_file(args)
    schemas = load_flowschemas(where) if where else None
    words = f"the cluster's FlowSchemas ({where})" if where else ""
    if schemas is None and args.context:
        schemas, words = _live_flowschemas(args, secrets)
    return read_audit_logs(
        args.audit_log,
        schemas,
        words,
        args.start,
        args.end,
        lambda words: print(f"ktop triage: {printable(words)}", file=sys.stderr, flush=True),
    )
