"""Read a (possibly edited, possibly older) sheetgen workbook's cells, as typed.

The first of ``workbook_io``'s two jobs: with the file opened safely
(``workbook_open``; a file without sheetgen's sheets raises SheetgenError with one
line saying so), find each sheet's layout (header row, scenario columns,
key rows), and read the Inputs sheet's input cells (one column per scenario) and
the Presets lookup tables, including rows the user added.  Turning them into
scenarios is ``workbook_scenarios``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sheetgen.errors import SheetgenError, short
from sheetgen.readback.opening import open_sheets
from sheetgen.workbook.grid import SheetLayout, read_layout

REQUIRED_SHEETS = ("Inputs", "Presets")


def require_sheets(wb: Any, where: str) -> None:
    for name in REQUIRED_SHEETS:
        if name not in wb.sheetnames:
            raise SheetgenError(where, f"is not a sheetgen workbook: sheet {name!r} is missing")


def used_cells(ws: Any) -> dict[tuple[int, int], Any]:
    """{(row, column): value} of the cells the sheet holds, read once.

    Only the cells stored in the file are visited: a note typed at A100000 adds one
    entry, not 100,000 rows (``ws.cell`` creates every cell it is asked for, and
    ``ws.max_row`` scans all cells on each call, so a loop over rows is quadratic).
    """
    cells = getattr(ws, "_cells", None)
    if cells is None:
        cells = {(c.row, c.column): c for row in ws.iter_rows() for c in row if hasattr(c, "row")}
    return {rc: c.value for rc, c in cells.items() if c.value is not None}


def formula_cells(ws: Any) -> set[tuple[int, int]]:
    """(row, column) of the sheet's formula cells (their values come from the cached copy)."""
    cells = getattr(ws, "_cells", {})
    return {rc for rc, c in cells.items() if c.data_type == "f"}


def used_rows(cells: dict[tuple[int, int], Any], column: int = 1) -> list[int]:
    """Rows, in order, whose cell in ``column`` is not empty."""
    return sorted(r for (r, c), v in cells.items() if c == column and v != "")


def sheet_layout(ws: Any, cells: dict[tuple[int, int], Any] | None = None) -> SheetLayout | None:
    """The sheet's layout (``grid.read_layout``, the one reader) from its stored cells."""
    return read_layout(used_cells(ws) if cells is None else cells)


# Run settings the workbook derives with a formula (older workbooks had them as inputs):
# read only when typed, else the scenario derives them from the other inputs.
DERIVED_IN_WORKBOOK = frozenset({"dp", "train_tokens"})


def scenario_names(wb: Any, cached: Any | None = None) -> list[str]:
    """Scenario names in column order: the Inputs ``scenario_name`` row (typed, or the
    cached value of a formula), else the Inputs header row of an older workbook."""
    ws = wb["Inputs"]
    layout = sheet_layout(ws)
    if layout is None:
        return []
    row = layout.rows.get("scenario_name", layout.header_row)
    names = []
    for i in range(len(layout.scenarios)):
        col = layout.first_col + i
        cell = ws.cell(row=row, column=col)
        value = cell.value
        if cell.data_type == "f" and cached is not None:
            value = cached["Inputs"].cell(row=row, column=col).value
        names.append("" if value is None else str(value))
    return names


@dataclass
class TableBlock:
    """One Presets table as the sheet holds it."""

    name: str | None  # the TABLE_COLUMNS table its first columns match, else None
    header_row: int
    headers: list[str]  # the headings up to (not including) "source"
    last_row: int  # the last data row (unused custom rows included); header_row if none


