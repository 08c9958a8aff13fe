"""kubernetes-asyncio imported without its generated classes until something asks.

Each check runs in a fresh interpreter: this test process may have imported the whole
package already (the lab's helpers do), and then :func:`install` rightly changes nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_the_live_source_loads_the_loader_and_transport_only() -> None:
    got = _run(
        """
        import json, sys
        import ktop.sources.live.client as c
        import ktop.sources.live.source
        from kubernetes_asyncio.client.api_client import ApiClient
        from kubernetes_asyncio.client.configuration import Configuration
        mods = [m for m in sys.modules if m.startswith("kubernetes_asyncio")]
        print(json.dumps({
            "count": len(mods),
            "generated": [m for m in mods if ".client.api." in m or ".client.models." in m],
            "same_classes": c.ApiClient is ApiClient and c.Configuration is Configuration,
            "requests": "requests" in sys.modules,
        }))
        """
    )
    assert got["generated"] == []
    assert got["same_classes"] is True
    assert got["requests"] is False  # loaded with the first Prometheus client only
    assert isinstance(got["count"], int) and got["count"] < 40


def test_every_other_name_still_resolves_from_the_real_packages() -> None:
    got = _run(
        """
        import json, sys
        import ktop.sources.live  # installs the light packages
        import kubernetes_asyncio
        from kubernetes_asyncio import client, watch
        from kubernetes_asyncio.client import rest
        from kubernetes_asyncio.client.exceptions import ApiException
        core = client.CoreV1Api
        pod = client.models.V1Pod
        print(json.dumps({
            "core": core.__module__,
            "pod": pod.__module__,
            "pod_via_client": client.V1Pod is pod,
            "watch": watch.Watch.__module__,
            "rest": rest.__name__,
            "exception": client.ApiException is ApiException,
            "version": kubernetes_asyncio.__version__,
            "missing": not hasattr(client, "NoSuchThing"),
        }))
        """
    )
    assert got["core"] == "kubernetes_asyncio.client.api.core_v1_api"
    assert got["pod"] == "kubernetes_asyncio.client.models.v1_pod"
    assert got["pod_via_client"] is True
    assert got["watch"] == "kubernetes_asyncio.watch.watch"
    assert got["rest"] == "kubernetes_asyncio.client.rest"
    assert got["exception"] is True
    assert got["missing"] is True
    assert got["version"]


def test_nothing_changes_when_the_package_was_imported_first() -> None:
    got = _run(
        """
        import json, sys
        import kubernetes_asyncio.client
        before = len(sys.modules)
        from ktop.sources.live import light_import
        light_import.install()
        print(json.dumps({
            "has_getattr": "__getattr__" in vars(sys.modules["kubernetes_asyncio.client"]),
            "core": hasattr(kubernetes_asyncio.client, "CoreV1Api"),
        }))
        """
    )
    assert got == {"has_getattr": False, "core": True}
