"""Print set-up: pages a budget reviewer can read.

Every sheet prints landscape on A4 with a title header and a date / file /
page footer; the date is the generation date as ISO text (``stamp_footers``),
never the ``&D`` code, which prints the printing machine's locale date.  Text
must stay legible on paper (an effective size of at least 8.5 pt, checked on
the PDF by the tests), so only the Summary and About are fitted to a page, and
only because they are laid out to fit at a legible scale; the detail sheets
print at a fixed scale and paginate across, then down (a block of rows' numbers,
then their explanations), repeating the header row and the quantity and unit
columns on every page.  Long explanation and source text wraps inside
its column, and rows are sized for it, so nothing runs off the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openpyxl.utils import get_column_letter

# Fixed scale of the paginated sheets (percent): 11 pt text prints at 8.8 pt, the
# 10 pt source column at 8 pt; the quantity, unit, scenario and explanation
# columns of four scenarios share the first page across.
DETAIL_SCALE = 80
# Points per wrapped line of 11 pt text.
LINE_HEIGHT_PT = 14.5
# Roughly how many characters of 11 pt text fit one unit of column width.
CHARS_PER_WIDTH = 1.1


def lines_needed(text: str, width: float) -> int:
    """Wrapped lines a text needs in a column ``width`` characters wide (word wrap; a word
    longer than a line breaks)."""
    per_line = max(1, int(width * CHARS_PER_WIDTH) - 2)
    if not text or len(text) <= per_line:  # the whole text fits one line
        return 1
    lines, used = 1, 0
    for word in text.split():
        need = len(word) + (1 if used else 0)
        if used + need <= per_line:
            used += need
            continue
        if used:
            lines += 1
        # The word starts a line; one longer than a line is broken (after a hyphen, or
        # anywhere) over as many lines as it fills.
        more, used = divmod(len(word), per_line)
        if not used:
            more, used = more - 1, per_line
        lines += more
    return lines


def split_text(text: str, width: float, max_lines: int, size: float = 11) -> list[str]:
    """``text`` in parts of at most ``max_lines`` wrapped lines each in a column ``width``
    wide, in ``size`` pt type (split between words), so that no row outgrows a page."""
    width *= 11 / size
    if lines_needed(text, width) <= max_lines:
        return [text]
    parts: list[str] = []
    words: list[str] = []
    for word in text.split():
        if words and lines_needed(" ".join([*words, word]), width) > max_lines:
            parts.append(" ".join(words))
            words = []
        words.append(word)
    return [*parts, " ".join(words)] if words else parts


def fit_row(ws: Any, row: int, texts: Sequence[tuple[str, float]], size: float = 11) -> None:
    """Size ``row`` for the tallest of its wrapped texts ((text, column width) pairs) in
    ``size`` pt type (smaller type fits more characters on a line and lines closer)."""
    scale = 11 / size
    lines = max((lines_needed(t, w * scale) for t, w in texts if t), default=1)
    if lines > 1:
        ws.row_dimensions[row].height = LINE_HEIGHT_PT / scale * lines


def page_setup(
    ws: Any,
    title: str,
    *,
    fit_page: bool = False,
    title_rows: str | None = None,
    title_cols: str | None = None,
) -> None:
    """Landscape A4; fitted to one page or at the fixed detail scale; header and footer."""
    ws.page_setup.orientation = "landscape"
    ws.page_setup.paperSize = ws.PAPERSIZE_A4
    if fit_page:
        ws.page_setup.fitToWidth = 1
        ws.page_setup.fitToHeight = 1
        ws.sheet_properties.pageSetUpPr.fitToPage = True
    else:
        ws.sheet_properties.pageSetUpPr.fitToPage = False
        ws.page_setup.scale = DETAIL_SCALE
        # Across, then down: a block of rows' numbers, then the same rows' formulas in
        # words and sources on the next page, so a reader finds each explanation beside
        # its number instead of ten pages later.
        ws.page_setup.pageOrder = "overThenDown"
    if title_rows:
        ws.print_title_rows = title_rows
    if title_cols:
        ws.print_title_cols = title_cols
    ws.page_margins.left = ws.page_margins.right = 0.5
    ws.page_margins.top = ws.page_margins.bottom = 0.75
    ws.oddHeader.left.text = "LLM training plan"
    ws.oddHeader.center.text = f"sheetgen — {title}"
    ws.oddHeader.right.text = "&A"
    ws.oddFooter.left.text = ""  # the generation date: stamp_footers
    ws.oddFooter.center.text = "&F"
    ws.oddFooter.right.text = "Page &P of &N"


def stamp_footers(wb: Any, generated: Any) -> None:
    """The generation date, ISO 8601 (YYYY-MM-DD), in every sheet's footer, as text."""
    for ws in wb.worksheets:
        ws.oddFooter.left.text = f"generated {generated.isoformat()}"


def wrap_across(ws: Any, row: int, first_col: int, last_col: int, widths: Sequence[float]) -> None:
    """Merge a long text cell across the printed columns, wrapped, row sized for it."""
    from openpyxl.styles import Alignment

    cell = ws.cell(row=row, column=first_col)
    if not cell.value:
        return
    ws.merge_cells(start_row=row, start_column=first_col, end_row=row, end_column=last_col)
    cell.alignment = Alignment(wrap_text=True, vertical="top")
    fit_row(ws, row, [(str(cell.value), sum(widths))])


def col(c: int) -> str:
    return get_column_letter(c)
