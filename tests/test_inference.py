"""The Inference sheet: seed 003's inference numbers, capacity
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

from sheetgen.checking.recalc import recalc_pycel, values_libreoffice
from sheetgen.reference import compute
from sheetgen.scenarios.run_fields import CHOICES
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
        # Block-scaled FP4 weights and KV cache (issue 41), on the accelerators with FP4.
        {
            "name": "70B MXFP4 weights, NVFP4 KV on GB200",
            "model": "llama3-70b",
            "hardware": "gb200",
            "weight_dtype": "mxfp4",
            "kv_dtype": "nvfp4",
            "inf_batch": 16,
        },
        {
            "name": "Mixtral NVFP4 weights, MXFP4 KV on MI355X tp 2",
            "model": "mixtral-8x7b",
            "hardware": "mi355x",
            "weight_dtype": "nvfp4",
            "kv_dtype": "mxfp4",
            "inf_tp": 2,
            "inf_batch": 8,
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


@pytest.mark.libreoffice
def test_edited_inference_inputs_follow_in_libreoffice(lo, tmp_path) -> None:
    """Change GPUs per replica, prompt length, weight format and batch; every key follows."""
    import openpyxl

    from sheetgen.scenarios.files import scenario_from_dict

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
