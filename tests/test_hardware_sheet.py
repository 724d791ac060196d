"""The Hardware sheet (issue 22.3): the plan on every accelerator of the Presets hardware
table, team presets included, on the Summary's clock; a price edit on Presets re-ranks."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import libreoffice_values, mismatches
from test_team_presets import TEAM_H100  # the team preset those tests use

from sheetgen.catalog import presets
from sheetgen.checking.recalc import recalc_pycel
from sheetgen.readback.access import scenario_results
from sheetgen.reference import compute
from sheetgen.scenarios.files import load_scenarios, scenario_from_dict
from sheetgen.scenarios.run_fields import HARDWARE_SLOTS
from sheetgen.workbook import write_workbook

ROOT = Path(__file__).resolve().parents[1]
SCENARIO_FILES = sorted((ROOT / "presets" / "scenarios").glob("*.yaml"))


@pytest.fixture
def env_team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "team"
    (root / "hardware").mkdir(parents=True)
    (root / "hardware" / "team-h100.yaml").write_text(TEAM_H100)
    monkeypatch.setenv("SHEETGEN_PRESETS", str(root))
    presets.clear_caches()
    yield root
    monkeypatch.delenv("SHEETGEN_PRESETS", raising=False)
    presets.clear_caches()


def hardware_rows(path: Path) -> dict[str, int]:
    import openpyxl

    ws = openpyxl.load_workbook(path)["Hardware"]
    return {ws.cell(row=r, column=1).value: r for r in range(1, ws.max_row + 1)}


def slot_of(values: dict, hardware_id: str) -> int:
    found = [n for n in range(1, HARDWARE_SLOTS + 1) if values[f"hw_id_{n}"] == hardware_id]
    assert len(found) == 1, f"{hardware_id} is in slots {found}"
    return found[0]


def test_sheet_lists_every_preset_and_a_team_preset_with_formulas(env_team, tmp_path) -> None:
    import openpyxl

    s = scenario_from_dict({"name": "team", "model": "llama3-8b", "hardware": "team-h100"})
    path = write_workbook([s], tmp_path / "team.xlsx")
    ws = openpyxl.load_workbook(path)["Hardware"]
    cached = openpyxl.load_workbook(path, data_only=True)["Hardware"]
    rows = hardware_rows(path)
    names = {
        cached.cell(row=rows[f"hw_name_{n}"], column=4).value for n in range(1, HARDWARE_SLOTS + 1)
    }
    expected = {hw.name for hw in presets.hardware().values()}
    assert "Reserved H100 cluster" in expected and len(expected) >= 13
    assert expected <= names, f"missing on the Hardware sheet: {sorted(expected - names)}"
    for key in ("hw_name_1", "hw_days_1", "hw_cost_1", "hw_rank_1", "hw_cheapest"):
        assert str(ws.cell(row=rows[key], column=4).value).startswith("="), key
    values = recalc_pycel(path)
    bad = mismatches(values, {s.name: compute(s)})
    assert not bad, "pycel differs from the reference:\n" + "\n".join(bad[:20])
    # The team preset's own price drives its cost: 1.23 per GPU-hour.
    r = compute(s)
    n = slot_of(r, "team-h100")
    assert r[f"hw_price_{n}"] == 1.23


@pytest.mark.parametrize("clock", ["layout", "typed", "measured"])
@pytest.mark.parametrize("spec", SCENARIO_FILES, ids=[p.stem for p in SCENARIO_FILES])
def test_own_accelerator_gives_the_summary_days_and_cost(spec: Path, clock: str) -> None:
    for s in load_scenarios(spec):
        changes = {"mfu_source": clock}
        if clock == "measured":
            changes["measured_tokens_per_s_per_gpu"] = 1000.0
        s = replace(s, run=replace(s.run, **changes))
        r = compute(s)
        n = slot_of(r, s.hardware.id)
        assert r[f"hw_days_{n}"] == pytest.approx(r["plan_days_wall"], rel=1e-9), (s.name, clock)
        assert r[f"hw_cost_{n}"] == pytest.approx(r["cost_total_usd"], rel=1e-9), (s.name, clock)
        assert r[f"hw_fits_{n}"] == r["fits_per_gpu"], (s.name, clock)


def test_layout_clock_moves_the_whole_step_model() -> None:
    """Days on another accelerator are the Summary's days of the scenario moved there."""
    s = load_scenarios(ROOT / "presets/scenarios/default.yaml")[1]
    r = compute(s)
    for hw_id in ("h200", "b200", "mi300x"):
        moved = replace(s, hardware=presets.hardware()[hw_id])
        n = slot_of(r, hw_id)
        assert r[f"hw_days_{n}"] == pytest.approx(compute(moved)["plan_days_wall"], rel=1e-9)


