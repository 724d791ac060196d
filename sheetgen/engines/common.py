"""What every engine shares: the error type, the value shape and the layout reader.

Every engine returns values in the shape produced by :func:`read_values`:
``{(sheet_title, key, scenario_name): value}``, where each value is a plain
Python scalar (``int``, ``float``, ``str``, ``bool``, ``None``) and error values
are their strings such as ``"#DIV/0!"``.

Dates (cells with a date number format, which openpyxl reads as ``datetime``)
are returned as serial numbers of the Excel 1900 date system (45658 =
2025-01-01), the numbers the formulas compute with.

Workbook layout read (every sheet sheetgen writes): the header row is the first
of rows 1..10 whose column A is exactly ``key``; columns B and C hold
``quantity`` and ``unit``; columns D, E, ... hold scenario names up to (not
including) the first header cell that is ``formula in words`` or empty. Every
row below the header whose column A is a non-empty string is a data row keyed by
that string (a later duplicate key overwrites an earlier one); rows with empty
column A are section headings and are skipped. Sheets without a header row are
skipped.

openpyxl is imported lazily, so importing this module is cheap.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from sheetgen.workbook.grid import FIRST_SCENARIO_COL

Values = dict[tuple[str, str, str], object]

HEADER_KEY = "key"
HEADER_END = "formula in words"
HEADER_SEARCH_ROWS = 10


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


def _is_blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and value.strip() == "")


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
    """Apply the sheetgen layout rules to one sheet given as a 2-D list of values.

    ``rows[r][c]`` is the value of the cell at 0-based row ``r`` and column ``c``.
    """

    def cell(r: int, c: int) -> object:
        if r < len(rows) and c < len(rows[r]):
            return rows[r][c]
        return None

    header = next(
        (r for r in range(min(HEADER_SEARCH_ROWS, len(rows))) if cell(r, 0) == HEADER_KEY),
        None,
    )
    if header is None:
        return {}

    scenarios: list[tuple[int, str]] = []
    c = FIRST_SCENARIO_COL - 1
    # Scenario columns run up to HEADER_END: a blank header among them is a column
    # (named ""), never the end of the scenarios (as in workbook_read.sheet_layout).
    width = len(rows[header])
    has_end = HEADER_END in rows[header]
    while c < width:
        name = cell(header, c)
        if name == HEADER_END or (_is_blank(name) and not has_end):
            break
        scenarios.append((c, "" if _is_blank(name) else str(name)))
        c += 1

    out: Values = {}
    for r in range(header + 1, len(rows)):
        key = cell(r, 0)
        if not isinstance(key, str) or key.strip() == "":
            continue
        for col, scenario in scenarios:
            out[(title, key, scenario)] = serial(cell(r, col))
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
    import openpyxl

    with warnings.catch_warnings():
        # e.g. "Data Validation extension is not supported and will be removed"
        warnings.simplefilter("ignore", UserWarning)
        wb = openpyxl.load_workbook(path, data_only=data_only)
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
