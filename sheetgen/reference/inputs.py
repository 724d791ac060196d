"""The Inputs sheet: the scenario's choices, the looked-up preset fields and the run settings.

Hardware figures are converted to base units here (FLOP/s, bytes, bytes/s), once.
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

from sheetgen.reference.weight_formats import weight_format_peak_tflops
from sheetgen.scenarios.dates import excel_serial
from sheetgen.scenarios.run_fields import (
    FIELD,
    LIST_FIELDS,
    PHASE_OF,
    PHASE_SLOTS,
    RUN_DEFAULTS,
    RUN_FIELDS,
    SWEEP_POINTS,
)
from sheetgen.scenarios.scenario import KERNEL_FIELDS, MODEL_INT_FIELDS, Run, Scenario
from sheetgen.units import (  # GB, TB/s, TFLOP/s -> base units (decimal)
    GIGA,
    TERA,
)

# A section's values by key: numbers, and texts where the key is a text (names, ids,
# choices, verdicts).  Which is which is the key's, as on the workbook's row; the
# tests compare every key with its cell.
KeyValues = dict[str, Any]


def splits_evenly(accum: float) -> bool:
    """A replica's share of the batch is a whole number >= 1 of micro-batches."""
    return accum >= 1 and accum == math.floor(accum)


def num_text(x: float, digits: int = 0) -> str:
    """A number as a spreadsheet writes ROUND(x, digits) joined to text: half away
    from zero, no trailing zeros, no thousands separators."""
    scale = 10**digits
    v = math.copysign(math.floor(abs(x) * scale + 0.5) / scale, x)
    return f"{v:.15g}"


def tokens_text(tokens: float) -> str:
    """Training tokens for a description: 15.6T, 252B."""
    if tokens >= 10**12:
        return num_text(tokens / 10**12, 2) + "T"
    return num_text(tokens / 10**9, 2) + "B"


def microbatches(run: Run) -> int:
    """m: as set, or (0 = derived) the whole micro-batches one pipeline runs per step, >= 1."""
    if run.pp_microbatches > 0:
        return run.pp_microbatches
    per_step = run.global_batch_tokens // (run.seq_len * run.micro_batch * run.dp)
    return max(1, per_step)


def inputs(s: Scenario) -> KeyValues:
    m, hw = s.model, s.hardware
    out: KeyValues = {
        "scenario_name": s.name,
        "scenario_description": (
            f"{m.name} · {s.run.n_gpus} × {hw.name} · {tokens_text(s.run.train_tokens)} tokens"
        ),
        "model": m.id,
        "hardware": hw.id,
        "model_name": m.name,
        "hardware_name": hw.name,
    }
    for key in MODEL_INT_FIELDS:
        out[key] = getattr(m, key)
    out["norm"] = m.norm
    out["mlp"] = m.mlp
    out["peak_bf16_flops"] = hw.peak_bf16_tflops * TERA
    out["peak_fp8_flops"] = hw.peak_fp8_tflops * TERA
    out["gpu_mem_bytes"] = hw.mem_gb * GIGA
    out["hbm_bytes_per_s"] = hw.hbm_tbps * TERA
    out["tdp_w"] = hw.tdp_w
    out["intra_node_bytes_per_s"] = hw.intra_node_gb_per_s * GIGA
    out["inter_node_bytes_per_s"] = hw.inter_node_gb_per_s * GIGA
    out["host_bytes_per_s"] = hw.host_gb_per_s * GIGA
    # Issue 41: the FP4 peak, the peak the weight format uses, the fast domain.
    out["peak_fp4_flops"] = hw.peak_fp4_tflops * TERA
    out["weight_format_peak_flops"] = weight_format_peak_tflops(hw, s.run.weight_dtype) * TERA
    out["fast_domain_gpus"] = hw.fast_domain_gpus
    for key in KERNEL_FIELDS:
        out[key] = getattr(hw, key)
    out["recipe_frameworks"] = s.recipe.frameworks
    run = s.run
    for f in fields(Run):
        if f.name in LIST_FIELDS:
            continue
        out[f.name] = getattr(run, f.name)
    out["pp_microbatches_used"] = microbatches(run)
    # Dates are spreadsheet serial numbers (Excel 1900 date system).
    out["start_date"] = excel_serial(run.start_date)
    out["serve_start_date"] = excel_serial(run.serve_start_date)
    # Phase slots: an unused slot holds 0 tokens and the default run settings, fixed
    # values that do not depend on the scenario (so editing the scenario's own
    # sequence length on Inputs leaves the unused slots as written).
    for i in range(PHASE_SLOTS):
        ph = run.phases[i] if i < len(run.phases) else None
        for name, run_key in PHASE_OF.items():
            unused = 0 if name == "tokens" else RUN_DEFAULTS[run_key]
            key = (FIELD["phases"].slot or "").format(n=i + 1, name=name)
            out[key] = getattr(ph, name) if ph else unused
    for k in range(SWEEP_POINTS):
        for key in ("sweep_seq_lens", "sweep_gpus"):
            out[FIELD[key].sheet_keys[k]] = getattr(run, key)[k]
    assert set(RUN_FIELDS) <= set(out)
    return out
