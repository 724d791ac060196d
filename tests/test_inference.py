"""The Inference sheet: seed 003's inference numbers, roofline sanity cases, capacity
limits, Checks, and a workbook matrix recalculated by LibreOffice and `formulas`.

Seed numbers use the seed's own rounding (see test_reference_seeds.py).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from helpers import build_matrix, is_error, libreoffice_values, mismatches
from test_reference_seeds import GB, GIB, calc, expect, nominal_model
from test_tp_heads import PHI3_SHORT, QWEN_LONG

from sheetgen.recalc import recalc_pycel, values_libreoffice
from sheetgen.reference import compute
from sheetgen.run_fields import CHOICES
from sheetgen.workbook import write_workbook
from sheetgen.workbook.templates import load_templates

SEVEN_B = nominal_model(7 * 10**9)
INFERENCE_KEYS = [r.key for t in load_templates() if t.sheet == "Inference" for r in t.keyed_rows]
# The rows in words (the tp note, the context note): text, every other row a number.
TEXT_KEYS = {
    r.key for t in load_templates() if t.sheet == "Inference" for r in t.keyed_rows
    if r.fmt == "text"
}  # fmt: skip
assert {"inf_tp_note", "inf_context_note"} <= TEXT_KEYS

# ---------------------------------------------------------------------------
# Seed 003: weights by format, 2N per token, the KV-cache progression


@pytest.mark.parametrize(
    "dtype, gb", [("bf16", 14), ("fp16", 14), ("int8", 7), ("int4", 3.5), ("fp32", 28)]
)
def test_seed003_7b_weights_per_gpu(dtype, gb):
    r = calc(f"7B {dtype} tp1", model=SEVEN_B, weight_dtype=dtype)
    expect(r, "inf_weight_bytes", gb * GB, rel=1e-12)
    expect(r, "inf_weight_bytes_per_gpu", gb * GB, rel=1e-12)
    # Two GPUs per replica hold half each.
    r2 = calc(f"7B {dtype} tp2", model=SEVEN_B, weight_dtype=dtype, inf_tp=2)
    expect(r2, "inf_weight_bytes_per_gpu", gb / 2 * GB, rel=1e-12)


def test_quantization_scales_add_bytes_per_weight():
    # INT4 with one FP16 scale per 128 weights: 0.5 + 2/128 bytes per weight.
    r = calc("7B int4 g128", model=SEVEN_B, weight_dtype="int4", quant_scale_bytes=2 / 128)
    expect(r, "inf_weight_bytes_per_param", 0.5 + 2 / 128, rel=1e-12)
    expect(r, "inf_weight_bytes", 7e9 * (0.5 + 2 / 128), rel=1e-12)
    expect(r, "inf_weight_bytes", 3.61e9, abs=0.005e9)


def test_seed003_7b_flops_per_token_and_prefill_of_1000_tokens():
    r = calc("7B prefill 1000", model=SEVEN_B, prompt_len=1000, output_len=1)
    expect(r, "inf_flops_per_token", 14e9, rel=1e-12)  # 14 GFLOPs
    # 14 TFLOPs for 1,000 tokens, plus the (here tiny) causal attention core.
    attn = r["causal_factor"] * 1000**2 * r["inf_attn_flops_per_ctx_token"]
    expect(r, "inf_prefill_flops", 1000 * 14e9 + attn, rel=1e-12)
    expect(r, "inf_prefill_flops", 14e12, abs=0.5e12)


def test_prefill_attention_counted_as_on_the_flops_sheet():
    # At prompt length = training sequence length, the prefill's attention per token
    # equals the FLOPs sheet's forward attention core summed over the layers.
    r = calc("llama3-8b 8k prefill", model="llama3-8b", seq_len=8192, prompt_len=8192)
    per_token_attn = r["inf_prefill_flops"] / 8192 - r["inf_flops_per_token"]
    expect(
        {**r, "_attn": per_token_attn},
        "_attn",
        r["n_layers"] * r["flops_fwd_attn_core"],
        rel=1e-12,
    )


@pytest.mark.parametrize(
    "batch, prompt, output, expected",
    [
        (1, 4000, 96, 2 * GIB),
        (8, 4000, 96, 16 * GIB),
        (1, 32000, 768, 16 * GIB),
        (8, 32000, 768, 128 * GIB),
    ],
    ids=["b1-4k", "b8-4k", "b1-32k", "b8-32k"],
)
def test_seed003_kv_cache_progression(batch, prompt, output, expected):
    # Llama 2 7B (L = 32, n_kv = 32, d = 128, BF16). The seed's "2 GB" is 2^31 bytes,
    # held by one GPU.
    r = calc(
        f"llama2-7b b={batch} {prompt}+{output}",
        model="llama2-7b",
        inf_batch=batch,
        prompt_len=prompt,
        output_len=output,
        inf_tp=1,
    )
    expect(r, "inf_kv_bytes", expected, abs=0)
    expect(r, "inf_kv_bytes_per_gpu", expected, abs=0)


def test_llama3_8b_kv_cache_per_token_and_mha():
    r = calc(
        "llama3-8b 1 token",
        model="llama3-8b",
        prompt_len=1,
        output_len=1,
        inf_batch=1,
        kv_block_tokens=1,  # no paged-block rounding: the cache per token
    )
    expect(r, "inf_kv_bytes", 2 * 128 * 1024, abs=0)  # 128 KiB per token
    expect(r, "inf_kv_bytes_mha", 4 * r["inf_kv_bytes"], abs=0)


# ---------------------------------------------------------------------------
# Decode speed: the bandwidth roofline


def test_decode_sanity_llama3_8b_bf16_one_h100():
    """Batch 1, BF16 8B on one H100: the step model's terms added up by hand."""
    r = calc("llama3-8b h100 decode", model="llama3-8b", hardware="h100-sxm", inf_batch=1)
    assert r["inf_decode_memory_bound"] == 1, "batch-1 decode should be bandwidth-bound"
    weights = 8_030_261_248 * 2
    stream = weights / (3.35e12 * 0.9)  # inf_bw_eff 0.9 (vLLM profile)
    kv = 128 * 1024 * (4000 + 100 / 2)  # the cache at the average decode context
    attention = kv / (3.35e12 * 0.95)  # inf_kv_eff 0.95, inf_kv_ctx_half 0
    fixed = 32 * 6.7e-05  # 32 layers x inf_layer_latency_s, tp 1: no all-reduce
    expected = 1 / (stream + attention + fixed)
    expect(r, "inf_decode_tokens_per_s", expected, rel=1e-12)
    expect(r, "inf_seq_tokens_per_s", expected, rel=1e-12)
    expect(r, "inf_decode_tokens_per_s", 130.9, abs=0.05)