def table_blocks(cells: dict[tuple[int, int], Any]) -> list[TableBlock]:
    """Every table of a Presets sheet's stored cells (the one reader of its layout, for
    ``read_tables`` and ``check``): a header row whose column A is ``id``, its
    headings up to ``source``, data rows until a blank row."""
    from sheetgen.workbook.layout import TABLE_COLUMNS

    by_first_cols = {cols[:3]: name for name, cols in TABLE_COLUMNS.items()}
    blocks = []
    for start in [r for r in used_rows(cells) if cells[(r, 1)] == "id"]:
        headers = []
        c = 1
        while cells.get((start, c)) not in (None, "source"):
            headers.append(str(cells[(start, c)]))
            c += 1
        name = next(
            (n for cols, n in by_first_cols.items() if tuple(headers[: len(cols)]) == cols),
            None,
        )
        last = start
        # Data rows (unused custom rows included) run until the blank separator row.
        while any(cells.get((last + 1, c)) not in (None, "") for c in range(1, len(headers) + 2)):
            last += 1
        blocks.append(TableBlock(name, start, headers, last))
    return blocks


def read_tables(ws: Any, cached: Any | None = None) -> dict[str, list[dict[str, Any]]]:
    """The Presets sheet's tables (``table_blocks``): {table: [row dict, ...]} keyed by
    header names; rows with an empty id (unused custom rows) are skipped.  Formula
    cells take their cached value from ``cached`` (the same sheet read data-only).
    """
    tables: dict[str, list[dict[str, Any]]] = {}
    cells = used_cells(ws)
    formulas = formula_cells(ws)
    stored = used_cells(cached) if cached is not None else {}
    for block in table_blocks(cells):
        rows = []
        for r in range(block.header_row + 1, block.last_row + 1):
            values = {}
            for c, h in enumerate(block.headers, start=1):
                v = cells.get((r, c))
                if (r, c) in formulas and cached is not None:
                    v = stored.get((r, c))
                values[h] = v
            values["_row"] = r
            if values.get("id") not in (None, ""):
                rows.append(values)
        if block.name is not None:
            if block.name in tables:
                raise SheetgenError(
                    f"{ws.title}!A{block.header_row}",
                    f"a second {block.name} table; keep one header row",
                )
            tables[block.name] = rows
    return tables


def _clean(v: Any) -> Any:
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


@dataclass
class WorkbookInputs:
    """What a workbook says: scenario names and, per scenario, its input values."""

    names: list[str]
    values: list[dict[str, Any]]  # per scenario: input key -> value
    tables: dict[str, list[dict[str, Any]]]
    # per scenario: the first input cell that is empty or not a number, else None
    problems: list[SheetgenError | None] = field(default_factory=list)


NUMERIC_KINDS = ("int", "float", "fraction", "share")


# A formula the file holds no result for: the last program to save it (openpyxl, a
# script) wrote the formula but did not calculate it.
NOT_CALCULATED = (
    "is a formula with no computed value (the file was last saved by a program that "
    "does not calculate); open and save it in Excel or LibreOffice, or type the value"
)


def input_cell(ws: Any, cached: Any, row: int, col: int, key: str, numeric: bool) -> Any:
    """The value of one input cell (a formula's cached result), or a SheetgenError naming
    the sheet, cell and key when it is empty, a formula never calculated or, for a
    number, holds text or an error: ``generate --from`` must not quietly substitute a
    default."""
    cell = ws.cell(row=row, column=col)
    at = f"{ws.title}!{cell.coordinate} ({key})"
    v = _typed_or_calculated(cell, cached, at)
    if v is None or (isinstance(v, str) and not v.strip()):
        raise SheetgenError(
            at, "is empty; type a value (no default is assumed for an emptied cell)"
        )
    if numeric and (isinstance(v, bool) or not isinstance(v, (int, float))):
        raise SheetgenError(at, f"must be a number, got {short(v)}")
    return _clean(v)