def test_fp8_plan_on_a_chip_without_fp8_is_not_ranked() -> None:
    s = scenario_from_dict(
        {"name": "fp8", "model": "llama3-8b", "hardware": "h100-sxm", "peak_dtype": "fp8"}
    )
    r = compute(s)
    n = slot_of(r, "a100-80gb")
    assert r[f"hw_runs_{n}"] == 0 and r[f"hw_days_{n}"] == "–" and r[f"hw_rank_{n}"] == "–"


@pytest.mark.parametrize("spec", SCENARIO_FILES, ids=[p.stem for p in SCENARIO_FILES])
def test_shipped_scenarios_workbook_equals_reference_in_pycel(spec: Path, tmp_path) -> None:
    scenarios = load_scenarios(spec)
    path = write_workbook(scenarios, tmp_path / "shipped.xlsx", cache_values=False)
    values = recalc_pycel(path)
    reference = {s.name: compute(s) for s in scenarios}
    bad = mismatches(values, reference)
    assert not bad, f"{spec.name}: pycel differs:\n" + "\n".join(bad[:20])


def test_price_edit_on_presets_reranks(tmp_path: Path) -> None:
    import openpyxl

    s = load_scenarios(ROOT / "presets/scenarios/default.yaml")[0]
    path = write_workbook([s], tmp_path / "price.xlsx")
    before = compute(s)
    first = next(n for n in range(1, HARDWARE_SLOTS + 1) if before[f"hw_rank_{n}"] == 1)
    assert before[f"hw_id_{first}"] != s.hardware.id  # another accelerator is cheapest
    # Make the cheapest accelerator ten times the price of the scenario's own.
    wb = openpyxl.load_workbook(path)
    ws = wb["Presets"]
    head = next(r for r in range(1, ws.max_row + 1) if ws.cell(row=r, column=1).value == "id"
                and ws.cell(row=r, column=3).value == "peak_bf16_tflops")  # fmt: skip
    cols = {ws.cell(row=head, column=c).value: c for c in range(1, ws.max_column + 1)}
    row = next(r for r in range(head + 1, head + 1 + HARDWARE_SLOTS)
               if ws.cell(row=r, column=1).value == before[f"hw_id_{first}"])  # fmt: skip
    ws.cell(row=row, column=cols["price_per_gpu_hour"]).value = 10 * s.run.price_per_gpu_hour
    wb.save(path)
    values = recalc_pycel(path)
    (edited,) = scenario_results(path)
    after = compute(edited)
    assert after[f"hw_rank_{first}"] != 1
    assert after["hw_cheapest"] != before["hw_cheapest"]
    bad = mismatches(values, {s.name: after})
    assert not bad, "after the price edit:\n" + "\n".join(bad[:20])