def test_batching_raises_throughput_until_compute_bound():
    small = calc("8b b1", model="llama3-8b", prompt_len=100, output_len=100, inf_batch=1)
    big = calc("8b b512", model="llama3-8b", prompt_len=100, output_len=100, inf_batch=512)
    assert big["inf_batch_run"] == 256, "vLLM runs at most 256 sequences (max_num_seqs)"
    assert big["inf_decode_tokens_per_s"] > 30 * small["inf_decode_tokens_per_s"]
    assert big["inf_decode_memory_bound"] == 0, "256 short sequences should be compute-bound"
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
    from sheetgen import serving_check

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
        inf_engine_max_batch=2048,
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


# ---------------------------------------------------------------------------
# Capacity: fits, largest batch, longest context, Checks


def test_7b_bf16_fits_a_24_gb_card_at_4k():
    r = calc("7B bf16 rtx-4090", model="llama2-7b", hardware="rtx-4090", prompt_len=4000)
    expect(r, "inf_fits", 1, abs=0)
    expect(r, "chk_inf_fits", 1, abs=0)


def test_concurrent_32k_users_per_h100():
    r = calc("llama3-8b 32k users", model="llama3-8b", prompt_len=32000, output_len=768)
    # The H100 preset's capacity is what the driver reports: 81,559 MiB = 85.52 GB.
    free = 85.52e9 - 1.5e9 - 8_030_261_248 * 2
    expect(r, "inf_max_batch_kv", math.floor(free / (128 * 1024 * 32768)), abs=0)
    expect(r, "inf_max_batch_kv", 15, abs=0)
    # Prefilling 32k-token prompts together also needs one layer's activations each.
    assert 1 <= r["inf_max_batch"] < 15, r["inf_max_batch"]


