"""Communication per optimizer step per GPU on the Parallelism sheet, first order,
ring collectives (an all-reduce sends 2(d-1)/d of the buffer, all-gather /
reduce-scatter (d-1)/d): data-parallel gradients (and ZeRO-3 weights), tensor-,
context- and expert-parallel activations, pipeline sends and host (offload)
traffic, each at the link its group spans, and the pipeline bubble.

A group inside a node sends over NVLink; a group spanning nodes sends at the
inter-node rate x its ranks per node (gpus_per_node / the stride between its
ranks), at most NVLink's: each rank drives its own NIC (NVIDIA DGX H100 / A100
datasheets: one NIC per GPU) and NCCL runs one ring channel per NIC.

The expert-parallel all-to-all is not a ring: each GPU sends to every peer of its
group at once, to those in its node over NVLink and to the others through its own NIC;
the two run side by side, so its time is the slower of the two, x the load imbalance
(the most loaded rank receives that much more; ``moe_step`` states the split).
"""

from __future__ import annotations

from typing import Any

from sheetgen.reference.moe_step import cross_node_copies, ep_ranks_per_node, ep_split, expert_tp
from sheetgen.scenarios.scenario import Scenario
from sheetgen.units import GIGA


def _ring(d: float) -> float:
    """(d - 1) / d: the share of a buffer each rank sends in a ring reduce-scatter."""
    return (d - 1) / d


def communication(
    s: Scenario, p: dict[str, float], mem: dict[str, float], k: dict[str, Any]
) -> dict[str, Any]:
    """Bytes each GPU sends per optimizer step, by group, and their time at the link
    the group spans (inside a node or across nodes); the pipeline bubble."""
    m, run, hw = s.model, s.run, s.hardware
    dp, tp, pp, cp, ep = run.dp, run.tp, run.pp, run.cp, run.ep
    zero, v, mb = run.zero_stage, run.pp_virtual_stages, k["_microbatches"]
    seq, b, act = run.seq_len, run.micro_batch, mem["act_bytes"]
    oo, op = run.offload_optimizer, run.offload_params
    stage_layers = k["layers_per_stage"]
    if zero == 0:
        dp_bytes_per_param = 2 * mem["grad_bytes"]
    else:
        dp_bytes_per_param = (mb if zero >= 2 else 1) * mem["grad_bytes"] + (
            2 * mb if zero == 3 else 1
        ) * mem["weight_bytes"]
    comm_dp = dp_bytes_per_param * (
        k["params_per_gpu_dense"] * _ring(k["zero_group"])
        + k["params_per_gpu_expert"] * _ring(k["zero_group_expert"])
    )
    collectives = 4 + 2 * mem["recompute_share"]  # the recomputed forward repeats its 2
    hidden_mb = act * seq * b * m.hidden_size / cp  # one micro-batch's hidden states on one GPU
    comm_tp = collectives * 2 * _ring(tp) * hidden_mb * stage_layers * mb
    comm_pp = 2 * v * mb * hidden_mb / tp if pp > 1 else 0
    kv_width = p["attn_kv_heads"] * (p["attn_qk_dim"] + p["attn_v_dim"])
    comm_cp = 3 * _ring(cp) * act * seq * b * kv_width / tp * stage_layers * mb if cp > 1 else 0
    moe_stage = p["n_moe_layers"] / pp
    comm_ep = (
        collectives * _ring(ep) * m.experts_per_token * hidden_mb / k["sp_divisor"] * moe_stage * mb
        if ep > 1
        else 0
    )
    comm_host = (
        oo * (mem["grad_bytes"] + (1 - op) * mem["weight_bytes"]) * k["_params_optimizer_held"]
        + op * 2 * mb * mem["weight_bytes"] * k["_params_weights_held"]
    )
    host_bw = hw.host_gb_per_s * GIGA
    t_host = comm_host / host_bw if host_bw > 0 else 0
    intra, inter = hw.intra_node_gb_per_s * GIGA, hw.inter_node_gb_per_s * GIGA

    def link(size: int, stride: int) -> float:
        """A group of ``size`` ranks ``stride`` apart: NVLink inside a node; across
        nodes each of its gpus_per_node / stride ranks in a node drives its own NIC
        (NCCL runs one ring channel per NIC), up to the NVLink rate."""
        if size * stride <= run.gpus_per_node:
            return intra
        return min(intra, inter * max(1, run.gpus_per_node / stride))

    bw = {"tp": link(tp, 1), "cp": link(cp, tp)}
    bw.update(dp=link(dp, tp * cp), pp=link(pp, tp * cp * dp))
    sent = {"dp": comm_dp, "tp": comm_tp, "pp": comm_pp, "cp": comm_cp, "ep": comm_ep}
    seconds = {g: sent[g] / bw[g] for g in ("dp", "tp", "pp", "cp")}
    # Expert parallel: the in-node and cross-node shares of the all-to-all side by side.
    ranks_node = ep_ranks_per_node(expert_tp(run), ep, run.gpus_per_node)
    ep_intra, ep_inter = ep_split(
        comm_ep, ranks_node, ep, m.experts_per_token, run.ep_dispatch_dedup
    )
    seconds["ep"] = (
        run.moe_load_imbalance * max(ep_intra / intra, ep_inter / inter) / run.ep_a2a_efficiency
    )
    bw["ep"] = comm_ep / seconds["ep"] if seconds["ep"] > 0 else intra
    return {
        "dp_comm_bytes_per_param": dp_bytes_per_param,
        "comm_dp_bytes": comm_dp,
        "collectives_per_layer": collectives,
        "act_hidden_microbatch_gpu": hidden_mb,
        "comm_tp_bytes": comm_tp,
        "comm_pp_bytes": comm_pp,
        "comm_cp_bytes": comm_cp,
        "comm_ep_bytes": comm_ep,
        "moe_ep_ranks_per_node": ranks_node,
        "moe_ep_cross_node_copies": cross_node_copies(
            m.experts_per_token, ranks_node, ep, run.ep_dispatch_dedup
        ),
        "comm_ep_intra_bytes": ep_intra,
        "comm_ep_inter_bytes": ep_inter,
        "comm_bytes_per_step_per_gpu": sum(sent.values()),
        "comm_host_bytes": comm_host,
        "comm_host_seconds": t_host,
        **{f"link_{g}_bytes_per_s": bw[g] for g in ("tp", "cp", "ep", "dp", "pp")},
        **{f"comm_{g}_seconds": seconds[g] for g in ("dp", "tp", "pp", "cp", "ep")},
        "comm_seconds_per_step": sum(seconds.values()) + t_host,
        "pipeline_bubble": (pp - 1) / (v * mb + pp - 1),
    }
