"""Read scenario files (YAML) and one-scenario flag sets into Scenario objects.

A scenario file is YAML::

    scenarios:
      - name: Llama 3 8B, 8 x H100
        model: llama3-8b            # a preset id, or a mapping of model fields
        hardware: h100-sxm          # a preset id, or a mapping of hardware fields
        n_gpus: 8
        train_tokens: 15T           # K/M/B/T (decimal) or Ki/Mi/Gi/Ti (binary) suffixes
        ...

A model or hardware mapping may start from a preset with ``base: <id>`` and
override some fields.  Run settings left out take the defaults in
``RUN_DEFAULTS``; each default is documented in ``RUN_FIELDS`` (both in
``sheetgen.scenarios.run_fields``).  Each value is read and checked by
``sheetgen.scenarios.parse``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from sheetgen.catalog import presets
from sheetgen.catalog.parse import make_hardware, with_overrides
from sheetgen.errors import ACCEPTED_CHARS, SheetgenError, did_you_mean, key_name, short
from sheetgen.paths import presets_dir
from sheetgen.reference.finetune import FINETUNE_RECIPES
from sheetgen.reference.params import kv_heads, tp_splits_heads
from sheetgen.scenarios.limits import check_scenario_count, check_text
from sheetgen.scenarios.parse import make_run
from sheetgen.scenarios.scenario import HARDWARE_FIELDS, Model, Scenario

DEFAULT_SCENARIO_FILE = "default.yaml"


def default_scenario_path() -> Path:
    """The embedded scenario file ``sheetgen generate`` uses with no arguments."""
    return presets_dir() / "scenarios" / DEFAULT_SCENARIO_FILE


def _model(spec: Any, where: str):
    if isinstance(spec, str):
        return presets.get_model(spec, where)
    if isinstance(spec, dict):
        spec = dict(spec)
        base = spec.pop("base", None)
        if base is not None:
            return with_overrides(presets.get_model(str(base), f"{where}.base"), spec, where)
        from sheetgen.catalog.parse import make_model

        return make_model(spec, where)
    raise SheetgenError(
        where, f"expected a preset id or a mapping of model fields, got {short(spec)}"
    )


def _hardware(spec: Any, where: str):
    if isinstance(spec, str):
        return presets.get_hardware(spec, where)
    if isinstance(spec, dict):
        spec = dict(spec)
        base = spec.pop("base", None)
        if base is not None:
            hw = presets.get_hardware(str(base), f"{where}.base")
            merged = {
                "id": f"{hw.id}-custom",
                "name": f"{hw.name} (custom)",
                **{key: getattr(hw, key) for key in HARDWARE_FIELDS},
            }
            merged.update(spec)
            spec = merged
        return make_hardware(spec, where)
    raise SheetgenError(
        where, f"expected a preset id or a mapping of hardware fields, got {short(spec)}"
    )


def _preset_prices(spec: Any) -> dict[str, float]:
    """GPU-hour prices the hardware preset (or the ``base:`` of a mapping) carries."""
    hw_id = spec if isinstance(spec, str) else spec.get("base") if isinstance(spec, dict) else None
    return presets.hardware_prices().get(str(hw_id), {}) if hw_id is not None else {}


def scenario_from_dict(item: Any, index: int = 1) -> Scenario:
    """One scenario from a mapping (``name``, ``model``, ``hardware``, run settings)."""
    where = f"scenarios[{index}]"
    if not isinstance(item, dict):
        raise SheetgenError(where, f"each scenario must be a mapping, got {short(item)}")
    item = dict(item)
    name = check_text(item.pop("name", None) or f"Scenario {index}", f"{where}.name")
    if "model" not in item:
        raise SheetgenError(f"{where}.model", "missing; give a preset id or a mapping")
    if "hardware" not in item:
        raise SheetgenError(f"{where}.hardware", "missing; give a preset id or a mapping")
    model = _model(item.pop("model"), f"{where}.model")
    hw_spec = item.pop("hardware")
    hardware = _hardware(hw_spec, f"{where}.hardware")
    for key, price in _preset_prices(hw_spec).items():
        item.setdefault(key, price)
    run = make_run(item, where=f"{where}.")
    scenario = Scenario(name=name, model=model, hardware=hardware, run=run, tables=presets.tables())
    validate(scenario, where)
    return scenario


def _tp_refused(model: Model, tp: int, choose: bool) -> str:
    """Why ``tp`` GPUs cannot split the model's heads, and the tps that can (the divisors
    of the query heads that divide the KV heads or are a multiple of them)."""
    a, kv = model.n_heads, kv_heads(model)
    if a % tp:
        why = f"{tp} does not divide the {a} query heads of {short(model.id)}"
    else:
        why = (
            f"{tp} neither divides the {kv} KV heads of {short(model.id)} nor is a multiple "
            "of them (a GPU holds whole KV heads or copies of one)"
        )
    small = [d for d in range(1, math.isqrt(a) + 1) if a % d == 0]
    fit = [str(t) for t in sorted({*small, *(a // d for d in small)}) if tp_splits_heads(model, t)]
    listed = ", ".join(fit[:-1]) + " or " + fit[-1] if len(fit) > 1 else fit[0]
    if len(listed) > ACCEPTED_CHARS:
        listed = "a divisor of the query heads that divides the KV heads or is a multiple of them"
    return f"{why}; accepted: {'0 (choose), ' if choose else ''}{listed}"


def validate(scenario: Scenario, where: str = "") -> None:
    """Cross-field rules that single fields cannot check."""
    prefix = f"{where}." if where else ""
    run, model = scenario.run, scenario.model
    # Training and serving replicas split the heads alike (params.tp_splits_heads).
    for key, given in (("tp", run.tp), ("inf_tp", run.inf_tp), ("serve_tp", run.serve_tp)):
        if given > 0 and not tp_splits_heads(model, given):
            raise SheetgenError(f"{prefix}{key}", _tp_refused(model, given, choose=key != "tp"))
    if run.pp > model.n_layers:
        raise SheetgenError(
            f"{prefix}pp",
            f"{run.pp} pipeline stages for {model.n_layers} layers; "
            f"accepted: 1 to {model.n_layers}",
        )
    from sheetgen.reference.parallelism import layer_places

    chunks = run.pp * run.pp_virtual_stages
    places = layer_places(model.n_layers, run.pp_split_embedding_loss, run.pp)
    if places > model.n_layers and chunks > places:
        raise SheetgenError(
            f"{prefix}pp_virtual_stages",
            f"{run.pp_virtual_stages} chunks on each of {run.pp} stages: {chunks} chunks for "
            f"{model.n_layers} layers, the embedding and the loss; accepted: pp x "
            f"pp_virtual_stages <= {places} with pp_split_embedding_loss 1",
        )
    if run.micro_batch * run.seq_len > run.global_batch_tokens:
        raise SheetgenError(
            f"{prefix}micro_batch",
            f"{run.micro_batch} sequences of {run.seq_len} tokens exceed the global batch of "
            f"{run.global_batch_tokens} tokens; accepted: micro_batch x seq_len <= "
            "global_batch_tokens",
        )
    if run.recipe in FINETUNE_RECIPES and (model.is_moe or model.is_mla):
        raise SheetgenError(
            f"{prefix}recipe",
            f"{run.recipe} needs a model with standard attention and dense MLPs; "
            f"{short(model.id)} has {'MLA' if model.is_mla else 'experts'}; "
            "accepted: a dense model, or a full-training recipe",
        )
    if run.mfu_source == "measured" and not (
        run.measured_tokens_per_s_per_gpu > 0 or run.measured_step_seconds > 0
    ):
        raise SheetgenError(
            f"{prefix}mfu_source",
            "measured needs measured_tokens_per_s_per_gpu or measured_step_seconds; "
            "accepted otherwise: layout or typed",
        )
    if run.peak_dtype == "fp8" and scenario.hardware.peak_fp8_tflops <= 0:
        raise SheetgenError(
            f"{prefix}peak_dtype",
            f"fp8 chosen but {scenario.hardware.id} has no FP8 peak; accepted here: bf16",
        )
    attn_rate = scenario.hardware.attn_eff * run.attn_kernel_speed
    if attn_rate > 1:
        raise SheetgenError(
            f"{prefix}attn_kernel_speed",
            f"{run.attn_kernel_speed:g} x {scenario.hardware.id}'s attn_eff "
            f"{scenario.hardware.attn_eff:g} is {attn_rate:.3g} of the peak; accepted: at "
            f"most {1 / scenario.hardware.attn_eff:.3g} here (an attention kernel runs at "
            "most at the peak)",
        )
    # More micro-batches per step than the batch holds sequences for would make each
    # one a fraction of a sequence and the pipeline bubble vanish (issue 26.9).
    per_replica = run.global_batch_tokens / (run.seq_len * run.micro_batch * run.dp)
    most = max(1, math.ceil(per_replica))
    if run.pp_microbatches > most:
        raise SheetgenError(
            f"{prefix}pp_microbatches",
            f"{run.pp_microbatches:,} micro-batches per step, but the batch holds {most:,} "
            f"of {run.micro_batch} sequence(s) per replica (global_batch_tokens / (seq_len x "
            "micro_batch x dp)); use at most that, or 0 to derive it",
        )


def load_scenarios_text(text: str, source: str = "<scenarios>") -> list[Scenario]:
    from sheetgen.scenarios.yaml_load import load_yaml

    doc = load_yaml(text, source)
    if not isinstance(doc, dict) or "scenarios" not in doc:
        raise SheetgenError(source, "expected a mapping with a 'scenarios:' list")
    extra = [k for k in doc if k != "scenarios"]
    if extra:
        raise SheetgenError(
            f"{source}: {key_name(extra[0])}",
            f"unknown top-level key; {did_you_mean(extra[0], ['scenarios'])}",
        )
    items = doc["scenarios"]
    if not isinstance(items, list) or not items:
        raise SheetgenError(f"{source}: scenarios", "must be a non-empty list of scenarios")
    check_scenario_count(len(items), f"{source}: scenarios")
    scenarios = unique_custom_ids([scenario_from_dict(item, i + 1) for i, item in enumerate(items)])
    # One file, one workbook: every scenario compares the same accelerators (Hardware sheet).
    from sheetgen.reference.hardware_compare import with_hardware_table

    scenarios = with_hardware_table(scenarios)
    names = [s.name for s in scenarios]
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise SheetgenError(f"{source}: scenarios", f"duplicate scenario name {short(n)}")
        seen.add(n)
    return scenarios


def _unique(item: Any, seen: dict[str, Any]) -> Any:
    """``item`` with an id no different item in ``seen`` uses (id-2, id-3, ...); ids
    are compared ignoring case, as the workbook's lookups compare them."""
    from dataclasses import replace

    n, base_id = 2, item.id
    while item.id.casefold() in seen and seen[item.id.casefold()] != item:
        item = replace(item, id=f"{base_id}-{n}")
        n += 1
    seen[item.id.casefold()] = item
    return item


def unique_custom_ids(scenarios: list[Scenario]) -> list[Scenario]:
    """Give distinct custom models (or accelerators) that share an id distinct ids,
    so each gets its own row in the workbook's Presets tables."""
    from dataclasses import replace

    seen_models = {m.id.casefold(): m for m in presets.models().values()}
    seen_hw = {h.id.casefold(): h for h in presets.hardware().values()}
    return [
        replace(s, model=_unique(s.model, seen_models), hardware=_unique(s.hardware, seen_hw))
        for s in scenarios
    ]


def load_scenarios(path: str | Path) -> list[Scenario]:
    from sheetgen.scenarios.yaml_load import read_text

    return load_scenarios_text(read_text(path, "scenario file"), source=str(path))
