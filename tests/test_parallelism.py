"""Multi-GPU planning: the Parallelism sheet, its inputs and checks.

* published figures reproduced by the reference: the ZeRO paper's 7.5B / 64-GPU
  example, Korthikanti et al.'s tensor- and sequence-parallel activation formulas,
  Llama 3 405B's layout (TP 8, PP 16, DP 128 on 16,384 H100s);
* the workbook, recalculated in LibreOffice and in the formulas engine, equals
  the reference for every key across a matrix of layouts (ZeRO 0-3, tp 1/2/8,
  pp 1/4/16, cp > 1, sequence parallelism, interleaving, MoE with ep > 1);
* scenario parsing: dp derived from n_gpus, one-line errors.
"""

from __future__ import annotations

import math

import pytest
from helpers import build_matrix, calc, expect, libreoffice_values, mismatches

from sheetgen.errors import SheetgenError
from sheetgen.reference import compute
from sheetgen.scenarios.files import load_scenarios, scenario_from_dict

GB = 10**9
# The h100-sxm preset's capacity, what the driver reports (81,559 MiB = 85.52 GB), less
# the default 10% headroom.
H100_USABLE = 85.52 * GB  # the driver's capacity: no headroom by default (issue 40)
RESERVE = 0.017  # mem_reserved_share: peak reserved = allocated x 1.017
NCCL = 2 * 32 * 2 * 4 * 2**20  # mem_comm_buffer_bytes on a multi-GPU run


def device_peak(total: float, overhead: float = 1.5 * GB) -> float:
    """nvidia-smi's peak from the modelled tensors and context (mem_total_per_gpu):
    the tensors x (1 + reserve) + the CUDA context + NCCL's buffers."""
    return (total - overhead) * (1 + RESERVE) + overhead + NCCL


TB = 10**12


# ---------------------------------------------------------------------------
# ZeRO paper (Rajbhandari et al. 2020, figure 1): Psi = 7.5B parameters, Nd = 64
# data-parallel GPUs, K = 12 optimizer bytes (FP32 master weights + Adam m, v)
# with 2 + 2 bytes of FP16 weights and gradients: 16 bytes per parameter.
# Baseline 120 GB; stage 1 (P_os) 31.4 GB; stage 2 (P_os+g) 16.6 GB; stage 3 1.9 GB.

# A one-layer toy with exactly 7.5B parameters (tests/test_reference_seeds.py builds
# the same family): h = 1000, gated MLP F = 1000, tied embedding, V chosen to fit.
_TOY_FIXED = 4 * 1000**2 + 3 * 1000 * 1000 + 3 * 1000
ZERO_MODEL = {
    "id": "zero-paper-7.5b",
    "n_layers": 1,
    "hidden_size": 1000,
    "n_heads": 8,
    "ffn_size": 1000,
    "vocab_size": (7_500_000_000 - _TOY_FIXED) // 1000,
    "tied_embeddings": 1,
}
ZERO_PAPER = [(0, 120.0, 0.05), (1, 31.4, 0.05), (2, 16.6, 0.05), (3, 1.9, 0.05)]


@pytest.mark.parametrize("stage, gb, tol", ZERO_PAPER, ids=[f"stage{z}" for z, _, _ in ZERO_PAPER])
def test_zero_paper_7_5b_on_64_gpus(stage, gb, tol):
    r = calc(f"ZeRO-{stage} 7.5B x 64", model=ZERO_MODEL, n_gpus=64, zero_stage=stage)
    expect(r, "params_total", 7.5e9, abs=0)
    expect(r, "bytes_per_param", 16, abs=0)
    expect(r, "dp", 64, abs=0)
    expect(r, "mem_static_per_gpu", gb * GB, abs=tol * GB)
    # The closed forms of the paper: (2 + 2 + K) Psi, 2Psi + 2Psi + K Psi / Nd,
    # 2Psi + (2 + K) Psi / Nd, (2 + 2 + K) Psi / Nd.
    psi, k, nd = 7.5e9, 12, 64
    exact = [(4 + k) * psi, 4 * psi + k * psi / nd, 2 * psi + (2 + k) * psi / nd]
    exact.append((4 + k) * psi / nd)
    expect(r, "mem_static_per_gpu", exact[stage], rel=1e-12)


def test_zero_communication_is_2x_then_3x():
    """ZeRO section 7: stages 1 and 2 move 2 Psi per step like plain data parallelism,
    stage 3 moves 3 Psi (one micro-batch per step)."""
    vols = {}
    for stage in range(4):
        r = calc(
            f"ZeRO-{stage} comm",
            model=ZERO_MODEL,
            n_gpus=64,
            zero_stage=stage,
            pp_microbatches=1,
        )
        vols[stage] = r["comm_dp_bytes"]
        psi = 7.5e9 * 2  # FP16 bytes
        expect(r, "comm_dp_bytes", (3 if stage == 3 else 2) * psi * 63 / 64, rel=1e-12)
    assert vols[3] / vols[0] == pytest.approx(1.5)