@pytest.mark.parametrize(
    "model, hardware, tp, dtype",
    [
        ("llama3-8b", "h100-sxm", 1, "bf16"),
        ("llama3-70b", "h100-sxm", 4, "bf16"),
        ("deepseek-v3", "h200", 8, "fp8"),
        ("mixtral-8x7b", "l40s", 2, "int8"),
        ("qwen2.5-7b", "h100-sxm", 28, "int4"),
    ],
)
def test_max_batch_and_context_are_the_largest_that_fit(model, hardware, tp, dtype):
    base = {
        "model": model,
        "hardware": hardware,
        "inf_tp": tp,
        "inf_batch": 2,
        "weight_dtype": dtype,
    }
    r = calc(f"{model} limits", **base)
    nb, nc = r["inf_max_batch"], r["inf_max_context"]
    assert nb >= 1 and nc >= 2, f"{model}: expected room for at least one request"
    at = calc(f"{model} b={nb}", **{**base, "inf_batch": nb})
    over = calc(f"{model} b={nb + 1}", **{**base, "inf_batch": nb + 1})
    assert (at["inf_fits"], over["inf_fits"]) == (1, 0), f"{model}: batch {nb} is not the limit"
    ctx = {"prompt_len": nc - 1, "output_len": 1}
    at = calc(f"{model} ctx={nc}", **{**base, **ctx})
    # The cache is allocated in blocks: one token more costs a whole block more.
    block = r["kv_block_tokens"]
    over = calc(f"{model} ctx={nc + block}", **{**base, **ctx, "prompt_len": nc + block - 1})
    assert (at["inf_fits"], over["inf_fits"]) == (1, 0), f"{model}: context {nc} is not the limit"


def test_weights_alone_do_not_fit():
    r = calc("70b bf16 one h100", model="llama3-70b", inf_tp=1)
    assert r["inf_kv_budget_per_gpu"] < 0
    for key in ("inf_fits", "inf_max_batch", "inf_max_context", "inf_max_batch_mha"):
        expect(r, key, 0, abs=0)
    expect(r, "chk_inf_fits", 0, abs=0)
    assert r["chk_warnings"] >= 1
    assert r["checks_ok"] == 1, "a configuration that does not fit is a warning, not an error"


# ---------------------------------------------------------------------------
# The workbook: every key recalculated equals the reference


