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
from collections.abc import Iterator, Sequence
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
    while True:
        name = cell(header, c)
        if _is_blank(name) or name == HEADER_END:
            break
        scenarios.append((c, name if isinstance(name, str) else str(name)))
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
            rows = [list(r) for r in ws.iter_rows(values_only=True)]
            out.update(layout_values(ws.title, rows))
    return out
