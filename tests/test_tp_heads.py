"""Tensor parallelism against the attention heads: a tp GPUs can split must divide the
query heads, and divide the key/value heads or be a multiple of them (each KV head then
copied: vLLM's rule, vllm/model_executor/models/llama.py, LlamaAttention; MLA: the query
heads only). Serving and inference never choose another tp; a typed one is refused in
one line; typed into the workbook past the validation it turns the verdict red with
the reason in words, in the reference and in the recalculated workbook alike. A tp that
copies KV heads still runs (vLLM), and training warns (Megatron-Core divides the query
groups by tp)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml
from click.testing import CliRunner
from helpers import build_matrix, calc, libreoffice_values, mismatches

from sheetgen.catalog import presets
from sheetgen.checking.recalc import recalc_pycel
from sheetgen.cli.commands import main
from sheetgen.errors import SheetgenError
from sheetgen.reference import compute
from sheetgen.scenarios.files import load_scenarios, scenario_from_dict
from sheetgen.scenarios.run_fields import SERVE_TP_SLOTS

# Phi-3-medium's attention (config.json of microsoft/Phi-3-medium-4k-instruct: 40 layers,
# hidden 5120, 40 query heads, 10 KV heads, intermediate 17920, vocabulary 32064).
PHI3_MEDIUM = {
    "base": "llama3-8b", "id": "phi3-medium-shape", "name": "Phi-3-medium shape",
    "n_layers": 40, "hidden_size": 5120, "n_heads": 40, "n_kv_heads": 10,
    "ffn_size": 17920, "vocab_size": 32064,
}  # fmt: skip
# The reviewer's plans: a power of two that fits (8) does not split the heads.
QWEN_LONG = {
    "model": "qwen2.5-7b", "inf_batch": 150, "prompt_len": 8000, "output_len": 500,
    "serve_requests_per_s": 1, "slo_tpot_s": 1, "slo_ttft_s": 5,
}  # fmt: skip
PHI3_SHORT = {
    "model": PHI3_MEDIUM, "inf_batch": 400, "prompt_len": 2000, "output_len": 40,
    "serve_requests_per_s": 1, "slo_tpot_s": 1, "slo_ttft_s": 5,
}  # fmt: skip
CANDIDATES = [2**k for k in range(SERVE_TP_SLOTS)]


def splits(n_heads: int, n_kv: int, tp: int) -> bool:
    """vLLM's rule, stated here rather than imported from the code under test."""
    return n_heads % tp == 0 and (n_kv % tp == 0 or tp % n_kv == 0)


def heads(model) -> tuple[int, int]:
    """Query heads and the key/value heads tp splits (MLA: the query heads)."""
    return model.n_heads, model.n_heads if model.is_mla else model.n_kv_heads


FALLBACK = {
    "inf_tp": "that splits the heads; the batch fits on none that does",
    "serve_tp": (
        "that splits the heads; none that does holds the weights and one SLO batch's KV "
        "cache, memory caps the batch"
    ),
}


def run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(
    ("name", "settings", "tp"),
    [("Qwen2.5 7B, 8 GPUs fit", QWEN_LONG, 4), ("Phi-3-medium shape", PHI3_SHORT, 2)],
)
@pytest.mark.parametrize("sheet", ["inf_tp", "serve_tp"])
def test_a_tp_that_fits_but_does_not_split_the_heads_is_skipped(
    name: str, settings: dict[str, Any], tp: int, sheet: str
) -> None:
    """The batch fits on 8 GPUs, which do not split 28 query heads (Qwen) or 10 KV heads
    (Phi-3-medium); nothing smaller fits: the largest power of two in the node that
    splits them is used, and the note says so."""
    r = calc(name, **settings)
    used, note = r[f"{sheet}_used"], r[f"{sheet}_note"]
    assert used == tp, f"{sheet}_used [{name}]: {used}, expected {tp} ({note})"
    expected = f"chosen: tp {tp}, the largest power of two in the node (8) {FALLBACK[sheet]}"
    assert note == expected, f"{sheet}_note [{name}]: {note!r}"
    prefix = "inf_cand" if sheet == "inf_tp" else "serve_cand"
    possible = [r[f"{prefix}_possible_{n}"] for n in range(1, SERVE_TP_SLOTS + 1)]
    model = scenario_from_dict({"name": name, "hardware": "h100-sxm", **settings}).model
    expected_possible = [int(splits(*heads(model), t)) for t in CANDIDATES]
    assert possible == expected_possible, f"{prefix}_possible_* [{name}]: {possible}"
    assert r["chk_serve_tp_divides_heads"] == 1, f"chk_serve_tp_divides_heads [{name}]"


