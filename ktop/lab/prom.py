"""Tiny synchronous Prometheus HTTP API client (instant queries) for lab checks and tests."""

from __future__ import annotations

import urllib.parse
from typing import Any

from ktop.lab.util import LabError, http_json


def query(prometheus_url: str, promql: str, at: float | None = None) -> list[dict[str, Any]]:
    """Run an instant query (now, or at Prometheus time ``at``); return the vector's
    samples as {"metric": {...}, "value": float}.
    """
    params = {"query": promql} if at is None else {"query": promql, "time": f"{at:.3f}"}
    url = f"{prometheus_url}/api/v1/query?{urllib.parse.urlencode(params)}"
    data = http_json(url)
    if data.get("status") != "success":
        raise LabError(f"prometheus query failed: {promql}: {data}")
    result = data["data"]
    if result["resultType"] == "scalar":
        return [{"metric": {}, "value": float(result["result"][1])}]
    return [{"metric": r["metric"], "value": float(r["value"][1])} for r in result["result"]]


def recent_values(prometheus_url: str, selector: str, range_s: int) -> set[float]:
    """Every value any series of ``selector`` took in the last ``range_s`` seconds (the raw
    samples of a range vector), for checks against a gauge that moves while it is read.
    """
    params = {"query": f"{selector}[{range_s}s]"}
    data = http_json(f"{prometheus_url}/api/v1/query?{urllib.parse.urlencode(params)}")
    if data.get("status") != "success" or data["data"]["resultType"] != "matrix":
        raise LabError(f"prometheus range selector failed: {selector}: {data}")
    return {float(v) for series in data["data"]["result"] for _, v in series["values"]}


def values_by(prometheus_url: str, promql: str, label: str) -> dict[str, float]:
    """Instant query result keyed by one label's value."""
    return {s["metric"].get(label, ""): s["value"] for s in query(prometheus_url, promql)}


def value(prometheus_url: str, promql: str) -> float | None:
    """The single value of an instant query (None when the vector is empty)."""
    samples = query(prometheus_url, promql)
    if not samples:
        return None
    if len(samples) > 1:
        raise LabError(f"expected one sample for {promql}, got {len(samples)}")
    return float(samples[0]["value"])