@pytest.mark.libreoffice
def test_team_workbook_checks_clean_in_libreoffice_without_the_team_folder(
    env_team, tmp_path, monkeypatch
) -> None:
    """LibreOffice equals the reference on every key, and `check` needs no team folder:
    the Hardware sheet's reference reads the workbook's own Presets hardware table."""
    from sheetgen.checking.check import check_workbook

    scenarios = load_scenarios(ROOT / "presets/scenarios/default.yaml")
    scenarios.append(
        scenario_from_dict({"name": "team", "model": "llama3-8b", "hardware": "team-h100"})
    )
    path = write_workbook(scenarios, tmp_path / "team.xlsx", cache_values=False)
    values = libreoffice_values(path)
    bad = mismatches(values, {s.name: compute(s) for s in scenarios})
    assert not bad, "LibreOffice differs:\n" + "\n".join(bad[:20])
    monkeypatch.delenv("SHEETGEN_PRESETS")
    presets.clear_caches()
    report = check_workbook(path, engine="libreoffice", timeout=240)
    hardware = [f for f in report.problems if f.sheet == "Hardware"]
    assert not hardware, hardware[:5]


def test_an_unfinished_custom_row_breaks_nothing(tmp_path: Path) -> None:
    """A user typing a new accelerator into an empty Presets row, id first: its slot
    shows the id and does not run; no error value reaches the checks."""
    import openpyxl
    from helpers import is_error

    s = load_scenarios(ROOT / "presets/scenarios/default.yaml")[0]
    path = write_workbook([s], tmp_path / "custom.xlsx")
    wb = openpyxl.load_workbook(path)
    ws = wb["Presets"]
    head = next(r for r in range(1, ws.max_row + 1) if ws.cell(row=r, column=1).value == "id"
                and ws.cell(row=r, column=3).value == "peak_bf16_tflops")  # fmt: skip
    empty = next(r for r in range(head + 1, head + 1 + HARDWARE_SLOTS)
                 if ws.cell(row=r, column=1).value is None)  # fmt: skip
    ws.cell(row=empty, column=1).value = "my-chip"
    wb.save(path)
    values = recalc_pycel(path)
    n = empty - head
    assert values[("Hardware", f"hw_id_{n}", s.name)] == "my-chip"
    assert values[("Hardware", f"hw_runs_{n}", s.name)] == 0
    assert values[("Hardware", f"hw_rank_{n}", s.name)] == "–"
    errors = {k: v for k, v in values.items() if is_error(v)}
    assert not errors, list(errors.items())[:5]
    assert values[("Checks", "chk_no_errors", s.name)] == 1


# Presets whose capacity is a published driver measurement (docs/DESIGN.md, "GPU memory
# capacity"); the rest keep the datasheet's figure, which under-states.
MEASURED_MEMORY = {
    "h100-sxm",
    "h100-pcie",
    "h800",
    "a100-80gb",
    "a100-40gb",
    "h200",
    "b200",
    "l40s",
    "rtx-4090",
    "mi300x",
}


@pytest.mark.parametrize("hw_id", sorted(presets.hardware()))
def test_memory_is_what_the_driver_reports_where_it_is_published(hw_id: str) -> None:
    """A measured preset's source prints the driver's "N MiB = X GB"; its mem_gb is X,
    and X is N MiB in decimal GB. Any other names the datasheet figure it carries."""
    hw = presets.hardware()[hw_id]
    source = dict(hw.sources)["mem_gb"]
    measured = re.search(r"([\d,]+) MiB = ([\d.]+) GB", source)
    assert bool(measured) == (hw_id in MEASURED_MEMORY), f"{hw_id}: {source}"
    if measured:
        mib, gb = int(measured[1].replace(",", "")), float(measured[2])
        assert hw.mem_gb == gb, f"{hw_id}: mem_gb {hw.mem_gb}, its source says {gb} GB"
        # N MiB in GB, cut (not rounded) to two decimals as the measurement prints it
        assert 0 <= mib * 2**20 / 1e9 - gb < 0.01, f"{hw_id}: {mib} MiB is not {gb} GB"
    else:
        assert f"{hw.mem_gb:g} GB" in source, f"{hw_id}: {hw.mem_gb} not in {source}"
