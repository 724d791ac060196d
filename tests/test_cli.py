"""The command line: outputs, and one-line errors with exit code 2 for bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sheetgen.cli.commands import main

HEADLINE = [
    "params_total", "params_active", "mem_weights", "mem_grads", "mem_master", "mem_optimizer",
    "mem_static", "mem_activations", "mem_logits", "mem_overhead", "mem_total",
    "flops_per_token", "flops_train", "flops_train_hardware", "tokens_per_s_per_gpu",
    "kv_bytes_per_token", "kv_bytes_per_sequence", "train_days", "train_days_wall",
    "gpu_hours", "cost_usd",
]  # fmt: skip
UNITS = {
    "params_total": "params", "mem_total": "B", "mem_weights": "B", "flops_train": "FLOP",
    "train_days": "d", "train_days_wall": "d", "gpu_hours": "GPU·h",
    "tokens_per_s_per_gpu": "tok/s", "cost_usd": "USD", "kv_bytes_per_token": "B",
}  # fmt: skip


def run(*args: str, cwd: Path | None = None):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_compute_json_covers_every_key_with_units() -> None:
    result = run("compute", "--model", "llama3-8b", "--hardware", "h100-sxm", "--format", "json")
    assert result.exit_code == 0, result.output
    records = json.loads(result.output)
    keys = {r["key"] for r in records}
    assert set(HEADLINE) <= keys
    assert {"model", "hardware", "n_gpus", "seq_len", "recipe", "mfu"} <= keys
    by_key = {r["key"]: r for r in records}
    for key, unit in UNITS.items():
        assert by_key[key]["unit"] == unit, key
    assert by_key["params_total"]["value"] == 8_030_261_248
    # Dates as a reader writes them, not the spreadsheet's day serial (46,388).
    assert by_key["start_date"]["value"] == "2027-01-01"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", by_key["finish_date"]["value"])
    assert all(set(r) == {"scenario", "key", "value", "unit"} for r in records)


def test_compute_flag_aliases_and_suffixes() -> None:
    a = run(
        "compute",
        "--model",
        "llama3-405b",
        "--hardware",
        "h100-sxm",
        "--gpus",
        "16384",
        "--tokens",
        "15.6T",
        "--seq-len",
        "8192",
        "--mfu",
        "0.41",
        "--format",
        "json",
    )
    b = run("compute", "--model", "llama3-405b", "--hardware", "h100-sxm", "--n-gpus", "16384",
            "--train-tokens", "15600000000000", "--seq-len", "8192", "--mfu", "0.41",
            "--format", "json")  # fmt: skip
    assert a.exit_code == b.exit_code == 0
    assert json.loads(a.output) == json.loads(b.output)
    days = {r["key"]: r["value"] for r in json.loads(a.output)}["train_days"]
    assert days == pytest.approx(69, abs=0.5)


def test_compute_default_scenarios_table_and_csv() -> None:
    table = run("compute")
    assert table.exit_code == 0
    assert "train_days" in table.output and "Llama 3 405B" in table.output
    csv = run("compute", "--format", "csv")
    assert csv.output.splitlines()[0] == "scenario,key,value,unit"
    # A long text is cut in the aligned table, which says so, and whole in csv and json.
    from sheetgen.cli.tables import TABLE_TEXT_MAX

    records = json.loads(run("compute", "--format", "json").output)
    long = next(r["value"] for r in records if isinstance(r["value"], str) and len(r["value"]) > 80)
    assert long not in table.output
    assert long[: TABLE_TEXT_MAX - 1] + "…" in table.output
    assert f"texts longer than {TABLE_TEXT_MAX} characters are cut" in table.output
    import csv as csv_module

    assert long in {r["value"] for r in csv_module.DictReader(csv.output.splitlines())}


def test_presets_lists_sources() -> None:
    for kind, expect in (
        ("models", "llama3-8b"),
        ("hardware", "h100-sxm"),
        ("recipes", "bf16-adam"),
    ):
        result = run("presets", kind)
        assert result.exit_code == 0
        assert expect in result.output and "source" in result.output
    data = json.loads(run("presets", "hardware", "--format", "json").output)
    assert all(r["source"] for r in data if r["id"] != "custom")


def test_generate_reruns_and_keeps_an_edited_file(tmp_path: Path) -> None:
    out = tmp_path / "plan.xlsx"
    first = run("generate", "-o", str(out))
    assert first.exit_code == 0 and out.exists()
    assert "wrote" in first.output
    again = run("generate", "-o", str(out))  # a rerun replaces what sheetgen wrote
    assert again.exit_code == 0 and "replaced" in again.output.splitlines()[0]
    out.write_bytes(b"edited by a user")
    second = run("generate", "-o", str(out))  # an edited file is kept beside the new one
    assert second.exit_code == 0, second.output
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("plan.kept-")]
    assert len(kept) == 1 and kept[0].read_bytes() == b"edited by a user"
    assert str(kept[0]) in second.output.splitlines()[0]
    assert out.read_bytes()[:2] == b"PK"
    out.write_bytes(b"edited again")
    third = run("generate", "-o", str(out), "--force")  # --force keeps nothing
    assert third.exit_code == 0
    assert out.read_bytes()[:2] == b"PK"
    assert len([p for p in tmp_path.iterdir() if p.name.startswith("plan.kept-")]) == 1
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


BAD_FLAGS = [
    (["--n-gpus", "0"], "--n-gpus"),
    (["--n-gpus", "-8"], "--n-gpus"),
    (["--seq-len", "0"], "--seq-len"),
    (["--mfu", "1.5"], "--mfu"),
    (["--mfu", "0"], "--mfu"),
    (["--goodput", "-0.1"], "--goodput"),
    (["--tokens", "15.6X"], "--tokens"),
    (["--tokens", "lots"], "--tokens"),
    (["--recompute", "partial"], "--recompute"),
    (["--recipe", "fp4-adam"], "--recipe"),
    (["--model", "llama-9"], "--model"),
    (["--hardware", "h900"], "--hardware"),
    (["--hardware", "a100-80gb", "--peak-dtype", "fp8"], "--peak-dtype"),
    (["--gpus", "12", "--tp", "8"], "--n-gpus"),  # dp = 12 / 8 is not whole
    (["--gpus", "16", "--dp", "4"], "--dp"),  # dp disagrees with n_gpus
    (["--zero-stage", "4"], "--zero-stage"),
    (["--sequence-parallel", "2"], "--sequence-parallel"),
    (["--tp", "0"], "--tp"),
    (["--mem-headroom", "1"], "--mem-headroom"),
    (["--pue", "0.8"], "--pue"),
    (["--start-date", "2025-02-30"], "--start-date"),
    (["--price-basis", "spot"], "--price-basis"),
    (["--contingency", "-1"], "--contingency"),
]


@pytest.mark.parametrize("extra, field", BAD_FLAGS, ids=[f for _, f in BAD_FLAGS])
def test_bad_flags_give_one_line_and_exit_2(extra: list[str], field: str) -> None:
    args = {"--model": "llama3-8b", "--hardware": "h100-sxm"}
    for flag, value in zip(extra[::2], extra[1::2], strict=True):
        args[flag] = value
    flat = [x for kv in args.items() for x in kv]
    result = CliRunner().invoke(main, ["compute", *flat])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"error: {field}"), lines[0]
    assert "Traceback" not in result.output


BAD_FILES = {
    "unknown_key": ("scenarios:\n  - {name: a, model: llama3-8b, hardware: h100-sxm, gpus: 8}\n",
                    "scenarios[1].gpus: unknown setting"),
    "missing_model": ("scenarios:\n  - {name: a, hardware: h100-sxm}\n", "scenarios[1].model: missing"),
    "wrong_type": ("scenarios:\n  - {name: a, model: llama3-8b, hardware: h100-sxm, seq_len: [1]}\n",
                   "scenarios[1].seq_len"),
    "yaml_syntax": ("scenarios:\n  - name: a\n   model: x\n", "line 3"),
    "not_a_list": ("scenarios: 3\n", "must be a non-empty list"),
    "top_level": ("scenario: []\n", "expected a mapping with a 'scenarios:' list"),
    "heads": ("scenarios:\n  - {name: a, hardware: h100-sxm, model: {n_layers: 2, hidden_size: 100, "
              "n_heads: 3, ffn_size: 10, vocab_size: 10}}\n", "scenarios[1].model.n_heads"),
    "kv_heads": ("scenarios:\n  - {name: a, hardware: h100-sxm, model: {base: llama3-8b, n_kv_heads: 5}}\n",
                 "scenarios[1].model.n_kv_heads"),
    "negative_size": ("scenarios:\n  - {name: a, hardware: h100-sxm, model: {base: llama3-8b, "
                      "hidden_size: -4096}}\n", "scenarios[1].model.hidden_size"),
    "duplicate": ("scenarios:\n  - {name: a, model: llama3-8b, hardware: h100-sxm}\n"
                  "  - {name: a, model: llama3-8b, hardware: h100-sxm}\n", "duplicate scenario name"),
    "bad_hw": ("scenarios:\n  - {name: a, model: llama3-8b, hardware: {base: h100-sxm, mem_gb: 0}}\n",
               "scenarios[1].hardware.mem_gb"),
    "dp_divides": ("scenarios:\n  - {name: a, model: llama3-8b, hardware: h100-sxm, n_gpus: 12, pp: 8}\n",
                   "scenarios[1].n_gpus: 12 is not a multiple of tp x pp x cp"),
    "dp_disagrees": ("scenarios:\n  - {name: a, model: llama3-8b, hardware: h100-sxm, n_gpus: 16, dp: 2}\n",
                     "scenarios[1].dp: dp 2 disagrees with n_gpus 16"),
    "bad_link": ("scenarios:\n  - {name: a, model: llama3-8b, hardware: {base: h100-sxm, "
                 "inter_node_gb_per_s: 0}}\n", "scenarios[1].hardware.inter_node_gb_per_s"),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD_FILES)
def test_bad_scenario_files(tmp_path: Path, case: str) -> None:
    text, expect = BAD_FILES[case]
    path = tmp_path / f"{case}.yaml"
    path.write_text(text)
    for command in ("compute", "generate"):
        result = CliRunner().invoke(
            main,
            [
                command,
                str(path),
                *(["-o", str(tmp_path / "x.xlsx")] if command == "generate" else []),
            ],
        )
        assert result.exit_code == 2, result.output
        line = result.output.strip()
        assert "\n" not in line and expect in line, line
    assert not (tmp_path / "x.xlsx").exists()


def test_missing_file_and_flag_conflict(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["compute", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2 and "not found" in result.output
    spec = tmp_path / "s.yaml"
    spec.write_text("scenarios:\n  - {name: a, model: llama3-8b, hardware: h100-sxm}\n")
    result = CliRunner().invoke(main, ["compute", str(spec), "--mfu", "0.5"])
    assert result.exit_code == 2 and "--mfu" in result.output


def test_output_must_be_xlsx(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["generate", "-o", str(tmp_path / "plan.csv")])
    assert result.exit_code == 2 and ".xlsx" in result.output


def test_help_imports_nothing_heavy() -> None:
    code = (
        "import sys; import sheetgen.cli.commands; "
        "heavy = [m for m in ('pandas', 'openpyxl', 'yaml', 'numpy') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    done = subprocess.run(
        [sys.executable, "-m", "sheetgen.cli.commands", "--help"], capture_output=True
    )
    assert done.returncode == 0 and b"generate" in done.stdout


BAD_PRESETS = {
    "yaml syntax": ("models/broken.yaml", "id: broken\narchitecture: [1, 2\n", "invalid YAML line"),
    "no architecture": (
        "models/broken.yaml",
        "id: broken\nname: x\n",
        "needs an 'architecture' mapping",
    ),
    "unknown field": (
        "models/broken.yaml",
        "id: broken\narchitecture: {n_layers: 2, hidden_size: 64, n_heads: 4, ffn_size: 8, "
        "vocab_size: 10, n_layer: 3}\n",
        "broken.yaml.n_layer: unknown model field",
    ),
    "negative peak": (
        "hardware/broken.yaml",
        "id: broken\npeak_bf16_tflops: -1\npeak_fp8_tflops: 0\nmem_gb: 80\nhbm_tbps: 3\ntdp_w: 700\n",
        "broken.yaml.peak_bf16_tflops: must be > 0",
    ),
}


@pytest.mark.parametrize("case", BAD_PRESETS)
def test_bad_preset_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    import shutil

    from sheetgen import paths
    from sheetgen.catalog import presets

    rel, text, expect = BAD_PRESETS[case]
    root = tmp_path / "data"
    shutil.copytree(paths.data_root() / "presets", root / "presets")
    shutil.copytree(paths.data_root() / "templates", root / "templates")
    (root / "presets" / rel).write_text(text)
    monkeypatch.setattr(paths, "data_root", lambda: root)
    for loader in (presets.models, presets.hardware, presets.model_docs, presets.hardware_docs):
        loader.cache_clear()
    try:
        result = CliRunner().invoke(main, ["presets", rel.split("/")[0]])
        assert result.exit_code == 2, result.output
        line = result.output.strip()
        assert "\n" not in line and expect in line, line
    finally:
        for loader in (presets.models, presets.hardware, presets.model_docs, presets.hardware_docs):
            loader.cache_clear()
