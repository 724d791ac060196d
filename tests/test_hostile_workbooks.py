"""Issue 26.6: the Presets and Inputs sheets are user-editable, so every cell read
from them is checked (sheet, cell and column named in one line), duplicates are
refused, a blank header keeps the scenarios to its right, `inputs` exports exactly
what the workbook computes, and a note at Presets!A100000 stays fast."""

from __future__ import annotations

import functools
from pathlib import Path

import openpyxl
import pytest
from hostile_helpers import one_line

from sheetgen.errors import SheetgenError
from sheetgen.readback.access import read_tables, scenario_results, scenarios_from_workbook
from sheetgen.scenarios.files import default_scenario_path, load_scenarios
from sheetgen.workbook import write_workbook


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wb")
    scenarios = load_scenarios(default_scenario_path())[:2]
    return write_workbook(scenarios, folder / "two.xlsx")


def _table_rows(path: Path) -> dict:
    return _read_table_rows(path, *_version(path))


def _version(path: Path) -> tuple[int, int]:
    """What the memo of a file's reading is keyed on besides its path: a file written
    again reads again."""
    st = path.stat()
    return st.st_mtime_ns, st.st_size


@functools.lru_cache(maxsize=8)
def _read_table_rows(path: Path, _mtime: int, _size: int) -> dict:
    """The Presets tables of ``path``, read once per version of the file (every case
    of this module looks its cell up in the same module-scoped workbook)."""
    wb = openpyxl.load_workbook(path)
    cached = openpyxl.load_workbook(path, data_only=True)
    return read_tables(wb["Presets"], cached["Presets"])


def _cell(path: Path, table: str, row_id: str, column: str) -> str:
    """The A1 address of one column of one row of a Presets table."""
    from openpyxl.utils import get_column_letter

    row = next(r for r in _table_rows(path)[table] if str(r["id"]) == row_id)
    keys = [k for k in row if k != "_row"]
    return f"{get_column_letter(keys.index(column) + 1)}{row['_row']}"


def _edit(src: Path, dst: Path, sheet: str, address: str, value) -> Path:
    """``src`` with one cell set to ``value``, saved by openpyxl as ``dst``.  The source
    is loaded once per version of the file (``_loaded``) and the cell put back after
    saving, so each case pays for one save, not a load and a save."""
    ws = _loaded(src, *_version(src))[sheet]
    cell = ws[address]
    existed = (cell.row, cell.column) in ws._cells and cell.value is not None
    before = cell.value
    cell.value = value
    try:
        ws.parent.save(dst)
    finally:
        cell.value = before
        if not existed:
            del ws._cells[(cell.row, cell.column)]
    return dst


@functools.lru_cache(maxsize=2)
def _loaded(path: Path, _mtime: int, _size: int):
    return openpyxl.load_workbook(path)


def _first_error(path: Path) -> str:
    try:
        results = scenario_results(path)
    except SheetgenError as e:
        return f"error: {e}"
    errors = [r for r in results if isinstance(r, SheetgenError)]
    assert errors, "the bad cell was used silently"
    return f"error: {errors[0]}"


KINDS = {"empty": None, "text": "abc", "negative": -2, "1e308": 1e308, "true": True}


@pytest.fixture(scope="module")
def used(book: Path) -> dict:
    s = load_scenarios(default_scenario_path())[0]
    return {"recipe": s.run.recipe, "model": s.model.id, "hardware": s.hardware.id}


# (table, row id (from the scenario), column, kinds that must be refused)
CELLS = {
    "recipe weight_bytes": ("recipes", "recipe", "weight_bytes", [*KINDS]),
    "recipe optimizer_bytes": ("recipes", "recipe", "optimizer_bytes", [*KINDS]),
    "dtype bytes": ("dtypes", "bf16", "bytes", [*KINDS, "zero"]),
    "model n_layers": ("models", "model", "n_layers", [*KINDS, "zero"]),
    "model hidden_size": ("models", "model", "hidden_size", [*KINDS, "zero"]),
    "hardware mem_gb": ("hardware", "hardware", "mem_gb", [*KINDS, "zero"]),
    "hardware peak_bf16_tflops": ("hardware", "hardware", "peak_bf16_tflops", [*KINDS, "zero"]),
}
CASES = [(c, k) for c, (_, _, _, kinds) in CELLS.items() for k in kinds]


