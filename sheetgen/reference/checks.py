"""The Checks sheet: 1/0 flags per scenario.

Errors (inputs the math cannot use) feed the master flag ``checks_ok``;
warnings (a plan that does not fit or does not divide evenly) are shown beside it.
"""

from __future__ import annotations

from sheetgen.reference.flops import flops
from sheetgen.reference.memory import memory
from sheetgen.reference.phases import phases
from sheetgen.scenario import Scenario

ERROR_FLAGS = (
    "chk_model_found",
    "chk_hardware_found",
    "chk_kv_heads_divide",
    "chk_mfu_range",
    "chk_goodput_range",
    "chk_peak_available",
    "chk_mfu_achieved_range",
    "chk_pue_range",
    "chk_no_errors",
)
WARNING_FLAGS = ("chk_mem_fits", "chk_batch_divides", "chk_phase_tokens_match", "chk_energy_known")


def checks(s: Scenario) -> dict[str, float]:
    m, run = s.model, s.run
    mem = memory(s)
    f = flops(s)
    ph = phases(s)
    peak = s.hardware.peak_fp8_tflops if run.peak_dtype == "fp8" else s.hardware.peak_bf16_tflops
    out = {
        "chk_model_found": 1,
        "chk_hardware_found": 1,
        "chk_kv_heads_divide": int(m.n_heads % m.n_kv_heads == 0),
        "chk_mfu_range": int(0 < run.mfu <= 1),
        "chk_goodput_range": int(0 < run.goodput <= 1),
        "chk_peak_available": int(peak > 0),
        "chk_mfu_achieved_range": int(0 < f["mfu_achieved"] <= 1),
        "chk_pue_range": int(run.pue >= 1),
        # The reference produces no error values; the workbook's flag tests its own cells.
        "chk_no_errors": 1,
        "chk_mem_fits": int(mem["mem_total_calibrated"] <= s.hardware.mem_gb * 10**9),
        "chk_batch_divides": int(
            run.global_batch_tokens % (run.seq_len * run.micro_batch * run.n_gpus) == 0
        ),
        "chk_phase_tokens_match": int(
            ph["phases_used"] == 0 or ph["phased_tokens"] == run.train_tokens
        ),
        "chk_energy_known": int(s.hardware.tdp_w > 0),
    }
    out["checks_ok"] = min(out[k] for k in ERROR_FLAGS)
    out["chk_warnings"] = sum(1 - out[k] for k in WARNING_FLAGS)
    return out
