"""Team presets: a folder of models/ and hardware/ layered over the shipped presets
(--presets DIR or SHEETGEN_PRESETS), with base:, prices and origins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import fast_engine

from sheetgen.catalog import presets
from sheetgen.cli.commands import main

FIXTURES = Path(__file__).parent / "fixtures" / "hf_configs"
TEAM_H100 = """\
id: team-h100
name: Reserved H100 cluster
base: h100-sxm
price_per_gpu_hour: 1.23
price_per_gpu_hour_reserved: 1.1
"""


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def team(tmp_path: Path) -> Path:
    root = tmp_path / "team"
    (root / "models").mkdir(parents=True)
    (root / "hardware").mkdir()
    for name in ("llama3.2-1b", "qwen2.5-0.5b"):
        result = run(
            "presets", "import", str(FIXTURES / f"{name}.json"), "-o", str(root / "models")
        )
        assert result.exit_code == 0, result.output
    (root / "hardware" / "team-h100.yaml").write_text(TEAM_H100)
    return root


@pytest.fixture
def env_team(team: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SHEETGEN_PRESETS", str(team))
    yield team
    presets.clear_caches()


def test_listing_shows_team_presets_and_origins(env_team: Path) -> None:
    rows = {r["id"]: r for r in json.loads(run("presets", "hardware", "--format", "json").output)}
    assert rows["team-h100"]["origin"] == str(env_team)
    assert rows["team-h100"]["price_per_gpu_hour"] == 1.23
    assert rows["team-h100"]["bf16_tflops"] == rows["h100-sxm"]["bf16_tflops"]
    assert rows["h100-sxm"]["origin"] == "shipped"
    models = {r["id"]: r for r in json.loads(run("presets", "models", "--format", "json").output)}
    assert models["llama3.2-1b"]["params_total"] == 1_235_814_400
    assert models["llama3.2-1b"]["origin"] == str(env_team)


def test_compute_uses_the_hardware_price(env_team: Path) -> None:
    out = run("compute", "--model", "llama3.2-1b", "--hardware", "team-h100", "--format", "json")
    assert out.exit_code == 0, out.output
    v = {r["key"]: r["value"] for r in json.loads(out.output)}
    assert v["price_per_gpu_hour"] == 1.23 and v["price_per_gpu_hour_reserved"] == 1.1
    assert v["cost_usd"] == pytest.approx(v["gpu_hours"] * 1.23, rel=1e-12)
    # A price the scenario states wins over the preset's.
    out = run(
        "compute", "--model", "llama3.2-1b", "--hardware", "team-h100",
        "--price-per-gpu-hour", "3", "--format", "json",
    )  # fmt: skip
    v = {r["key"]: r["value"] for r in json.loads(out.output)}
    assert v["price_per_gpu_hour"] == 3


def test_presets_flag_without_the_environment(team: Path) -> None:
    assert "team-h100" not in presets.hardware()
    out = run("presets", "hardware", "--presets", str(team), "--format", "json")
    assert "team-h100" in {r["id"] for r in json.loads(out.output)}
    # The flag applies to that command only.
    assert "team-h100" not in presets.hardware()
    missing = run("presets", "hardware")
    assert "team-h100" not in missing.output


def test_team_preset_overrides_a_shipped_id(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "override"
    (root / "hardware").mkdir(parents=True)
    (root / "hardware" / "h100.yaml").write_text("id: h100-sxm\nbase: h100-sxm\nmem_gb: 96\n")
    monkeypatch.setenv("SHEETGEN_PRESETS", str(root))
    try:
        assert presets.hardware()["h100-sxm"].mem_gb == 96
        assert presets.hardware()["h100-sxm"].peak_bf16_tflops == 989.4
        assert presets.origins("hardware")["h100-sxm"] == str(root)
        src = dict(presets.hardware()["h100-sxm"].sources)
        assert "datasheet" in src["peak_bf16_tflops"]
    finally:
        presets.clear_caches()


def test_model_base_with_overrides(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "m"
    (root / "models").mkdir(parents=True)
    (root / "models" / "deep.yaml").write_text(
        "id: llama3-8b-deep\nbase: llama3-8b\narchitecture: {n_layers: 40}\n"
    )
    monkeypatch.setenv("SHEETGEN_PRESETS", str(root))
    try:
        m = presets.models()["llama3-8b-deep"]
        assert m.n_layers == 40 and m.hidden_size == 4096 and m.params_published is None
        assert "starts from llama3-8b" in m.source
    finally:
        presets.clear_caches()


@pytest.mark.parametrize(
    ("files", "expect"),
    [
        ({"hardware/a.yaml": "id: a\nbase: nowhere\n"}, "unknown preset 'nowhere'"),
        ({"hardware/a.yaml": "id: a\nbase: b\n", "hardware/b.yaml": "id: b\nbase: a\n"},
         "leads back to itself"),
        ({"hardware/a.yaml": "id: a\nbase: h100-sxm\nprice_per_gpu_hour: cheap\n"},
         "price_per_gpu_hour"),
        ({"hardware/a.yaml": "id: a\nbase: h100-sxm\nprice_per_gpu_hour: -1\n"}, ">= 0"),
        ({"notes.txt": "x"}, "holds none of models/, hardware/, scenarios/"),
        ({"hardware/a.yaml": "id: a\nbase: h100-sxm\n", "hardware/b.yaml": "id: a\nbase: b200\n"},
         "id 'a' is already defined by"),
    ],
)  # fmt: skip
def test_bad_team_presets_end_in_one_line(tmp_path: Path, monkeypatch, files, expect) -> None:
    root = tmp_path / "bad"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    monkeypatch.setenv("SHEETGEN_PRESETS", str(root))
    try:
        result = run("presets", "hardware")
        assert result.exit_code == 2, result.output
        line = result.output.strip()
        assert "\n" not in line and expect in line, line
    finally:
        presets.clear_caches()


def test_missing_directory(tmp_path: Path) -> None:
    result = run("presets", "models", "--presets", str(tmp_path / "nope"))
    assert result.exit_code == 2
    assert "--presets" in result.output and "not a directory" in result.output


def test_generate_check_inputs_with_team_presets(env_team: Path, tmp_path: Path) -> None:
    from openpyxl import load_workbook

    book = tmp_path / "team.xlsx"
    out = run(
        "generate", "--model", "qwen2.5-0.5b", "--hardware", "team-h100", "--gpus", "8",
        "-o", str(book),
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    ws = load_workbook(book)["Presets"]
    notes = [str(c.value) for row in ws.iter_rows() for c in row if c.value]
    assert any(n.startswith(f"[team preset from {env_team}]") for n in notes)
    assert not any("[team preset" in n and "Llama 3 8B" in n for n in notes)
    check = run("check", str(book), "--engine", fast_engine())
    assert check.exit_code == 0, check.output
    inputs = run("inputs", str(book))
    assert inputs.exit_code == 0 and "price_per_gpu_hour: 1.23" in inputs.output


def test_check_without_the_team_folder(env_team: Path, tmp_path: Path, monkeypatch) -> None:
    """The workbook carries its presets: check works where the team folder is not set."""
    book = tmp_path / "team.xlsx"
    run("generate", "--model", "llama3.2-1b", "--hardware", "team-h100", "-o", str(book))
    monkeypatch.delenv("SHEETGEN_PRESETS")
    presets.clear_caches()
    check = run("check", str(book), "--engine", fast_engine())
    assert check.exit_code == 0, check.output


def test_check_in_libreoffice(lo, env_team: Path, tmp_path: Path) -> None:
    book = tmp_path / "team.xlsx"
    run("generate", "--model", "llama3.2-1b", "--hardware", "team-h100", "-o", str(book))
    check = run("check", str(book))
    assert check.exit_code == 0, check.output


def test_team_scenarios_by_name(env_team: Path) -> None:
    (env_team / "scenarios").mkdir()
    (env_team / "scenarios" / "our-run.yaml").write_text(
        "scenarios:\n  - {name: ours, model: qwen2.5-0.5b, hardware: team-h100, n_gpus: 16}\n"
    )
    out = run("compute", "our-run", "--format", "json")
    assert out.exit_code == 0, out.output
    v = {r["key"]: r["value"] for r in json.loads(out.output)}
    assert v["n_gpus"] == 16 and v["price_per_gpu_hour"] == 1.23
    missing = run("compute", "their-run")
    assert missing.exit_code == 2 and "scenario file not found" in missing.output
