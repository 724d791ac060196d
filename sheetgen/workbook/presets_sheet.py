"""The Presets sheet: the lookup tables (models, hardware, recipes, bytes per
number format) that Inputs reads by id, each with, for models and hardware, empty
rows for the user's own, and below each table the block that prints its sources.

Which columns each table has and where it sits are the layout's
(``layout.TABLE_COLUMNS``, ``Layout.tables``, ``Layout.sources``); this module fills
them in.

Print (docs/DESIGN.md, "Print"): a table's rows stay one line (a long id or name
wraps in its column) and every column is as wide as its heading, so a table fits one
page down and its heading row prints on each of its pages across (the id column
repeated).  The sources (up to 2,000 characters a preset or a field) print in a block
below each table, a row per preset and field: id, field, and the text wrapped across
the columns that fit one page (``source_rows``).  Each table and each sources block is
a print range of its own width, starting a page (a table and its sources share one
where both fit a page): nothing prints beside a narrower table.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest
from typing import TYPE_CHECKING, Any

from openpyxl.utils import get_column_letter

from sheetgen.workbook import printing, styles
from sheetgen.workbook.cells import put_text
from sheetgen.workbook.layout import (
    HARDWARE_COLUMNS,
    MODEL_COLUMNS,
    PRESETS_SHEET,
    RECIPE_COLUMNS,
    TABLE_COLUMNS,
    Layout,
)
from sheetgen.workbook.styles import TITLE_LOOK

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl import Workbook

    from sheetgen.scenarios.scenario import Scenario

# A table row: its values in TABLE_COLUMNS order, and its sources as (field, text) pairs
# ("source" for a text about the whole row).
PresetRow = tuple[list[Any], tuple[tuple[str, str], ...]]

# Each table's title: its name (column A, repeated on every page across) and a note
# (column B on, on the table's first page: in column A it would run past the last).
TABLE_TITLES = {
    "models": ("Models", "add a custom model in an empty row, then pick its id on Inputs"),
    "hardware": ("Hardware", "dense peaks; add a custom accelerator in an empty row"),
    "recipes": ("Recipes", "bytes per parameter and per activation value"),
    "dtypes": ("Formats", "bytes per value by number format"),
}
SOURCE_TITLES = {
    "models": "Sources of the models above",
    "hardware": "Sources of the accelerators above, field by field",
    "recipes": "Frameworks and sources of the recipes above",
    "dtypes": "Source of the bytes per format above",
}
# The sources block's heading row: what its columns A, B and C (wrapped across) hold.
SOURCE_HEADINGS = {
    "models": ("model", "field", "source"),
    "hardware": ("accelerator", "field", "source"),
    "recipes": ("recipe", "field", "text"),
    "dtypes": ("format", "field", "source"),
}
# Trailing table columns of long text that print in the sources block instead (as a
# formula showing the table's cell), so that the table's rows stay one line.
PRINTED_IN_SOURCES = {"recipes": ("frameworks",)}

ID_WIDTH = 14  # column A: ids (wrapped at their hyphens when longer)
NAME_WIDTH = 26  # column B: names (a recipe's wraps) and, in a sources block, fields
MIN_WIDTH = 10  # the numeric columns: at least this, else as wide as their headings
# Width units a heading of n characters takes (11 pt, not bold): 0.9 n + 1.5 held every
# heading on one line in LibreOffice's print (its substitute font is wider than Calibri).
HEADING_CHAR_WIDTH = 0.9
HEADING_PAD = 1.5
# Width units that fit across one A4 landscape page at the detail scale (LibreOffice:
# a width unit prints 7 pt at 100%; 770 pt between the margins / 80% / 7 = 137), less
# a margin: the sources' text spans the columns that fit within it.
PAGE_WIDTH_UNITS = 134
# Points of rows that fit one A4 landscape page down at the detail scale (487 pt between
# the margins / 80% = 609), less a margin; a row of no set height counted as 15 pt (it
# prints about 13).
PAGE_HEIGHT_PT = 600
DEFAULT_ROW_PT = 15
# A sources row never grows taller than this many lines (a page holds about 40): a
# longer text continues in the next row, its id and field repeated.
MAX_SOURCE_LINES = 30

NOTE_SIZE = 10  # the sources blocks' type, pt
NOTE_LOOK = styles.look(
    font={"color": styles.LOOKUP_FONT_COLOR, "size": NOTE_SIZE},
    align={"vertical": "top", "wrap_text": True},
)
BOLD_LOOK = styles.look(font={"bold": True})
# Table headings: the field names as the readers match them, on one line (not bold:
# bold would widen every column past one page for the recipes).
HEADING_LOOK = styles.look(
    font={"color": styles.HEADER_FONT_COLOR},
    fill=styles.HEADER_FILL,
    align={"vertical": "center", "wrap_text": True},
)
LABEL_LOOK = styles.look(font={"size": NOTE_SIZE}, align={"vertical": "top", "wrap_text": True})
# In an empty custom row, beside the table (not printed): readers take a table's rows
# up to a blank row, so the custom rows stay the table's.
CUSTOM_NOTE = "custom row: fill id, name and every field"
CUSTOM_LOOK = styles.look(font={"color": styles.LOOKUP_FONT_COLOR, "size": NOTE_SIZE})


@dataclass(frozen=True)
class SourceRow:
    """One row of a table's sources block: the preset id(s), the field(s) the text is
    about, and the text; ``column``: the table column whose cell the row shows (a
    formula on the table row ``index``) instead of a text of its own."""

    ids: str
    field: str
    text: str
    column: str | None = None
    index: int = 0


def preset_rows(scenarios: list[Scenario]) -> dict[str, list[PresetRow]]:
    """Rows of the four Presets tables: the presets, then any custom model or
    hardware the scenarios define (so their INDEX/MATCH lookups find them).  The
    hardware rows are ``hardware_offers(scenarios)``, with their prices."""
    from sheetgen.catalog import presets

    models = dict(presets.models())
    for s in scenarios:
        if models.get(s.model.id) not in (None, s.model):
            raise ValueError(f"two different models share the id {s.model.id!r}")
        models.setdefault(s.model.id, s.model)
    rows: dict[str, list[PresetRow]] = {t: [] for t in TABLE_COLUMNS}
    model_origin, hw_origin = presets.origins("models"), presets.origins("hardware")
    for m in models.values():
        source = m.source or "custom model from the scenario file"
        origin = _origin(model_origin.get(m.id), presets.models().get(m.id) == m)
        rows["models"].append(
            ([getattr(m, c) for c in MODEL_COLUMNS], (*origin, ("source", source)))
        )
    for hw, on_demand, reserved in hardware_offers(scenarios):
        src = tuple(hw.sources) or (("source", "custom hardware from the scenario file"),)
        origin = _origin(hw_origin.get(hw.id), presets.hardware().get(hw.id) == hw)
        prices = {"price_per_gpu_hour": on_demand, "price_per_gpu_hour_reserved": reserved}
        values = [prices[c] or None if c in prices else getattr(hw, c) for c in HARDWARE_COLUMNS]
        rows["hardware"].append((values, (*origin, *src)))
    tsrc = presets.table_sources()
    for r in presets.tables().recipes:
        source = r.source or tsrc["recipes"]
        rows["recipes"].append(([getattr(r, c) for c in RECIPE_COLUMNS], (("source", source),)))
    for name, nbytes in presets.tables().dtype_bytes:
        rows["dtypes"].append(([name, nbytes], (("source", tsrc["dtypes"]),)))
    return rows


def hardware_offers(scenarios: list[Scenario]) -> tuple:
    """The Presets hardware table (``hardware_compare.hardware_table``: the presets or the
    workbook's table, then the scenarios' own accelerators).  Two accelerators of one id
    are refused; more rows than the Hardware sheet has slots is one line, exit code 2."""
    from sheetgen.errors import SheetgenError
    from sheetgen.reference.hardware_compare import hardware_table
    from sheetgen.scenarios.run_fields import HARDWARE_SLOTS

    offers = hardware_table(scenarios)
    by_id = {hw.id: hw for hw, _, _ in offers}
    for s in scenarios:
        if by_id[s.hardware.id] != s.hardware:
            raise ValueError(f"two different accelerators share the id {s.hardware.id!r}")
    if len(offers) > HARDWARE_SLOTS:
        raise SheetgenError(
            "hardware presets",
            f"{len(offers)} accelerators (presets, team presets and the scenarios' own); the "
            f"Hardware sheet compares at most {HARDWARE_SLOTS}: remove some from the team folder",
        )
    return offers


def _origin(origin: str | None, is_preset: bool) -> tuple[tuple[str, str], ...]:
    """An ("origin", "[team preset from DIR]") source for a preset a team directory
    supplied, else none."""
    from sheetgen.catalog.presets import SHIPPED

    if origin is None or origin == SHIPPED or not is_preset:
        return ()
    return (("origin", f"[team preset from {origin}]"),)


def column_widths() -> list[float]:
    """The Presets columns' widths: id, name, then each column as wide as the longest
    heading any table has there (the tables share the sheet's columns)."""
    widths = [float(ID_WIDTH), float(NAME_WIDTH)]
    for names in list(zip_longest(*TABLE_COLUMNS.values(), fillvalue=""))[2:]:
        longest = max(len(n) for n in names)
        widths.append(max(MIN_WIDTH, round(HEADING_CHAR_WIDTH * longest + HEADING_PAD, 1)))
    return widths


def text_columns(widths: list[float]) -> int:
    """The last column a sources text spans (from column C): as many as fit one page."""
    used, last = 0.0, 2
    for c, w in enumerate(widths, start=1):
        used += w
        if used > PAGE_WIDTH_UNITS:
            break
        last = c
    return last


def printed_columns(table: str) -> int:
    """How many of a table's columns its own print range shows (the rest print in its
    sources block)."""
    cols = TABLE_COLUMNS[table]
    shown_below = PRINTED_IN_SOURCES.get(table, ())
    assert cols[len(cols) - len(shown_below) :] == shown_below, table
    return len(cols) - len(shown_below)


def source_rows(rows: dict[str, list[PresetRow]]) -> dict[str, list[SourceRow]]:
    """Each table's sources block: per preset, a row per field (fields of one text
    together), a long text continued over rows of at most ``MAX_SOURCE_LINES`` lines;
    consecutive presets with one source (the bytes per format) share a row."""
    widths = column_widths()
    text_width = sum(widths[2 : text_columns(widths)])
    out: dict[str, list[SourceRow]] = {}
    for table, data in rows.items():
        block: list[SourceRow] = []
        for k, (values, sources) in enumerate(data):
            pid = str(values[0])
            by_text: dict[str, list[str]] = {}  # text -> its fields, in first-seen order
            for name, text in sources:
                by_text.setdefault(text, []).append(name)
            entries = [(", ".join(names), text) for text, names in by_text.items()]
            for name in PRINTED_IN_SOURCES.get(table, ()):
                value = values[TABLE_COLUMNS[table].index(name)]
                block.append(SourceRow(pid, name, str(value or ""), column=name, index=k))
            for field, text in entries:
                last = block[-1] if block else None
                if last and last.column is None and (last.field, last.text) == (field, text):
                    block[-1] = SourceRow(f"{last.ids}, {pid}", field, text)
                    continue
                for part in printing.split_text(text, text_width, MAX_SOURCE_LINES, NOTE_SIZE):
                    block.append(SourceRow(pid, field, part))
        out[table] = block
    return out


def write_presets_sheet(
    wb: Workbook,
    layout: Layout,
    rows: dict[str, list[PresetRow]],
    cached: dict[str, dict[str, Any]] | None = None,
) -> None:
    """The Presets sheet: ``rows`` into the tables ``layout`` placed, each table's
    ``source_rows`` into its block below; ``cached``: the values of the formulas
    written (a sources row showing a table cell), by sheet and cell."""
    ws = wb.create_sheet(PRESETS_SHEET)
    apply = styles.looks(wb)
    widths = column_widths()
    text_last = text_columns(widths)
    # Title and description from column B: column A prints on every page across.
    apply(ws.cell(row=1, column=2, value="Presets: lookup tables"), TITLE_LOOK)
    ws.cell(
        row=2,
        column=2,
        value="Inputs look these tables up by id (INDEX/MATCH). Edit a row to change a preset "
        "everywhere; fill an empty row to add your own. Each table's sources are below it.",
    )
    text_look = styles.look(
        font={"color": styles.INPUT_FONT_COLOR},
        fill=styles.INPUT_FILL,
        align={"vertical": "top", "wrap_text": True},
    )
    long_text_look = styles.look(font={"color": styles.INPUT_FONT_COLOR}, fill=styles.INPUT_FILL)
    number_look = styles.look(
        font={"color": styles.INPUT_FONT_COLOR},
        fill=styles.INPUT_FILL,
        number_format="#,##0.###",
        align={"vertical": "top"},
    )
    sheet_cache = cached.setdefault(PRESETS_SHEET, {}) if cached is not None else {}
    blocks = source_rows(rows)
    areas = []
    for table, cols in TABLE_COLUMNS.items():
        first, last = layout.tables[table]
        name, note = TABLE_TITLES[table]
        apply(ws.cell(row=first - 2, column=1, value=name), BOLD_LOOK)
        ws.cell(row=first - 2, column=2, value=note)
        for c, heading in enumerate(cols, start=1):
            apply(ws.cell(row=first - 1, column=c, value=heading), HEADING_LOOK)
        data = rows[table]
        shown_below = PRINTED_IN_SOURCES.get(table, ())
        for k in range(last - first + 1):
            row_no = first + k
            values = data[k][0] if k < len(data) else [None] * len(cols)
            for c, v in enumerate(values, start=1):
                number = isinstance(v, (int, float)) and not isinstance(v, bool)
                # A long text printed below stays one line here (it runs on to the right).
                how = long_text_look if cols[c - 1] in shown_below else text_look
                apply(put_text(ws, row_no, c, v), number_look if number else how)
            if k >= len(data):
                # Marks the row as the table's (readers take the rows up to a blank one),
                # beside the table, where it does not print.
                apply(ws.cell(row=row_no, column=len(cols) + 1, value=CUSTOM_NOTE), CUSTOM_LOOK)
            texts = [(str(values[0] or ""), widths[0]), (str(values[1] or ""), widths[1])]
            printing.fit_row(ws, row_no, texts)
        table_last = printed_columns(table)
        # The first table's range holds the sheet's title and description too.
        start = 1 if table == next(iter(TABLE_COLUMNS)) else first - 2
        if table not in layout.sources:
            areas.append(f"A{start}:{get_column_letter(table_last)}{last}")
            continue
        src_first, src_last = layout.sources[table]
        _write_sources(
            ws, apply, table, blocks[table], layout, src_first, widths, text_last, sheet_cache
        )
        if table_last <= text_last and rows_height(ws, start, src_last) <= PAGE_HEIGHT_PT:
            # Table and sources fit one page: one range.
            areas.append(f"A{start}:{get_column_letter(text_last)}{src_last}")
        else:
            areas.append(f"A{start}:{get_column_letter(table_last)}{last}")
            areas.append(f"A{src_first - 2}:{get_column_letter(text_last)}{src_last}")
    for c, w in enumerate(widths, start=1):
        ws.column_dimensions[get_column_letter(c)].width = w
    printing.wrap_across(ws, 2, 2, text_last, widths[1:text_last])
    ws.freeze_panes = "C1"
    # Paginated across, the id column repeated; each table and its sources a print range.
    printing.page_setup(ws, "Presets", title_cols="A:A")
    ws.print_area = areas


def rows_height(ws: Any, first: int, last: int) -> float:
    """The height of rows ``first`` to ``last`` (pt), a row of no set height counted as
    ``DEFAULT_ROW_PT``."""
    heights = (ws.row_dimensions[r].height for r in range(first, last + 1))
    return sum(h or DEFAULT_ROW_PT for h in heights)


def _write_sources(
    ws: Any,
    apply: Any,
    table: str,
    block: list[SourceRow],
    layout: Layout,
    first: int,
    widths: list[float],
    text_last: int,
    sheet_cache: dict[str, Any],
) -> None:
    """A table's sources block: title, heading row, then per row the id(s), the field(s)
    and the text wrapped across columns C to ``text_last`` (merged)."""
    apply(ws.cell(row=first - 2, column=1, value=SOURCE_TITLES[table]), BOLD_LOOK)
    for c, name in enumerate(SOURCE_HEADINGS[table], start=1):
        ws.cell(row=first - 1, column=c, value=name)
    for c in range(1, text_last + 1):
        apply(ws.cell(row=first - 1, column=c), HEADING_LOOK)
    text_width = sum(widths[2:text_last])
    table_first = layout.tables[table][0]
    for k, entry in enumerate(block):
        row_no = first + k
        apply(put_text(ws, row_no, 1, entry.ids), LABEL_LOOK)
        apply(put_text(ws, row_no, 2, entry.field), LABEL_LOOK)
        if entry.column is None:
            cell = put_text(ws, row_no, 3, entry.text)
        else:  # the table's own cell, so that an edit there prints here
            letter = get_column_letter(TABLE_COLUMNS[table].index(entry.column) + 1)
            cell = ws.cell(row=row_no, column=3, value=f"={letter}{table_first + entry.index}")
            sheet_cache[cell.coordinate] = entry.text
        apply(cell, NOTE_LOOK)
        ws.merge_cells(start_row=row_no, start_column=3, end_row=row_no, end_column=text_last)
        printing.fit_row(
            ws,
            row_no,
            [(entry.ids, widths[0]), (entry.field, widths[1]), (entry.text, text_width)],
            size=NOTE_SIZE,
        )


def with_hardware_table(scenarios: list[Scenario]) -> list[Scenario]:
    """The scenarios with the workbook's whole hardware table attached (``Tables.hardware``),
    so each scenario's Hardware sheet reference sees every row the workbook lists."""
    from dataclasses import replace

    offers = hardware_offers(scenarios)
    return [replace(s, tables=replace(s.tables, hardware=offers)) for s in scenarios]
