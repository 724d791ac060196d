"""The Presets sheet: the lookup tables (models, hardware, recipes, bytes per
number format) that Inputs reads by id, each with its sources and, for models and
hardware, empty rows for the user's own.

Which columns each table has and where it sits are the layout's
(``layout.TABLE_COLUMNS``, ``Layout.tables``); this module fills them in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openpyxl.utils import get_column_letter

from sheetgen.workbook import styles
from sheetgen.workbook.cells import put_text
from sheetgen.workbook.layout import (
    HARDWARE_COLUMNS,
    MODEL_COLUMNS,
    PRESETS_SHEET,
    RECIPE_COLUMNS,
    TABLE_COLUMNS,
    Layout,
)
from sheetgen.workbook.styles import TITLE_LOOK, _style_header

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl import Workbook

    from sheetgen.scenario import Scenario

PRESETS_SOURCE_WIDTH = 60  # the columns holding a table's sources (wrapped)
TABLE_TITLES = {
    "models": "Models (add a custom model in an empty row, then pick its id on Inputs)",
    "hardware": "Hardware (dense peaks; add a custom accelerator in an empty row)",
    "recipes": "Recipes: bytes per parameter and per activation value",
    "dtypes": "Bytes per value by number format",
}
NOTE_LOOK = styles.look(
    font={"color": "595959", "size": 10}, align={"vertical": "top", "wrap_text": True}
)
BOLD_LOOK = styles.look(font={"bold": True})


def preset_rows(scenarios: list[Scenario]) -> dict[str, list[tuple[list[Any], str]]]:
    """Rows of the four Presets tables: the presets, then any custom model or
    hardware the scenarios define (so their INDEX/MATCH lookups find them).  The
    hardware rows are ``hardware_offers(scenarios)``, with their prices."""
    from sheetgen import presets

    models = dict(presets.models())
    for s in scenarios:
        if models.get(s.model.id) not in (None, s.model):
            raise ValueError(f"two different models share the id {s.model.id!r}")
        models.setdefault(s.model.id, s.model)
    rows: dict[str, list[tuple[list[Any], str]]] = {t: [] for t in TABLE_COLUMNS}
    model_origin, hw_origin = presets.origins("models"), presets.origins("hardware")
    for m in models.values():
        source = m.source or "custom model from the scenario file"
        source = _origin_note(model_origin.get(m.id), presets.models().get(m.id) == m) + source
        rows["models"].append(([getattr(m, c) for c in MODEL_COLUMNS], source))
    for hw, on_demand, reserved in hardware_offers(scenarios):
        src = (
            "; ".join(f"{k}: {v}" for k, v in hw.sources)
            or "custom hardware from the scenario file"
        )
        src = _origin_note(hw_origin.get(hw.id), presets.hardware().get(hw.id) == hw) + src
        prices = {"price_per_gpu_hour": on_demand, "price_per_gpu_hour_reserved": reserved}
        values = [prices[c] or None if c in prices else getattr(hw, c) for c in HARDWARE_COLUMNS]
        rows["hardware"].append((values, src))
    tsrc = presets.table_sources()
    for r in presets.tables().recipes:
        rows["recipes"].append(
            ([getattr(r, c) for c in RECIPE_COLUMNS], r.source or tsrc["recipes"])
        )
    for name, nbytes in presets.tables().dtype_bytes:
        rows["dtypes"].append(([name, nbytes], tsrc["dtypes"]))
    return rows


def hardware_offers(scenarios: list[Scenario]) -> tuple:
    """The Presets hardware table (``hardware_compare.hardware_table``: the presets or the
    workbook's table, then the scenarios' own accelerators).  Two accelerators of one id
    are refused; more rows than the Hardware sheet has slots is one line, exit code 2."""
    from sheetgen.errors import SheetgenError
    from sheetgen.reference.hardware_compare import hardware_table
    from sheetgen.run_fields import HARDWARE_SLOTS

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


def _origin_note(origin: str | None, is_preset: bool) -> str:
    """ "[team preset from DIR] " for a preset a team directory supplied, else ""."""
    from sheetgen.presets import SHIPPED

    if origin is None or origin == SHIPPED or not is_preset:
        return ""
    return f"[team preset from {origin}] "


def write_presets_sheet(
    wb: Workbook, layout: Layout, rows: dict[str, list[tuple[list[Any], str]]]
) -> None:
    from sheetgen.workbook import printing

    ws = wb.create_sheet(PRESETS_SHEET)
    apply = styles.looks(wb)
    apply(ws.cell(row=1, column=1, value="Presets: lookup tables"), TITLE_LOOK)
    ws.cell(
        row=2,
        column=1,
        value="Inputs look these tables up by id (INDEX/MATCH). Edit a row to change a preset "
        "everywhere; fill an empty row to add your own.",
    )
    text_look = styles.look(font={"color": styles.INPUT_FONT_COLOR}, fill=styles.INPUT_FILL)
    number_look = styles.look(
        font={"color": styles.INPUT_FONT_COLOR}, fill=styles.INPUT_FILL, number_format="#,##0.###"
    )
    widest = max(len(c) for c in TABLE_COLUMNS.values())
    for table, cols in TABLE_COLUMNS.items():
        first, last = layout.tables[table]
        apply(ws.cell(row=first - 2, column=1, value=TABLE_TITLES[table]), BOLD_LOOK)
        for c, name in enumerate([*cols, "source"], start=1):
            ws.cell(row=first - 1, column=c, value=name)
        _style_header(ws, first - 1, len(cols) + 1)
        data = rows[table]
        for k in range(last - first + 1):
            row_no = first + k
            values, source = data[k] if k < len(data) else ([None] * len(cols), "")
            for c, v in enumerate(values, start=1):
                number = isinstance(v, (int, float)) and not isinstance(v, bool)
                apply(put_text(ws, row_no, c, v), number_look if number else text_look)
            note = source if k < len(data) else "custom row: fill id, name and every field"
            apply(put_text(ws, row_no, len(cols) + 1, note), NOTE_LOOK)
            printing.fit_row(ws, row_no, [(note, PRESETS_SOURCE_WIDTH)])
    ws.column_dimensions["A"].width = 18
    ws.column_dimensions["B"].width = 34
    source_cols = {len(cols) + 1 for cols in TABLE_COLUMNS.values()}
    for c in range(3, widest + 2):
        width = PRESETS_SOURCE_WIDTH if c in source_cols else 12
        ws.column_dimensions[get_column_letter(c)].width = width
    ws.freeze_panes = "C1"
    # Paginated across, the id and name columns repeated; sources wrap in wide columns.
    printing.page_setup(ws, "Presets", title_cols="A:B")
    ws.print_area = f"A1:{get_column_letter(widest + 1)}{ws.max_row}"


def with_hardware_table(scenarios: list[Scenario]) -> list[Scenario]:
    """The scenarios with the workbook's whole hardware table attached (``Tables.hardware``),
    so each scenario's Hardware sheet reference sees every row the workbook lists."""
    from dataclasses import replace

    offers = hardware_offers(scenarios)
    return [replace(s, tables=replace(s.tables, hardware=offers)) for s in scenarios]