@pytest.mark.parametrize(("case", "kind"), CASES, ids=[f"{c}-{k}" for c, k in CASES])
def test_bad_presets_cells_name_the_cell(
    case: str, kind: str, book: Path, used: dict, tmp_path: Path
) -> None:
    table, rid, column, _ = CELLS[case]
    row_id = used.get(rid, rid)
    address = _cell(book, table, row_id, column)
    value = 0 if kind == "zero" else KINDS[kind]
    bad = _edit(book, tmp_path / "bad.xlsx", "Presets", address, value)
    line = _first_error(bad)
    assert f"Presets!{address}" in line and column in line, line
    assert "\n" not in line and len(line) <= 300, line


def test_zero_recipe_bytes_are_a_correct_result(book: Path, used: dict, tmp_path: Path) -> None:
    """0 bytes is a valid recipe entry (no gradients kept): used, not refused."""
    address = _cell(book, "recipes", used["recipe"], "grad_accum_bytes")
    edited = _edit(book, tmp_path / "zero.xlsx", "Presets", address, 0)
    s = scenarios_from_workbook(edited)[0]
    assert s.tables.recipe(used["recipe"]).grad_accum_bytes == 0


def test_duplicated_model_id_row_is_refused(book: Path, used: dict, tmp_path: Path) -> None:
    rows = _table_rows(book)["models"]
    last = max(r["_row"] for r in rows)
    wb = openpyxl.load_workbook(book)
    ws = wb["Presets"]
    src = next(r["_row"] for r in rows if r["id"] == used["model"])
    for c in range(1, len(rows[0])):
        ws.cell(row=last + 1, column=c, value=ws.cell(row=src, column=c).value)
    ws.cell(row=last + 1, column=1, value=used["model"].upper())
    wb.save(tmp_path / "dup.xlsx")
    one_line(["inputs", str(tmp_path / "dup.xlsx")], expect="is also on row")
    one_line(["generate", "--from", str(tmp_path / "dup.xlsx"), "-o", str(tmp_path / "o.xlsx")],
             expect="is also on row")  # fmt: skip


def _inputs_row(path: Path, key: str) -> int:
    return _read_inputs_rows(path, *_version(path))[key]


@functools.lru_cache(maxsize=8)
def _read_inputs_rows(path: Path, _mtime: int, _size: int) -> dict:
    """{key: row} of the Inputs sheet (column A, rows 1-399), read once per version."""
    ws = openpyxl.load_workbook(path)["Inputs"]
    rows: dict = {}
    for r in range(1, 400):
        rows.setdefault(ws.cell(row=r, column=1).value, r)
    return rows


def test_two_scenarios_with_one_name_are_refused(book: Path, tmp_path: Path) -> None:
    row = _inputs_row(book, "scenario_name")
    name = openpyxl.load_workbook(book, data_only=True)["Inputs"].cell(row=row, column=4).value
    bad = _edit(book, tmp_path / "same.xlsx", "Inputs", f"E{row}", name)
    one_line(["inputs", str(bad)], expect="also the name in column D")


def test_blank_scenario_header_keeps_the_columns_to_its_right(book: Path, tmp_path: Path) -> None:
    ws_rows = openpyxl.load_workbook(book)["Inputs"]
    header = next(r for r in range(1, 11) if ws_rows.cell(row=r, column=1).value == "key")
    blank = _edit(book, tmp_path / "blank.xlsx", "Inputs", f"D{header}", None)
    assert len(scenarios_from_workbook(blank)) == 2
    from sheetgen.engines.common import layout_values

    rows = [["key", "q", "u", None, "b", "formula in words"], ["k_x", "", "", 1, 2, ""]]
    assert {s for (_, _, s) in layout_values("S", rows)} == {"", "b"}