# ---------------------------------------------------------------------------
# Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
# Models": activations per layer with tensor parallelism t (GPT-3 style, dropout,
# naive attention), equations 2-4 and section 5:
#   no SP:            s b h (10 + 24/t + 5 a s / (h t))
#   SP:               s b h (34/t + 5 a s / (h t))
#   SP + selective:   s b h 34 / t
GPT3 = {"model": "gpt3-175b", "hardware": "a100-80gb", "seq_len": 2048, "attention": "naive"}


# Sequence parallelism needs tp > 1, so (t = 1, SP) is not a case.
@pytest.mark.parametrize("t, sp", [(1, 0), (2, 0), (8, 0), (2, 1), (8, 1)])
def test_korthikanti_tensor_and_sequence_parallel_activations(t, sp):
    r = calc(f"GPT-3 t={t} sp={sp}", **GPT3, n_gpus=8, tp=t, sequence_parallel=sp)
    s, b, h, a = 2048, 1, 12288, 96
    if sp:
        per_layer = s * b * h * (34 / t + 5 * a * s / (h * t))
    else:
        per_layer = s * b * h * (10 + 24 / t + 5 * a * s / (h * t))
    expect(r, "mem_act_dense_layer_gpu", per_layer - 5 * a * s * s * b / t, rel=1e-12)
    expect(r, "mem_activations_per_gpu", 96 * per_layer, rel=1e-12)


@pytest.mark.parametrize("t", [2, 8])
def test_korthikanti_selective_recompute_with_sp(t):
    r = calc(
        f"GPT-3 selective t={t}",
        **GPT3,
        n_gpus=8,
        tp=t,
        sequence_parallel=1,
        recompute="selective",
    )
    expect(r, "mem_activations_per_gpu", 96 * 34 * 2048 * 12288 / t, rel=1e-12)


def test_korthikanti_full_recompute_with_sp_keeps_2sbh_over_t():
    r = calc("GPT-3 full t=8", **GPT3, n_gpus=8, tp=8, sequence_parallel=1, recompute="full")
    expect(r, "mem_act_input_layer_gpu", 2 * 2048 * 12288 / 8, rel=1e-12)


def test_korthikanti_pipeline_first_stage_keeps_whole_model_of_activations():
    """Section 4.2.3: with 1F1B the first stage holds p micro-batches of L/p layers,
    i.e. L layers' worth; interleaving multiplies that by 1 + (p-1)/(p m)."""
    base = dict(**GPT3, n_gpus=64, tp=8, sequence_parallel=1, recompute="selective")
    flat = calc("GPT-3 tp8", **base)
    r = calc("GPT-3 tp8 pp8", **{**base, "pp": 8, "pp_microbatches": 64})
    expect(r, "micro_batches_in_flight", 8, abs=0)
    expect(r, "mem_activations_per_gpu", flat["mem_activations_per_gpu"], rel=1e-12)
    r2 = calc(
        "GPT-3 tp8 pp8 v2", **{**base, "pp": 8, "pp_microbatches": 64, "pp_virtual_stages": 2}
    )
    expect(r2, "mem_activations_per_gpu", flat["mem_activations_per_gpu"] * (1 + 7 / 16), rel=1e-12)
    # Fewer micro-batches than stages: only m are in flight.
    r3 = calc("GPT-3 tp8 pp8 m4", **{**base, "pp": 8, "pp_microbatches": 4})
    expect(r3, "mem_activations_per_gpu", flat["mem_activations_per_gpu"] * 4 / 8, rel=1e-12)


def test_interleaved_warm_up_never_keeps_more_than_the_step_s_micro_batches():
    """Megatron-Core (pipeline_parallel/schedules.py, get_pp_rank_microbatches): the
    interleaved warm-up is capped at the step's m x v chunk passes, and with m = pp every
    forward runs before the first backward: m whole-stage micro-batches, not
    pp x (1 + (pp-1)/(pp v))."""
    base = dict(**GPT3, n_gpus=64, tp=8, sequence_parallel=1, recompute="selective", pp=8)
    flat = calc("GPT-3 tp8", **{**base, "pp": 1})["mem_activations_per_gpu"]
    at_pp = calc("GPT-3 pp8 v2 m8", **base, pp_virtual_stages=2, pp_microbatches=8)
    expect(at_pp, "mem_activations_per_gpu", flat, rel=1e-12)
    # Between pp and pp x factor (8 x 1.4375 = 11.5): still all m = 10 micro-batches.
    m10 = calc("GPT-3 pp8 v2 m10", **base, pp_virtual_stages=2, pp_microbatches=10)
    expect(m10, "mem_activations_per_gpu", flat * 10 / 8, rel=1e-12)
    # Above it: Korthikanti's factor, as before.
    m16 = calc("GPT-3 pp8 v2 m16", **base, pp_virtual_stages=2, pp_microbatches=16)
    expect(m16, "mem_activations_per_gpu", flat * (1 + 7 / 16), rel=1e-12)


