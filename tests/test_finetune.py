"""LoRA and QLoRA fine-tuning (issue 22, part 5): PEFT's trainable counts, QLoRA's
headline (LLaMA 65B on one 48 GB GPU, 33B on one 24 GB GPU; full BF16 Adam 65B does
not fit), the FLOPs a frozen base saves and the clock that follows, the new inputs'
one-line errors, and a workbook with LoRA, QLoRA and pre-training scenarios equal to
the reference after recalculation (pycel in-process, LibreOffice marked)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import build_matrix, calc, expect, libreoffice_values, mismatches

from sheetgen.catalog import presets
from sheetgen.cli.commands import main

ROOT = Path(__file__).resolve().parents[1]

# Hugging Face PEFT's print_trainable_parameters (issue 22): model, rank, targets, count.
PEFT_COUNTS = [
    ("llama2-7b", 8, "qv", 4_194_304),
    ("llama3-8b", 8, "qv", 3_407_872),
    ("llama2-7b", 16, "all-linear", 39_976_960),
]


@pytest.mark.parametrize("recipe", ["lora", "qlora"])
@pytest.mark.parametrize("model, rank, targets, count", PEFT_COUNTS)
def test_trainable_parameters_are_peft_counts(model, rank, targets, count, recipe):
    r = calc(
        f"{model} r{rank} {targets} {recipe}",
        model=model,
        recipe=recipe,
        lora_rank=rank,
        lora_targets=targets,
    )
    expect(r, "lora_params_trainable", count, "PEFT counts", abs=0)
    expect(r, "lora_mem_adapters", 16 * count, "16 bytes per trainable parameter", abs=0)


def test_full_training_has_no_adapters_and_unchanged_bytes():
    r = calc("pre-training", model="llama2-7b", recipe="bf16-adam", lora_rank=64)
    expect(r, "lora_params_trainable", 0, abs=0)
    expect(r, "bytes_per_param", 16, abs=0)
    expect(r, "lora_flops_vs_full", 1, rel=1e-12)
    expect(r, "flops_per_token", 3 * r["flops_fwd_per_token"], rel=1e-12)


def test_qlora_bits_per_weight_are_the_papers():
    """Dettmers et al. 2023, section 3: 4 + 8/64 + 32/(64 x 256) bits with double quantisation."""
    r = calc("q", model="llama2-7b", recipe="qlora")
    expect(r, "lora_base_weight_bits", 4 + 8 / 64 + 32 / (64 * 256), rel=1e-12)
    assert r["lora_base_weight_bits"] == pytest.approx(4.127, abs=5e-4)


@pytest.mark.parametrize("model", ["llama2-7b", "llama-33b", "llama-65b"])
def test_qlora_quantises_the_linear_weights_only(model):
    """The layers' linear weights in NF4, the rest (embeddings, lm_head, norms) in BF16."""
    m = presets.models()[model]
    r = calc(model, model=model, recipe="qlora")
    h, f, L, v = m.hidden_size, m.ffn_size, m.n_layers, m.vocab_size
    linear = L * (4 * h * h + 3 * h * f)  # MHA: q, k, v, o are h x h
    expect(r, "lora_params_linear", linear, abs=0)
    rest = r["params_total"] - linear
    assert rest == 2 * v * h + (2 * L + 1) * h, f"{model}: {rest} unquantised"
    expect(r, "lora_mem_frozen", linear * 4.126953125 / 8 + rest * 2, rel=1e-12)


@pytest.mark.parametrize(
    "model, published, paper",
    [("llama-33b", 32_528_943_616, 32.5e9), ("llama-65b", 65_285_660_672, 65.2e9)],
)
def test_llama1_presets_match_the_paper(model, published, paper):
    """Touvron et al. 2023 (arXiv:2302.13971), Table 2: 32.5B and 65.2B parameters."""
    r = calc(model, model=model)
    expect(r, "params_total", published, abs=0)
    expect(r, "params_total", paper, "Table 2", rel=2e-3)


def qlora_paper(model: str, hardware: str, recipe: str = "qlora", **more) -> dict:
    """QLoRA's setting: one GPU, micro-batch 1, sequence 512, full recomputation."""
    return calc(
        f"{model} {recipe} on {hardware}",
        model=model,
        hardware=hardware,
        recipe=recipe,
        n_gpus=1,
        micro_batch=1,
        seq_len=512,
        global_batch_tokens=16 * 512,
        recompute="full",
        train_tokens="100M",
        **more,
    )


@pytest.mark.parametrize(
    "model, hardware, gb", [("llama-65b", "l40s", 48), ("llama-33b", "rtx-4090", 24)]
)
def test_qlora_headline_fits_one_gpu(model, hardware, gb):
    """Dettmers et al. 2023, abstract and section 1: 65B on one 48 GB GPU, 33B on one 24 GB
    (the preset's capacity is what the driver reports: 48.30 and 25.75 GB)."""
    hw = presets.hardware()[hardware]
    assert f"{gb}GB" in hw.name and gb <= hw.mem_gb < gb * 1.08
    r = qlora_paper(model, hardware)
    assert r["fits_per_gpu"] == 1 and r["plan_verdict"] == "OK", (
        f"{r['_scenario']}: {r['mem_total_per_gpu'] / 1e9:.1f} GB of "
        f"{r['mem_usable_per_gpu'] / 1e9:.1f} usable: {r['plan_verdict']}"
    )
    # The frozen NF4 base dominates: about half a byte per parameter.
    assert 0.5 < r["lora_mem_frozen"] / r["params_total"] < 0.55


