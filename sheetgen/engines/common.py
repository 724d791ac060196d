"""What every engine shares: the error type, the value shape and the layout reader.

Every engine returns values in the shape produced by :func:`read_values`:
``{(sheet_title, key, scenario_name): value}``, where each value is a plain
Python scalar (``int``, ``float``, ``str``, ``bool``, ``None``) and error values
are their strings such as ``"#DIV/0!"``.

Dates (cells with a date number format, which openpyxl reads as ``datetime``)
are returned as serial numbers of the Excel 1900 date system (45658 =
2025-01-01), the numbers the formulas compute with.

Workbook layout read (every sheet sheetgen writes): ``sheetgen.workbook.grid.
read_layout``, the one reader ``check`` and ``inputs`` use too (header row, scenario
columns, key rows; where a key appears twice its first row counts). Sheets without
a header row are skipped.

openpyxl is imported lazily, so importing this module is cheap.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from sheetgen.workbook.grid import read_layout

Values = dict[tuple[str, str, str], object]


class RecalcError(Exception):
    """A recalculation engine is missing, timed out, crashed or produced no output."""


def require_program(found: str | None, env_var: str, program: str, package: str) -> str:
    """``found`` (an executable's path), or a RecalcError saying why there is none:
    the ``env_var`` override is not an executable, or ``program`` is not installed."""
    if found is not None:
        return found
    import os

    hint = os.environ.get(env_var, "").strip()
    detail = f"{env_var}={hint!r} is not an executable" if hint else "not found"
    raise RecalcError(f"{program} {detail}; install {package} or set {env_var}")


def require_file(src: Path) -> Path:
    src = Path(src)
    if not src.is_file():
        raise FileNotFoundError(f"workbook not found: {src}")
    return src


def stored_cells(ws: object) -> list:
    """The cells an openpyxl sheet holds, without visiting (and creating) the empty
    ones ``iter_rows`` walks: a note at A100000 is one cell, not 100,000 rows."""
    cells = getattr(ws, "_cells", None)
    if cells is None:
        return [c for row in ws.iter_rows() for c in row if hasattr(c, "row")]  # type: ignore[attr-defined]
    return list(cells.values())


def grid_rows(ws: object, value: Callable[[Any], object] = lambda c: c.value) -> list[list]:
    """The sheet as ragged rows of ``value(cell)`` (None where no cell is stored), built
    from ``stored_cells``: what ``layout_values`` takes."""
    by_row: dict[int, dict[int, Any]] = {}
    for cell in stored_cells(ws):
        by_row.setdefault(cell.row, {})[cell.column] = cell
    rows: list[list] = []
    for r in range(1, max(by_row, default=0) + 1):
        row = by_row.get(r, {})
        rows.append(
            [value(row[c]) if c in row else None for c in range(1, max(row, default=0) + 1)]
        )
    return rows


def layout_values(title: str, rows: Sequence[Sequence[object]]) -> Values:
    """Apply the sheetgen layout rules (``grid.read_layout``) to one sheet given as a
    2-D list of values: ``rows[r][c]`` is the cell at 0-based row ``r``, column ``c``.
    """
    cells = {
        (r, c): v
        for r, row in enumerate(rows, start=1)
        for c, v in enumerate(row, start=1)
        if v is not None
    }
    layout = read_layout(cells)
    if layout is None:
        return {}
    out: Values = {}
    for key, r in layout.rows.items():
        for i, scenario in enumerate(layout.scenarios):
            out[(title, key, scenario)] = serial(cells.get((r, layout.first_col + i)))
    return out


def serial(value: object) -> object:
    """Dates come back as spreadsheet serial numbers (Excel 1900 date system), as stored.

    openpyxl turns a number in a date-formatted cell into a ``datetime``; sheetgen
    compares dates as the numbers the formulas compute with.
    """
    import datetime as dt

    if isinstance(value, (dt.datetime, dt.date)):
        from openpyxl.utils.datetime import to_excel

        return to_excel(value)
    return value


@contextlib.contextmanager
def open_workbook(path: Path, data_only: bool) -> Iterator[Any]:
    """openpyxl's whole workbook, its warnings silenced (``workbook_open.load_quietly``:
    e.g. "Data Validation extension is not supported"), closed when the block ends."""
    from sheetgen.readback.opening import load_quietly

    wb = load_quietly(path, data_only=data_only)
    try:
        yield wb
    finally:
        wb.close()


def read_values(path: Path) -> Values:
    """Read the cached values of a workbook laid out as sheetgen writes it.

    Opens ``path`` with openpyxl ``data_only=True`` (so formula cells give the
    value cached in the file, or ``None`` when the file carries none) and returns
    ``{(sheet_title, key, scenario_name): value}``; error values are strings such
    as ``"#DIV/0!"``.
    """
    path = Path(path)
    out: Values = {}
    with open_workbook(path, data_only=True) as wb:
        for ws in wb.worksheets:
            rows = grid_rows(ws)
            out.update(layout_values(ws.title, rows))
    return out