def test_pipeline_bubble_narayanan():
    """Narayanan et al. 2021: bubble / ideal = (p-1)/m, (p-1)/(v m) interleaved."""
    base = {"model": "llama3-70b", "n_gpus": 64, "tp": 8, "pp": 8, "pp_microbatches": 32}
    r = calc("bubble", **base)
    expect(r, "pipeline_bubble", 7 / (32 + 7), rel=1e-12)
    assert r["pipeline_bubble"] / (1 - r["pipeline_bubble"]) == pytest.approx(7 / 32)
    r = calc("bubble v4", **base, pp_virtual_stages=4)
    assert r["pipeline_bubble"] / (1 - r["pipeline_bubble"]) == pytest.approx(7 / (4 * 32))


# ---------------------------------------------------------------------------
# Llama 3 405B (Llama 3 paper, table 4): TP 8, CP 1, PP 16, DP 128 on 16,384 H100s,
# 8,192-token sequences, 16M-token batch.  Unsharded static memory is about 6.5 TB
# (seed 000 section 5: 6,480 GB at 16 B/param for a nominal 405B).

LLAMA3_405B = {
    "model": "llama3-405b",
    "hardware": "h100-sxm",
    "n_gpus": 16384,
    "tp": 8,
    "pp": 16,
    "seq_len": 8192,
    "global_batch_tokens": "16Mi",
    "sequence_parallel": 1,
}


def test_llama3_405b_layout_parses():
    r = calc("405B layout", **LLAMA3_405B)
    expect(r, "dp", 128, abs=0)
    expect(r, "pp_microbatches_used", 16, abs=0)  # 2,048 sequences / 128 replicas
    expect(r, "grad_accum_steps", 16, abs=0)
    expect(r, "chk_layout_gpus", 1, abs=0)
    expect(r, "mem_static", 6.5 * TB, abs=0.05 * TB)


def _llama3_405b_static_by_hand(stage: int) -> float:
    """Per-GPU static bytes for the first stage, from the published architecture."""
    h, v, layers = 16384, 128256, 126
    attn = 2 * h * 128 * 128 + 2 * h * 8 * 128
    per_layer = attn + 3 * h * 53248 + 2 * h
    n = (layers * per_layer / 16 + v * h) / 8  # layers over pp, embedding on stage 1, / tp
    shard = n / 128
    states = [
        (2, n if stage < 3 else shard),
        (2, n if stage < 2 else shard),
        (12, n if stage < 1 else shard),
    ]
    return sum(bytes_ * count for bytes_, count in states)


@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_llama3_405b_static_per_gpu_by_zero_stage(stage):
    r = calc(f"405B ZeRO-{stage}", **LLAMA3_405B, zero_stage=stage)
    expect(r, "mem_static_per_gpu", _llama3_405b_static_by_hand(stage), rel=1e-12)
    # 3.40B parameters per GPU: 54.4 GB unsharded, 13.9 / 7.17 / 0.43 GB under ZeRO-1/2/3.
    gb = [54.4, 13.9, 7.17, 0.425][stage]
    expect(r, "mem_static_per_gpu", gb * GB, rel=0.01)
    assert r["mem_static"] / r["mem_static_per_gpu"] > 100


# Activations per GPU on the first stage with SP: 16 micro-batches of 126/16 layers
# in flight = 126 layers' worth of one micro-batch, i.e. 126 x 2sb(6h + 2h_kv + 4F)/8
# (no recomputation; flash attention keeps no scores, so selective = none) and
# 126 x 2sbh/8 + one layer's working set under full recomputation.
ACT_NONE = 126 * 2 * 8192 * (6 * 16384 + 2 * 1024 + 4 * 53248) / 8
ACT_FULL = 126 * 2 * 8192 * 16384 / 8 + 2 * 8192 * (6 * 16384 + 2 * 1024 + 4 * 53248) / 8
LLAMA3_405B_FIT = [
    # (zero stage, recompute, activations, fits 85.52 GB with 10% headroom)
    (0, "none", ACT_NONE, 0),
    (0, "full", ACT_FULL, 1),
    (1, "none", ACT_NONE, 0),
    (1, "selective", ACT_NONE, 0),
    (1, "full", ACT_FULL, 1),
    (2, "full", ACT_FULL, 1),
    (3, "none", ACT_NONE, 0),
    (3, "full", ACT_FULL, 1),
]