@pytest.mark.parametrize("recipe", ["bf16-adam", "lora"])
def test_65b_without_quantisation_does_not_fit_48gb(recipe):
    r = qlora_paper("llama-65b", "l40s", recipe)
    assert r["fits_per_gpu"] == 0 and r["plan_ok"] == 0, r["plan_verdict"]
    assert r["plan_verdict"].startswith("does not fit"), r["plan_verdict"]
    if recipe == "bf16-adam":
        expect(r, "mem_static", 16 * 65_285_660_672, "16 bytes per parameter", rel=1e-12)


@pytest.mark.parametrize("model", ["llama2-7b", "llama3-8b", "llama-65b"])
@pytest.mark.parametrize("targets", ["qv", "all-linear"])
@pytest.mark.parametrize("seq", [512, 4096])
def test_lora_flops_per_token_are_two_thirds_of_full(model, targets, seq):
    full = calc("full", model=model, seq_len=seq)
    lora = calc("lora", model=model, seq_len=seq, recipe="lora", lora_targets=targets)
    ratio = lora["flops_per_token"] / full["flops_per_token"]
    assert 0.6 <= ratio <= 0.8, f"{model} {targets} s={seq}: LoRA/full = {ratio:.3f}"
    expect(lora, "lora_flops_vs_full", ratio, rel=1e-12)
    # 4N for the frozen matmuls, 3 x the attention core, 6 x the adapters.
    fwd, core = lora["flops_fwd_per_token"], lora["n_layers"] * lora["flops_fwd_attn_core"]
    expect(
        lora,
        "flops_per_token",
        2 * (fwd - core) + 3 * core + 6 * lora["lora_params_trainable"],
        rel=1e-12,
    )


def test_layout_clock_follows_lora_flops():
    """The step-time model reads the FLOPs sheet: fewer FLOPs per token, fewer days."""
    base = dict(model="llama3-8b", n_gpus=8, seq_len=4096, train_tokens="10B")
    full = calc("full", **base, zero_stage=3)
    lora = calc("lora", **base, recipe="lora")
    assert lora["mfu_source"] == full["mfu_source"] == "layout"
    assert lora["step_seconds_predicted"] < full["step_seconds_predicted"]
    assert lora["plan_days_wall"] < full["plan_days_wall"]
    # The days shrink less than the FLOPs: memory-bound work and communication stay.
    days = lora["plan_days_wall"] / full["plan_days_wall"]
    assert lora["lora_flops_vs_full"] < days < 1, days
    # MFU counts LoRA's own model FLOPs: tokens/s x FLOPs per token / peak.
    expect(
        lora,
        "mfu_achieved",
        lora["tokens_per_s_per_gpu"] * lora["flops_per_token"] / lora["peak_flops"],
        rel=1e-9,
    )


@pytest.mark.parametrize(
    "flags, field",
    [
        (["--lora-rank", "0"], "lora_rank"),
        (["--lora-rank", "2.5"], "lora_rank"),
        (["--lora-rank", "99999999"], "lora_rank"),
        (["--lora-targets", "bogus"], "lora_targets"),
        (["--recipe", "qlora", "--model", "mixtral-8x7b"], "recipe"),
        (["--recipe", "lora", "--model", "deepseek-v3"], "recipe"),
    ],
)
def test_bad_lora_inputs_are_one_line_exit_2(flags, field):
    args = ["compute", "--hardware", "h100-sxm", *flags]
    if "--model" not in flags:
        args += ["--model", "llama2-7b"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and field.replace("_", "-") in lines[0], result.output
    assert "Traceback" not in result.output


def test_example_scenario_file_runs_ok():
    from sheetgen.reference import compute
    from sheetgen.scenarios.files import load_scenarios

    scenarios = load_scenarios(ROOT / "presets" / "scenarios" / "finetune-qlora.yaml")
    assert {s.run.recipe for s in scenarios} >= {"lora", "qlora"}
    for s in scenarios:
        r = compute(s)
        assert r["plan_verdict"] == "OK" and r["n_gpus"] == 1, (s.name, r["plan_verdict"])


def matrix_items() -> list[dict]:
    one_gpu = dict(
        n_gpus=1,
        micro_batch=1,
        seq_len=512,
        global_batch_tokens=8192,
        recompute="full",
        train_tokens="100M",
    )
    return [
        {
            "name": "QLoRA 65B on one L40S",
            "model": "llama-65b",
            "hardware": "l40s",
            "recipe": "qlora",
            **one_gpu,
        },
        {
            "name": "LoRA 8B all-linear r16",
            "model": "llama3-8b",
            "hardware": "h100-sxm",
            "recipe": "lora",
            "lora_rank": 16,
            "lora_targets": "all-linear",
            "n_gpus": 2,
            "zero_stage": 1,
            "seq_len": 2048,
            "global_batch_tokens": 131072,
            "train_tokens": "1B",
            "recompute": "selective",
        },
        {
            "name": "LoRA 7B qkvo tp2",
            "model": "llama2-7b",
            "hardware": "a100-80gb",
            "recipe": "lora",
            "lora_targets": "qkvo",
            "n_gpus": 4,
            "tp": 2,
            "global_batch_tokens": 262144,
            "train_tokens": "1B",
        },
        {
            "name": "Pre-training 8B",
            "model": "llama3-8b",
            "hardware": "h100-sxm",
            "n_gpus": 16,
            "zero_stage": 3,
            "recompute": "selective",
            "seq_len": 8192,
            "train_tokens": "100B",
        },
    ]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory):
    return build_matrix(tmp_path_factory.mktemp("finetune"), matrix_items(), "finetune")


