"""A recording's HEADER payload, checked: every key the reader uses has its declared type.

The header decides the model configuration a replay uses, so a wrong type here would
surface much later as a crash deep in the model. :func:`check_header` refuses it at
open with :class:`~ktop.record.strict.RecordError` naming the key and what was
expected; unknown keys are ignored and missing ones take their defaults, as the format
says (docs/recording-format.md).
"""

from __future__ import annotations

import math
from typing import Any

from ktop.model.model_inputs import ModelConfig
from ktop.record.format import LATEST_TIME
from ktop.record.strict import RecordError, expected, number

DAY_S = 86_400.0
MODEL_NUMBERS: dict[str, tuple[float, float]] = {
    "window_s": (1.0, 7 * DAY_S),
    "unhealthy_zone_threshold": (0.0, 1.0),
    "lease_renew_interval_s": (0.001, DAY_S),
}
"""The numeric model settings and the range each must be in."""
SETTING_NUMBERS = ("chunk_s", "keyframe_s")
SOURCE_TEXTS = ("kind", "context", "detail")


def _map(value: Any, where: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise RecordError(f"{where}: {expected('a map', value)}")
    return value


def _number_in(value: Any, where: str, low: float, high: float) -> float:
    try:
        n = number(value)
    except RecordError as exc:
        raise RecordError(f"{where}: {exc}") from None
    if not low <= n <= high:  # also false for NaN
        raise RecordError(f"{where}: expected a number from {low:g} to {high:g}, got {n!r}")
    return n


def _typed(header: dict[str, Any], key: str, kind: type, what: str) -> None:
    if key in header and type(header[key]) is not kind:
        raise RecordError(f"{key}: {expected(what, header[key])}")


def check_header(value: Any) -> dict[str, Any]:
    """``value`` when it is a valid HEADER payload, else :class:`RecordError`."""
    header = _map(value, "header")
    _typed(header, "format", int, "an integer")
    _typed(header, "ktop", str, "a string")
    _typed(header, "context", str, "a string")
    _typed(header, "redacted", bool, "a boolean")
    for key in ("started", "start_at"):
        if key in header:
            _number_in(header[key], key, 0.0, LATEST_TIME)
    source = _map(header.get("source", {}), "source")
    for key in SOURCE_TEXTS:
        if key in source and type(source[key]) is not str:
            raise RecordError(f"source.{key}: {expected('a string', source[key])}")
    settings = _map(header.get("settings", {}), "settings")
    for key in SETTING_NUMBERS:
        if key in settings:
            _number_in(settings[key], f"settings.{key}", 0.0, math.inf)
    model = _map(settings.get("model", {}), "settings.model")
    for key, (low, high) in MODEL_NUMBERS.items():
        if key in model:
            _number_in(model[key], f"settings.model.{key}", low, high)
    if "rack_label" in model and type(model["rack_label"]) is not str:
        raise RecordError(f"settings.model.rack_label: {expected('a string', model['rack_label'])}")
    return header


def model_config(header: dict[str, Any]) -> ModelConfig:
    """The model settings a checked header names (defaults for those it leaves out)."""
    m = header.get("settings", {}).get("model", {})
    base = ModelConfig()
    return ModelConfig(
        window_s=float(m.get("window_s", base.window_s)),
        rack_label=str(m.get("rack_label", base.rack_label)),
        unhealthy_zone_threshold=float(
            m.get("unhealthy_zone_threshold", base.unhealthy_zone_threshold)
        ),
        lease_renew_interval_s=float(m.get("lease_renew_interval_s", base.lease_renew_interval_s)),
    )
