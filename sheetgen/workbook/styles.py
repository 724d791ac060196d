"""Workbook house style: number formats, fonts and fills (FAST-standard colours).

Inputs are blue on light yellow; looked-up preset values grey italic; formulas
black on white.  Bytes are stored in bytes and shown in decimal GB through the
number format (each trailing comma divides by 1,000).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast

USD_SIGNIFICANT = '[<0.01]"$"0.0000##;[<1]"$"0.00##;"$"#,##0.00'
NUMBER_FORMATS = {
    "count": "#,##0",
    "num1": "#,##0.0",
    "num2": "#,##0.00",
    "num4": "#,##0.0000",
    "seconds": "[<0.001]0.0E+00;[<1]0.0000;#,##0.00",
    "bytes": '#,##0.00,,," GB"',
    "gb": "#,##0.00,,,",
    "billions": "#,##0,,,",
    "flops": "##0.00E+0",  # engineering notation: 38.00E+24, exponents in steps of 3
    "tflops": "#,##0.0,,,,",
    "share": '[>1]#,##0.0"×";0.0%',
    "sci": "##0.00E+0",
    "pct": "0.0%",
    "usd": '"$"#,##0',
    # Prices and unit costs (never negative): cents from $1, and below with their
    # significant digits ($0.0075 per M tokens, not $0.01); wording.money in text.
    "usd2": USD_SIGNIFICANT,
    "usd3": USD_SIGNIFICANT,
    "date": "yyyy-mm-dd",
    "flag": "0",
    "text": "@",
    "number": "General",
}

INPUT_FONT_COLOR = "0000CC"
INPUT_FILL = "FFF2CC"
LOOKUP_FONT_COLOR = "595959"
HEADER_FILL = "1F3864"
HEADER_FONT_COLOR = "FFFFFF"
SECTION_FILL = "D9E1F2"
PASS_FILL = "C6EFCE"
FAIL_FILL = "FFC7CE"
WARN_FILL = "FFEB9C"
FAIL_FONT_COLOR = "9C0006"

COLUMN_WIDTHS = {
    "key": 26,
    "quantity": 34,
    "unit": 9,
    "scenario": 18,
    "scenario_many": 15,
    "words": 52,
    "source": 40,
}
# The Summary prints on one page: narrower columns, explanations only up to 4 scenarios.
SUMMARY_WIDTHS = {**COLUMN_WIDTHS, "quantity": 32, "scenario": 17, "words": 40}
SUMMARY_WORDS_UP_TO = 4

# --------------------------------------------------------------------------- looks
#
# A Look is one combination of font, fill, alignment and number format. Each
# distinct Look is built once per workbook through openpyxl's public API on the
# first cell that needs it; every later cell gets a copy of that cell's style
# record (what openpyxl's own worksheet copy does), instead of new Font / Fill /
# Alignment objects per cell, each hashed and looked up in the workbook's style
# lists attribute by attribute. The file written is the same.


@dataclass(frozen=True)
class Look:
    font: tuple[tuple[str, Any], ...] = ()  # Font keyword arguments
    fill: str | None = None  # solid fill colour
    align: tuple[tuple[str, Any], ...] = ()  # Alignment keyword arguments
    number_format: str | None = None


def look(
    font: dict[str, Any] | None = None,
    fill: str | None = None,
    align: dict[str, Any] | None = None,
    number_format: str | None = None,
) -> Look:
    return Look(
        tuple(sorted((font or {}).items())),
        fill,
        tuple(sorted((align or {}).items())),
        number_format,
    )


_MADE: weakref.WeakKeyDictionary[Any, dict[Look, Any]] = weakref.WeakKeyDictionary()


class Apply(Protocol):
    """``looks(wb)``: called on a cell it styles it; ``record(look)`` is the style record."""

    record: Callable[[Look], Any]

    def __call__(self, cell: Any, how: Look) -> None: ...


def looks(wb: Any) -> Apply:
    """``apply(cell, look)`` for the cells of workbook ``wb``: gives a freshly created
    cell the font, fill, alignment and number format of ``look``.  ``apply.record(look)``
    is the look's style record itself, for cells made directly (``cells.put_formulas``)."""
    from openpyxl.cell.cell import Cell
    from openpyxl.styles import Alignment, Font, PatternFill
    from openpyxl.styles.cell_style import StyleArray

    made = _MADE.setdefault(wb, {})

    def build(cell: Any, how: Look) -> Any:
        if how.font:
            cell.font = Font(**dict(how.font))
        if how.fill:
            cell.fill = PatternFill("solid", fgColor=how.fill)
        if how.align:
            cell.alignment = Alignment(**dict(how.align))
        if how.number_format:
            cell.number_format = how.number_format
        made[how] = StyleArray(cell._style)
        return made[how]

    def apply(cell: Any, how: Look) -> None:
        style = made.get(how)
        if style is None:
            build(cell, how)
            return
        # Keep the quote prefix user text may carry (workbook/cells.py).
        quoted = getattr(cell._style, "quotePrefix", 0)
        cell._style = StyleArray(style)  # a copy: cells never share one style record
        cell._style.quotePrefix = quoted

    def record(how: Look) -> Any:
        """The look's style record (built on a cell of no sheet the first time)."""
        style = made.get(how)
        if style is None:
            style = build(Cell(wb.worksheets[0] if wb.worksheets else None), how)
        return style

    styler = cast(Apply, apply)
    styler.record = record
    return styler


# The looks every templated sheet (builder) and the Presets sheet share.
HEADER_LOOK = look(
    font={"bold": True, "color": HEADER_FONT_COLOR},
    fill=HEADER_FILL,
    align={"vertical": "center", "wrap_text": True},
)
TITLE_LOOK = look(font={"bold": True, "size": 14})


def _style_header(ws: Any, row: int, ncols: int) -> None:
    apply = looks(ws.parent)
    for c in range(1, ncols + 1):
        apply(ws.cell(row=row, column=c), HEADER_LOOK)


# Stored values stay in base units (bytes, FLOP/s, days); the unit column shows the
# unit the number format displays.  A share that can exceed 100% (memory needed /
# capacity) reads as a multiple above 1 ("89.3×").
SHARES_AS_MULTIPLE = frozenset({"mem_gpu_share", "mem_per_gpu_share"})


def shown(key: str | None, unit: str, fmt: str) -> tuple[str, str]:
    """(unit column text, number-format name) for a row's key, base unit and format."""
    if fmt == "bytes":
        return "GB", "gb"
    if unit == "FLOP/s" and fmt in ("flops", "sci"):
        return "TFLOP/s", "tflops"
    if unit == "B/s" and fmt == "sci":  # link and memory bandwidths, as datasheets quote them
        return "GB/s", "gb"
    if unit == "d":
        return "days", fmt
    if key in SHARES_AS_MULTIPLE and fmt == "pct":
        return unit, "share"
    return unit, fmt
