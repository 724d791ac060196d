"""The Inference sheet's speed (issue 39): the step model's terms added up by hand,
batching into the compute-bound regime, decode that does not scale with tp (against the
shipped vLLM rows), the batch that runs when the one asked does not fit, MoE experts
touched, and the latency and cost definitions.
"""

from __future__ import annotations

import pytest
from test_reference_seeds import calc, expect

# ---------------------------------------------------------------------------
# Decode speed: the serving step model


def test_decode_sanity_llama3_8b_bf16_one_h100():
    """Batch 1, BF16 8B on one H100: the step model's terms added up by hand."""
    r = calc("llama3-8b h100 decode", model="llama3-8b", hardware="h100-sxm", inf_batch=1)
    assert r["inf_decode_memory_bound"] == 1, "batch-1 decode should be bandwidth-bound"
    # The weights streamed (16 GB at inf_bw_eff 0.9) are less than the GEMMs' time at
    # one row, which the MAX keeps.
    stream = 8_030_261_248 * 2 / (3.35e12 * 0.9)
    kv = 128 * 1024 * (4000 + 100 / 2)  # the cache at the average decode context
    attention = kv / (3.35e12 * 0.95)  # inf_kv_eff 0.95, inf_kv_ctx_half 0
    # GEMMs at M = 1 row, at the large-GEMM rate (H100 BF16 peak x gemm_eff_bf16 x the
    # width curve at h = 4096) x 1 / (1 + half rows); the half rows are the ridge
    # (inf_gemm_half_ridge 1): 2 bytes x the large-GEMM rate / (2 x the stream rate).
    rate = 989.4e12 * 0.6549 * 4096 / (4096 + 308.8)
    half = 2 * 989.4e12 * 0.6549 / (2 * 3.35e12 * 0.9)
    expect(r, "inf_gemm_half_rows", half, rel=1e-12)
    gemm = r["inf_flops_per_token"] * (1 + half) / rate
    assert gemm > stream
    fixed = 32 * 3.05e-05 + 0.00073  # layers x inf_layer_latency_s + inf_step_overhead_s
    expected = 1 / (gemm + attention + fixed)
    expect(r, "inf_decode_tokens_per_s", expected, rel=1e-12)
    expect(r, "inf_seq_tokens_per_s", expected, rel=1e-12)
    expect(r, "inf_decode_tokens_per_s", 131.1, abs=0.05)


def test_batching_raises_throughput_until_compute_bound():
    small = calc("8b b1", model="llama3-8b", prompt_len=100, output_len=100, inf_batch=1)
    big = calc("8b b512", model="llama3-8b", prompt_len=100, output_len=100, inf_batch=512)
    assert big["inf_batch_run"] == 512, "512 sequences of 150 tokens fit the cache"
    assert big["inf_decode_tokens_per_s"] > 30 * small["inf_decode_tokens_per_s"]
    assert big["inf_decode_memory_bound"] == 0, "512 short sequences should be compute-bound"
    rest = big["inf_decode_attn_s"] + big["inf_allreduce_s_per_step"] + big["inf_decode_fixed_s"]
    expect(big, "inf_decode_step_s", big["inf_decode_compute_s"] + rest, rel=1e-12)


def test_decode_does_not_scale_with_tp():
    """Batch-1 decode of Llama 3 70B: weight streaming divides by tp, the per-layer and
    all-reduce latencies do not, so tp 8 is far from 8x faster than tp 1 (issue 39)."""
    one = calc("70b tp1", model="llama3-70b", hardware="h200", inf_tp=1, inf_batch=1)
    eight = calc("70b tp8", model="llama3-70b", hardware="h200", inf_tp=8, inf_batch=1)
    expect(eight, "inf_kv_gpu_share", 1 / 8, rel=1e-12)
    expect(one, "inf_allreduce_s_per_step", 0, abs=0)
    expect(eight, "inf_decode_mem_s", one["inf_decode_mem_s"] / 8, rel=1e-12)
    # 2 all-reduces per layer x 80 layers x the fitted latency, whatever the tp.
    latency = 2 * 80 * 9.6e-06
    assert eight["inf_allreduce_s_per_step"] > latency
    eight["_fixed"] = eight["inf_decode_fixed_s"]
    expect(eight, "_fixed", one["inf_decode_fixed_s"], rel=1e-12)
    speedup = one["inf_decode_step_s"] / eight["inf_decode_step_s"]
    assert 3 < speedup < 6, f"tp 8 speeds batch-1 decode up {speedup:.2f}x, not 8x"


def test_tp_scaling_against_the_shipped_vllm_rows():
    """The reference's tp scaling against the vLLM project's published latency rows
    (presets/benchmarks/serving/vllm_latency.yaml: 8B at tp 1, 70B at tp 4): the
    ratio of their times per output token within 10% on every GPU."""
    from sheetgen.calibration import serving_check

    runs = {r.id: serving_check.evaluate(r) for r in serving_check.load()}
    for gpu in ("a100", "h100", "h200"):
        small, big = (
            runs[f"vllm-latency-llama3-8b-{gpu}-tp1"],
            runs[f"vllm-latency-llama3-70b-{gpu}-tp4"],
        )
        published = big.run.published / small.run.published
        predicted = big.predicted / small.predicted
        assert predicted == pytest.approx(published, rel=0.1), (gpu, published, predicted)


