"""pycel with formulas compiled by shape (sheetgen/engines/pycel_fast.py) against
pycel's plain path: the same Python for every formula cell and the same value for
every cell, on a generated workbook and on hand-made formulas whose Python
depends on where they are (which must stay on the plain path).

A pycel release that writes its Python differently, or drops what the fast path
relies on, fails here instead of changing values silently.
"""

from __future__ import annotations

import math
import re
import zipfile
from pathlib import Path

import pytest
from helpers import build_matrix

from sheetgen.engines import pycel_fast
from sheetgen.engines.inprocess import _pycel_compiler, recalc_pycel

pytest.importorskip("pycel")


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def _differences(plain: dict, fast: dict) -> list[str]:
    return [
        f"{key}: plain {plain.get(key, '<missing>')!r}, by shape {fast.get(key, '<missing>')!r}"
        for key in sorted(set(plain) | set(fast), key=str)
        if key not in plain or key not in fast or not _same(plain[key], fast[key])
    ]


@pytest.fixture(scope="module")
def one_scenario(tmp_path_factory: pytest.TempPathFactory) -> Path:
    items = [{"name": "S1", "model": "llama3-8b", "hardware": "h100-sxm", "n_gpus": 16}]
    return build_matrix(tmp_path_factory.mktemp("fast"), items, "one")[0]


def _python_by_cell(path: Path, fast: bool) -> dict[str, tuple[str, tuple]]:
    """Every formula cell's Python and needed addresses, as pycel builds its graph."""
    compiler = _pycel_compiler(path, plain=False)
    if fast:
        assert pycel_fast.install(compiler), "this pycel lacks what the fast path uses"
    addresses = [
        f"'{ws.title}'!{c.coordinate}"
        for ws in compiler.excel.workbook.worksheets
        for row in ws.iter_rows()
        for c in row
        if c.data_type == "f"
    ]
    from pycel.excelutil import AddressRange

    compiler._gen_graph(addresses)
    cells = [compiler.cell_map[str(AddressRange(a))] for a in addresses]
    return {
        str(c.address): (c.formula.python_code, tuple(c.formula.needed_addresses)) for c in cells
    }


def test_same_python_for_every_formula_cell(one_scenario: Path) -> None:
    pycel_fast.clear()
    before = pycel_fast.stats()
    fast = _python_by_cell(one_scenario, fast=True)
    used = pycel_fast.stats()["templated"] - before["templated"]
    plain = _python_by_cell(one_scenario, fast=False)
    assert set(fast) == set(plain)
    wrong = [a for a in plain if fast[a] != plain[a]]
    assert not wrong, (
        f"{len(wrong)} cells differ, e.g. {wrong[0]}: {fast[wrong[0]]} != {plain[wrong[0]]}"
    )
    # The comparison means something only if most cells came from a template.
    assert used > len(plain) // 2, f"only {used} of {len(plain)} formula cells from a template"


@pytest.fixture(scope="module")
def by_shape(one_scenario: Path) -> dict:
    """The workbook's values through the fast path, starting with no shape known."""
    pycel_fast.clear()
    return recalc_pycel(one_scenario)


def test_same_value_for_every_cell(one_scenario: Path, by_shape: dict) -> None:
    wrong = _differences(recalc_pycel(one_scenario, plain=True), by_shape)
    assert not wrong, f"{len(wrong)} cells differ: {wrong[:5]}"


