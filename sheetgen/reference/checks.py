"""The Checks sheet: 1/0 flags per scenario.

Errors (inputs the math cannot use, a layout that does not divide) feed the master
flag ``checks_ok``; the verdict's two tests (the peak fits the usable memory, the batch
splits into whole micro-batches) are shown beside the verdict they decide with it;
warnings (an uneven split, a served model that does not fit its GPUs, ...) flag
something to look at and do not change the verdict.
"""

from __future__ import annotations

from sheetgen.reference.clock import clock
from sheetgen.reference.finetune import FINETUNE_RECIPES
from sheetgen.reference.inference import inference
from sheetgen.reference.inputs import KeyValues, microbatches, num_text
from sheetgen.reference.parallelism_sheet import parallelism
from sheetgen.reference.params import kv_heads, params, tp_splits_heads
from sheetgen.reference.phases import phases
from sheetgen.reference.scaling import scaling
from sheetgen.reference.schedule import schedule
from sheetgen.reference.serving import serving
from sheetgen.scenarios.scenario import Scenario

ERROR_FLAGS = (
    "chk_model_found",
    "chk_hardware_found",
    "chk_kv_heads_divide",
    "chk_window_valid",
    "chk_mfu_range",
    "chk_goodput_range",
    "chk_peak_available",
    "chk_counts_valid",
    "chk_choices_valid",
    "chk_amounts_valid",
    "chk_layout_counts_valid",
    "chk_phase_inputs_valid",
    "chk_inf_eff_range",
    "chk_layout_gpus",
    "chk_dp_batch",
    "chk_parallel_options",
    "chk_headroom_range",
    "chk_layout_possible",
    "chk_step_model_inputs",
    "chk_moe_clock_inputs",
    "chk_clock_valid",
    "chk_mfu_achieved_range",
    "chk_pue_range",
    "chk_data_scaling_inputs",
    "chk_lora_inputs",
    "chk_batch_law_inputs",
    "chk_no_errors",
)
# The Checks rows of the verdict's own tests (fits_per_gpu, batch_splits): a 0 makes
# the plan not OK, so they are neither errors (the master flag) nor warnings.
VERDICT_TESTS = ("chk_mem_fits", "chk_batch_divides")
WARNING_FLAGS = (
    "chk_tp_divides_heads",
    "chk_serve_tp_divides_heads",
    "chk_pp_divides_layers",
    "chk_ep_divides_experts",
    "chk_cp_divides_seq",
    "chk_pp_microbatches_match",
    "chk_inf_fits",
    "chk_phase_tokens_match",
    "chk_energy_known",
    "chk_mfu_typed_near",
    "chk_host_link_known",
    "chk_epochs_diminishing",
    "chk_inf_within_context",
    "chk_train_within_context",
    "chk_node_within_domain",
    "chk_bubble_within",
    "chk_batch_near_opt",
)
# Epochs beyond which repeated data is worth little (Muennighoff et al. 2023,
# arXiv:2305.16264: returns diminish quickly after about 4 epochs).
EPOCHS_WARN = 4


