"""Fit the serving step model's free parameters on the ``role: fit`` rows of
presets/benchmarks/serving/ (TensorRT-LLM's Performance Overview and the vLLM project's
own performance benchmark; nothing else).

Shared by every engine (hardware physics): inf_bw_eff, inf_kv_eff, inf_kv_ctx_half
(inf_gemm_half_ridge is held at 1, the ridge: freed, it fits 1.03).  Per engine profile:
inf_layer_latency_s, inf_collective_latency_s, inf_step_overhead_s, inf_seq_overhead_s
(and TensorRT-LLM's inf_ttft_overhead_s, the
only engine with published time-to-first-token rows).  Least squares on log(predicted /
published); prints the values to copy into presets/tables/serving_engines.yaml (and the
vllm profile into the field defaults of sheetgen/scenarios/run_fields.py), then the error.

    python benchmarks/fit_serving.py
"""

from __future__ import annotations

import math
from dataclasses import replace

from scipy.optimize import least_squares

from sheetgen.calibration import serving_check as sc

SHARED = {
    "inf_bw_eff": (0.5, 0.9),
    "inf_kv_eff": (0.2, 0.95),
    "inf_kv_ctx_half": (0.0, 4096.0),
}
PER_ENGINE = {
    "inf_layer_latency_s": (0.0, 5e-4),
    "inf_collective_latency_s": (0.0, 2e-4),
    "inf_step_overhead_s": (0.0, 0.02),
    "inf_seq_overhead_s": (0.0, 1e-4),
}
TTFT_ENGINES = ("trtllm",)
ENGINES = ("vllm", "trtllm")


def names() -> list[tuple[str, str]]:
    out = [("", k) for k in SHARED]
    for e in ENGINES:
        out += [(e, k) for k in PER_ENGINE]
        if e in TTFT_ENGINES:
            out.append((e, "inf_ttft_overhead_s"))
    return out


def bounds(keys: list[tuple[str, str]]) -> tuple[list[float], list[float]]:
    table = {**SHARED, **PER_ENGINE, "inf_ttft_overhead_s": (0.0, 0.05)}
    return [table[k][0] for _, k in keys], [table[k][1] for _, k in keys]


def apply(run: sc.ServingRun, keys: list[tuple[str, str]], x: list[float]) -> sc.ServingRun:
    values = {k: v for (e, k), v in zip(keys, x, strict=True) if e in ("", run.engine)}
    return replace(run, scenario={**run.scenario, **values})


def residuals(x, runs, keys):
    return [math.log(sc.evaluate(apply(r, keys, x)).predicted / r.published) for r in runs]


def main() -> None:
    runs = sc.load()
    fit = [r for r in runs if r.role == "fit"]
    keys = names()
    lo, hi = bounds(keys)
    x0 = [0.5 * (a + b) if b < 1 else min(b, max(a, 0.1 * b)) for a, b in zip(lo, hi, strict=True)]
    res = least_squares(residuals, x0, bounds=(lo, hi), args=(fit, keys), diff_step=1e-3)
    for (e, k), v in zip(keys, res.x, strict=True):
        print(f"{e or 'shared':7s} {k:26s} {v:.6g}")
    results = [sc.evaluate(apply(r, keys, list(res.x))) for r in runs]
    print("\n".join(sc.summary_lines(results)))


if __name__ == "__main__":
    main()
