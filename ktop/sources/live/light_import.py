"""kubernetes-asyncio without its generated API and model classes, until something asks.

ktop uses kubernetes-asyncio for its kubeconfig loader (client certificates, tokens,
exec plugins, OIDC, in-cluster) and its ``ApiClient`` transport, never for its typed
APIs or models. But importing any of it runs the package's ``__init__``, which imports
``client``, whose ``__init__`` imports every generated API and model class: 859 modules
and about 31 MB resident at every start (measured: 88 MB after ktop's imports with them,
57 MB without), a fifth of ktop's memory budget at 10,000 nodes.

:func:`install` registers the three packages whose ``__init__`` does that
(``kubernetes_asyncio``, ``kubernetes_asyncio.client``, ``kubernetes_asyncio.client.models``)
as packages whose ``__init__`` has not run yet. Their submodules import as usual (the
loader, ``configuration``, ``api_client``, ``rest``, ``exceptions``), and each package
answers the names its ``__init__`` would define: a submodule by its own name, the names
in :data:`LIGHT_NAMES` from their modules, and any other name (``client.CoreV1Api``,
``models.V1Pod``, which the lab's helpers use) by running the real ``__init__`` once and
answering from it. Nothing is changed when kubernetes-asyncio was imported already.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from typing import Any

PACKAGES = (
    "kubernetes_asyncio",
    "kubernetes_asyncio.client",
    "kubernetes_asyncio.client.models",
)
"""The packages whose ``__init__`` imports the generated classes, parents first."""

LIGHT_NAMES = {
    "kubernetes_asyncio.client": {
        "ApiClient": "kubernetes_asyncio.client.api_client",
        "Configuration": "kubernetes_asyncio.client.configuration",
        "ApiException": "kubernetes_asyncio.client.exceptions",
    },
}
"""Names a package answers from one small module instead of its whole ``__init__``."""

INIT_DUNDERS = frozenset({"__version__", "__all__", "__project__"})
"""Dunder names the packages' ``__init__`` defines (any other dunder asked for is absent)."""

_lock = threading.RLock()


def install() -> None:
    """Register the light packages (idempotent; a no-op once kubernetes-asyncio is in)."""
    with _lock:
        if PACKAGES[0] in sys.modules:
            return
        for name in PACKAGES:
            _register(name)


def _register(name: str) -> None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # not installed, or not a package: nothing to make lighter
    module = importlib.util.module_from_spec(spec)
    state = {"loaded": False}

    def __getattr__(attr: str) -> Any:  # noqa: N807 (PEP 562 module hook)
        if attr.startswith("__") and attr not in INIT_DUNDERS:
            raise AttributeError(attr)  # machinery probing (``__wrapped__``...): no load
        with _lock:
            source = LIGHT_NAMES.get(name, {}).get(attr)
            if source is not None:
                return getattr(importlib.import_module(source), attr)
            if not state["loaded"] and importlib.util.find_spec(f"{name}.{attr}") is not None:
                return importlib.import_module(f"{name}.{attr}")
            if not state["loaded"]:
                state["loaded"] = True
                del module.__dict__["__getattr__"]
                spec.loader.exec_module(module)  # type: ignore[union-attr]
        try:
            return module.__dict__[attr]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}") from None

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