def checks(s: Scenario) -> dict[str, float]:
    m, run = s.model, s.run
    par = parallelism(s)
    p = params(m)
    tp, pp, cp, ep = run.tp, run.pp, run.cp, run.ep
    ph = phases(s)
    sch = schedule(s)
    clk = clock(s)
    inf = inference(s)
    serve = serving(s)
    batch_vs_opt = float(scaling(s)["batch_vs_opt"])
    peak = s.hardware.peak_fp8_tflops if run.peak_dtype == "fp8" else s.hardware.peak_bf16_tflops
    out: dict[str, float] = {
        "chk_model_found": 1,
        "chk_hardware_found": 1,
        "chk_kv_heads_divide": int(m.n_heads % m.n_kv_heads == 0),
        "chk_window_valid": int(
            (m.sliding_window == 0 and m.local_layers == 0)
            or (m.sliding_window >= 1 and 1 <= m.local_layers <= m.n_layers)
        ),
        "chk_mfu_range": int(0 < run.mfu <= 1),
        "chk_goodput_range": int(0 < run.goodput <= 1),
        "chk_peak_available": int(peak > 0),
        # Scenario validation already rejects what these five catch in the workbook.
        "chk_counts_valid": 1,
        "chk_choices_valid": 1,
        "chk_amounts_valid": 1,
        "chk_layout_counts_valid": 1,
        "chk_phase_inputs_valid": 1,
        "chk_inf_eff_range": int(0 < run.inf_compute_eff <= 1 and 0 < run.inf_bw_eff <= 1),
        "chk_layout_gpus": int(run.n_gpus == run.dp * tp * pp * cp),
        "chk_dp_batch": int(run.dp <= sch["dp_max_batch"]),
        "chk_parallel_options": int(
            run.zero_stage in (0, 1, 2, 3) and run.sequence_parallel in (0, 1)
        ),
        "chk_headroom_range": int(0 <= run.mem_headroom < 1),
        # tp splits the query heads and divides the KV heads or is a multiple of them.
        "chk_layout_possible": int(
            tp_splits_heads(m, tp) and pp <= m.n_layers and par["layers_first_chunk"] >= 0
        ),
        # Scenario validation rejects out-of-range step-model inputs and kernel fields.
        "chk_step_model_inputs": 1,
        # Scenario validation rejects MoE clock inputs out of range (run_fields limits).
        "chk_moe_clock_inputs": 1,
        "chk_clock_valid": int(run.mfu_source != "measured" or clk["tokens_per_s_measured"] > 0),
        "chk_mfu_achieved_range": int(0 < clk["mfu_achieved"] <= 1),
        "chk_pue_range": int(run.pue >= 1),
        # Scenario validation rejects a dataset, epochs or Chinchilla constant out of range.
        "chk_data_scaling_inputs": 1,
        # LoRA targets are defined for standard attention and dense MLPs (reference/finetune.py).
        "chk_lora_inputs": int(run.recipe not in FINETUNE_RECIPES or not (m.is_moe or m.is_mla)),
        # Scenario validation rejects a batch-law constant or warning threshold out of range.
        "chk_batch_law_inputs": 1,
        # The reference produces no error values; the workbook's flag tests its own cells.
        "chk_no_errors": 1,
        # The layout's peak per GPU against the usable memory (capacity less headroom),
        # the verdict's memory test: never 1 under a "does not fit" verdict.
        "chk_mem_fits": int(par["mem_total_calibrated"] <= par["mem_usable_per_gpu"]),
        "chk_batch_divides": int(
            run.global_batch_tokens % (run.seq_len * run.micro_batch * run.dp) == 0
        ),
        # 0 also when tp is a multiple of the KV heads: each copied (vLLM), not Megatron-Core.
        "chk_tp_divides_heads": int(m.n_heads % tp == 0 and p["attn_kv_heads"] % tp == 0),
        # The tps used for serving, given or chosen (a chosen one always splits the heads).
        "chk_serve_tp_divides_heads": int(
            all(tp_splits_heads(m, int(t)) for t in (inf["inf_tp_used"], serve["serve_tp_used"]))
        ),
        "chk_pp_divides_layers": int(
            (m.n_layers + 2 * par["pp_split_active"]) % (pp * run.pp_virtual_stages) == 0
        ),
        "chk_ep_divides_experts": int(
            m.n_experts % ep == 0 and (run.dp * cp) % ep == 0 if m.is_moe else ep == 1
        ),
        "chk_cp_divides_seq": int(run.seq_len % cp == 0),
        "chk_pp_microbatches_match": int(
            pp == 1 or microbatches(run) == schedule(s)["grad_accum_steps"]
        ),
        "chk_inf_fits": int(inf["inf_fits"]),
        "chk_phase_tokens_match": int(
            ph["phases_used"] == 0 or ph["phased_tokens"] == run.train_tokens
        ),
        "chk_energy_known": int(s.hardware.tdp_w > 0),
        "chk_mfu_typed_near": int(clk["mfu_typed_note"] == "OK"),
        "chk_host_link_known": int(
            run.offload_optimizer + run.offload_params == 0 or s.hardware.host_gb_per_s > 0
        ),
        "chk_epochs_diminishing": int(run.epochs <= EPOCHS_WARN),
        "chk_inf_within_context": int(inf["inf_context_note"] == "OK"),
        "chk_train_within_context": int(sch["train_context_note"] == "OK"),
        # Issue 41: GPUs per node beyond the accelerator's fast-interconnect domain puts
        # traffic on the intra-node link that really crosses the network.
        "chk_node_within_domain": int(run.gpus_per_node <= s.hardware.fast_domain_gpus),
        # The batch leaves each pipeline enough micro-batches that the bubble stays within
        # its share (Huang et al. 2019, GPipe, section 2.3: m >= 4 x pp).
        "chk_bubble_within": int(par["pipeline_bubble"] <= run.bubble_warn_share),
        # The batch within a factor of DeepSeek LLM's compute-optimal batch (a pretraining
        # law: LoRA and QLoRA fine-tuning pass).
        "chk_batch_near_opt": int(
            run.recipe in FINETUNE_RECIPES
            or 1 / run.batch_warn_factor <= batch_vs_opt <= run.batch_warn_factor
        ),
    }
    out["checks_ok"] = min(out[k] for k in ERROR_FLAGS)
    out["chk_warnings"] = sum(1 - out[k] for k in WARNING_FLAGS)
    out.update(verdict(out, sch, par, s))
    return out