def matrix_items() -> list[dict[str, Any]]:
    """Every weight and KV format, tp 1/2/4/8/28 and chosen (inf_tp 0, also where a
    power of two that fits does not split the heads), dense, MoE and MLA models, a
    misfit."""
    dtypes = CHOICES["weight_dtype"]
    kv_dtypes = CHOICES["kv_dtype"]
    base = [
        ("llama3-8b", "h100-sxm", 1),
        ("llama3-70b", "h200", 2),
        ("mixtral-8x7b", "a100-80gb", 2),
        ("deepseek-v3", "h200", 8),
        ("qwen2.5-7b", "rtx-4090", 1),
        ("llama3-405b", "b200", 8),
    ]
    items = []
    for i, (model, hw, tp) in enumerate(base):
        items.append(
            {
                "name": f"{model} {dtypes[i]}/{kv_dtypes[(i + 2) % 6]} tp{tp}",
                "model": model,
                "hardware": hw,
                "weight_dtype": dtypes[i],
                "kv_dtype": kv_dtypes[(i + 2) % 6],
                "inf_tp": tp,
                "inf_batch": [1, 8, 3, 16, 2, 32][i],
                "prompt_len": [4000, 100, 2048, 8192, 1, 30000][i],
                "output_len": [100, 4000, 512, 1, 300, 2000][i],
                "inf_compute_eff": 0.3 + 0.1 * i,
                "inf_bw_eff": 0.95 - 0.05 * i,
                "quant_scale_bytes": [0, 0, 0, 0, 2 / 128, 0.03125][i],
                "inf_overhead_bytes": [1.5e9, 0, 2e9, 4e9, 1e9, 3e9][i],
                "peak_dtype": "fp8" if i == 3 else "bf16",
                "causal_factor": 1 if i == 1 else 0.5,
                "price_per_gpu_hour": 1 + i,
            }
        )
    items += [
        {"name": "70B bf16 on one H100 (does not fit)", "model": "llama3-70b", "inf_tp": 1},
        {
            "name": "70B tp 4, paged blocks of 32 (issue 12)",
            "model": "llama3-70b",
            "hardware": "h200",
            "inf_tp": 4,
            "inf_batch": 24,
            "kv_block_tokens": 32,
            "inf_collective_latency_s": 0.00003,
            "act_profile": "hf-eager",
        },
        {
            "name": "Qwen 7B tp 28 (KV heads copied)",
            "model": "qwen2.5-7b",
            "inf_tp": 28,
            "inf_batch": 5,
        },
        {
            "name": "MLA+MoE tp 2, FP8 KV",
            "model": "deepseek-v3",
            "hardware": "mi300x",
            "inf_tp": 2,
            "kv_dtype": "fp8",
            "weight_dtype": "int4",
            "inf_batch": 64,
        },
        {
            "name": "8B batch 512, short requests (compute-bound)",
            "model": "llama3-8b",
            "inf_batch": 512,
            "prompt_len": 100,
            "output_len": 100,
        },
        {"name": "405B bf16, tp chosen: fits on none", "model": "llama3-405b"},
        {
            "name": "MLA+MoE, tp chosen",
            "model": "deepseek-v3",
            "hardware": "h200",
            "weight_dtype": "fp8",
            "kv_dtype": "fp8",
            "inf_batch": 32,
        },
        # tp chosen where 8 GPUs hold the batch but do not split the heads (Qwen's 28
        # query heads; Phi-3-medium's 10 KV heads): the largest that splits them is used.
        {"name": "Qwen 7B tp chosen: 8 does not split the heads", **QWEN_LONG},
        {"name": "Phi-3-medium shape tp chosen", **PHI3_SHORT},
        {
            "name": "Mixtral tp 8 batch 256",
            "model": "mixtral-8x7b",
            "hardware": "h100-sxm",
            "inf_tp": 8,
            "inf_batch": 256,
            "prompt_len": 100,
            "output_len": 100,
        },
    ]
    for item in items:
        item.setdefault("hardware", "h100-sxm")
    return items


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory):
    return build_matrix(tmp_path_factory.mktemp("inference"), matrix_items(), "inference")


@pytest.fixture(scope="module")
def lo_values(matrix):
    return libreoffice_values(matrix[0])


def scenario_ids() -> list[str]:
    return [item["name"] for item in matrix_items()]


def test_matrix_covers_inference_options(matrix) -> None:
    _, scenarios, reference = matrix
    for key in ("weight_dtype", "kv_dtype"):
        used = {getattr(s.run, key) for s in scenarios}
        assert set(CHOICES[key]) <= used, f"{key}: {set(CHOICES[key]) - used} never exercised"
    assert {1, 2, 8} <= {s.run.inf_tp for s in scenarios}
    assert any(s.model.is_moe for s in scenarios) and any(s.model.is_mla for s in scenarios)
    fits = {ref["inf_fits"] for ref in reference.values()}
    bound = {ref["inf_decode_memory_bound"] for ref in reference.values()}
    assert fits == {0, 1} and bound == {0, 1}, "matrix should cover both outcomes"


@pytest.mark.libreoffice
@pytest.mark.parametrize("scenario", scenario_ids())
def test_libreoffice_equals_reference(matrix, lo_values, scenario: str) -> None:
    _, _, reference = matrix
    bad = mismatches(lo_values, reference, [scenario])
    assert not bad, f"{len(bad)} keys differ in LibreOffice:\n" + "\n".join(bad[:40])