def test_matrix_holds_lora_qlora_and_pretraining(matrix):
    _, scenarios, _ = matrix
    assert {s.run.recipe for s in scenarios} == {"lora", "qlora", "bf16-adam"}


@pytest.fixture(scope="module")
def matrix_pycel(matrix):
    from sheetgen.checking.recalc import recalc_pycel

    return recalc_pycel(matrix[0])


@pytest.mark.parametrize("scenario", [i["name"] for i in matrix_items()])
def test_finetune_inprocess_engine_equals_reference(matrix, matrix_pycel, scenario):
    bad = mismatches(matrix_pycel, matrix[2], [scenario])
    assert not bad, f"{len(bad)} keys differ in pycel:\n" + "\n".join(bad[:40])


def test_finetune_rows_are_formulas(matrix):
    import openpyxl

    ws = openpyxl.load_workbook(matrix[0])["LoRA"]
    keys = {row[0].value: row[3].value for row in ws.iter_rows() if row[0].value}
    for key in ("lora_params_trainable", "lora_mem_frozen", "lora_flops_wgrad_skipped"):
        assert str(keys[key]).startswith("="), f"Fine-tuning {key}: {keys[key]!r}"


@pytest.fixture(scope="module")
def matrix_lo(matrix):
    return libreoffice_values(matrix[0])


@pytest.mark.libreoffice
@pytest.mark.parametrize("scenario", [i["name"] for i in matrix_items()])
def test_finetune_libreoffice_equals_reference(matrix, matrix_lo, scenario):
    bad = mismatches(matrix_lo, matrix[2], [scenario])
    assert not bad, f"{len(bad)} keys differ in LibreOffice:\n" + "\n".join(bad[:40])


def test_edits_on_inputs_follow_and_bad_ones_fail_the_check(tmp_path: Path):
    """Typed into the workbook: a recipe switched to qlora recomputes as the reference
    does; a rank of 0 or unknown targets turn chk_lora_inputs (an error) to 0."""
    import openpyxl

    from sheetgen.checking.recalc import recalc_pycel
    from sheetgen.reference import compute
    from sheetgen.scenarios.files import scenario_from_dict

    base = {
        "model": "llama2-7b",
        "hardware": "a100-80gb",
        "n_gpus": 1,
        "seq_len": 1024,
        "global_batch_tokens": 16384,
        "recompute": "full",
        "train_tokens": "100M",
        "recipe": "lora",
    }
    items = [{"name": n, **base} for n in ("to qlora", "rank 0", "bad targets")]
    path, _, _ = build_matrix(tmp_path, items, "edits")
    wb = openpyxl.load_workbook(path)
    ws = wb["Inputs"]
    rows = {ws.cell(row=r, column=1).value: r for r in range(1, ws.max_row + 1)}
    ws.cell(row=rows["recipe"], column=4).value = "qlora"
    ws.cell(row=rows["lora_rank"], column=5).value = 0
    ws.cell(row=rows["lora_targets"], column=6).value = "bogus"
    wb.save(path)
    values = recalc_pycel(path)
    expected = compute(scenario_from_dict({**items[0], "recipe": "qlora"}))
    bad = mismatches(values, {"to qlora": expected}, ["to qlora"])
    assert not bad, "\n".join(bad[:30])
    for name in ("rank 0", "bad targets"):
        assert values[("Checks", "chk_lora_inputs", name)] == 0, name
        assert values[("Checks", "checks_ok", name)] == 0, name
    assert values[("Checks", "chk_lora_inputs", "to qlora")] == 1


@pytest.fixture(scope="module")
def matrix_gnumeric(matrix):
    from helpers import gnumeric_values

    return gnumeric_values(matrix[0])


@pytest.mark.gnumeric
@pytest.mark.parametrize("scenario", [i["name"] for i in matrix_items()])
def test_finetune_gnumeric_equals_reference(matrix, matrix_gnumeric, scenario):
    bad = mismatches(matrix_gnumeric, matrix[2], [scenario])
    assert not bad, f"{len(bad)} keys differ in Gnumeric:\n" + "\n".join(bad[:40])