@pytest.mark.parametrize("model", sorted(presets.models()))
@pytest.mark.parametrize(
    "load",
    [
        {"inf_batch": 1, "prompt_len": 100, "output_len": 100},
        {"inf_batch": 256, "prompt_len": 32000, "output_len": 2000, "slo_tpot_s": 1},
    ],
    ids=["light", "heavy"],
)
def test_every_chosen_tp_splits_the_heads(model: str, load: dict[str, Any]) -> None:
    """Whichever candidate wins, or none fits: the tp used on Inference and Serving splits
    the model's heads, and Checks' warning agrees."""
    name = f"{model} {load['inf_batch']}"
    r = calc(name, model=model, serve_requests_per_s=1, **load)
    a, kv = heads(presets.get_model(model))
    for key in ("inf_tp_used", "serve_tp_used"):
        assert splits(a, kv, r[key]), f"{key} [{name}]: {r[key]} for {a} query, {kv} KV heads"
    assert r["chk_serve_tp_divides_heads"] == 1, f"chk_serve_tp_divides_heads [{name}]"


IMPOSSIBLE_FLAGS = [
    (["--tp", "7", "--gpus", "56"], "--tp: 7 neither divides the 4 KV heads"),
    (["--tp", "14", "--gpus", "56"], "--tp: 14 neither divides the 4 KV heads"),
    (["--inf-tp", "7"], "--inf-tp: 7 neither divides the 4 KV heads"),
    (["--serve-tp", "14"], "--serve-tp: 14 neither divides the 4 KV heads"),
    (["--inf-tp", "8"], "--inf-tp: 8 does not divide the 28 query heads"),
]


@pytest.mark.parametrize(
    ("flags", "words"), IMPOSSIBLE_FLAGS, ids=[" ".join(f) for f, _w in IMPOSSIBLE_FLAGS]
)
def test_an_impossible_tp_flag_is_one_line(flags: list[str], words: str) -> None:
    """Qwen2.5 7B (28 query, 4 KV heads): tp 7 or 14 divides the query heads but splits
    KV heads no engine splits: refused like a tp that splits query heads (exit 2)."""
    result = run("compute", "--model", "qwen2.5-7b", "--hardware", "h100-sxm", *flags)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, f"{flags}: exit {result.exit_code}\n{result.output}"
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert words in lines[0] and "accepted:" in lines[0] and "1, 2, 4 or 28" in lines[0], lines


IMPOSSIBLE_KEYS = [("tp", 7), ("inf_tp", 7), ("serve_tp", 14)]


@pytest.mark.parametrize(("key", "tp"), IMPOSSIBLE_KEYS)
def test_an_impossible_tp_in_a_scenario_file_is_one_line(tmp_path: Path, key: str, tp: int):
    spec = tmp_path / "kv.yaml"
    item = {"name": f"qwen {key} {tp}", "model": "qwen2.5-7b", "hardware": "h100-sxm"}
    spec.write_text(yaml.safe_dump({"scenarios": [{**item, "n_gpus": 56, key: tp}]}))
    with pytest.raises(SheetgenError) as err:
        load_scenarios(spec)
    text = str(err.value)
    assert f"scenarios[1].{key}: {tp} neither divides the 4 KV heads" in text, text
    assert "\n" not in text, text


@pytest.mark.parametrize(
    ("model", "gpus", "tp"), [("llama3-8b", 32, 16), ("qwen2.5-7b", 56, 28), ("gemma2-27b", 32, 32)]
)
def test_a_tp_that_copies_kv_heads_runs_with_a_warning(model: str, gpus: int, tp: int) -> None:
    """tp a multiple of the KV heads: possible (vLLM copies them), so the verdict does not
    call it impossible; training warns (Megatron-Core does not copy them)."""
    name = f"{model} tp {tp}"
    r = calc(name, model=model, n_gpus=gpus, tp=tp, train_tokens="1T")
    assert r["chk_layout_possible"] == 1, f"chk_layout_possible [{name}]"
    assert r["chk_tp_divides_heads"] == 0, f"chk_tp_divides_heads [{name}]"
    assert not r["plan_verdict"].startswith("layout impossible"), r["plan_verdict"]


