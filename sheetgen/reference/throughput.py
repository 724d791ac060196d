"""The step-time model of the Parallelism sheet: how long one optimizer step takes on
this layout, and the throughput and MFU that follow (the workbook's one clock).

Per GPU and optimizer step (T tokens per step, G GPUs; every GPU does 1/G of the
step's FLOPs):

  GEMMs        t_gemm = GEMM FLOPs x T / G / (GEMM peak x e_gemm)
               GEMM FLOPs: the hardware FLOPs per token less the attention core
               (recomputation included); GEMM peak: the FP8 peak when peak_dtype
               is fp8 (FP8 on the GEMMs only), else BF16.  The LM head (3 x its
               forward) runs at BF16 x the BF16 curve even under FP8: Megatron-
               Core's output layer is a ColumnParallelLinear, not a Transformer
               Engine module, so FP8 autocast does not reach it.
               e_gemm = e_max x d / (d + d_half), d = min(hidden / tp, b x s / cp):
               the narrowest dimension of the layer's GEMMs; a GEMM too narrow to
               fill the chip's tiles and waves runs below the large-GEMM rate
               (NVIDIA, Matrix Multiplication Background User's Guide).
  MoE          the routed experts' GEMMs leave the term above and run at the grouped-
               GEMM efficiency x the load imbalance; the token permutation and router
               traffic join the memory-bound work (``moe_step.py``; 0 for dense models).
  attention    t_attn = attention-core FLOPs x T / G / (BF16 peak x e_attn),
               e_attn = e_attn_max x k x s_k / (s_k + s_half), s_k = s, or s / (2 cp)
               (k = attn_kernel_speed: the run's kernel against the one e_attn_max
               describes, sheetgen.calibration.benchmarks.ATTENTION_KERNELS for published ratios)
               under context parallelism: flash attention gets faster with longer
               sequences (Dao 2023, FlashAttention-2; Shah et al. 2024,
               FlashAttention-3: their benchmarks by sequence length), and context
               parallelism cuts the sequence into 2 cp chunks, two per rank, so
               that causal attention's work is balanced; each kernel call runs one
               chunk's queries (Megatron-LM get_batch_on_this_cp_rank, which
               Transformer Engine's ring attention runs on; The Llama 3 Herd of
               Models, section 3.3.2: 2 x CP chunks).
  elementwise  t_elem = passes x (1 + share recomputed / 3) x the stage's
               activation bytes per step / HBM bandwidth: norms, activations,
               dropout and residuals read and write the tensors the Memory sheet
               counts; `elementwise_passes` HBM passes over them per forward +
               backward.
  loss         t_loss = passes x the FP32 logits per micro-batch / (tp x cp) x m /
               HBM bandwidth, on the last stage only: the softmax cross-entropy
               reads and writes the logits the Memory sheet counts (logits_bytes,
               Tazi et al. 2025, The Ultra-Scale Playbook, 'Memory for
               activations'; Megatron-LM's vocab-parallel cross-entropy works on
               each tensor-parallel rank's vocabulary slice).
  optimizer    t_opt = 2 x static bytes per GPU / HBM bandwidth (the update
               reads and writes every state the GPU keeps once per step).
  per micro-batch communication, exposed share: tensor parallel
               (1 - tp_comm_overlap), context parallel (ring attention: what the
               attention core does not hide), expert parallel (1 -
               ep_comm_overlap; its in-node and cross-node parts side by side,
               ``communication.py``), pipeline point-to-point (all of it).
  stage imbalance  the last pipeline stage runs its n_layers / pp layers and the
               LM head, so every stage waits for it: compute x (layers + pp x
               head) / (layers + head) in hardware FLOPs per token (1 at pp = 1;
               The Llama 3 Herd of Models, section 3.3.2, balances it by removing
               layers from the first and last stages). With pp_split_embedding_loss
               every stage holds (layers + 2) / pp layer places and the last gives one
               to the head: pp x max(places x layer, (places - 1) x layer + head) /
               (layers + head).
  pipeline     (compute x imbalance + loss + exposed micro-batch communication) x (1 +
               (pp - 1) / (v x m)) (Narayanan et al. 2021, section 2.2.2).
  data parallel  gradient reduce-scatter / all-gather overlap the backward and
               forward except the last bucket: exposed = max(t_dp - window,
               t_dp x the last bucket's share); the window is one micro-batch's
               compute with ZeRO 0-1 (the reduction follows the last
               micro-batch), the whole step's with ZeRO-2/3 (gradients reduced,
               and with ZeRO-3 weights gathered, every micro-batch).
  host (offload) traffic: all of it.

step = pipeline + data parallel + host + optimizer; tokens/s per GPU = T / (step x
G); MFU = tokens/s x model FLOPs per token / the peak named by peak_dtype (the
FLOPs sheet's convention: 3 x forward, causal attention counted at
causal_factor); HFU the same with hardware FLOPs (recomputation included).

The efficiencies (e_max, d_half, e_attn_max, s_half per hardware preset;
elementwise_passes, tp_comm_overlap run inputs) are fitted on the published runs
in presets/benchmarks/ (`sheetgen benchmark-check` prints predicted vs published).
"""

