"""The Presets sheet's lookup tables read back as untrusted input (issue 26.6).

People edit these tables.  Every cell sheetgen uses from them is checked, and a bad
one is one line naming the sheet, the cell, the table, the row's id and the column:
an empty, text, zero, negative or 1e308 byte count, a model or hardware field out of
range, an id given twice (the workbook's case-insensitive MATCH uses the first row,
so the copy would differ from what the workbook computes).

Rows come from ``workbook_read.read_tables``: mappings of header -> value plus ``_row``
(the sheet row), so that each error can name its cell.
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

from sheetgen.errors import SheetgenError, short

ROW = "_row"
# Hardware-table columns that are not Hardware fields: the prices (the Hardware sheet's).
PRICE_COLUMNS = ("price_per_gpu_hour", "price_per_gpu_hour_reserved")
NOT_FIELDS = (ROW, *PRICE_COLUMNS)
# A byte count per value or per parameter above this is not a number format.
MAX_BYTES = 64


def _column(row: dict[str, Any], key: str) -> str:
    from openpyxl.utils import get_column_letter

    keys = [k for k in row if k != ROW]
    return get_column_letter(keys.index(key) + 1) if key in keys else "?"


def cell_name(where: str, table: str, row: dict[str, Any], key: str) -> str:
    """``<file>: Presets!C12 (recipes bf16-adam: weight_bytes)``."""
    return (
        f"{where}: Presets!{_column(row, key)}{row.get(ROW, '?')} "
        f"({table} {short(row.get('id'), 40)}: {key})"
    )


def by_id(rows: list[dict[str, Any]], table: str, where: str) -> dict[str, dict[str, Any]]:
    """Rows by id (text); an id given twice, or differing only in case, is refused."""
    out: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    for row in rows:
        rid = row["id"]
        if isinstance(rid, float) and rid.is_integer():
            rid = int(rid)
        text = str(rid)
        key = text.casefold()
        if key in first:
            raise SheetgenError(
                f"{where}: Presets!A{row.get(ROW, '?')}",
                f"{table} id {short(text)} is also on row {first[key]} (ids ignore case); the "
                "workbook's lookups use the first row: delete or rename one",
            )
        first[key] = row.get(ROW, 0)
        out[text] = row
    return out


def number(row: dict[str, Any], key: str, table: str, where: str, low_ok: bool) -> float:
    """A byte count: a number from 0 (or above 0) to MAX_BYTES; anything else names the cell."""
    at = cell_name(where, table, row, key)
    if key not in row:
        raise SheetgenError(at, "the column is missing from the table")
    v = row[key]
    if v is None or (isinstance(v, str) and not v.strip()):
        raise SheetgenError(at, "is empty; type the number of bytes")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SheetgenError(at, f"must be a number of bytes, got {short(v)}")
    if not math.isfinite(v) or v > MAX_BYTES or v < 0 or (v == 0 and not low_ok):
        rule = "from 0" if low_ok else "above 0"
        raise SheetgenError(at, f"must be {rule} to {MAX_BYTES} bytes, got {short(v)}")
    return int(v) if float(v).is_integer() else float(v)


def text(row: dict[str, Any], key: str, table: str, where: str, name: bool = True) -> str:
    from sheetgen.scenarios.limits import MAX_TEXT_CHARS, check_text

    v = row.get(key)
    v = "" if v is None else v if isinstance(v, str) else str(v)
    limit: dict[str, Any] = {} if name else {"max_chars": MAX_TEXT_CHARS, "name": False}
    return check_text(v, cell_name(where, table, row, key), **limit)


def recipes(rows: list[dict[str, Any]], where: str) -> tuple:
    from sheetgen.scenarios.scenario import Recipe

    names = [f.name for f in fields(Recipe) if f.name != "source"]
    numeric = [n for n in names if n.endswith("_bytes")]
    out = []
    for row in by_id(rows, "recipes", where).values():
        values: dict[str, Any] = {k: number(row, k, "recipes", where, True) for k in numeric}
        for key in (n for n in names if n not in numeric):
            values[key] = text(row, key, "recipes", where, name=key == "id")
        out.append(Recipe(**values))
    return tuple(out)


def dtypes(rows: list[dict[str, Any]], where: str) -> tuple:
    return tuple(
        (text(row, "id", "dtypes", where), number(row, "bytes", "dtypes", where, False))
        for row in by_id(rows, "dtypes", where).values()
    )


def preset(row: dict[str, Any], make: Any, table: str, where: str) -> Any:
    """A Model or Hardware from its row; a bad field names its cell."""
    spec = {k: _clean(v) for k, v in row.items() if v is not None and k not in NOT_FIELDS}
    prefix = f"{table} {short(row.get('id'), 40)}"
    try:
        return make(spec, prefix)
    except SheetgenError as e:
        key = e.field[len(prefix) + 1 :] if e.field.startswith(prefix + ".") else "id"
        raise SheetgenError(cell_name(where, table, row, key), e.message) from None


def _clean(v: Any) -> Any:
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def hardware_offers(rows: dict[str, dict[str, Any]], make_preset: Any) -> tuple:
    """The hardware table as the Hardware sheet compares it: ``(Hardware, on-demand price,
    reserved price)`` per row ``make_preset`` accepts (a row it refuses is left out: the
    Hardware sheet's formulas still show it, and ``check`` reports the difference).  A
    price that is not a number from 0 is 0, as the sheet's ``> 0`` test treats it."""
    out = []
    for row in rows.values():
        try:
            hw = make_preset(row)
        except SheetgenError:
            continue
        out.append((hw, *(_price(row.get(k)) for k in PRICE_COLUMNS)))
    return tuple(out)


def _price(v: Any) -> float:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0
    return float(v) if ok else 0.0