def verdict(chk: dict, sch: dict, par: dict, s: Scenario) -> KeyValues:
    """plan_ok (1/0) and the reason, first that applies: the layout does not divide the
    GPUs, the layout is impossible (tp vs the query or KV heads, pp vs layers), the batch cannot be
    split, an error check fails, the peak does not fit."""
    run, m = s.run, s.model
    ok = min(chk["checks_ok"], par["fits_per_gpu"], sch["batch_splits"])
    model_parallel = run.tp * run.pp * run.cp
    if not chk["chk_layout_gpus"]:
        why = f"layout does not divide: {run.n_gpus} GPUs over tp·pp·cp = {model_parallel}"
    elif not chk["chk_layout_possible"]:
        kv = kv_heads(m)
        if m.n_heads % run.tp:
            why = f"layout impossible: tp {run.tp} does not divide the {m.n_heads} query heads"
        elif kv % run.tp and run.tp % kv:
            why = (
                f"layout impossible: tp {run.tp} neither divides the {kv} KV heads nor is a "
                "multiple of them"
            )
        elif run.pp > m.n_layers:
            why = f"layout impossible: pp {run.pp} stages for {m.n_layers} layers"
        else:
            why = (
                f"layout impossible: pp x v = {run.pp * run.pp_virtual_stages} chunks for "
                f"{m.n_layers} layers, the embedding and the loss"
            )
    elif not sch["batch_splits"]:
        why = (
            f"batch cannot be split: {num_text(sch['grad_accum_steps'], 3)} micro-batches of "
            f"{run.micro_batch} per replica ({num_text(sch['global_batch_seqs'], 2)} "
            f"sequences over dp = {run.dp})"
        )
    elif not chk["checks_ok"]:
        why = "error check failed: see the Checks sheet"
    elif not par["fits_per_gpu"]:
        why = (
            f"does not fit: {num_text(par['mem_total_calibrated'] / 10**9, 1)} GB needed per "
            f"GPU, {num_text(par['mem_usable_per_gpu'] / 10**9, 1)} GB usable"
        )
    else:
        why = "OK"
    return {"plan_ok": ok, "plan_verdict": why}