def test_batch_that_does_not_fit_runs_what_the_cache_holds():
    """Llama 2 70B-shaped 512 x (128 + 2,048) on 2 H200s: the cache holds fewer
    sequences in flight; throughput follows the batch that runs, in words (issue 39)."""
    r = calc(
        "70b b512 on 2 h200",
        model="llama3-70b",
        hardware="h200",
        inf_tp=2,
        inf_batch=512,
        prompt_len=128,
        output_len=2048,
    )
    holds = r["inf_batch_kv_holds"]
    assert 1 <= holds < 512
    expect(r, "inf_batch_run", holds, abs=0)
    assert r["inf_batch_note"].startswith(f"asked 512; the KV cache holds {holds}"), r[
        "inf_batch_note"
    ]
    expect(r, "inf_decode_tokens_per_s", holds / r["inf_decode_step_s"], rel=1e-12)
    fits = calc("8b b4", model="llama3-8b", inf_batch=4)
    assert fits["inf_batch_note"] == "runs as asked: batch 4"


# tp a multiple of the KV heads (16 of 8; 28 of Qwen 2.5's 4, 28 its query heads): each
# GPU holds a copy of one KV head, 1 / n_kv of the cache (vLLM's rule; tp 7 is refused).
@pytest.mark.parametrize("model, tp, share", [("llama3-8b", 16, 1 / 8), ("qwen2.5-7b", 28, 1 / 4)])
def test_kv_heads_replicated_when_tp_does_not_divide_them(model, tp, share):
    r = calc(f"{model} tp{tp}", model=model, inf_tp=tp)
    expect(r, "inf_kv_gpu_share", share, rel=1e-12)


def test_mla_latent_is_held_whole_on_every_gpu():
    r = calc(
        "deepseek-v3 fp8 tp8", model="deepseek-v3", hardware="h200", inf_tp=8, weight_dtype="fp8"
    )
    expect(r, "inf_kv_gpu_share", 1, abs=0)
    expect(r, "inf_kv_bytes_per_gpu", r["inf_kv_bytes"], abs=0)
    # MLA caches 576 values per token and layer; MHA would need a x (192 + 128).
    expect(r, "kv_values_per_token_layer", 512 + 64, abs=0)
    assert r["inf_max_batch_mha"] < r["inf_max_batch"]


@pytest.mark.parametrize(
    "model, batch, touched",
    [("mixtral-8x7b", 1, 2), ("deepseek-v3", 1, 8), ("mixtral-8x7b", 4, 8 * (1 - 0.75**4))],
)
def test_moe_experts_touched(model, batch, touched):
    r = calc(f"{model} b{batch}", model=model, inf_batch=batch, hardware="h200", inf_tp=8)
    expect(r, "inf_experts_touched", touched, rel=1e-12)
    if batch == 1:
        # One token reads exactly the active parameters.
        expect(r, "inf_decode_params_read", r["params_active"], rel=1e-12)


def test_moe_large_batch_touches_every_expert():
    r = calc("mixtral b512", model="mixtral-8x7b", hardware="h200", inf_tp=8, inf_batch=512)
    expect(r, "inf_experts_touched", 8, rel=1e-9)
    expect(r, "inf_decode_params_read", r["params_total"], rel=1e-9)


def test_seed003_same_tokens_prefill_heavy_vs_decode_heavy():
    """4,000 + 100 and 100 + 4,000: same tokens, the decode-heavy one takes far longer."""
    r = calc("llama3-8b 4000+100", model="llama3-8b", prompt_len=4000, output_len=100)
    s = calc("llama3-8b 100+4000", model="llama3-8b", prompt_len=100, output_len=4000)
    # The swapped rows of one scenario equal the other scenario's own rows.
    expect(r, "inf_swap_prefill_s", s["inf_ttft_s"], rel=1e-12)
    expect(r, "inf_swap_step_s", s["inf_decode_step_s"], rel=1e-12)
    expect(r, "inf_swap_tokens_per_s", s["inf_decode_tokens_per_s"], rel=1e-12)
    expect(r, "inf_swap_e2e_s", s["inf_e2e_s"], rel=1e-12)
    expect(r, "inf_swap_cost_per_mtok", s["inf_cost_per_mtok"], rel=1e-12)
    expect(s, "inf_swap_e2e_s", r["inf_e2e_s"], rel=1e-12)
    assert r["inf_prefill_s"] > 10 * s["inf_prefill_s"], "prefill-heavy request: longer TTFT"
    assert s["inf_e2e_s"] > 10 * r["inf_e2e_s"], "decode-heavy request: longer latency"


def test_latency_and_cost_definitions():
    r = calc("llama3-8b cost", model="llama3-8b", inf_batch=4, price_per_gpu_hour=3, inf_tp=2)
    expect(r, "inf_ttft_s", r["inf_ttft_overhead_s"] + r["inf_prefill_s"], rel=1e-12)
    expect(r, "inf_e2e_s", r["inf_ttft_s"] + 99 * r["inf_decode_step_s"], rel=1e-12)
    hours = 2 * r["inf_e2e_s"] / 3600 / (4 * 100) * 1e6
    expect(r, "inf_gpu_hours_per_mtok", hours, rel=1e-12)
    expect(r, "inf_cost_per_mtok", 3 * hours, rel=1e-12)
