"""`sheetgen check`, `sheetgen inputs` and `generate --from` on edited and broken workbooks."""

from __future__ import annotations

import hashlib
import os
import re
import zipfile
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from conftest import fast_engine
from helpers import mismatches

from sheetgen.checking.check import check_workbook
from sheetgen.checking.recalc import values_libreoffice
from sheetgen.cli.commands import main
from sheetgen.readback.access import scenarios_from_workbook
from sheetgen.reference import compute
from sheetgen.scenarios.files import default_scenario_path, load_scenarios
from sheetgen.workbook import write_workbook

ENGINES = ["libreoffice", "pycel"]
# The engine for the tests that need one engine only (the cheapest: Gnumeric, else
# pycel; every engine checks an untouched workbook in test_untouched_workbook_passes,
# and LibreOffice and pycel each check the edits parametrised over ENGINES).
ONE_ENGINE = fast_engine()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("check")
    return write_workbook(load_scenarios(default_scenario_path()), folder / "plan.xlsx")


@pytest.fixture
def book(pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "plan.xlsx"
    copy.write_bytes(pristine.read_bytes())
    return copy


def rows_of(ws) -> dict[str, int]:
    return {ws.cell(row=r, column=1).value: r for r in range(1, ws.max_row + 1)}


def edit(path: Path, fn) -> None:
    wb = openpyxl.load_workbook(path)
    fn(wb)
    wb.save(path)


def set_cell(path: Path, sheet: str, key: str, column: int, value) -> None:
    """Type ``value`` into ``key``'s row of ``sheet``, in ``column`` (4: the first plan)."""
    edit(path, lambda wb: wb[sheet].cell(row=rows_of(wb[sheet])[key], column=column, value=value))


def engine_ready(engine: str) -> None:
    if engine == "libreoffice":
        from conftest import require_libreoffice

        require_libreoffice()
    if engine == "gnumeric":
        from conftest import require_gnumeric

        require_gnumeric()


def keyed_cells(n_scenarios: int) -> int:
    """Every keyed row of every sheet, once per scenario column."""
    from sheetgen.workbook.templates import load_templates

    return n_scenarios * sum(len(t.keyed_rows) for t in load_templates())


def kinds(report, key: str | None = None) -> set[str]:
    return {f.kind for f in report.problems if key is None or f.key == key}


@pytest.mark.parametrize("engine", [*ENGINES, "gnumeric"])
def test_untouched_workbook_passes(book: Path, engine: str) -> None:
    engine_ready(engine)
    before = hashlib.sha256(book.read_bytes()).hexdigest()
    mtime = os.stat(book).st_mtime_ns
    report = check_workbook(book, engine=engine)
    assert report.problems == [], report.problems
    assert report.cells_compared == keyed_cells(len(report.scenarios))
    assert hashlib.sha256(book.read_bytes()).hexdigest() == before
    assert os.stat(book).st_mtime_ns == mtime
    from sheetgen.reference.checks import VERDICT_TESTS, WARNING_FLAGS

    expected_warnings = {
        (key, s.name)
        for s in load_scenarios(default_scenario_path())
        for key, value in compute(s).items()
        if key in (*WARNING_FLAGS, *VERDICT_TESTS, "plan_ok") and value == 0
    }
    assert {(f.key, f.scenario) for f in report.findings} == expected_warnings
    assert all(f.kind == "warning" for f in report.findings)


def test_formulas_engine_checks_a_one_scenario_workbook(tmp_path: Path) -> None:
    """`--engine formulas` (slow: about 8 s per scenario column) on one scenario."""
    first = load_scenarios(default_scenario_path())[0]
    book = write_workbook([first], tmp_path / "one.xlsx")
    report = check_workbook(book, engine="formulas")
    assert report.problems == [], report.problems
    assert report.cells_compared == keyed_cells(1)
    edit(
        book,
        lambda wb: wb["Schedule"].cell(
            row=rows_of(wb["Schedule"])["train_days"], column=4, value=1
        ),
    )
    assert "constant" in kinds(check_workbook(book, engine="formulas"), "train_days")


def test_a_file_saved_without_results_is_one_warning(book: Path) -> None:
    """openpyxl (like any program that does not calculate) saves formulas without their
    results: pandas and mail previews then show blanks. One warning says so and counts
    them; it is not a problem (the formulas are right) and the exit code stays 0."""
    engine_ready(ONE_ENGINE)
    edit(book, lambda wb: None)  # opened and saved, nothing changed
    report = check_workbook(book, engine=ONE_ENGINE)
    assert report.problems == [], report.problems
    unstored = [f for f in report.findings if f.kind == "no stored values"]
    assert len(unstored) == 1, report.findings
    assert re.match(r"[\d,]+ formula cells \(", unstored[0].detail), unstored[0].detail
    assert "pandas and mail previews show them blank" in unstored[0].detail
    from sheetgen.checking.findings import render_report

    assert "WARN no stored values: " in render_report(report, "table")


def test_choices_in_another_case_and_a_cross_field_error(book: Path) -> None:
    """'Typed' is the typed clock to the formulas (Excel's = ignores case) and to the
    reader, so check does not call it a changed value; a cross-field error names its key
    once ("Inputs mfu_source", not "Inputs Inputs column E ….mfu_source")."""
    engine_ready(ONE_ENGINE)

    def typed(wb):
        ws = wb["Inputs"]
        ws.cell(row=rows_of(ws)["mfu_source"], column=4).value = "Typed"
        ws.cell(row=rows_of(ws)["mfu_source"], column=5).value = "measured"

    edit(book, typed)
    report = check_workbook(book, engine=ONE_ENGINE)
    first, second = report.scenarios[:2]
    assert not [f for f in report.problems if f.scenario == first], report.problems
    invalid = [(f.sheet, f.key, f.scenario) for f in report.problems if f.kind == "input invalid"]
    assert invalid == [("Inputs", "mfu_source", second)], invalid


def test_a_serving_tp_that_splits_heads_is_refused_and_warned(book: Path) -> None:
    """inf_tp 3 on a 32-head model, typed past the validation: the reader refuses it in
    one line (as `--inf-tp 3` exits 2) and the Checks sheet's warning turns 0."""
    engine_ready(ONE_ENGINE)
    set_cell(book, "Inputs", "inf_tp", 4, 3)
    report = check_workbook(book, engine=ONE_ENGINE)
    first = report.scenarios[0]
    found = {(f.kind, f.key, f.scenario) for f in report.findings}
    assert ("input invalid", "inf_tp", first) in found, sorted(found)
    assert ("warning", "chk_serve_tp_divides_heads", first) in found, sorted(found)
    invalid = next(f for f in report.problems if f.key == "inf_tp")
    assert "does not divide the 32 query heads" in invalid.detail


def test_a_duplicate_name_is_the_one_problem(book: Path) -> None:
    """Two columns of one name: the duplicate is reported and nothing else (the engines
    key their values by name, so comparing the rest would mix the two columns)."""
    engine_ready(ONE_ENGINE)

    def duplicate(wb):
        ws = wb["Inputs"]
        row = rows_of(ws)["scenario_name"]
        ws.cell(row=row, column=5).value = ws.cell(row=row, column=4).value

    edit(book, duplicate)
    report = check_workbook(book, engine=ONE_ENGINE)
    assert [(f.kind, f.key) for f in report.problems] == [("input invalid", "scenario_name")]
    assert "is also the name in column D" in report.problems[0].detail
    assert report.cells_compared == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_value_pasted_over_formula(book: Path, engine: str) -> None:
    engine_ready(engine)
    set_cell(book, "Memory", "mem_total", 4, 123_000_000_000)
    report = check_workbook(book, engine=engine)
    found = {(f.kind, f.sheet, f.key, f.scenario) for f in report.problems}
    first = report.scenarios[0]
    assert ("constant", "Memory", "mem_total", first) in found
    assert ("value differs", "Memory", "mem_total", first) in found
    differs = next(f for f in report.problems if f.kind == "value differs" and f.key == "mem_total")
    assert differs.actual == 123_000_000_000
    assert differs.expected == pytest.approx(178.2e9, rel=1e-3)
    # Cells computed from it follow the pasted value and are reported too.
    assert ("value differs", "Summary", "mem_total", first) in found
    assert not any(f.scenario != first for f in report.problems)


@pytest.mark.parametrize("engine", ENGINES)
def test_formula_altered(book: Path, engine: str) -> None:
    engine_ready(engine)

    def alter(wb):
        ws = wb["Params"]
        cell = ws.cell(row=rows_of(ws)["params_total"], column=5)
        cell.value = cell.value + "*2"

    edit(book, alter)
    report = check_workbook(book, engine=engine)
    second = report.scenarios[1]
    changed = [f for f in report.problems if f.kind == "formula changed"]
    assert [(f.key, f.scenario) for f in changed] == [("params_total", second)]
    assert changed[0].actual.endswith("*2") and not changed[0].expected.endswith("*2")
    differs = {f.key for f in report.problems if f.kind == "value differs"}
    assert {"params_total", "mem_total", "flops_6n_per_token"} <= differs


def test_row_deleted(book: Path) -> None:
    def delete(wb):
        ws = wb["Params"]
        ws.delete_rows(rows_of(ws)["params_12lh2"])  # the sheet's last row: nothing shifts

    edit(book, delete)
    report = check_workbook(book, engine=ONE_ENGINE)
    assert [(f.kind, f.sheet, f.key) for f in report.problems] == [
        ("missing row", "Params", "params_12lh2")
    ]


def test_sheet_deleted(book: Path) -> None:
    edit(book, lambda wb: wb.remove(wb["KV cache"]))
    report = check_workbook(book, engine=ONE_ENGINE)
    assert ("missing sheet", "KV cache") in {(f.kind, f.sheet) for f in report.problems}


@pytest.mark.parametrize("engine", ENGINES)
def test_failing_check_and_invalid_input(book: Path, engine: str) -> None:
    engine_ready(engine)

    def bad_mfu(wb):
        ws = wb["Inputs"]
        ws.cell(row=rows_of(ws)["mfu"], column=6).value = 1.5  # typed past the validation

    edit(book, bad_mfu)
    report = check_workbook(book, engine=engine)
    third = report.scenarios[2]
    found = {(f.kind, f.key, f.scenario) for f in report.problems}
    assert ("check failed", "chk_mfu_range", third) in found
    assert ("input invalid", "mfu", third) in found
    invalid = next(f for f in report.problems if f.kind == "input invalid")
    assert "from 0.0001 to 1" in invalid.detail


def test_unknown_model_gives_error_values(book: Path) -> None:
    def unknown(wb):
        ws = wb["Inputs"]
        ws.cell(row=rows_of(ws)["model"], column=4).value = "llama-9"

    edit(book, unknown)
    report = check_workbook(book, engine=ONE_ENGINE)
    first = report.scenarios[0]
    assert ("check failed", "chk_model_found", first) in {
        (f.kind, f.key, f.scenario) for f in report.problems
    }
    # The error values that follow from the invalid model are one finding for the
    # scenario, after the input finding that explains them (not hundreds of lines).
    assert ("input invalid", "model", first) in {
        (f.kind, f.key, f.scenario) for f in report.problems
    }
    errors = [f for f in report.problems if f.kind == "error value"]
    assert [f.scenario for f in errors] == [first], errors
    assert re.match(r"[\d,]+ cells compute to error values, following from the invalid "
                    r"input: ", errors[0].detail), errors[0].detail  # fmt: skip
    assert "Inputs n_layers" in errors[0].detail or " more" in errors[0].detail


def test_a_name_typed_as_a_formula(book: Path, tmp_path: Path) -> None:
    """A scenario name a person types as a formula is the name it computes (every sheet's
    header shows that): the plan checks clean; a formula that computes an error is
    reported on the name's cell, not as every cell of the column gone blank."""
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(book.read_bytes())

    def named(formula):
        def fn(wb):
            ws = wb["Inputs"]
            ws.cell(row=rows_of(ws)["scenario_name"], column=4).value = formula

        return fn

    edit(book, named('="Team "&"A"'))
    report = check_workbook(book, engine=ONE_ENGINE)
    assert not report.problems, report.problems[:5]
    assert report.scenarios[0] == "Team A"
    edit(broken, named("=Team A's plan"))
    bad = check_workbook(broken, engine=ONE_ENGINE)
    assert ("error value", "scenario_name") in {(f.kind, f.key) for f in bad.problems}
    assert not any(f.kind == "blank" for f in bad.problems)
    assert len(bad.problems) < 50


def test_an_input_typed_as_a_formula_is_checked_as_it_computes(book: Path) -> None:
    """An input typed as a formula by a program that calculates nothing (openpyxl saves
    no result): check recalculates it anyway, so the plan is checked as the formula
    computes (64 GPUs), not reported as an input without a value."""

    def typed(wb):
        ws = wb["Inputs"]
        ws.cell(row=rows_of(ws)["n_gpus"], column=4).value = "=8*8"

    edit(book, typed)
    report = check_workbook(book, engine=ONE_ENGINE)
    assert not report.problems, report.problems[:5]
    first = load_scenarios(default_scenario_path())[0]
    assert first.run.n_gpus != 64  # the edit changed the plan, and the check followed it


def test_check_cli_exit_codes(book: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(main, ["check", str(book), "--engine", ONE_ENGINE])
    assert ok.exit_code == 0, ok.output
    n = len(load_scenarios(default_scenario_path()))
    last = ok.output.strip().splitlines()[-1]
    assert re.match(rf"OK(, \d+ warnings?)?: {keyed_cells(n):,} cells of {n} scenarios", last), last

    def paste(wb):
        ws = wb["Schedule"]
        ws.cell(row=rows_of(ws)["train_days"], column=4).value = 1

    edit(book, paste)
    bad = runner.invoke(main, ["check", str(book), "--engine", ONE_ENGINE, "--format", "json"])
    assert bad.exit_code == 1
    import json

    data = json.loads(bad.output)
    assert data["problems"] >= 2
    kinds_found = {(f["kind"], f["sheet"], f["key"]) for f in data["findings"]}
    assert ("constant", "Schedule", "train_days") in kinds_found


UNREADABLE = {
    "text file": lambda p: p.write_text("scenarios: []\n"),
    "truncated zip": lambda p: p.write_bytes(b"PK\x03\x04" + b"\x00" * 40),
    "encrypted": lambda p: p.write_bytes(bytes.fromhex("d0cf11e0a1b11ae1") + b"\x00" * 504),
    "zip without workbook": lambda p: zipfile.ZipFile(p, "w").writestr("hello.txt", "hi"),
    "other workbook": lambda p: openpyxl.Workbook().save(p),
}


@pytest.mark.parametrize("case", UNREADABLE)
@pytest.mark.parametrize("command", ["check", "inputs"])
def test_unreadable_files_exit_2(tmp_path: Path, case: str, command: str) -> None:
    path = tmp_path / "broken.xlsx"
    UNREADABLE[case](path)
    before = path.read_bytes()
    result = CliRunner().invoke(main, [command, str(path)])
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert line.startswith("error: ") and "\n" not in line and "Traceback" not in line
    assert path.read_bytes() == before
    result = CliRunner().invoke(
        main, ["generate", "--from", str(path), "-o", str(tmp_path / "o.xlsx")]
    )
    assert result.exit_code == 2


def test_missing_libreoffice_is_a_clear_error(book: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHEETGEN_SOFFICE", "/nonexistent/soffice")
    result = CliRunner().invoke(main, ["check", str(book)])
    assert result.exit_code == 2
    assert "libreoffice" in result.output.lower() and "\n" not in result.output.strip()


def test_hanging_libreoffice_times_out(
    book: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "soffice"
    fake.write_text(f"#!/bin/sh\necho $$ > {tmp_path}/pid\nexec sleep 60\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SHEETGEN_SOFFICE", str(fake))
    result = CliRunner().invoke(main, ["check", str(book), "--timeout", "1"])
    assert result.exit_code == 2
    assert "within" in result.output
    pid = int((tmp_path / "pid").read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()


def add_custom_model(wb, model_id: str = "my-13b") -> None:
    """Fill the first empty custom row of the Presets models table and pick it."""
    ws = wb["Presets"]
    header = next(r for r in range(1, ws.max_row + 1) if ws.cell(row=r, column=1).value == "id")
    cols = {ws.cell(row=header, column=c).value: c for c in range(1, ws.max_column + 1)}
    row = next(
        r for r in range(header + 1, ws.max_row + 1) if ws.cell(row=r, column=1).value is None
    )
    spec = {
        "id": model_id, "name": "My 13B", "n_layers": 40, "hidden_size": 5120, "n_heads": 40,
        "n_kv_heads": 8, "head_dim": 128, "ffn_size": 13824, "vocab_size": 100000,
        "tied_embeddings": 0, "pos_embeddings": 0, "qkv_bias": 0, "out_bias": 0, "mlp_bias": 0,
        "norm": "rmsnorm", "norms_per_layer": 2, "mlp": "gated", "dropout": 0, "n_experts": 0,
        "experts_per_token": 0, "n_shared_experts": 0, "moe_ffn_size": 0, "n_dense_layers": 0,
        "router_bias": 0, "q_lora_rank": 0, "kv_lora_rank": 0, "qk_nope_head_dim": 0,
        "qk_rope_head_dim": 0, "v_head_dim": 0,
    }  # fmt: skip
    for key, value in spec.items():
        ws.cell(row=row, column=cols[key]).value = value
    inputs = wb["Inputs"]
    r = rows_of(inputs)
    inputs.cell(row=r["model"], column=5).value = model_id
    inputs.cell(row=r["n_gpus"], column=4).value = 16
    inputs.cell(row=r["seq_len"], column=4).value = 2048
    inputs.cell(row=r["recompute"], column=6).value = "full"
    inputs.cell(row=r["mfu"], column=6).value = 0.38


@pytest.mark.libreoffice
def test_round_trip_edit_export_regenerate(lo, book: Path, tmp_path: Path) -> None:
    """generate → edit inputs, add a custom model → export → regenerate: same inputs, same values."""
    edit(book, add_custom_model)
    report = check_workbook(book)
    assert report.problems == [], report.problems

    runner = CliRunner()
    spec = tmp_path / "exported.yaml"
    out = runner.invoke(main, ["inputs", str(book), "-o", str(spec)])
    assert out.exit_code == 0, out.output
    regenerated = tmp_path / "regenerated.xlsx"
    out = runner.invoke(main, ["generate", str(spec), "-o", str(regenerated)])
    assert out.exit_code == 0, out.output
    via_from = tmp_path / "from.xlsx"
    out = runner.invoke(main, ["generate", "--from", str(book), "-o", str(via_from)])
    assert out.exit_code == 0, out.output

    edited = scenarios_from_workbook(book)
    assert scenarios_from_workbook(regenerated) == edited
    assert scenarios_from_workbook(via_from) == edited
    assert load_scenarios(spec) == edited
    assert edited[1].model.id == "my-13b" and edited[0].run.n_gpus == 16

    a = values_libreoffice(book)
    b = values_libreoffice(regenerated)
    assert set(a) == set(b)
    differ = [k for k in a if a[k] != b[k]]
    assert not differ, differ[:10]
    reference = {s.name: compute(s) for s in edited}
    assert not mismatches(b, reference)


def test_inputs_keeps_an_existing_file(book: Path, tmp_path: Path) -> None:
    target = tmp_path / "mine.yaml"
    target.write_text("my notes")
    result = CliRunner().invoke(main, ["inputs", str(book), "-o", str(target)])
    assert result.exit_code == 0 and "kept as" in result.output
    (kept,) = tmp_path.glob("mine.kept-*.yaml")
    assert kept.read_text() == "my notes" and target.read_text().startswith("# Scenarios")
    result = CliRunner().invoke(main, ["inputs", str(book)])
    assert result.exit_code == 0 and result.output.startswith("# Scenarios exported")


TYPED_PAST_VALIDATION = [
    ("n_gpus", 0, "chk_counts_valid"),
    ("seq_len", 2048.5, "chk_counts_valid"),
    ("micro_batch", "two", "chk_counts_valid"),
    ("recompute", "partial", "chk_choices_valid"),
    ("recipe", "fp4-adam", "chk_choices_valid"),
    ("price_per_gpu_hour", -1, "chk_amounts_valid"),
    ("causal_factor", 0, "chk_amounts_valid"),
    ("goodput", 1.2, "chk_goodput_range"),
    ("tp", 0, "chk_layout_counts_valid"),
    ("price_basis", "spot", "chk_choices_valid"),
    ("contingency", -0.1, "chk_amounts_valid"),
    ("phase_2_mfu", 1.5, "chk_phase_inputs_valid"),
]


@pytest.fixture(scope="module")
def typed_report(tmp_path_factory: pytest.TempPathFactory):
    """One workbook, one check: a column per case of TYPED_PAST_VALIDATION (copies of the
    first default scenario, named by the key), each with its value typed into that column
    only. Columns share no cells, so each case is checked as if it were alone."""
    folder = tmp_path_factory.mktemp("typed")
    first = load_scenarios(default_scenario_path())[0]
    from dataclasses import replace

    scenarios = [replace(first, name=key) for key, _, _ in TYPED_PAST_VALIDATION]
    book = write_workbook(scenarios, folder / "typed.xlsx")

    def typed(wb):
        ws = wb["Inputs"]
        rows = rows_of(ws)
        for column, (key, value, _flag) in enumerate(TYPED_PAST_VALIDATION, start=4):
            ws.cell(row=rows[key], column=column).value = value

    edit(book, typed)
    return check_workbook(book, engine=ONE_ENGINE)


@pytest.mark.parametrize(
    "key, value, flag", TYPED_PAST_VALIDATION, ids=[t[0] for t in TYPED_PAST_VALIDATION]
)
def test_invalid_typed_inputs_are_flagged(typed_report, key: str, value, flag: str) -> None:
    """Values data validation would stop, typed in anyway: Checks flags them, check reports them."""
    found = {(f.kind, f.key) for f in typed_report.problems if f.scenario == key}
    assert ("check failed", flag) in found, sorted(found)
    assert ("check failed", "checks_ok") in found
    # The reference cannot use the value (input invalid), or, in an unused phase slot that
    # the scenario does not read back, the cell differs from the slot's fixed default.
    assert ("input invalid", key) in found or ("value differs", key) in found
    # Nothing leaks into the columns of the other cases.
    others = [case[0] for case in TYPED_PAST_VALIDATION if case[0] != key]
    for other in others:
        assert ("input invalid", key) not in {
            (f.kind, f.key) for f in typed_report.problems if f.scenario == other
        }


def test_inputs_carry_data_validation(pristine: Path) -> None:
    wb = openpyxl.load_workbook(pristine)
    ws = wb["Inputs"]
    rows = rows_of(ws)
    by_row = {}
    for dv in ws.data_validations.dataValidation:
        for rng in dv.sqref.ranges:
            by_row[rng.min_row] = dv
    assert by_row[rows["n_gpus"]].type == "whole" and by_row[rows["n_gpus"]].formula1 == "1"
    assert by_row[rows["mfu"]].type == "custom"
    assert by_row[rows["recompute"]].type == "list"
    assert by_row[rows["model"]].formula1 == "list_models_id"  # a defined name (Excel)
    assert wb.defined_names["list_models_id"].attr_text.startswith("Presets!$A$")


SCENARIO_FILES = sorted((Path(__file__).parent.parent / "presets" / "scenarios").glob("*.yaml"))


@pytest.mark.parametrize("spec", SCENARIO_FILES, ids=[p.stem for p in SCENARIO_FILES])
def test_inputs_round_trip_every_shipped_scenario_file(spec: Path, tmp_path: Path) -> None:
    """Phases, sweeps, dates and layouts survive generate -> inputs -> load unchanged."""
    scenarios = load_scenarios(spec)
    book = write_workbook(scenarios, tmp_path / "book.xlsx")
    exported = tmp_path / "exported.yaml"
    result = CliRunner().invoke(main, ["inputs", str(book), "-o", str(exported)])
    assert result.exit_code == 0, result.output
    assert load_scenarios(exported) == scenarios