@pytest.mark.parametrize(
    "stage, recompute, act, fits",
    LLAMA3_405B_FIT,
    ids=[f"zero{z}-{rc}" for z, rc, _, _ in LLAMA3_405B_FIT],
)
def test_llama3_405b_per_gpu_memory_and_fit(stage, recompute, act, fits):
    r = calc(f"405B ZeRO-{stage} {recompute}", **LLAMA3_405B, zero_stage=stage, recompute=recompute)
    expect(r, "mem_activations_per_gpu", act, rel=1e-12)
    expect(r, "mem_logits_per_gpu", 0, abs=0)  # logits sit on the last stage
    # ZeRO-3 gathers one transformer layer (its largest unit, larger than the
    # embedding) and prefetches the next, in BF16, split over tp 8.
    layer = 16384 * (16384 + 2 * 1024) + 16384 * 16384 + 3 * 16384 * 53248 + 2 * 16384
    buffer = 2 * 2 * layer / 8 if stage == 3 else 0
    expect(r, "mem_zero3_buffer_per_gpu", buffer, rel=1e-12)
    total = _llama3_405b_static_by_hand(stage) + act + 1.5 * GB + buffer
    expect(r, "mem_total_per_gpu", total, rel=1e-12)
    expect(r, "mem_usable_per_gpu", H100_USABLE, rel=1e-12)
    expect(r, "fits_per_gpu", fits, abs=0)
    expect(r, "mem_device_per_gpu", device_peak(total), rel=1e-12)
    expect(r, "fits_per_gpu", int(device_peak(total) <= H100_USABLE), abs=0)


def test_llama3_405b_smallest_gpu_count():
    """With full recomputation the layout fits; ZeRO-3 over dp needs only a few replicas."""
    r = calc("405B min", **LLAMA3_405B, zero_stage=1, recompute="full")
    shardable = 16 * (r["params_per_gpu_dense"])
    room = (H100_USABLE - 1.5 * GB - NCCL) / (1 + RESERVE) - r["mem_activations_per_gpu"]
    expect(r, "dp_min_zero3", math.ceil(shardable / room), abs=0)
    expect(r, "n_gpus_min_zero3", r["dp_min_zero3"] * 128, abs=0)
    expect(r, "nodes_min", r["n_gpus_min"] / 8, abs=0)
    assert r["n_gpus_min_zero3"] <= r["n_gpus_min"] < 16384
    # Without recomputation the activations alone overflow 77 GB: no dp helps.
    r = calc("405B min none", **LLAMA3_405B, zero_stage=1, recompute="none")
    assert r["n_gpus_min"] == r["n_gpus_min_zero3"] == "none", r["n_gpus_min_note"]


def test_n_gpus_min_makes_the_layout_fit():
    """At dp = dp_min with ZeRO-3 the peak fits; at dp_min - 1 it does not (one
    micro-batch per step in all three, so the micro-batches in flight do not change)."""
    base = {"model": "llama3-70b", "seq_len": 4096, "recompute": "full", "tp": 4, "pp": 2}
    base.update(zero_stage=3, pp_microbatches=1)
    r = calc("70B min", **base, n_gpus=64)
    d = r["dp_min_zero3"]
    assert d > 1
    at = calc("70B at min", **base, n_gpus=d * 8)
    below = calc("70B below min", **base, n_gpus=(d - 1) * 8)
    expect(at, "fits_per_gpu", 1, abs=0)
    expect(below, "fits_per_gpu", 0, abs=0)


# ---------------------------------------------------------------------------
# Defaults change nothing; dp drives gradient accumulation


def test_defaults_keep_single_gpu_keys():
    """With no model parallelism the per-GPU keys equal the single-GPU Memory sheet."""
    from dataclasses import replace

    checked = 0
    for s in load_scenarios("presets/scenarios/default.yaml"):
        # The defaults are laid out to fit; the same plans with nothing sharded.
        flat = replace(s.run, dp=None, tp=1, pp=1, cp=1, ep=1, zero_stage=0, sequence_parallel=0)
        r = compute(replace(s, run=flat))
        assert r["dp"] == r["n_gpus"]
        for per_gpu, whole in [
            ("mem_total_per_gpu", "mem_total"),
            ("mem_static_per_gpu", "mem_static"),
            ("mem_activations_per_gpu", "mem_activations"),
            ("mem_logits_per_gpu", "mem_logits_live"),
        ]:
            assert r[per_gpu] == pytest.approx(r[whole], rel=1e-12), (s.name, per_gpu)
        assert r["pipeline_bubble"] == 0
        # The verdict's figure: what nvidia-smi would report (issue 40).
        assert r["chk_mem_fits"] == int(r["mem_device_per_gpu"] <= r["mem_usable_per_gpu"])
        checked += 1
    assert checked == 3


