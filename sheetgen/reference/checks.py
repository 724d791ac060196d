"""The Checks sheet: 1/0 flags per scenario.

Errors (inputs the math cannot use) feed the master flag ``checks_ok``;
warnings (a plan that does not fit or does not divide evenly, a served model
that does not fit its GPUs) are shown beside it.
"""

from __future__ import annotations

from sheetgen.reference.inference import inference
from sheetgen.reference.memory import memory
from sheetgen.scenario import Scenario

ERROR_FLAGS = (
    "chk_model_found",
    "chk_hardware_found",
    "chk_kv_heads_divide",
    "chk_mfu_range",
    "chk_goodput_range",
    "chk_peak_available",
    "chk_counts_valid",
    "chk_choices_valid",
    "chk_amounts_valid",
    "chk_inf_eff_range",
    "chk_no_errors",
)
WARNING_FLAGS = ("chk_mem_fits", "chk_batch_divides", "chk_inf_fits")


def checks(s: Scenario) -> dict[str, float]:
    m, run = s.model, s.run
    mem = memory(s)
    peak = s.hardware.peak_fp8_tflops if run.peak_dtype == "fp8" else s.hardware.peak_bf16_tflops
    out = {
        "chk_model_found": 1,
        "chk_hardware_found": 1,
        "chk_kv_heads_divide": int(m.n_heads % m.n_kv_heads == 0),
        "chk_mfu_range": int(0 < run.mfu <= 1),
        "chk_goodput_range": int(0 < run.goodput <= 1),
        "chk_peak_available": int(peak > 0),
        # Scenario validation already rejects what these three catch in the workbook.
        "chk_counts_valid": 1,
        "chk_choices_valid": 1,
        "chk_amounts_valid": 1,
        "chk_inf_eff_range": int(0 < run.inf_compute_eff <= 1 and 0 < run.inf_bw_eff <= 1),
        # The reference produces no error values; the workbook's flag tests its own cells.
        "chk_no_errors": 1,
        "chk_mem_fits": int(mem["mem_total"] <= s.hardware.mem_gb * 10**9),
        "chk_batch_divides": int(
            run.global_batch_tokens % (run.seq_len * run.micro_batch * run.n_gpus) == 0
        ),
        "chk_inf_fits": inference(s)["inf_fits"],
    }
    out["checks_ok"] = min(out[k] for k in ERROR_FLAGS)
    out["chk_warnings"] = sum(1 - out[k] for k in WARNING_FLAGS)
    return out
