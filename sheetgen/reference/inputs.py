"""The Inputs sheet: the scenario's choices, the looked-up preset fields and the run settings.

Hardware figures are converted to base units here (FLOP/s, bytes, bytes/s), once.
"""

from __future__ import annotations

from dataclasses import fields

from sheetgen.scenario import MODEL_INT_FIELDS, RUN_FIELDS, Run, Scenario

TERA = 10**12  # TFLOP/s -> FLOP/s and TB/s -> bytes/s
GIGA = 10**9  # GB -> bytes (decimal, as vendors quote capacity)


def inputs(s: Scenario) -> dict[str, float | str]:
    m, hw = s.model, s.hardware
    out: dict[str, float | str] = {
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
    for f in fields(Run):
        out[f.name] = getattr(s.run, f.name)
    assert set(RUN_FIELDS) <= set(out)
    return out
