"""User text in cells: always stored as text, never as a formula.

openpyxl turns any string that starts with ``=`` into a formula.  A scenario
named ``=HYPERLINK(...)`` or a model id ``=cmd|' /C calc'!A0`` would then run in
the reader's spreadsheet.  ``text_cell`` stores the string as a string (shared
string in the file) and sets the quote-prefix style for text an application
would read as a formula or a number sign when the cell is edited.
"""

from __future__ import annotations

from typing import Any

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