def test_inputs_refuses_an_edited_recipe_it_cannot_export(
    book: Path, used: dict, tmp_path: Path
) -> None:
    address = _cell(book, "recipes", used["recipe"], "weight_bytes")
    edited = _edit(book, tmp_path / "edited.xlsx", "Presets", address, 3)
    one_line(["inputs", str(edited)], expect="recipe")
    s = scenarios_from_workbook(edited)[0]
    assert s.tables.recipe(used["recipe"]).weight_bytes == 3  # what generate --from uses


INPUT_KINDS = {"negative": -5, "1e308": 1e308, "text": "many", "empty": None}


@pytest.mark.parametrize("kind", INPUT_KINDS)
@pytest.mark.parametrize("key", ["n_gpus", "mfu", "price_per_gpu_hour", "pp_microbatches"])
def test_bad_inputs_cells_are_one_line(book: Path, key: str, kind: str, tmp_path: Path) -> None:
    row = _inputs_row(book, key)
    bad = _edit(book, tmp_path / "bad.xlsx", "Inputs", f"D{row}", INPUT_KINDS[kind])
    line = one_line(["inputs", str(bad)])
    assert key in line


@pytest.mark.parametrize(
    ("key", "formula"), [("scenario_name", '="Team "&"A"'), ("n_gpus", "=8*8")]
)
def test_a_formula_never_calculated_is_one_line(
    book: Path, key: str, formula: str, tmp_path
) -> None:
    """A script (openpyxl) types a formula into an input and saves: the file holds no
    result for it. `inputs` and `generate --from` say so on that cell, instead of
    exporting the default name "Scenario 1" or calling the cell empty."""
    row = _inputs_row(book, key)
    typed = _edit(book, tmp_path / "typed.xlsx", "Inputs", f"D{row}", formula)
    for args in (
        ["inputs", str(typed)],
        ["generate", "--from", str(typed), "-o", str(tmp_path / "o.xlsx")],
    ):
        line = one_line(args, expect=f"Inputs!D{row} ({key})")
        assert "formula with no computed value" in line and "LibreOffice" in line, line
    assert not (tmp_path / "o.xlsx").exists()


def _cells_visited(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> int:
    """How many worksheet cells a command asks for (openpyxl's ``Worksheet.cell``, and
    ``StoredSheet.cell`` of the reader of Inputs and Presets, which every row walk and
    range read goes through; loading a file binds its stored cells without them).  A
    reader that walked a sparse sheet row by row would ask for 100,000."""
    from openpyxl.worksheet.worksheet import Worksheet

    from sheetgen.readback.opening import StoredSheet

    count = [0]

    def counting(original):
        def cell(self, *a, **k):
            count[0] += 1
            return original(self, *a, **k)

        return cell

    with monkeypatch.context() as m:
        for sheet_class in (Worksheet, StoredSheet):  # full loads; the Inputs/Presets reader
            m.setattr(sheet_class, "cell", counting(sheet_class.cell))
        one_line(args, code=0)
    return count[0]


# A note far below the tables must not make a reader walk every row up to it (it once
# took minutes): counted in cells asked for, not timed (the machine's speed varies).
SPARSE_SLACK = 1000  # cells: the note's own row and column, far below the 100,000 a walk adds


@pytest.mark.parametrize("command", ["inputs", "generate --from"])
def test_note_at_row_100000_stays_fast(
    book: Path, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sparse = _edit(book, tmp_path / "sparse.xlsx", "Presets", "A100000", "a note")
    visited = []
    for path in (book, sparse):
        args = ["inputs", str(path)]
        if command != "inputs":
            args = ["generate", "--from", str(path), "-o", str(tmp_path / f"o-{path.stem}.xlsx")]
        visited.append(_cells_visited(monkeypatch, args))
    assert visited[1] <= visited[0] + SPARSE_SLACK, visited


def test_note_at_row_100000_checks_fast(
    book: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """check (pycel) on the sparse file asks for about the cells it asks for on the plain one."""
    sparse = _edit(book, tmp_path / "sparse.xlsx", "Presets", "A100000", "a note")
    visited = [
        _cells_visited(monkeypatch, ["check", str(path), "--engine", "pycel"])
        for path in (book, sparse)
    ]
    assert visited[1] <= visited[0] + SPARSE_SLACK, visited
