"""The grid every templated sheet uses, written once: the writer
(``sheetgen.workbook.layout``) places cells with it and the engines' reader
(``sheetgen.engines.common``) finds the scenario columns with it.  Standard
library only, so the engines import it cheaply.  ``read_layout`` is the one reader
of that grid: the engines, ``check`` and ``inputs`` find keys and scenarios with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

HEADER_ROW = 4  # key | quantity | unit | <scenarios> | formula in words | source
FIRST_ROW = 5  # the first key row
FIRST_SCENARIO_COL = 4  # column D (1-based): the first scenario's values
HEADER_KEY = "key"  # column A of the header row
HEADER_END = "formula in words"  # the heading after the last scenario column
HEADER_SEARCH_ROWS = 10  # the header is one of the first rows


@dataclass
class SheetLayout:
    """Where one sheet's keys and scenario columns are, as read back from its cells."""

    header_row: int
    scenarios: list[str]  # names in column order ("" for a blank heading)
    first_col: int  # column index (1-based) of the first scenario
    rows: dict[str, int] = field(default_factory=dict)  # key -> its first row


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def read_layout(cells: Mapping[tuple[int, int], object]) -> SheetLayout | None:
    """The one reader of the grid, for every sheet sheetgen writes (the engines' values,
    ``check`` and ``inputs`` all read through it); ``cells`` is {(row, column): value},
    1-based, empty cells absent or None.  None when the sheet has no header row.

    The header row is the first of rows 1..10 whose column A is exactly ``key``.
    Scenario columns start at column D and run up to the ``formula in words``
    heading, a blank heading among them being a column named "" (a deleted heading
    never ends the scenarios); without that heading (an older workbook) they run to
    the first blank heading.  Every row below the header whose column A holds text is
    keyed by that text, stripped; where a key appears twice its first row counts.
    """
    header = next(
        (r for r in range(1, HEADER_SEARCH_ROWS + 1) if cells.get((r, 1)) == HEADER_KEY), None
    )
    if header is None:
        return None
    heads = {c: v for (r, c), v in cells.items() if r == header and v is not None}
    ends = [c for c, v in heads.items() if v == HEADER_END and c >= FIRST_SCENARIO_COL]
    names = []
    c = FIRST_SCENARIO_COL
    while (c < min(ends)) if ends else not _blank(heads.get(c)):
        v = heads.get(c)
        names.append("" if _blank(v) else str(v))
        c += 1
    layout = SheetLayout(header_row=header, scenarios=names, first_col=FIRST_SCENARIO_COL)
    keyed = sorted((r, v) for (r, col), v in cells.items() if col == 1 and r > header)
    for r, key in keyed:
        if isinstance(key, str) and key.strip():
            layout.rows.setdefault(key.strip(), r)
    return layout