def test_gradient_accumulation_uses_dp():
    r = calc("acc", model="llama3-8b", n_gpus=64, tp=8, seq_len=8192, global_batch_tokens="4Mi")
    expect(r, "dp", 8, abs=0)
    expect(r, "grad_accum_steps", 512 / 8, abs=0)
    expect(r, "chk_batch_divides", 1, abs=0)


# ---------------------------------------------------------------------------
# Scenario parsing


def test_dp_not_dividing_is_one_line_error():
    with pytest.raises(SheetgenError) as e:
        scenario_from_dict({"model": "llama3-8b", "hardware": "h100-sxm", "n_gpus": 12, "tp": 8})
    msg = str(e.value)
    assert "dp" in msg and "12" in msg and "tp x pp x cp" in msg and "\n" not in msg


@pytest.mark.parametrize(
    "field, value",
    [("zero_stage", 4), ("zero_stage", -1), ("sequence_parallel", 2), ("mem_headroom", 1)],
)
def test_parallel_inputs_out_of_range(field, value):
    with pytest.raises(SheetgenError) as e:
        scenario_from_dict({"model": "llama3-8b", "hardware": "h100-sxm", field: value})
    assert field in str(e.value)


def test_explicit_dp_mismatch_is_rejected_naming_both():
    """dp is derived from n_gpus; a scenario that states another dp is an error (issue 10)."""
    with pytest.raises(SheetgenError) as e:
        calc("mismatch", model="llama3-8b", n_gpus=100, dp=8, tp=2)
    msg = str(e.value)
    assert "dp 8" in msg and "n_gpus 100" in msg and "\n" not in msg, msg


def test_custom_hardware_needs_link_bandwidths():
    spec = {
        "name": "X",
        "peak_bf16_tflops": 100,
        "peak_fp8_tflops": 0,
        "mem_gb": 10,
        "hbm_tbps": 1,
        "tdp_w": 0,
    }
    with pytest.raises(SheetgenError) as e:
        scenario_from_dict({"model": "llama3-8b", "hardware": spec})
    assert "intra_node_gb_per_s" in str(e.value)


# ---------------------------------------------------------------------------
# The workbook equals the reference across a matrix of layouts