def read_inputs(
    path: str | Path, books: tuple[Any, Any] | None = None, names: list[str] | None = None
) -> WorkbookInputs:
    """The input cells of every scenario column and the Presets tables, as typed.

    ``books``: ``path`` already opened, (formulas, data only), to read it once.
    ``names``: the scenario names when the caller knows them (``check``: as the
    recalculated Inputs row shows them); else the file's, a formula never calculated
    being an error on its column."""
    where = str(path)
    wb, cached = books or open_sheets(path, REQUIRED_SHEETS)
    require_sheets(wb, where)
    ws = wb["Inputs"]
    layout = sheet_layout(ws)
    if layout is None or not layout.scenarios:
        raise SheetgenError(where, "sheet 'Inputs' has no header row with scenario columns")
    from sheetgen.scenarios.run_fields import RUN_FIELDS

    wanted = ["model", "hardware", *RUN_FIELDS]
    missing = [k for k in ("model", "hardware") if k not in layout.rows]
    if missing:
        raise SheetgenError(where, f"sheet 'Inputs' has no row {missing[0]!r}")
    values = []
    problems: list[SheetgenError | None] = []
    for i, _name in enumerate(layout.scenarios):
        col = layout.first_col + i
        item: dict[str, Any] = {}
        problem = None
        try:
            if names is None:
                _name_calculated(ws, cached["Inputs"], layout, col)
            for key in wanted:
                if key not in layout.rows:
                    continue  # an older workbook without this input: the default applies
                row = layout.rows[key]
                if key in DERIVED_IN_WORKBOOK and ws.cell(row=row, column=col).data_type == "f":
                    continue  # the workbook's own formula: the scenario derives it too
                numeric = key in RUN_FIELDS and RUN_FIELDS[key][0] in NUMERIC_KINDS
                item[key] = input_cell(ws, cached["Inputs"], row, col, key, numeric)
            item.update(_list_inputs(ws, layout, col, cached["Inputs"]))
        except SheetgenError as e:
            problem = e
        values.append(item)
        problems.append(problem)
    tables = read_tables(wb["Presets"], cached["Presets"])
    return WorkbookInputs(
        names=scenario_names(wb, cached) if names is None else names,
        values=values,
        tables=tables,
        problems=problems,
    )


def _name_calculated(ws: Any, cached: Any, layout: SheetLayout, col: int) -> None:
    """A scenario name typed as a formula that was never calculated is a one-line error,
    not the default name "Scenario n" in its place (a blank name still takes it)."""
    row = layout.rows.get("scenario_name")
    if row is None:
        return
    cell = ws.cell(row=row, column=col)
    _typed_or_calculated(cell, cached, f"{ws.title}!{cell.coordinate} (scenario_name)")


def _typed_or_calculated(cell: Any, cached: Any, at: str) -> Any:
    """A cell's typed value, or a formula's cached result; a formula without one is a
    SheetgenError at ``at``."""
    if cell.data_type != "f":
        return cell.value
    v = cached.cell(row=cell.row, column=cell.column).value
    if v is None:
        raise SheetgenError(at, NOT_CALCULATED)
    return v


def _list_inputs(ws: Any, layout: SheetLayout, col: int, cached: Any) -> dict[str, Any]:
    """Phases (slots with tokens > 0) and sweep points, as a scenario file lists them."""
    from sheetgen.scenarios.run_fields import PHASE_FIELDS, PHASE_SLOTS, SWEEP_POINTS

    def cell(key: str) -> Any:
        if key not in layout.rows:
            return None  # an older workbook without this input: the default applies
        return input_cell(ws, cached, layout.rows[key], col, key, numeric=True)

    out: dict[str, Any] = {}
    phases = []
    for i in range(1, PHASE_SLOTS + 1):
        tokens = cell(f"phase_{i}_tokens")
        if tokens in (None, 0):
            continue  # an unused slot
        phase = {f: cell(f"phase_{i}_{f}") for f in PHASE_FIELDS}
        phases.append({k: v for k, v in phase.items() if v is not None})
    if phases:
        out["phases"] = phases
    for key, row in (("sweep_seq_lens", "sweep_seq"), ("sweep_gpus", "sweep_gpus")):
        points = [cell(f"{row}_{k}") for k in range(1, SWEEP_POINTS + 1)]
        if all(p is not None for p in points):
            out[key] = points
    return out
