"""Mixture-of-Experts on the clock: the step-time terms a MoE layer adds (Parallelism
sheet, "Mixture-of-Experts on the clock").  Every term is 0 for a dense model.

Per GPU and optimizer step (T tokens per step, G GPUs, k experts per token, E routed
experts, h hidden, F_e one expert's FFN width, m micro-batches of b x s tokens):

  routed-expert FLOPs  f_r = n_moe_layers x 2 x mats x h x F_e x k x (3 - lora + r) per
               token: the routed experts' share of the hardware FLOPs (forward,
               backward; r, the share recomputed under full recomputation, redoes the
               forward; LoRA skips the frozen weights' gradient).
  tokens per expert    t = b x s x ep x k / (cp x E) x etp / tp: what one expert receives
               per micro-batch with balanced routing (sequence parallelism leaves b s /
               (cp tp) tokens on each rank, the expert's etp ranks gather theirs, and
               each of the ep groups sends k copies of them; etp, ``expert_tp``, is tp
               unless set: Megatron-Core's default; NeMo's MoE recipes set 1).
  grouped GEMM e_g = e_max x d^2 / (d^2 + d_half^2), d = min(h / etp, F_e / etp, t):
               the expert GEMMs' narrowest side, the tokens an expert gets or its
               weights' thinner side.  A grouped GEMM runs one small GEMM per local
               expert; a narrow side fills few of the chip's tiles and waves (NVIDIA,
               Matrix Multiplication Background User's Guide: tile and wave
               quantization), the training clock's d / (d + d_half), and each expert's
               input is also quantized and launched on its own, a fixed cost whose share
               of the expert's work falls as d grows: the two together rise as d^2 at
               small d and reach e_max at large d.  d_half (``moe_gemm_dim_half``) is
               fitted on the NeMo / Megatron-Bridge MoE rows; d / (d + d_half), one
               limit only, fits them worse (fit-row loss 0.14 against 0.08).
  expert GEMMs t_expert = f_r x T / G x imbalance / (GEMM peak x e_g): the most
               loaded expert sets the pace (``moe_load_imbalance``, max / mean tokens
               per expert; 1 for balanced routing, which the calibration runs force).
  permutation  bytes = passes x (k x h x act bytes + E x 4) x b s / (cp x sp) per MoE
               layer and micro-batch: the token dispatcher copies each token's k routed
               copies into expert order and back (Megatron-Core's all-to-all
               dispatcher: permute, sort by local expert, unsort, unpermute, each
               reading and writing the k copies, in the forward and again in the
               backward: 16 passes) and the router writes and reads its FP32 scores;
               x (1 + r / 2) (a recomputed forward repeats its half); / HBM bandwidth.
  all-to-all   dispatch and combine, forward and backward (communication.py): of the
               (ep - 1) / ep share of the k copies that leave a GPU, (r_node - 1) /
               (ep - 1) go to peers in its node (NVLink) and (ep - r_node) / (ep - 1)
               across nodes (its own NIC), or, with the dispatch deduplicated per node
               (``ep_dispatch_dedup``: DeepEP, HybridEP, DeepSeek-V3's node-limited
               routing), one copy per other node that hosts one of its experts,
               (N - 1)(1 - (1 - 1/N)^k) of the group's N nodes; the two run at once:
               time = imbalance x
               max(in-node bytes / NVLink rate, cross-node bytes / NIC rate).  The
               exposed share is 1 - ``ep_comm_overlap`` (throughput.py).

``ep_ranks_per_node`` is the one place that decides which expert-parallel peers share a
node (Megatron-Core orders a stage's expert ranks expert-tp, ep, expert-dp: an ep
group's ranks are etp apart).
"""

from __future__ import annotations

from typing import Any

from sheetgen.scenarios.scenario import Scenario
from sheetgen.units import TERA

ROUTER_SCORE_BYTES = 4  # Megatron-Core computes the router's scores in FP32 (moe_router_dtype)


def expert_tp(run) -> int:
    """Expert tensor parallelism: ``expert_tp``, or tp when 0 (Megatron-Core's default)."""
    return run.expert_tp or run.tp


def ep_ranks_per_node(etp: int, ep: int, gpus_per_node: int) -> float:
    """Ranks of one expert-parallel group inside a node.  Megatron-Core lays the experts
    out over a stage's tp x cp x dp ranks in the order expert-tp, ep, expert-dp, so an ep
    group's ranks are etp apart: the whole group when etp x ep fits in the node, else
    the node's GPUs / etp, at least 1."""
    if etp * ep <= gpus_per_node:
        return ep
    return max(1.0, min(ep, gpus_per_node / etp))


