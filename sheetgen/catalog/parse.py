"""Models and hardware given as mappings of fields (presets, scenario files, workbook
tables, imported configs) parsed and validated into ``sheetgen.scenarios.scenario``'s ``Model``
and ``Hardware``, and preset models with some fields overridden.  Every failure is
one ``SheetgenError`` naming the field; numbers are read as ``scenario_parse`` reads
them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import fields
from typing import Any

from sheetgen.errors import SheetgenError, did_you_mean, key_name, short
from sheetgen.scenarios.limits import (
    HARDWARE_LIMITS,
    HARDWARE_LOWEST,
    MAX_TEXT_CHARS,
    MODEL_LIMITS,
    check_id,
    check_range,
    check_text,
    check_zero_or_at_least,
)
from sheetgen.scenarios.parse import parse_count, parse_number
from sheetgen.scenarios.scenario import (
    HARDWARE_FIELDS,
    HARDWARE_ZERO_OK,
    HOPPER_KERNELS,
    KERNEL_FIELDS,
    MLPS,
    MODEL_FLAG_FIELDS,
    MODEL_INT_FIELDS,
    MODEL_POSITIVE_FIELDS,
    NORMS,
    Hardware,
    Model,
)


def make_model(spec: dict[str, Any], where: str = "model") -> Model:
    """A validated Model from a mapping of fields (``id`` and ``name`` optional)."""
    known = {f.name for f in fields(Model)}
    for key in spec:
        if key not in known:
            accepted = (*MODEL_INT_FIELDS, "norm", "mlp", "id", "name", "source")
            raise SheetgenError(
                f"{where}.{key_name(key)}",
                f"unknown model field; {did_you_mean(key, accepted, 'presets/README.md')}",
            )
    values: dict[str, Any] = {}
    for key in MODEL_INT_FIELDS:
        if key not in spec:
            continue
        n = parse_count(spec[key], f"{where}.{key}")
        low = 1 if key in MODEL_POSITIVE_FIELDS else 0
        if n < low:
            raise SheetgenError(f"{where}.{key}", f"must be a whole number >= {low}, got {n}")
        if key in MODEL_LIMITS:
            check_range(f"{where}.{key}", n, low, *MODEL_LIMITS[key], spec[key])
        if key in MODEL_FLAG_FIELDS and n not in (0, 1):
            raise SheetgenError(f"{where}.{key}", f"must be 0 or 1, got {n}")
        values[key] = n
    for key, names in (("norm", NORMS), ("mlp", MLPS)):
        if key in spec:
            v = spec[key]
            if not isinstance(v, str) or v.lower() not in names:
                raise SheetgenError(f"{where}.{key}", f"got {short(v)}; {did_you_mean(v, names)}")
            values[key] = v.lower()
    for key in ("n_layers", "hidden_size", "n_heads", "ffn_size", "vocab_size"):
        if key not in values:
            raise SheetgenError(f"{where}.{key}", "missing; a model needs it")
    values.setdefault("n_kv_heads", values["n_heads"])
    if "head_dim" not in values:
        if values["hidden_size"] % values["n_heads"]:
            raise SheetgenError(
                f"{where}.n_heads",
                f"{values['n_heads']} heads do not divide hidden_size {values['hidden_size']}; "
                "give head_dim explicitly or choose a divisor",
            )
        values["head_dim"] = values["hidden_size"] // values["n_heads"]
    if values["n_heads"] % values["n_kv_heads"]:
        raise SheetgenError(
            f"{where}.n_kv_heads",
            f"{values['n_kv_heads']} KV heads must divide n_heads {values['n_heads']}",
        )
    if values.get("n_experts", 0) > 0:
        k = values.get("experts_per_token", 0)
        if not 1 <= k <= values["n_experts"]:
            raise SheetgenError(
                f"{where}.experts_per_token",
                f"must be between 1 and n_experts ({values['n_experts']}), got {k}",
            )
        if values.get("moe_ffn_size", 0) < 1:
            raise SheetgenError(f"{where}.moe_ffn_size", "must be >= 1 for a MoE model")
        if values.get("n_dense_layers", 0) >= values["n_layers"]:
            raise SheetgenError(
                f"{where}.n_dense_layers",
                f"must be below n_layers ({values['n_layers']}), got {values['n_dense_layers']}",
            )
    if values.get("q_lora_rank", 0) > 0 and values.get("kv_lora_rank", 0) == 0:
        raise SheetgenError(
            f"{where}.q_lora_rank",
            "a query latent needs MLA: set kv_lora_rank > 0 or q_lora_rank 0",
        )
    if values.get("kv_lora_rank", 0) > 0:
        for key in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
            if values.get(key, 0) < 1:
                raise SheetgenError(f"{where}.{key}", "must be >= 1 for MLA (kv_lora_rank > 0)")
    _check_window(values, where)
    values.update(_texts(spec, where))
    values["source"] = check_text(
        _as_text(spec.get("source") or ""), f"{where}.source", MAX_TEXT_CHARS, name=False
    )
    if spec.get("params_published") is not None:
        n = parse_count(spec["params_published"], f"{where}.params_published")
        check_range(f"{where}.params_published", n, 1, *MODEL_LIMITS["params_published"], n)
        values["params_published"] = n
    return Model(**values)


def _check_window(values: dict[str, Any], where: str) -> None:
    """Windowed attention: a window needs the layers that use it (1 to n_layers), and
    windowed layers need a window."""
    window, local = values.get("sliding_window", 0), values.get("local_layers", 0)
    if window > 0 and not 1 <= local <= values["n_layers"]:
        raise SheetgenError(
            f"{where}.local_layers",
            f"must be between 1 and n_layers ({values['n_layers']}) with sliding_window "
            f"{window}, got {local}",
        )
    if values.get("attn_chunked", 0) and window == 0:
        raise SheetgenError(
            f"{where}.attn_chunked",
            "1 needs a chunk: set sliding_window (the chunk, tokens) and local_layers, or 0",
        )
    if window == 0 and local > 0:
        raise SheetgenError(
            f"{where}.sliding_window",
            f"must be >= 1 with {local} local (windowed) layers; or set local_layers 0",
        )


def make_hardware(spec: dict[str, Any], where: str = "hardware") -> Hardware:
    known = {"id", "name", "as_of", "sources", "source", *HARDWARE_FIELDS}
    for key in spec:
        if key not in known:
            raise SheetgenError(
                f"{where}.{key_name(key)}",
                f"unknown hardware field; {did_you_mean(key, HARDWARE_FIELDS)}",
            )
    values: dict[str, Any] = {}
    for key in HARDWARE_FIELDS:
        if key not in spec and key in ("host_gb_per_s", "peak_fp4_tflops"):
            continue  # optional: 0 = not published / no FP4 tensor cores
        if key not in spec and key == "fast_domain_gpus":
            continue  # optional: an 8-GPU node (DEFAULT_FAST_DOMAIN_GPUS, scenario.py)
        if key not in spec and key in KERNEL_FIELDS:
            values[key] = HOPPER_KERNELS[key]  # not calibrated: the H100's (scenario.py)
            continue
        if key not in spec:
            raise SheetgenError(f"{where}.{key}", "missing; hardware needs it")
        v = parse_number(spec[key], f"{where}.{key}")
        low_ok = v >= 0 if key in HARDWARE_ZERO_OK else v > 0
        if not low_ok:
            rule = ">= 0" if key in HARDWARE_ZERO_OK else "> 0"
            raise SheetgenError(f"{where}.{key}", f"must be {rule}, got {short(spec[key])}")
        check_range(f"{where}.{key}", v, 0, *HARDWARE_LIMITS[key], spec[key])
        check_zero_or_at_least(f"{where}.{key}", v, *HARDWARE_LOWEST[key], spec[key])
        if key == "fast_domain_gpus" and v != int(v):
            raise SheetgenError(f"{where}.{key}", f"must be a whole number, got {short(spec[key])}")
        values[key] = v
    values.update(_texts(spec, where))
    sources = spec.get("sources") or {}
    if not isinstance(sources, dict):
        raise SheetgenError(
            f"{where}.sources", f"must map a field to its source, got {short(sources)}"
        )
    values["sources"] = tuple(
        (
            check_text(_as_text(k), f"{where}.sources", MAX_TEXT_CHARS, name=False),
            check_text(_as_text(v), f"{where}.sources.{k}", MAX_TEXT_CHARS, name=False),
        )
        for k, v in sources.items()
    )
    return Hardware(**values)


def _as_text(value: Any) -> str:
    """Numbers and dates YAML parsed from an id or a source, as the text written."""
    if isinstance(value, (str, int, float, dt.date)) and not isinstance(value, bool):
        return str(value)
    return value  # check_text names the field and the value


def _texts(spec: dict[str, Any], where: str) -> dict[str, str]:
    """``id`` (default "custom") and ``name`` (default: the id), checked as names."""
    model_id = check_id(_as_text(spec.get("id") or "custom"), f"{where}.id")
    name = check_text(_as_text(spec.get("name") or model_id), f"{where}.name")
    return {"id": model_id, "name": name}


def with_overrides(model: Model, overrides: dict[str, Any], where: str = "model") -> Model:
    """A preset model with some fields replaced, validated as a whole."""
    base = {f.name: getattr(model, f.name) for f in fields(Model)}
    base.pop("params_published")
    if "id" not in overrides:
        base["id"] = f"{model.id}-custom"
        base["name"] = overrides.get("name", f"{model.name} (custom)")
    base.update(overrides)
    # An explicit null drops the field so that its default applies (e.g. head_dim = h / a).
    base = {k: v for k, v in base.items() if v is not None}
    if (
        "head_dim" not in overrides
        and ("hidden_size" in overrides or "n_heads" in overrides)
        and model.head_dim * model.n_heads == model.hidden_size
    ):
        # The base derives head_dim from h / a: keep deriving it.
        base.pop("head_dim")
    return make_model(base, where)


__all__ = ["make_hardware", "make_model", "with_overrides"]