@pytest.mark.libreoffice
def test_libreoffice_inference_cells_are_numbers(matrix, lo_values) -> None:
    _, scenarios, _ = matrix
    for s in scenarios:
        for key in INFERENCE_KEYS:
            v = lo_values.get(("Inference", key, s.name))
            kind = str if key in TEXT_KEYS else (int, float)
            assert isinstance(v, kind) and not is_error(v), f"{key} [{s.name}]: {v!r}"


@pytest.mark.libreoffice
def test_libreoffice_flags_a_configuration_that_does_not_fit(matrix, lo_values) -> None:
    name = "70B bf16 on one H100 (does not fit)"
    assert lo_values[("Checks", "chk_inf_fits", name)] == 0
    assert lo_values[("Checks", "chk_warnings", name)] >= 1
    assert lo_values[("Summary", "inf_fits", name)] == 0
    assert lo_values[("Checks", "checks_ok", name)] == 1


@pytest.fixture(scope="module")
def inprocess_values(matrix):
    """The in-process engine the suite uses: pycel (formulas is tested in test_recalc)."""
    return recalc_pycel(matrix[0])


@pytest.mark.parametrize("scenario", scenario_ids())
def test_inprocess_engine_equals_reference(matrix, inprocess_values, scenario: str) -> None:
    _, _, reference = matrix
    bad = mismatches(inprocess_values, reference, [scenario])
    assert not bad, f"{len(bad)} keys differ in pycel:\n" + "\n".join(bad[:40])


@pytest.fixture(scope="module")
def gn_values(matrix):
    from helpers import gnumeric_values

    return gnumeric_values(matrix[0])


@pytest.mark.gnumeric
@pytest.mark.parametrize("scenario", scenario_ids())
def test_gnumeric_equals_reference(matrix, gn_values, scenario: str) -> None:
    _, _, reference = matrix
    bad = mismatches(gn_values, reference, [scenario])
    assert not bad, f"{len(bad)} keys differ in Gnumeric:\n" + "\n".join(bad[:40])


# ---------------------------------------------------------------------------
# Command line: the new settings are flags, validated with one-line errors