def layout_items() -> list[dict]:
    return [
        {
            "name": "8B tp2 sp zero1",
            "model": "llama3-8b",
            "hardware": "h100-sxm",
            "n_gpus": 64,
            "tp": 2,
            "sequence_parallel": 1,
            "zero_stage": 1,
            "recompute": "selective",
            "seq_len": 8192,
        },
        {
            "name": "70B tp8 pp4 v2 zero2 full",
            "model": "llama3-70b",
            "hardware": "h100-sxm",
            "n_gpus": 512,
            "tp": 8,
            "pp": 4,
            "pp_virtual_stages": 2,
            "zero_stage": 2,
            "sequence_parallel": 1,
            "recompute": "full",
            "seq_len": 8192,
        },
        {
            "name": "405B paper layout",
            **LLAMA3_405B,
            "zero_stage": 1,
            "train_tokens": "15.6T",
            "mfu": 0.41,
        },
        {
            "name": "405B cp2 zero3 full",
            **{**LLAMA3_405B, "n_gpus": 16384},
            "cp": 2,
            "zero_stage": 3,
            "recompute": "full",
            "train_tokens": "15.6T",
        },
        {
            "name": "Mixtral ep8 pp4 zero3",
            "model": "mixtral-8x7b",
            "hardware": "h200",
            "n_gpus": 64,
            "pp": 4,
            "ep": 8,
            "zero_stage": 3,
            "recompute": "selective",
        },
        {
            "name": "DeepSeek-V3 pp16 ep64",
            "model": "deepseek-v3",
            "hardware": "h800",
            "n_gpus": 2048,
            "pp": 16,
            "ep": 64,
            "zero_stage": 1,
            "seq_len": 4096,
            "global_batch_tokens": 15360 * 4096,
            "recompute": "full",
            "peak_dtype": "fp8",
        },
        {
            "name": "GPT-3 tp8 pp16 naive",
            "model": "gpt3-175b",
            "hardware": "a100-80gb",
            "n_gpus": 1024,
            "tp": 8,
            "pp": 16,
            "seq_len": 2048,
            "attention": "naive",
            "global_batch_tokens": 1536 * 2048,
        },
        {
            "name": "GPT-3 tp2 cp2 naive selective",
            "model": "gpt3-175b",
            "hardware": "a100-40gb",
            "n_gpus": 8,
            "tp": 2,
            "cp": 2,
            "seq_len": 2048,
            "attention": "naive",
            "recompute": "selective",
            "zero_stage": 3,
            "sequence_parallel": 1,
        },
        {
            "name": "8B on v5p tp4 zero3",
            "model": "llama3-8b",
            "hardware": "tpu-v5p",
            "n_gpus": 64,
            "tp": 4,
            "zero_stage": 3,
            "gpus_per_node": 64,
            "recipe": "fp32-adam",
        },
        {
            "name": "odd layout",
            "model": "llama2-7b",
            "hardware": "rtx-4090",
            "n_gpus": 360,  # dp 6 x tp 4 x pp 5 x cp 3: layers, sequence, batch uneven
            "tp": 4,
            "pp": 5,
            "ep": 2,
            "cp": 3,
            "pp_microbatches": 7,
            "mem_headroom": 0,
            "elementwise_passes": 0,
            "tp_comm_overlap": 0.9,
            "recipe": "bf16-adam-fp32-grads",
        },
        {
            "name": "Qwen cp4 tp2 mi300x",
            "model": "qwen2.5-7b",
            "hardware": "mi300x",
            "n_gpus": 16,
            "tp": 2,
            "cp": 4,
            "seq_len": 32768,
            "global_batch_tokens": "4Mi",
            "zero_stage": 2,
            "recompute": "full",
            "mem_headroom": 0.2,
        },
        # The embedding and the loss in layer places (Llama 3, section 3.3.2), on an
        # MoE model with uneven chunks: (32 + 2) / (2 x 3) - 1 layers in the first.
        {
            "name": "Mixtral pp2 v3 embedding and loss as layers",
            "model": "mixtral-8x7b",
            "hardware": "h100-sxm",
            "n_gpus": 64,
            "tp": 2,
            "pp": 2,
            "pp_virtual_stages": 3,
            "pp_split_embedding_loss": 1,
            "ep": 4,
            "zero_stage": 1,
            "sequence_parallel": 1,
            "recompute": "full",
            "recompute_layers": 4,
        },
        {
            "name": "Mixtral ep2 tp2 b200",
            "model": "mixtral-8x7b",
            "hardware": "b200",
            "n_gpus": 32,
            "tp": 2,
            "pp": 1,
            "ep": 2,
            "zero_stage": 0,
            "sequence_parallel": 1,
            "micro_batch": 2,
            "recompute": "none",
        },
        # Framework memory (issue 12): distributed optimizer, ZeRO-3 buffers, offload.
        {
            "name": "70B megatron-bf16 distributed optimizer tp8",
            "model": "llama3-70b",
            "hardware": "h100-sxm",
            "n_gpus": 64,
            "tp": 8,
            "zero_stage": 1,
            "recipe": "megatron-bf16",
            "sequence_parallel": 1,
            "act_profile": "megatron-te",
        },
        {
            "name": "405B ZeRO-3 offload optimizer pp16",
            "model": "llama3-405b",
            "hardware": "h200",
            "n_gpus": 2048,
            "tp": 8,
            "pp": 16,
            "zero_stage": 3,
            "offload_optimizer": 1,
            "recompute": "full",
            "act_profile": "hf-eager",
        },
    ]


@pytest.fixture(scope="module")
def layouts(tmp_path_factory: pytest.TempPathFactory):
    return build_matrix(tmp_path_factory.mktemp("layouts"), layout_items(), "layouts")


def test_layout_matrix_covers_every_option(layouts):
    _, scenarios, _ = layouts
    runs = [s.run for s in scenarios]
    assert {r.zero_stage for r in runs} == {0, 1, 2, 3}
    assert {1, 2, 8} <= {r.tp for r in runs}
    assert {1, 4, 16} <= {r.pp for r in runs}
    assert {0, 1} == {r.sequence_parallel for r in runs}
    assert any(r.ep > 1 and s.model.is_moe for r, s in zip(runs, scenarios, strict=True))
    assert any(r.cp > 1 for r in runs) and any(r.pp_virtual_stages > 1 for r in runs)
    assert any(r.pp_split_embedding_loss and r.pp > 1 for r in runs)
    assert {"none", "selective", "full"} <= {r.recompute for r in runs}


@pytest.fixture(scope="module")
def layouts_lo(layouts):
    return libreoffice_values(layouts[0])