# Typed into the workbook past the validation: (scenario, base settings, tp typed, verdict).
TYPED = [
    ("Qwen tp 7", {"model": "qwen2.5-7b", "n_gpus": 56}, 7,
     "layout impossible: tp 7 neither divides the 4 KV heads nor is a multiple of them"),
    ("Qwen tp 14", {"model": "qwen2.5-7b", "n_gpus": 56}, 14,
     "layout impossible: tp 14 neither divides the 4 KV heads nor is a multiple of them"),
    ("Phi-3-medium shape tp 4", {"model": PHI3_MEDIUM, "n_gpus": 16}, 4,
     "layout impossible: tp 4 neither divides the 10 KV heads nor is a multiple of them"),
    ("Qwen tp 3", {"model": "qwen2.5-7b", "n_gpus": 48}, 3,
     "layout impossible: tp 3 does not divide the 28 query heads"),
    ("Qwen tp 28 copies KV heads", {"model": "qwen2.5-7b", "n_gpus": 56}, 28, "OK"),
]  # fmt: skip


def _typed_items() -> list[dict[str, Any]]:
    """The TYPED scenarios as written, before their tp is typed (tp 1)."""
    return [
        {"name": n, "hardware": "h100-sxm", "train_tokens": "1T", **s} for n, s, _t, _v in TYPED
    ]


def _typed(scenarios) -> dict[str, dict[str, Any]]:
    """The reference of each scenario with its typed tp, bypassing the validation."""
    out = {}
    for s, (_name, _settings, tp, _verdict) in zip(scenarios, TYPED, strict=True):
        run_ = dataclasses.replace(s.run, tp=tp, dp=None)
        out[s.name] = compute(dataclasses.replace(s, run=run_))
    return out


def test_a_typed_impossible_tp_turns_the_reference_verdict_red() -> None:
    reference = _typed([scenario_from_dict(i) for i in _typed_items()])
    for name, _settings, _tp, verdict in TYPED:
        r = reference[name]
        assert r["plan_verdict"] == verdict, f"plan_verdict [{name}]: {r['plan_verdict']!r}"
        impossible = verdict.startswith("layout impossible")
        assert r["chk_layout_possible"] == int(not impossible), f"chk_layout_possible [{name}]"
        assert r["plan_ok"] == int(not impossible), f"plan_ok [{name}]"


@pytest.fixture(scope="module")
def typed_book(tmp_path_factory: pytest.TempPathFactory):
    """The TYPED scenarios written with tp 1, then their tp typed on Inputs."""
    folder = tmp_path_factory.mktemp("tp_heads")
    path, scenarios, _ = build_matrix(folder, _typed_items(), "typed")
    wb = openpyxl.load_workbook(path)
    ws = wb["Inputs"]
    row = next(r for r in range(1, ws.max_row + 1) if ws.cell(row=r, column=1).value == "tp")
    for col, (_name, _settings, tp, _verdict) in enumerate(TYPED, start=4):
        ws.cell(row=row, column=col).value = tp
    wb.save(path)
    return path, _typed(scenarios)


@pytest.mark.parametrize(
    "engine", ["pycel", pytest.param("libreoffice", marks=pytest.mark.libreoffice)]
)
def test_a_typed_impossible_tp_turns_the_workbook_verdict_red(typed_book, engine: str) -> None:
    """Every key of the edited workbook equals the reference of the typed tp: the verdict
    in words, chk_layout_possible and plan_ok included."""
    path, reference = typed_book
    values = recalc_pycel(path) if engine == "pycel" else libreoffice_values(path)
    bad = mismatches(values, reference)
    assert not bad, f"{engine}: {len(bad)} keys differ:\n" + "\n".join(bad[:40])
    for name, _settings, _tp, verdict in TYPED:
        got = values[("Checks", "plan_verdict", name)]
        assert got == verdict, f"{engine} plan_verdict [{name}]: {got!r}"


def test_reading_a_typed_impossible_tp_back_is_one_line(typed_book) -> None:
    """`inputs` and `generate --from` read the workbook as a scenario file: refused."""
    from sheetgen.readback.scenarios import scenarios_from_workbook

    path, _ = typed_book
    with pytest.raises(SheetgenError) as err:
        scenarios_from_workbook(path)
    text = str(err.value)
    assert "tp" in text and "neither divides the 4 KV heads" in text and "\n" not in text, text