def test_cached_values_are_not_read_back(
    one_scenario: Path, by_shape: dict, tmp_path: Path
) -> None:
    """A wrong cached value in the file does not reach the result (pycel's own
    loader would return it instead of evaluating the formula)."""
    from openpyxl import load_workbook

    stale = tmp_path / "stale.xlsx"
    hits = 0
    with zipfile.ZipFile(one_scenario) as zin, zipfile.ZipFile(stale, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.startswith("xl/worksheets/"):
                data, n = re.subn(rb"</f><v\s*/>", b"</f><v>12345</v>", data)
                hits += n
            zout.writestr(item, data)
    assert hits > 100, f"only {hits} formula cells given a cached value"
    cached = load_workbook(stale, data_only=True)
    assert any(c.value == 12345 for ws in cached.worksheets for row in ws.iter_rows() for c in row)
    wrong = _differences(by_shape, recalc_pycel(stale))
    assert not wrong, f"{len(wrong)} cells read back as cached: {wrong[:5]}"


def _position_book(path: Path) -> Path:
    """Formulas whose Python depends on the cell, or that use a defined name."""
    import openpyxl
    from openpyxl.workbook.defined_name import DefinedName

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Data"
    ws["H1"] = 3
    wb.defined_names["rate"] = DefinedName("rate", attr_text="Data!$H$1")
    for r in range(1, 6):
        ws[f"A{r}"] = r * 10
        ws[f"B{r}"] = f"=A{r}*2"
        ws[f"C{r}"] = "=ROW()"
        ws[f"D{r}"] = "=COLUMN()+ROW()"
        ws[f"E{r}"] = f"=SUM($A$1:A{r})"
        ws[f"F{r}"] = f'="A{r}"&A{r}'
        ws[f"G{r}"] = f"=rate*A{r}"
    other = wb.create_sheet("It's x")
    for r in range(1, 5):
        other[f"B{r}"] = r
        other[f"A{r}"] = f"=Data!B{r}+'It''s x'!B{r + 1}"
    wb.save(path)
    return path


def test_cell_dependent_formulas(tmp_path: Path) -> None:
    """ROW(), COLUMN(), a defined name, quoted sheets: right in every cell."""
    book = _position_book(tmp_path / "pos.xlsx")
    pycel_fast.clear()
    got = recalc_pycel(book)
    plain = recalc_pycel(book, plain=True)
    assert not _differences(plain, got)  # the sheets have no sheetgen layout: few keys
    compiler = _pycel_compiler(book, plain=False)
    assert pycel_fast.install(compiler)
    for r in range(1, 6):
        row = compiler.evaluate([f"Data!{col}{r}" for col in "BCDEFG"])
        assert list(row) == [r * 20, r, 4 + r, 5 * r * (r + 1), f"A{r}{r * 10}", 3 * r * 10]
    for r in range(1, 4):
        assert compiler.evaluate(f"'It''s x'!A{r}") == r * 20 + r + 1


@pytest.mark.parametrize(
    ("formula", "skeleton", "refs"),
    [
        ("=A1+$B$2*Inputs!C3", "=\x00+\x00*\x00", ["A1", "$B$2", "Inputs!C3"]),
        ("='My sheet'!D4:E$9", "=\x00", ["'My sheet'!D4:E$9"]),
        ('=IF(A1="B2",LOG10(C3),x_D5)', '=IF(\x00="B2",LOG10(\x00),x_D5)', ["A1", "C3"]),
        ("=train_days_1*1E5", "=train_days_1*1E5", []),
        ("=Tbl[D5]+2024!B3+A1", "=Tbl[D5]+2024!B3+\x00", ["A1"]),
    ],
)
def test_shape(formula: str, skeleton: str, refs: list[str]) -> None:
    assert pycel_fast.shape(formula) == (skeleton, refs)


def test_cycle_collector_is_restored(tmp_path: Path) -> None:
    """recalc_pycel pauses Python's cycle collector only for its own call."""
    import gc

    from sheetgen.engines.common import RecalcError

    book = _position_book(tmp_path / "pos.xlsx")
    recalc_pycel(book)
    assert gc.isenabled()
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"not a workbook")
    with pytest.raises(RecalcError):
        recalc_pycel(broken)
    assert gc.isenabled()
    gc.disable()
    try:
        recalc_pycel(book)
        assert not gc.isenabled(), "a caller's paused collector was switched on"
    finally:
        gc.enable()
