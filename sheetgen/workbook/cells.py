"""User text in cells: always stored as text, never as a formula.

openpyxl turns any string that starts with ``=`` into a formula.  A scenario
named ``=HYPERLINK(...)`` or a model id ``=cmd|' /C calc'!A0`` would then run in
the reader's spreadsheet.  ``text_cell`` stores the string as a string (shared
string in the file) and sets the quote-prefix style for text an application
would read as a formula or a number sign when the cell is edited.
"""

from __future__ import annotations

from typing import Any

# Bound once here, not in _bind: an import statement in a function runs on every call
# (14,000 cells in the default workbook).
from openpyxl.cell.cell import Cell

# First characters a spreadsheet may treat as the start of a formula (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@")


def text_cell(cell: Any) -> Any:
    """Mark a cell holding a string as text (never a formula); other values untouched."""
    if isinstance(cell.value, str):
        cell.data_type = "s"
        if cell.value.startswith(FORMULA_STARTS):
            cell.quotePrefix = True
    return cell


def put_text(ws: Any, row: int, column: int, value: Any) -> Any:
    """``ws.cell(row, column, value)`` with strings stored as text."""
    cell = ws.cell(row=row, column=column)
    cell.value = value
    return text_cell(cell)


def put_formulas(ws: Any, row: int, first_column: int, formulas: list[str], style: Any) -> None:
    """Template formulas into consecutive cells of ``row``, each with a copy of ``style``.

    Only for formulas sheetgen's templates produce (never user text): each cell is
    made the way openpyxl's own reader binds a cell it read, without passing every
    string through the checks a typed value needs.
    """
    for column, formula in enumerate(formulas, start=first_column):
        if not formula.startswith("="):
            raise ValueError(f"not a formula: {formula[:40]!r}")
        _bind(ws, row, column, formula, "f", style)


def put_template_text(ws: Any, row: int, items: list[tuple[int, str | None, Any]]) -> None:
    """Text from sheetgen's templates (keys, labels, units, explanations, sources;
    never user text) as (column, text or None, style record) cells of ``row``,
    made as ``put_formulas`` makes them: stored as text, even a label that starts
    with ``=``; ``None`` leaves a styled empty cell."""
    for column, text, style in items:
        if text is not None and not isinstance(text, str):
            raise TypeError(f"template text expected, got {type(text).__name__}")
        _bind(ws, row, column, text, "n" if text is None else "s", style)


def _bind(ws: Any, row: int, column: int, value: Any, data_type: str, style: Any) -> None:
    """A cell as openpyxl's reader binds one: value and type set, a copy of ``style``."""
    cell = Cell(ws, row=row, column=column, style_array=style)  # Cell copies the record
    cell._value = value
    cell.data_type = data_type
    ws._cells[(row, column)] = cell
