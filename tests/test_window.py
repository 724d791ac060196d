"""Windowed attention (issue 23, part 4): the KV cache and the attention FLOPs of
models whose layers (all, or Gemma 2's alternate ones) attend to a sliding window,
for presets and for imported Hugging Face configs; the workbook equals the
reference after recalculation; bad window fields end in one line, exit code 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from helpers import build_matrix, calc, gnumeric_values, libreoffice_values, mismatches

from sheetgen.catalog.hf_import import architecture, read_config
from sheetgen.checking.recalc import recalc_pycel
from sheetgen.cli.commands import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "hf_configs"
CTX = 32_768
# The issue's figures, bytes per sequence at 32,768 tokens, BF16 cache:
KV_32K = {
    # every layer windowed: 2 x 32 layers x 8 KV heads x 128 x 2 bytes x 4,096 tokens
    "mistral-7b": 2 * 32 * 8 * 128 * 2 * 4_096,
    # (23 global layers x 32,768 + 23 local layers x 4,096) x 2 x 16 x 128 x 2 bytes
    "gemma2-27b": (23 * CTX + 23 * 4_096) * 2 * 16 * 128 * 2,
    # no window: 2 x 32 x 8 x 128 x 2 bytes x 32,768 tokens
    "llama3-8b": 2 * 32 * 8 * 128 * 2 * CTX,
}


def test_the_issues_figures() -> None:
    assert KV_32K == {
        "mistral-7b": 536_870_912,
        "gemma2-27b": 6_945_767_424,
        "llama3-8b": 4_294_967_296,
    }


def imported(name: str) -> dict[str, Any]:
    """The model fields `sheetgen presets import` reads from a fixture config."""
    return {**architecture(read_config(FIXTURES / f"{name}.json")), "id": f"{name}-imported"}


def check(r: dict[str, Any], key: str, expected: float) -> None:
    got = r[key]
    assert got == pytest.approx(expected, rel=1e-12), (
        f"{key} [{r['_scenario']}]: {got!r}, expected {expected!r} (diff {got - expected:+})"
    )


@pytest.mark.parametrize("source", ["preset", "imported"])
@pytest.mark.parametrize("model", sorted(KV_32K))
def test_kv_bytes_per_sequence_at_32k(model: str, source: str) -> None:
    spec = model if source == "preset" else imported(model)
    r = calc(f"{model} {source} 32k", model=spec, inf_context=CTX, kv_dtype="bf16")
    check(r, "kv_bytes_per_sequence", KV_32K[model])
    # The same request on the Inference sheet: 32,000 + 768 tokens, whole 16-token blocks.
    r = calc(
        f"{model} {source} request",
        model=spec,
        kv_dtype="bf16",
        prompt_len=32_000,
        output_len=768,
        kv_block_tokens=16,
    )
    check(r, "inf_kv_bytes_per_seq", KV_32K[model])
    check(r, "inf_kv_bytes", KV_32K[model] * r["inf_batch"])


@pytest.mark.parametrize(
    "name, window, local",
    [
        ("mistral-7b", 4096, 32),
        ("gemma2-27b", 4096, 23),
        ("phi3-mini-4k", 2047, 32),
        ("mixtral-8x7b", 0, 0),  # sliding_window null
        ("qwen2.5-0.5b", 0, 0),  # use_sliding_window false
        ("llama3-8b", 0, 0),
    ],
)
def test_import_reads_the_window(name: str, window: int, local: int) -> None:
    arch = imported(name)
    assert (arch.get("sliding_window", 0), arch.get("local_layers", 0)) == (window, local), name


def test_import_follows_layer_types_and_qwen2_window_layers(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "gemma2-27b.json").read_text())
    types = ["full_attention"] * 40 + ["sliding_attention"] * 6
    assert architecture({**doc, "layer_types": types})["local_layers"] == 6
    assert architecture({**doc, "sliding_window": 512})["sliding_window"] == 512
    qwen = json.loads((FIXTURES / "qwen2.5-0.5b.json").read_text())
    on = architecture({**qwen, "use_sliding_window": True, "max_window_layers": 20})
    assert (on["sliding_window"], on["local_layers"]) == (32768, qwen["num_hidden_layers"] - 20)


def pairs(seq: int, window: int = 0) -> int:
    """Query-key pairs of a causal layer, counted query by query."""
    return sum(min(i, window) if window else i for i in range(1, seq + 1))


@pytest.mark.parametrize("model", ["mistral-7b", "gemma2-27b"])
@pytest.mark.parametrize("seq", [2_048, 4_096, 8_192, 32_768])
def test_windowed_attention_flops_equal_a_pair_count(model: str, seq: int) -> None:
    r = calc(f"{model} s{seq}", model=model, seq_len=seq)
    full = calc(
        f"{model} s{seq} no window",
        model={"base": model, "sliding_window": 0, "local_layers": 0},
        seq_len=seq,
    )
    window, local, layers = r["sliding_window"], r["local_layers"], r["n_layers"]
    counted = (layers - local) * pairs(seq) + local * pairs(seq, window)
    # Summed over the layers, the core is the causal core x counted / causal pairs.
    check(
        r,
        "flops_fwd_attn_core",
        full["flops_fwd_attn_core"] * counted / (layers * pairs(seq)),
    )
    saved = 3 * layers * (full["flops_fwd_attn_core"] - r["flops_fwd_attn_core"])
    check(r, "flops_per_token", full["flops_per_token"] - saved)
    if seq <= window:
        assert r["flops_per_token"] == full["flops_per_token"], "the window covers the sequence"
    else:
        assert r["flops_per_token"] < full["flops_per_token"], "a window must save FLOPs"
    # Average keys per query in a windowed layer: W - W(W - 1) / 2S past the window.
    if seq > window:
        check(
            {**r, "_avg": r["flops_window_pair_share"] * (seq + 1) / 2},
            "_avg",
            window - window * (window - 1) / (2 * seq),
        )


@pytest.mark.parametrize("seq", [1024, 4096, 8192, 131072])
def test_phase_flops_per_token_follow_the_window(seq: int) -> None:
    r = calc(
        "gemma2 phased", model="gemma2-27b", seq_len=8192, phases=[{"tokens": "1B", "seq_len": seq}]
    )
    direct = calc("gemma2 direct", model="gemma2-27b", seq_len=seq)
    check(r, "phase_1_flops_per_token", direct["flops_per_token"])


def test_inference_attention_and_cache_reads_fall_with_the_window() -> None:
    settings = {"prompt_len": 30_000, "output_len": 2_000, "inf_batch": 1}
    r = calc("mistral 30k", model="mistral-7b", **settings)
    full = calc(
        "mistral 30k no window",
        model={"base": "mistral-7b", "sliding_window": 0, "local_layers": 0},
        **settings,
    )
    # Prefill: the attention core over the prompt counted pair by pair.
    core = lambda x: x["inf_prefill_flops"] - 30_000 * x["inf_flops_per_token"]  # noqa: E731
    check({**r, "_core": core(r)}, "_core", core(full) * pairs(30_000, 4096) / pairs(30_000))
    # Decode: each windowed layer reads and attends to 4,096 tokens, not 31,000.
    check(r, "inf_decode_attended_tokens", 4096)
    check(
        r,
        "inf_decode_kv_bytes_per_gpu",
        full["inf_decode_kv_bytes_per_gpu"] * 4096 / full["inf_decode_avg_context"],
    )
    assert r["inf_decode_step_s"] < full["inf_decode_step_s"]
    assert r["inf_max_batch"] > full["inf_max_batch"]


# ---------------------------------------------------------------------------
# The workbook equals the reference for every key (pycel; LibreOffice once)


def matrix_items() -> list[dict[str, Any]]:
    """Every branch of the windowed cache: all layers windowed (the cache stops
    growing: the prefill bounds the context), alternating layers, a context inside
    the window, a custom window over part of the layers, tensor parallelism, no window."""
    return [
        {"name": "mistral 32k", "model": "mistral-7b", "hardware": "h100-sxm",
         "inf_context": CTX, "seq_len": CTX, "prompt_len": 30_000, "output_len": 2_000,
         "inf_batch": 1},
        {"name": "gemma2 tp2", "model": "gemma2-27b", "hardware": "h100-sxm",
         "seq_len": 8192, "inf_context": CTX, "prompt_len": 2_000, "output_len": 300,
         "inf_tp": 2, "inf_batch": 8,
         "phases": [{"tokens": "1T", "seq_len": 2048}, {"tokens": "100B", "seq_len": CTX}]},
        {"name": "gemma2 short", "model": "gemma2-27b", "hardware": "h200",
         "seq_len": 2048, "inf_context": 1000, "prompt_len": 1000, "output_len": 100,
         "inf_tp": 1, "inf_batch": 256, "kv_dtype": "fp8"},
        {"name": "custom window", "model": {"base": "mistral-7b", "sliding_window": 1000,
         "local_layers": 20}, "hardware": "a100-80gb", "seq_len": 4096, "inf_context": 5000,
         "prompt_len": 3_000, "output_len": 500, "inf_tp": 4, "inf_batch": 64},
        {"name": "imported gemma2", "model": imported("gemma2-27b"), "hardware": "b200",
         "seq_len": CTX, "inf_context": CTX, "prompt_len": 16_000, "output_len": 4_000,
         "inf_tp": 8, "inf_batch": 4},
        {"name": "llama3 no window", "model": "llama3-8b", "hardware": "h100-sxm",
         "seq_len": CTX, "inf_context": CTX, "prompt_len": 32_000, "output_len": 768},
    ]  # fmt: skip


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory):
    return build_matrix(tmp_path_factory.mktemp("window"), matrix_items(), "window")


def test_matrix_reaches_every_branch(matrix) -> None:
    _, scenarios, reference = matrix
    r = {s.name: reference[s.name] for s in scenarios}
    mistral, short_ctx = r["mistral 32k"], r["gemma2 short"]
    # Every layer windowed and the window fits: no cache limit, the prefill's shown.
    assert mistral["inf_max_context_kv"] == mistral["inf_max_context_prefill"]
    # The cache budget ends inside the window.
    assert 0 < short_ctx["inf_max_context_kv"] < short_ctx["sliding_window"]
    assert r["custom window"]["inf_max_context_kv"] > r["custom window"]["sliding_window"]
    assert r["llama3 no window"]["kv_window_saving"] == 1
    phased = r["gemma2 tp2"]
    assert phased["phase_1_attn_layer_share"] == 1 > phased["phase_2_attn_layer_share"]


def test_inprocess_engine_equals_reference(matrix) -> None:
    path, _, reference = matrix
    bad = mismatches(recalc_pycel(path), reference)
    assert not bad, f"{len(bad)} keys differ in pycel:\n" + "\n".join(bad[:40])


@pytest.mark.libreoffice
def test_libreoffice_equals_reference(matrix) -> None:
    path, _, reference = matrix
    bad = mismatches(libreoffice_values(path), reference)
    assert not bad, f"{len(bad)} keys differ in LibreOffice:\n" + "\n".join(bad[:40])


def test_gnumeric_equals_reference(matrix) -> None:
    path, _, reference = matrix
    bad = mismatches(gnumeric_values(path), reference)
    assert not bad, f"{len(bad)} keys differ in Gnumeric:\n" + "\n".join(bad[:40])


# ---------------------------------------------------------------------------
# Bad values: one line, exit code 2


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def one_line(result, *expected: str) -> None:
    out = result.output.strip()
    assert result.exit_code == 2, out
    assert "\n" not in out and "Traceback" not in out, out
    for text in expected:
        assert text in out, out


@pytest.mark.parametrize(
    "model, expected",
    [
        ({"base": "mistral-7b", "sliding_window": -1}, ["sliding_window", ">= 0", "-1"]),
        ({"base": "llama3-8b", "sliding_window": 4096}, ["local_layers", "n_layers (32)"]),
        ({"base": "mistral-7b", "local_layers": 33}, ["local_layers", "got 33"]),
        ({"base": "llama3-8b", "local_layers": 4}, ["sliding_window", "must be >= 1"]),
        ({"base": "mistral-7b", "sliding_window": "wide"}, ["sliding_window", "wide"]),
    ],
)
def test_bad_window_in_a_scenario_file(tmp_path: Path, model: dict, expected: list) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"scenarios": [{"model": model, "hardware": "h100-sxm"}]}))
    one_line(run("compute", str(path)), *expected)


def test_bad_window_in_a_model_preset(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    doc = yaml.safe_load((ROOT / "presets" / "models" / "gemma2-27b.yaml").read_text())
    doc["id"] = "gemma2-bad"
    doc["architecture"]["local_layers"] = 47  # 46 layers
    (tmp_path / "models" / "gemma2-bad.yaml").write_text(yaml.safe_dump(doc))
    result = run(
        "compute", "--presets", str(tmp_path), "--model", "gemma2-bad", "--hardware", "h100-sxm"
    )
    one_line(result, "local_layers", "n_layers (46)", "47")


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"sliding_window": -4096}, "sliding_window: expected a whole number from 0"),
        ({"sliding_window": "4096"}, "sliding_window: expected a whole number"),
        ({"layer_types": ["sliding_attention", "full_attention"] * 22}, "has 44 entries"),
        ({"layer_types": ["global"] * 46}, "layer_types: expected a list of"),
        (
            {"layer_types": ["sliding_attention"] * 46, "sliding_window": None},
            "sliding_window is None",
        ),
    ],
)
def test_bad_window_in_an_imported_config(tmp_path: Path, change: dict, expected: str) -> None:
    doc = {**json.loads((FIXTURES / "gemma2-27b.json").read_text()), **change}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc))
    one_line(run("presets", "import", str(path)), expected)


def test_an_edited_window_that_does_not_fit_the_layers_fails_an_error_check(tmp_path) -> None:
    from openpyxl import load_workbook

    from sheetgen.scenarios.files import scenario_from_dict
    from sheetgen.workbook import write_workbook

    scenario = scenario_from_dict(
        {"name": "mistral", "model": "mistral-7b", "hardware": "h100-sxm"}
    )
    path = write_workbook([scenario], tmp_path / "w.xlsx", cache_values=False)
    wb = load_workbook(path)
    ws = wb["Presets"]
    header = next(r for r in range(1, ws.max_row + 1) if ws.cell(row=r, column=1).value == "id")
    cols = {ws.cell(row=header, column=c).value: c for c in range(1, ws.max_column + 1)}
    row = next(r for r in range(header + 1, ws.max_row + 1) if ws.cell(r, 1).value == "mistral-7b")
    before = recalc_pycel(path)
    assert before[("Checks", "chk_window_valid", "mistral")] == 1
    ws.cell(row=row, column=cols["local_layers"]).value = 33  # 32 layers
    wb.save(path)
    after = recalc_pycel(path)
    assert after[("Checks", "chk_window_valid", "mistral")] == 0
    assert after[("Checks", "checks_ok", "mistral")] == 0