def cross_node_copies(k: int, ranks_in_node: float, ep: int, dedup: int) -> float:
    """Copies of one token that cross nodes per all-to-all: k x (ep - r) / ep with a
    plain all-to-all; with the dispatch deduplicated per node, the expected number of
    the group's other N - 1 nodes (N = ep / r) that host at least one of its k experts,
    (N - 1) x (1 - (1 - 1/N)^k), for experts spread evenly and routed uniformly."""
    if ep <= 1:
        return 0.0
    if not dedup:
        return k * (ep - ranks_in_node) / ep
    nodes = ep / ranks_in_node
    return (nodes - 1) * (1 - (1 - 1 / nodes) ** k)


def ep_split(
    comm_ep_bytes: float, ranks_in_node: float, ep: int, k: int, dedup: int
) -> tuple[float, float]:
    """The expert-parallel bytes a GPU sends to peers in its node and across nodes: of
    the k (ep - 1) / ep copies that leave it, (r - 1) / ep x k stay in the node; the
    cross-node ones are ``cross_node_copies``."""
    if ep <= 1 or k <= 0:
        return 0.0, 0.0
    leaving = k * (ep - 1) / ep
    return (
        comm_ep_bytes * (ranks_in_node - 1) / (ep - 1),
        comm_ep_bytes * cross_node_copies(k, ranks_in_node, ep, dedup) / leaving,
    )


def moe_step(s: Scenario, lay: dict[str, Any], gemm_peak: float) -> dict[str, float]:
    """The MoE step terms from the layout keys ``lay`` (recompute share, micro-batches,
    sequence-parallel divisor) and the GEMM peak in FLOP/s."""
    m, run, hw = s.model, s.run, s.hardware
    if not m.is_moe:
        names = (
            "moe_routed_flops_hw_per_token moe_tokens_per_expert moe_gemm_narrow_dim "
            "moe_grouped_gemm_efficiency step_moe_gemm_seconds "
            "moe_permute_bytes_per_step_gpu step_moe_permute_seconds"
        ).split()
        return dict.fromkeys(names, 0.0)
    share = lay["_recompute_share"]
    lora = 1 if run.recipe in ("lora", "qlora") else 0
    mats = 3 if m.mlp == "gated" else 2
    n_moe = m.n_layers - m.n_dense_layers
    routed = n_moe * 2 * mats * m.hidden_size * m.moe_ffn_size * m.experts_per_token
    routed_hw = routed * (3 - lora + share)
    k, n_e = m.experts_per_token, m.n_experts
    etp = expert_tp(run)
    per_expert = run.micro_batch * run.seq_len * run.ep * k / (run.cp * n_e) * etp / run.tp
    narrow = min(m.hidden_size / etp, m.moe_ffn_size / etp, per_expert)
    fp8 = run.peak_dtype == "fp8"
    e_max = hw.gemm_eff_fp8 if fp8 else hw.gemm_eff_bf16
    eff = e_max * narrow**2 / (narrow**2 + run.moe_gemm_dim_half**2)
    tokens, n = run.global_batch_tokens, run.n_gpus
    t_gemm = routed_hw * tokens / n * run.moe_load_imbalance / (gemm_peak * eff)
    # The Memory sheet's bytes per activation value, as the layout's hidden-state tensor
    # carries them (act bytes x b x s x h / cp).
    tokens_mb = run.micro_batch * run.seq_len
    act = lay["act_hidden_microbatch_gpu"] * run.cp / (tokens_mb * m.hidden_size)
    return {
        "moe_routed_flops_hw_per_token": routed_hw,
        "moe_tokens_per_expert": per_expert,
        "moe_gemm_narrow_dim": narrow,
        "moe_grouped_gemm_efficiency": eff,
        "step_moe_gemm_seconds": t_gemm,
        **_permutation(s, lay, act),
    }


def _permutation(s: Scenario, lay: dict[str, Any], act: float) -> dict[str, float]:
    m, run = s.model, s.run
    n_moe = m.n_layers - m.n_dense_layers
    per_token = m.experts_per_token * m.hidden_size * act + m.n_experts * ROUTER_SCORE_BYTES
    tokens_gpu = run.micro_batch * run.seq_len / (run.cp * lay["sp_divisor"])
    recompute = 1 + lay["_recompute_share"] / 2
    moved = (
        run.moe_permute_passes
        * per_token
        * tokens_gpu
        * n_moe
        / run.pp
        * lay["_microbatches"]
        * recompute
    )
    return {
        "moe_permute_bytes_per_step_gpu": moved,
        "step_moe_permute_seconds": moved / (s.hardware.hbm_tbps * TERA),
    }