def test_cli_inference_flags() -> None:
    import json

    from click.testing import CliRunner

    from sheetgen.cli import main

    args = ["compute", "--model", "llama3-70b", "--hardware", "h100-sxm", "--format", "json"]
    result = CliRunner().invoke(
        main,
        [*args, "--inf-tp", "4", "--prompt-len", "100", "--output-len", "4000",
         "--quant-scale-bytes", "0.015625", "--weight-dtype", "int4", "--inf-bw-eff", "0.9"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    values = {r["key"]: r["value"] for r in json.loads(result.output)}
    assert values["inf_tp"] == 4 and values["inf_request_tokens"] == 4100
    assert values["inf_weight_bytes_per_param"] == pytest.approx(0.515625, rel=1e-12)
    for key in ("inf_fits", "inf_max_batch", "inf_ttft_s", "inf_cost_per_mtok"):
        assert key in values


@pytest.mark.parametrize(
    "flag, value, message",
    [
        ("--inf-tp", "-1", "--inf-tp: must be a whole number >= 0"),
        ("--prompt-len", "-5", "--prompt-len: must be a whole number >= 1"),
        ("--quant-scale-bytes", "-0.1", "must be >= 0"),
        ("--inf-compute-eff", "1.5", "from 0.0001 to 1"),
        ("--inf-bw-eff", "0", "from 0.0001 to 1"),
        ("--inf-overhead-bytes", "-1", "must be >= 0"),
    ],
)
def test_cli_rejects_bad_inference_settings(flag, value, message) -> None:
    from click.testing import CliRunner

    from sheetgen.cli import main

    args = ["compute", "--model", "llama3-8b", "--hardware", "h100-sxm", flag, value]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.output


@pytest.mark.libreoffice
def test_edited_inference_inputs_follow_in_libreoffice(lo, tmp_path) -> None:
    """Change GPUs per replica, prompt length, weight format and batch; every key follows."""
    import openpyxl

    from sheetgen.scenario_file import scenario_from_dict

    items = [
        {"name": "8B", "model": "llama3-8b", "hardware": "h100-sxm"},
        {"name": "Mixtral", "model": "mixtral-8x7b", "hardware": "h100-sxm", "inf_tp": 2},
    ]
    scenarios = [scenario_from_dict(i) for i in items]
    path = write_workbook(scenarios, tmp_path / "edit.xlsx")
    wb = openpyxl.load_workbook(path)
    ws = wb["Inputs"]
    rows = {ws.cell(row=r, column=1).value: r for r in range(1, ws.max_row + 1)}
    edits = [
        {"inf_tp": 2, "prompt_len": 30000, "weight_dtype": "int4"},
        {"inf_batch": 64, "output_len": 1000, "quant_scale_bytes": 0.03125},
    ]
    for col, change in enumerate(edits, start=4):
        for key, value in change.items():
            ws.cell(row=rows[key], column=col).value = value
    wb.save(path)
    values = values_libreoffice(path)
    expected = [scenario_from_dict({**i, **e}) for i, e in zip(items, edits, strict=True)]
    reference = {s.name: compute(s) for s in expected}
    bad = mismatches(values, reference)
    assert not bad, "after editing inference inputs:\n" + "\n".join(bad[:40])


AUTO_TP_CASES = [
    ("llama3-8b", "h100-sxm", {}, 1),
    ("llama3-70b", "h100-sxm", {}, 2),
    ("llama3-70b", "l40s", {"weight_dtype": "int4"}, 1),
    ("llama2-7b", "h100-sxm", {"inf_batch": 8, "prompt_len": 32000, "output_len": 768}, 4),
    ("llama3-405b", "h100-sxm", {"weight_dtype": "fp8"}, 8),
    ("deepseek-v3", "h200", {"weight_dtype": "fp8"}, 8),
]


@pytest.mark.parametrize(("model", "hardware", "more", "tp"), AUTO_TP_CASES)
def test_inf_tp_0_takes_the_fewest_gpus_on_which_the_batch_fits(model, hardware, more, tp):
    """inf_tp 0 (the default): the smallest power of two up to the node that splits the
    heads and on which the batch fits at both peaks. The same plan typed with that tp
    fits; with half of it it does not."""
    r = calc(f"{model} auto", model=model, hardware=hardware, **more)
    assert (r["inf_tp_used"], r["inf_fits"]) == (tp, 1), (r["inf_tp_used"], r["inf_tp_note"])
    assert r["inf_tp_note"] == (
        f"chosen: tp {tp}, the smallest power of two up to the node (8) that splits the heads "
        "and on which the batch fits"
    )
    typed = calc(f"{model} tp {tp}", model=model, hardware=hardware, inf_tp=tp, **more)
    assert typed["inf_fits"] == 1 and typed["inf_tp_note"] == f"given on Inputs: tp {tp}"
    assert {
        k: typed[k] for k in r if k.startswith("inf_") and k not in ("inf_tp", "inf_tp_note")
    } == {k: r[k] for k in r if k.startswith("inf_") and k not in ("inf_tp", "inf_tp_note")}
    if tp > 1:
        half = calc(f"{model} tp {tp // 2}", model=model, hardware=hardware, inf_tp=tp // 2, **more)
        assert half["inf_fits"] == 0, f"{model} fits on {tp // 2} GPUs already"


def test_inf_tp_0_names_the_node_when_nothing_fits() -> None:
    """BF16 Llama 3 405B (810 GB of weights) fits no power of two in an 8-GPU node: the
    largest, 8, is used and the note and Checks say it does not fit."""
    r = calc("405B bf16 auto", model="llama3-405b", hardware="h100-sxm")
    assert (r["inf_tp_used"], r["inf_fits"], r["chk_inf_fits"]) == (8, 0, 0)
    assert r["inf_tp_note"] == (
        "chosen: tp 8, the largest power of two in the node (8) that splits the heads; the "
        "batch fits on none that does"
    )