from __future__ import annotations

from typing import Any

from sheetgen.reference.moe_step import moe_step
from sheetgen.scenarios.scenario import Scenario
from sheetgen.units import TERA

FULL_RECOMPUTE_ELEMENTWISE = 4 / 3  # one more forward on top of forward + backward (3 passes)


def step_model(s: Scenario, f: dict[str, Any], lay: dict[str, Any]) -> dict[str, float]:
    """The step-time keys from the FLOPs counts ``f`` and the layout keys ``lay``
    (memory per GPU, communication times, bubble) of the Parallelism sheet."""
    run, hw, m = s.run, s.hardware, s.model
    n, tokens = run.n_gpus, run.global_batch_tokens
    mb = lay["_microbatches"]
    hbm = hw.hbm_tbps * TERA

    fp8 = run.peak_dtype == "fp8"
    gemm_peak = (hw.peak_fp8_tflops if fp8 else hw.peak_bf16_tflops) * TERA
    gemm_eff_max = hw.gemm_eff_fp8 if fp8 else hw.gemm_eff_bf16
    gemm_dim = min(m.hidden_size / run.tp, run.micro_batch * run.seq_len / run.cp)
    gemm_eff = gemm_eff_max * gemm_dim / (gemm_dim + hw.gemm_dim_half)
    attn_hw = f["flops_attn_hw_per_token"]
    # The LM head stays BF16 under FP8: Megatron-Core's output layer is a plain
    # ColumnParallelLinear, not a Transformer Engine module.
    head_hw = 3 * f["flops_fwd_lm_head"]
    head_eff = hw.gemm_eff_bf16 * gemm_dim / (gemm_dim + hw.gemm_dim_half)
    t_head = head_hw * tokens / n / (hw.peak_bf16_tflops * TERA * head_eff)
    # Mixture-of-Experts (moe_step.py; all 0 for a dense model): the routed experts'
    # GEMMs at the grouped-GEMM efficiency, and the token permutation's HBM traffic.
    moe = moe_step(s, lay, gemm_peak)
    gemm_hw = f["flops_hw_per_token"] - attn_hw - head_hw - moe["moe_routed_flops_hw_per_token"]
    t_gemm = gemm_hw * tokens / n / (gemm_peak * gemm_eff) + t_head + moe["step_moe_gemm_seconds"]
    # Context parallelism splits the sequence into 2 cp chunks (two per rank, for the
    # causal load balance); each attention kernel works on one chunk's queries.
    attn_seq = run.seq_len / (2 * run.cp if run.cp > 1 else 1)
    attn_eff = hw.attn_eff * run.attn_kernel_speed * attn_seq / (attn_seq + hw.attn_seq_half)
    t_attn = attn_hw * tokens / n / (hw.peak_bf16_tflops * TERA * attn_eff)

    # The recomputed layers' forward runs again (Memory's recompute_share, 0 unless full).
    recompute_factor = 1 + (FULL_RECOMPUTE_ELEMENTWISE - 1) * lay["_recompute_share"]
    act_step = lay["mem_act_layer_avg_gpu"] * lay["layers_per_stage"] * mb
    t_elem = run.elementwise_passes * recompute_factor * act_step / hbm
    t_opt = 2 * lay["mem_static_per_gpu"] / hbm
    t_compute = t_gemm + t_attn + t_elem + moe["step_moe_permute_seconds"]

    tp_exposed = (1 - run.tp_comm_overlap) * lay["comm_tp_seconds"]
    cp_exposed = max(0.0, lay["comm_cp_seconds"] - t_attn)
    ep_exposed = (1 - run.ep_comm_overlap) * lay["comm_ep_seconds"]
    # The last stage also runs the LM head: the pipeline moves at its pace.
    layers_hw = f["flops_hw_per_token"] - head_hw
    if lay["pp_split_active"]:
        # Every stage holds (n_layers + 2) / pp layer places; the last gives one to the
        # head (the first one to the embedding, next to nothing): the slowest of the two.
        place = layers_hw / m.n_layers
        places = (m.n_layers + 2) / run.pp
        slowest = max(places * place, (places - 1) * place + head_hw)
        imbalance = run.pp * slowest / (layers_hw + head_hw)
    else:
        imbalance = (layers_hw + run.pp * head_hw) / (layers_hw + head_hw)
    # The loss (softmax cross-entropy over the FP32 logits the Memory sheet counts, split
    # over tp and cp) runs on the last stage only: the same HBM passes per value.
    logits_gpu = run.logits_bytes * run.seq_len * run.micro_batch * m.vocab_size
    t_loss = run.elementwise_passes * logits_gpu / (run.tp * run.cp) * mb / hbm
    per_microbatch = (
        t_compute * imbalance
        + t_loss
        + tp_exposed
        + cp_exposed
        + ep_exposed
        + lay["comm_pp_seconds"]
    )
    bubble_ratio = (run.pp - 1) / (run.pp_virtual_stages * mb)
    t_pipeline = per_microbatch * (1 + bubble_ratio)

    t_dp = lay["comm_dp_seconds"]
    every_mb = run.zero_stage >= 2  # ZeRO-2/3 reduce (and ZeRO-3 gather) every micro-batch
    window = t_compute if every_mb else t_compute / mb
    bucket_share = min(1.0, run.dp_bucket_params / lay["params_per_gpu"])
    last_bucket = t_dp * bucket_share / (mb if every_mb else 1)
    dp_exposed = max(t_dp - window, last_bucket)

    step = t_pipeline + dp_exposed + lay["comm_host_seconds"] + t_opt
    tps = tokens / (step * n)
    peak = f["peak_flops"]
    return {
        "gemm_peak_flops": gemm_peak,
        "gemm_narrow_dim": gemm_dim,
        "gemm_efficiency": gemm_eff,
        "gemm_lm_head_efficiency": head_eff,
        "step_lm_head_seconds": t_head,
        **moe,
        "step_gemm_seconds": t_gemm,
        "attn_kernel_seq": attn_seq,
        "attn_efficiency": attn_eff,
        "step_attn_seconds": t_attn,
        "act_bytes_per_step_gpu": act_step,
        "step_elementwise_seconds": t_elem,
        "step_optimizer_seconds": t_opt,
        "step_compute_seconds": t_compute,
        "comm_tp_exposed_seconds": tp_exposed,
        "comm_cp_exposed_seconds": cp_exposed,
        "comm_ep_exposed_seconds": ep_exposed,
        "pipeline_stage_imbalance": imbalance,
        "step_loss_seconds": t_loss,
        "step_microbatch_path_seconds": per_microbatch,
        "pipeline_bubble_ratio": bubble_ratio,
        "step_pipeline_seconds": t_pipeline,
        "dp_overlap_window_seconds": window,
        "dp_last_bucket_share": bucket_share,
        "comm_dp_exposed_seconds": dp_exposed,
        "step_seconds_predicted": step,
        "tokens_per_s_per_gpu_predicted": tps,
        "mfu_predicted": tps * f["flops_per_token"] / peak,
        "hfu_predicted": tps * f["flops_hw_per_token"] / peak,
    }
