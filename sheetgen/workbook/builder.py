"""Templates + scenarios -> an openpyxl workbook with live formulas.

``build`` plans the layout (``layout.py``), writes every templated sheet
(``write_sheet``: the looks of its cells, data validation of its inputs, the
per-scenario defined names of its named rows), the Presets sheet after Inputs
(``presets_sheet.py``), the defined names of drop-down lists, then Charts
(``charts.py``), About (first in the workbook; it lists every other sheet) and the
document properties (``presentation.py``).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any

from openpyxl.utils import get_column_letter, quote_sheetname

from sheetgen.workbook import printing, styles
from sheetgen.workbook.cells import put_formulas, put_template_text, put_text, text_cell
from sheetgen.workbook.layout import (
    COLUMN,
    FIRST_ROW,
    FIRST_SCENARIO_COL,
    HEADER_ROW,
    Layout,
    header_formula,
    list_name,
    plan_layout,
)
from sheetgen.workbook.presets_sheet import (
    preset_rows,
    source_rows,
    with_hardware_table,
    write_presets_sheet,
)
from sheetgen.workbook.styles import TITLE_LOOK, _style_header
from sheetgen.workbook.templates import TABLE_RE, Row, SheetTemplate

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl import Workbook

    from sheetgen.scenarios.scenario import Scenario

# The templated sheets' own looks (those the Presets sheet shares are in styles).
DESCRIPTION_LOOK = styles.look(align={"wrap_text": False})
SECTION_LABEL_LOOK = styles.look(font={"bold": True}, fill=styles.SECTION_FILL)
SECTION_LOOK = styles.look(fill=styles.SECTION_FILL)
TOP = {"vertical": "top"}
KEY_LOOK = styles.look(font={"color": "7F7F7F", "size": 9}, align=TOP)
TOP_LOOK = styles.look(align=TOP)
LABEL_LOOK = styles.look(align={"vertical": "top", "wrap_text": True})
WORDS_LOOK = styles.look(align={"wrap_text": True, "vertical": "top"})
SOURCE_LOOK = styles.look(
    font={"color": "595959", "size": 10}, align={"vertical": "top", "wrap_text": True}
)


def _value_look(fmt: str, role: str, number_format: str | None = None) -> styles.Look:
    """A scenario cell: an input, a preset lookup or a formula, in the row's number format
    (``number_format``: the format name shown, when it differs from ``fmt``)."""
    fonts: dict[str, dict[str, Any] | None] = {
        "input": {"color": styles.INPUT_FONT_COLOR},
        "lookup": {"color": styles.LOOKUP_FONT_COLOR, "italic": True},
        "formula": None,
    }
    font = fonts[role]
    return styles.look(
        font=font,
        fill=styles.INPUT_FILL if role == "input" else None,
        align={"horizontal": "right", "vertical": "top", "wrap_text": fmt == "text"},
        number_format=styles.NUMBER_FORMATS[number_format or fmt],
    )


DV_TITLE = "Invalid input"  # Excel: data-validation titles at most 32 characters


def _validation(row: Row, layout: Layout, sqref: str, first_cell: str) -> Any:
    from openpyxl.worksheet.datavalidation import DataValidation

    kind = row.input
    if kind == "choice":
        if isinstance(row.choices, tuple):
            formula = '"' + ",".join(row.choices) + '"'
        else:
            m = TABLE_RE.fullmatch(row.choices or "")
            if not m:
                raise ValueError(f"{row.key}: choices must be a list or [table.column]")
            # Through a defined name (list_<table>_<column>): Excel's portable way to a
            # list on another sheet.
            formula = list_name(m.group(1), m.group(2))
        dv = DataValidation(type="list", formula1=formula, allow_blank=False)
        dv.error = "Pick a value from the list (add presets on the Presets sheet)."
    elif kind == "int":
        from sheetgen.scenarios.run_fields import INT_RANGES

        low, high = INT_RANGES.get(row.key or "", (1, None))
        if high is None:
            dv = DataValidation(type="whole", operator="greaterThanOrEqual", formula1=str(low))
            dv.error = f"A whole number of at least {low}."
        else:
            dv = DataValidation(
                type="whole", operator="between", formula1=str(low), formula2=str(high)
            )
            dv.error = f"A whole number from {low} to {high}."
    elif kind == "text":
        dv = DataValidation(type="textLength", operator="between", formula1="1", formula2="100")
        dv.error = "A name of 1 to 100 characters."
    elif kind == "count":
        dv = DataValidation(type="whole", operator="greaterThanOrEqual", formula1="0")
        dv.error = "A whole number of at least 0 (0 = unused)."
    elif kind == "date":
        dv = DataValidation(type="date", operator="greaterThanOrEqual", formula1="367")
        dv.error = "A date (1901-01-01 or later), e.g. 2027-01-01."
    elif kind == "fraction":
        dv = DataValidation(type="custom", formula1=f"AND({first_cell}>0,{first_cell}<=1)")
        dv.error = "A fraction in (0, 1], e.g. 40% or 0.4."
    elif kind == "share":
        dv = DataValidation(type="custom", formula1=f"AND({first_cell}>=0,{first_cell}<1)")
        dv.error = "A share in [0, 1), e.g. 10% or 0.1."
    else:
        dv = DataValidation(type="decimal", operator="greaterThanOrEqual", formula1="0")
        dv.error = "A number of at least 0."
    dv.errorTitle = DV_TITLE
    dv.error = f"{row.key}: {dv.error}"
    dv.showErrorMessage = True
    dv.add(sqref)
    return dv


CELL_NAME_RE = re.compile(r"[a-z][a-z0-9_]*_[0-9]+")


def add_cell_names(wb: Workbook, names: list[tuple[str, str]]) -> None:
    """Workbook-scoped defined names (``train_days_1`` -> ``'Schedule'!$D$12``), many at once.

    openpyxl validates each attribute of a DefinedName through its descriptors,
    about 18 µs a name, 10,900 names in a 100-scenario workbook.  The first name
    is built that way; the others copy its attributes (openpyxl keeps them in the
    instance dict) with their own name and reference, which sheetgen makes from a
    key and its own cell address, and which are checked here.
    """
    from openpyxl.workbook.defined_name import DefinedName

    first: Any = None
    for name, ref in names:
        if not CELL_NAME_RE.fullmatch(name) or "!$" not in ref:
            raise ValueError(f"not a cell name sheetgen writes: {name!r} -> {ref!r}")
        if first is None:
            first = DefinedName(name, attr_text=ref)
            wb.defined_names[name] = first
            continue
        copy = DefinedName.__new__(DefinedName)
        copy.__dict__.update(first.__dict__)
        copy.__dict__["name"] = name
        copy.__dict__["attr_text"] = ref
        wb.defined_names[name] = copy


def write_sheet(
    wb: Workbook,
    t: SheetTemplate,
    scenarios: list[Scenario],
    layout: Layout,
    reference: list[dict[str, Any]],
    cached: dict[str, dict[str, Any]],
) -> None:
    apply = styles.looks(wb)
    look = apply.record
    ws = wb.create_sheet(t.sheet)
    n = len(scenarios)
    words_col = FIRST_SCENARIO_COL + n
    ncols = words_col + 1
    summary = t.sheet == "Summary"
    # Title and description sit above the quantity column: the key column does not print.
    apply(ws.cell(row=1, column=2, value=t.title), TITLE_LOOK)
    apply(ws.cell(row=2, column=2, value=t.description), DESCRIPTION_LOOK)
    headers = [
        "key",
        "quantity",
        "unit",
        *[header_formula(layout, i, t.sheet) for i in range(n)],
        "formula in words",
        "source",
    ]
    sheet_cache = cached.setdefault(t.sheet, {})
    for c, text in enumerate(headers, start=1):
        if FIRST_SCENARIO_COL <= c < FIRST_SCENARIO_COL + n:
            # a formula sheetgen wrote (the name on Inputs), cached as the name
            cell = ws.cell(row=HEADER_ROW, column=c, value=text)
            sheet_cache[cell.coordinate] = scenarios[c - FIRST_SCENARIO_COL].name
        else:
            put_text(ws, HEADER_ROW, c, text)
    _style_header(ws, HEADER_ROW, ncols)
    cw = styles.SUMMARY_WIDTHS if summary else styles.COLUMN_WIDTHS
    scenario_width = cw["scenario"] if n <= 4 else cw["scenario_many"]
    widths = [
        cw["key"],
        cw["quantity"],
        cw["unit"],
        *[scenario_width] * n,
        cw["words"],
        cw["source"],
    ]
    for c, w in enumerate(widths, start=1):
        ws.column_dimensions[get_column_letter(c)].width = w
    # Scenario names wrap in the header row: size it for the longest.
    head_lines = max(printing.lines_needed(s.name, scenario_width) for s in scenarios)
    ws.row_dimensions[HEADER_ROW].height = max(48, printing.LINE_HEIGHT_PT * head_lines)
    letters = [layout.col(i) for i in range(n)]
    row_no = FIRST_ROW
    for r in t.rows:
        if r.section:
            section: list[tuple[int, str | None, Any]] = [
                (c, None, look(SECTION_LOOK)) for c in range(1, ncols + 1)
            ]
            section[1] = (2, r.label, look(SECTION_LABEL_LOOK))
            put_template_text(ws, row_no, section)
            row_no += 1
            continue
        key = r.key or ""  # every row but a section has one (templates.py)
        unit, fmt_name = styles.shown(r.key, r.unit, r.fmt)
        put_template_text(
            ws,
            row_no,
            [
                (1, r.key, look(KEY_LOOK)),
                (2, r.label, look(LABEL_LOOK)),
                (3, unit, look(TOP_LOOK)),
                (words_col, r.explanation, look(WORDS_LOOK)),
                (words_col + 1, r.source, look(SOURCE_LOOK)),
            ],
        )
        # Viewers do not grow rows for wrapped text on load: size them for the longest text.
        texts = [(r.label, widths[1]), (r.explanation, widths[-2]), (r.source, widths[-1])]
        if r.fmt == "text":  # wrapped text values (names, layouts) need their lines too
            texts += [(str(reference[i].get(key, "")), scenario_width) for i in range(n)]
            texts.append((r.longest, scenario_width))  # what an edit can make it
        printing.fit_row(ws, row_no, texts)
        if r.input:
            role = "input"
        elif "[models." in (r.formula or "") or "[hardware." in (r.formula or ""):
            role = "lookup"
        else:
            role = "formula"
        value_look = _value_look(r.fmt, role, fmt_name)
        if r.input:
            for i in range(n):
                cell = ws.cell(row=row_no, column=FIRST_SCENARIO_COL + i)
                cell.value = reference[i][key]  # the scenario's input (reference.inputs)
                apply(text_cell(cell), value_look)
        else:
            formula = layout.row_formula(r.formula or "", t.sheet)
            formulas = [formula.replace(COLUMN, letter) for letter in letters]
            put_formulas(ws, row_no, FIRST_SCENARIO_COL, formulas, look(value_look))
            for i, letter in enumerate(letters):
                sheet_cache[f"{letter}{row_no}"] = reference[i][key]
        if r.name and not r.mirror:
            sheet_ref = quote_sheetname(t.sheet)
            add_cell_names(
                wb,
                [
                    (f"{r.key}_{i + 1}", f"{sheet_ref}!${letter}${row_no}")
                    for i, letter in enumerate(letters)
                ],
            )
        if r.input:
            first = f"{layout.col(0)}{row_no}"
            sqref = f"{first}:{layout.col(n - 1)}{row_no}"
            ws.add_data_validation(_validation(r, layout, sqref, first))
        row_no += 1
    ws.freeze_panes = ws.cell(row=FIRST_ROW, column=FIRST_SCENARIO_COL)
    if summary:
        # The page a proposal attaches: one page, no key or source column, and the
        # explanations only while they leave the numbers legible; the engineering
        # block below the executive rows does not print.
        last_col = words_col if n <= styles.SUMMARY_WORDS_UP_TO else words_col - 1
        last_row = _last_summary_row(t) or row_no - 1
        printing.page_setup(ws, t.title, fit_page=True, title_rows=f"{HEADER_ROW}:{HEADER_ROW}")
    else:
        last_col, last_row = ncols, row_no - 1
        printing.page_setup(ws, t.title, title_rows=f"{HEADER_ROW}:{HEADER_ROW}", title_cols="B:C")
    printing.wrap_across(ws, 2, 2, words_col - 1, widths[1 : words_col - 1])
    ws.print_area = f"B1:{get_column_letter(last_col)}{last_row}"
    from sheetgen.workbook.conditional import flag_formatting

    flag_formatting(ws, t, layout, n, FIRST_ROW)


def _last_summary_row(t: SheetTemplate) -> int | None:
    """The Summary row above its engineering block (which does not print)."""
    for k, r in enumerate(t.rows):
        if r.section and r.label.startswith("Engineering detail"):
            return FIRST_ROW + k - 1
    return None


def _define_list_names(wb: Workbook, templates: tuple, layout: Layout) -> None:
    """A workbook-scoped name per Presets column a drop-down list reads."""
    from openpyxl.workbook.defined_name import DefinedName

    for t in templates:
        for r in t.keyed_rows:
            m = TABLE_RE.fullmatch(r.choices) if isinstance(r.choices, str) else None
            if m:
                name = list_name(m.group(1), m.group(2))
                ref = layout.table_range(m.group(1), m.group(2))
                wb.defined_names[name] = DefinedName(name, attr_text=ref)


def build(
    scenarios: list[Scenario], generated: dt.datetime | None = None
) -> tuple[Workbook, dict[str, dict[str, Any]]]:
    """The workbook and the reference values to cache per (sheet, cell).

    ``generated`` (default: now, UTC) is the date the About sheet and the
    document properties show.
    """
    from openpyxl import Workbook

    from sheetgen.reference import compute
    from sheetgen.scenarios.limits import check_results, check_scenario_count
    from sheetgen.workbook import charts, presentation
    from sheetgen.workbook.templates import load_templates

    templates = load_templates()
    table_rows = preset_rows(scenarios)
    scenarios = with_hardware_table(scenarios)
    n_presets = {t: len(r) for t, r in table_rows.items()}
    n_sources = {t: len(r) for t, r in source_rows(table_rows).items()}
    layout = plan_layout(templates, len(scenarios), n_presets, n_sources)
    check_scenario_count(len(scenarios), "scenarios")
    reference = [compute(s) for s in scenarios]
    for s, result in zip(scenarios, reference, strict=True):
        check_results(s.name, result)  # before anything is written
    wb = Workbook()
    wb.remove(wb.active)
    cached: dict[str, dict[str, Any]] = {}
    for t in templates:
        write_sheet(wb, t, scenarios, layout, reference, cached)
        if t.sheet == "Inputs":
            write_presets_sheet(wb, layout, table_rows, cached)
    _define_list_names(wb, templates, layout)
    generated = generated or dt.datetime.now(dt.timezone.utc).replace(tzinfo=None, microsecond=0)
    summary_at = wb.sheetnames.index("Summary")
    charts.write_charts_sheet(wb, layout, scenarios, summary_at + 1)
    # Last, at the front: About lists every other sheet in order.
    presentation.write_about_sheet(wb, scenarios, generated.date())
    presentation.set_properties(wb, scenarios, generated)
    printing.stamp_footers(wb, generated.date())
    wb.active = wb.sheetnames.index("Summary")
    for ws in wb.worksheets:
        ws.sheet_view.tabSelected = ws.title == "Summary"
    wb.calculation.fullCalcOnLoad = True
    return wb, cached