@pytest.mark.libreoffice
@pytest.mark.parametrize("scenario", [i["name"] for i in layout_items()])
def test_layouts_libreoffice_equals_reference(layouts, layouts_lo, scenario):
    bad = mismatches(layouts_lo, layouts[2], [scenario])
    assert not bad, f"{len(bad)} keys differ in LibreOffice:\n" + "\n".join(bad[:40])


@pytest.fixture(scope="module")
def layouts_inprocess(layouts):
    """The in-process engine the suite uses: pycel (formulas is tested in test_recalc)."""
    from sheetgen.checking.recalc import recalc_pycel

    return recalc_pycel(layouts[0])


@pytest.mark.parametrize("scenario", [i["name"] for i in layout_items()])
def test_layouts_inprocess_engine_equals_reference(layouts, layouts_inprocess, scenario):
    bad = mismatches(layouts_inprocess, layouts[2], [scenario])
    assert not bad, f"{len(bad)} keys differ in pycel:\n" + "\n".join(bad[:40])


@pytest.fixture(scope="module")
def layouts_gnumeric(layouts):
    from helpers import gnumeric_values

    return gnumeric_values(layouts[0])


@pytest.mark.gnumeric
@pytest.mark.parametrize("scenario", [i["name"] for i in layout_items()])
def test_layouts_gnumeric_equals_reference(layouts, layouts_gnumeric, scenario):
    bad = mismatches(layouts_gnumeric, layouts[2], [scenario])
    assert not bad, f"{len(bad)} keys differ in Gnumeric:\n" + "\n".join(bad[:40])


def test_layouts_workbook_passes_lint(layouts):
    from sheetgen.workbook.lint import lint_workbook

    assert lint_workbook(layouts[0]) == []


def test_parallelism_sheet_sits_between_schedule_and_checks():
    from sheetgen.workbook.templates import load_templates

    sheets = [t.sheet for t in load_templates()]
    assert sheets.index("Schedule") + 1 == sheets.index("Parallelism")
    assert sheets.index("Parallelism") < sheets.index("Checks") == len(sheets) - 1


def test_every_hardware_preset_sources_its_link_bandwidths():
    from sheetgen.catalog import presets

    for hw in presets.hardware().values():
        sources = dict(hw.sources)
        for key in ("intra_node_gb_per_s", "inter_node_gb_per_s"):
            assert getattr(hw, key) > 0, (hw.id, key)
            assert len(sources.get(key, "")) > 20, f"{hw.id}: {key} has no source"


def test_full_recomputation_rebuilds_only_the_layer_kinds_the_model_has() -> None:
    """An all-MoE model has no dense-MLP layer: its working set under full
    recomputation is its largest MoE layer, even when a dense FFN of its ffn_size
    would keep more (found by Hypothesis: 2 layers, 2 experts of 64, top-1, ffn 176)."""
    model = {"base": "llama3-8b", "n_layers": 2, "hidden_size": 32, "n_heads": 1,
             "n_kv_heads": 1, "head_dim": 32, "ffn_size": 176, "vocab_size": 256,
             "n_experts": 2, "experts_per_token": 1, "moe_ffn_size": 64, "n_dense_layers": 0}  # fmt: skip
    base = {"model": model, "seq_len": 128, "n_gpus": 1, "global_batch_tokens": 128}
    full = calc("tiny MoE full", **base, recompute="full")
    none = calc("tiny MoE none", **base, recompute="none")
    assert full["n_dense_mlp_layers"] == 0
    assert full["mem_act_dense_layer"] > full["mem_act_moe_layer"] > 0  # what made it matter
    expect(full, "mem_act_layer_max", full["mem_act_moe_layer"], rel=1e-12)
    expect(full, "mem_act_layer_max_gpu", full["mem_act_moe_layer_gpu"], rel=1e-12)
    expect(full, "mem_activations", 2 * full["mem_act_input_layer"] + full["mem_act_moe_layer"],
           rel=1e-12)  # fmt: skip
    assert full["mem_activations"] < none["mem_activations"]


# ---------------------------------------------------------------------------
# The embedding and the loss in layer places (The Llama 3 Herd of Models, section
# 3.3.2: one layer fewer on the first and last stages, and "the first model chunk on
# the first stage has only the embedding"; Megatron-LM's
# --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split).
# Llama 3 405B: 126 layers + 2 = 128 places, 8 per stage on pp 16.

LLAMA3_PIPELINE = {
    "model": "llama3-405b", "n_gpus": 16384, "tp": 8, "pp": 16, "sequence_parallel": 1,
    "zero_stage": 2, "recipe": "megatron-bf16", "recompute": "none", "seq_len": 8192,
    "global_batch_tokens": "16Mi",
}  # fmt: skip


@pytest.mark.parametrize("v", [8, 4, 1])
def test_embedding_and_loss_in_layer_places(v: int) -> None:
    on = calc(f"405B split v{v}", **LLAMA3_PIPELINE, pp_virtual_stages=v, pp_split_embedding_loss=1)
    off = calc(f"405B even v{v}", **LLAMA3_PIPELINE, pp_virtual_stages=v)
    expect(on, "layers_first_stage", 7, rel=1e-12)  # 128 / 16 - 1
    expect(off, "layers_first_stage", 126 / 16, rel=1e-12)
    expect(on, "layers_first_chunk", 128 / (16 * v) - 1, rel=1e-12, abs=1e-12)
    # The warm-up's 15 extra micro-batches run the first chunk: none of its layers at
    # v = 8 (the chunk holds only the embedding), one at v = 4.
    extra = {8: 0, 4: 15 / 16 * 1 / 7, 1: 0}[v]
    expect(on, "interleave_factor", 1 + extra, rel=1e-12)
    expect(off, "interleave_factor", 1 + (15 / (16 * v) if v > 1 else 0), rel=1e-12)
    # m = 16 micro-batches: all 16 in flight on stage 1, each keeping its 7 layers (plus
    # the extra chunk's, capped at m); stage 2 holds 8 layers of min(16 + 13 / v, 16)
    # micro-batches (v > 1: 2 x 14 + (v - 1) x 16 + 1 chunk passes), or 15 (v = 1):
    # the peak is stage 2's.
    layer = on["mem_act_dense_layer_gpu"]
    expect(on, "mem_act_kept_stage", 7 * layer, rel=1e-9)
    expect(on, "mem_act_kept_stage2", 8 * layer, rel=1e-9)
    stage2 = 16 if v > 1 else 15
    expect(on, "micro_batches_in_flight_stage2", stage2, rel=1e-12)
    assert off["micro_batches_in_flight_stage2"] == 0 and off["mem_act_kept_stage2"] == 0
    expect(on, "mem_activations_per_gpu", max(min(16 * (1 + extra), 16) * 7, stage2 * 8) * layer,
           rel=1e-9)  # fmt: skip
    # Stage 1's parameters: 7 of the 126 layers and the embedding.
    expect(on, "params_per_gpu", (on["params_layers"] * 7 / 126 + on["params_embedding"]) / 8,
           rel=1e-9)  # fmt: skip
    # The stages are balanced: the slowest holds 8 layer places (the last gives one to
    # the LM head, which costs less than a layer), against 7.875 layers + the head.
    head = 3 * on["flops_fwd_lm_head"]
    layers = on["flops_hw_per_token"] - head
    expect(on, "pipeline_stage_imbalance", 16 * 8 * layers / 126 / (layers + head), rel=1e-9)
    expect(off, "pipeline_stage_imbalance", (layers + 16 * head) / (layers + head), rel=1e-9)
    # 128 places divide into 16 x v chunks; 126 layers do not.
    assert (on["chk_pp_divides_layers"], off["chk_pp_divides_layers"]) == (1, 0)


def test_embedding_and_loss_switch_is_inert_on_one_stage() -> None:
    single = {"model": "llama3-8b", "n_gpus": 8, "zero_stage": 3}
    on = calc("8B one stage, switch on", **single, pp_split_embedding_loss=1)
    off = calc("8B one stage", **single)
    # Every number but the switch itself (chart series' names carry the scenario's name).
    numbers = [k for k, v in off.items() if isinstance(v, (int, float))]
    changed = [k for k in numbers if k != "pp_split_embedding_loss" and off[k] != on[k]]
    assert not changed, changed


def test_too_many_chunks_for_the_layer_places_are_refused() -> None:
    with pytest.raises(SheetgenError) as err:
        scenario_from_dict({"name": "x", "model": "llama3-8b", "hardware": "h100-sxm",
                            "n_gpus": 64, "pp": 4, "pp_virtual_stages": 16,
                            "pp_split_embedding_loss": 1})  # fmt: skip
    assert err.value.field.endswith("pp_virtual_stages")
    assert "accepted: pp x pp_virtual_stages <= 34" in str(err.value)
    # 34 places on 4 x 8 = 32 chunks: uneven, so Checks warns but the layout stands.
    r = calc("8B 32 chunks", model="llama3-8b", n_gpus=64, pp=4, pp_virtual_stages=8,
             pp_split_embedding_loss=1)  # fmt: skip
    assert r["chk_layout_possible"] == 1 and r["chk_pp_divides_layers"] == 0
