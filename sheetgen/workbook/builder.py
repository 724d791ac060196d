"""Templates + scenarios -> an openpyxl workbook with live formulas.

Layout of every templated sheet (DESIGN.md house style):

    row 1  title
    row 2  description
    row 4  key | quantity | unit | <scenario 1> ... <scenario n> | formula in words | source
    row 5+ one row per key (section headings have no key)

A formula refers to other rows by key; ``translate`` turns ``{key}`` into the
cell of the same scenario column (on whatever sheet the key lives), and
``[table.column]`` into an absolute range of a Presets lookup table.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from openpyxl.utils import get_column_letter, quote_sheetname

from sheetgen.scenario import HARDWARE_FIELDS, Model
from sheetgen.workbook import styles
from sheetgen.workbook.cells import put_formulas, put_template_text, put_text, text_cell
from sheetgen.workbook.templates import (
    GROUP_RE,
    KEY_RE,
    SHEET_RE,
    TABLE_RE,
    Row,
    SheetTemplate,
    check_keys,
)

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl import Workbook

    from sheetgen.scenario import Scenario

HEADER_ROW = 4
FIRST_ROW = 5
FIRST_SCENARIO_COL = 4  # column D
PRESETS_SHEET = "Presets"
# Stands for the scenario's column letter in a formula translated once per row; a
# control character, so never part of a formula (sheetgen refuses them in text).
COLUMN = "\x00"
CUSTOM_ROWS = {"models": 5, "hardware": 3}

# Lookup tables on the Presets sheet: table -> column names (first is the id).
# The model table's columns are the Model dataclass's fields, in their order.
MODEL_COLUMNS = tuple(f.name for f in fields(Model) if f.name not in ("source", "params_published"))
HARDWARE_COLUMNS = ("id", "name", *HARDWARE_FIELDS)
RECIPE_COLUMNS = (
    "id",
    "name",
    "weight_bytes",
    "grad_bytes",
    "grad_accum_bytes",
    "master_bytes",
    "optimizer_bytes",
    "act_bytes",
    "frameworks",
)
DTYPE_COLUMNS = ("id", "bytes")
TABLE_COLUMNS = {
    "models": MODEL_COLUMNS,
    "hardware": HARDWARE_COLUMNS,
    "recipes": RECIPE_COLUMNS,
    "dtypes": DTYPE_COLUMNS,
}
PRESETS_SOURCE_WIDTH = 60  # the columns holding a table's sources (wrapped)
TABLE_TITLES = {
    "models": "Models (add a custom model in an empty row, then pick its id on Inputs)",
    "hardware": "Hardware (dense peaks; add a custom accelerator in an empty row)",
    "recipes": "Recipes: bytes per parameter and per activation value",
    "dtypes": "Bytes per value by number format",
}


@dataclass
class Layout:
    """Where every key and table lives, known before any formula is written."""

    n_scenarios: int
    cells: dict[str, tuple[str, int]] = field(default_factory=dict)  # key -> (sheet, row)
    sheet_rows: dict[str, tuple[int, int]] = field(default_factory=dict)  # sheet -> first, last
    tables: dict[str, tuple[int, int]] = field(default_factory=dict)  # table -> first, last row
    # sheet -> key -> row of every keyed row on that sheet, mirrors included (for charts)
    sheet_keys: dict[str, dict[str, int]] = field(default_factory=dict)
    _row_formulas: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)

    def rows_on(self, sheet: str) -> dict[str, int]:
        return self.sheet_keys[sheet]

    def col(self, i: int | str) -> str:
        """Scenario ``i``'s column letter (``COLUMN`` passes through as the placeholder)."""
        return i if i is COLUMN else get_column_letter(FIRST_SCENARIO_COL + i)

    def table_range(self, table: str, column: str) -> str:
        cols = TABLE_COLUMNS[table]
        if column not in cols:
            raise KeyError(f"table {table!r} has no column {column!r}")
        letter = get_column_letter(cols.index(column) + 1)
        first, last = self.tables[table]
        return f"{PRESETS_SHEET}!${letter}${first}:${letter}${last}"

    def ref(self, key: str, i: int, from_sheet: str) -> str:
        if key not in self.cells:
            raise KeyError(f"formula refers to unknown key {key!r}")
        sheet, row = self.cells[key]
        cell = f"{self.col(i)}{row}"
        return cell if sheet == from_sheet else f"{quote_sheetname(sheet)}!{cell}"

    def translate(self, formula: str, i: int, from_sheet: str) -> str:
        return self.row_formula(formula, from_sheet).replace(COLUMN, self.col(i))

    def row_formula(self, formula: str, from_sheet: str) -> str:
        """The formula for every scenario column at once: ``COLUMN`` stands for the column
        letter (one ``str.replace`` per scenario instead of a regex pass per cell)."""
        key = (formula, from_sheet)
        found = self._row_formulas.get(key)
        if found is None:
            found = self._row_formulas[key] = self._translate(formula, from_sheet)
        return found

    def _translate(self, formula: str, from_sheet: str) -> str:
        i = COLUMN

        def sheet_range(m: Any) -> str:
            sheet = m.group(1)
            first, last = self.sheet_rows[sheet]
            c = self.col(i)
            return f"{quote_sheetname(sheet)}!{c}${first}:{c}${last}"

        def group(m: Any) -> str:
            what = m.group(1)
            if what == "all_sheets":
                derived = [s for s in self.sheet_rows if s not in ("Summary", "Checks")]
                return ",".join(f"{{sheet:{s}}}" for s in derived)
            kind = what.split(":")[1]
            keys = check_keys(kind)
            if what.startswith("failed:"):
                return "+".join(f"(1-{{{k}}})" for k in keys)
            return ",".join(f"{{{k}}}" for k in keys)

        out = GROUP_RE.sub(group, formula)
        out = SHEET_RE.sub(sheet_range, out)
        out = TABLE_RE.sub(lambda m: self.table_range(m.group(1), m.group(2)), out)
        out = KEY_RE.sub(lambda m: self.ref(m.group(1), i, from_sheet), out)
        return "=" + out


def plan_layout(templates: tuple[SheetTemplate, ...], n_scenarios: int, n_presets: dict) -> Layout:
    layout = Layout(n_scenarios=n_scenarios)
    for t in templates:
        row = FIRST_ROW
        for r in t.rows:
            if r.key and not r.mirror:
                layout.cells[r.key] = (t.sheet, row)
            if r.key:
                layout.sheet_keys.setdefault(t.sheet, {})[r.key] = row
            row += 1
        layout.sheet_rows[t.sheet] = (FIRST_ROW, row - 1)
    # Presets: tables stacked vertically, each: title row, header row, data rows, blank row.
    row = 4
    for table in TABLE_COLUMNS:
        first = row + 2
        last = first + n_presets[table] + CUSTOM_ROWS.get(table, 0) - 1
        layout.tables[table] = (first, last)
        row = last + 2
    return layout


HEADER_LOOK = styles.look(
    font={"bold": True, "color": styles.HEADER_FONT_COLOR},
    fill=styles.HEADER_FILL,
    align={"vertical": "center", "wrap_text": True},
)
TITLE_LOOK = styles.look(font={"bold": True, "size": 14})
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
NOTE_LOOK = styles.look(
    font={"color": "595959", "size": 10}, align={"vertical": "top", "wrap_text": True}
)
BOLD_LOOK = styles.look(font={"bold": True})


def _value_look(fmt: str, role: str, number_format: str | None = None) -> styles.Look:
    """A scenario cell: an input, a preset lookup or a formula, in the row's number format
    (``number_format``: the format name shown, when it differs from ``fmt``)."""
    font = {
        "input": {"color": styles.INPUT_FONT_COLOR},
        "lookup": {"color": styles.LOOKUP_FONT_COLOR, "italic": True},
        "formula": None,
    }[role]
    return styles.look(
        font=font,
        fill=styles.INPUT_FILL if role == "input" else None,
        align={"horizontal": "right", "vertical": "top", "wrap_text": fmt == "text"},
        number_format=styles.NUMBER_FORMATS[number_format or fmt],
    )


def _style_header(ws: Any, row: int, ncols: int) -> None:
    apply = styles.looks(ws.parent)
    for c in range(1, ncols + 1):
        apply(ws.cell(row=row, column=c), HEADER_LOOK)


DV_TITLE = "Invalid input"  # Excel: data-validation titles at most 32 characters


def list_name(table: str, column: str) -> str:
    """The defined name of a Presets table column that drop-down lists use."""
    return f"list_{table}_{column}"


def header_formula(layout: Layout, i: int, from_sheet: str) -> str:
    """A sheet's scenario header: the scenario's name on Inputs."""
    return layout.translate("{scenario_name}", i, from_sheet)


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
        from sheetgen.run_fields import INT_RANGES

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

    from sheetgen.workbook import printing

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
            section = [(c, None, look(SECTION_LOOK)) for c in range(1, ncols + 1)]
            section[1] = (2, r.label, look(SECTION_LABEL_LOOK))
            put_template_text(ws, row_no, section)
            row_no += 1
            continue
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
            texts += [(str(reference[i].get(r.key, "")), scenario_width) for i in range(n)]
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
                cell.value = reference[i][r.key]  # the scenario's input (reference.inputs)
                apply(text_cell(cell), value_look)
        else:
            formula = layout.row_formula(r.formula or "", t.sheet)
            formulas = [formula.replace(COLUMN, letter) for letter in letters]
            put_formulas(ws, row_no, FIRST_SCENARIO_COL, formulas, look(value_look))
            for i, letter in enumerate(letters):
                sheet_cache[f"{letter}{row_no}"] = reference[i][r.key]
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


def _print_setup(ws: Any, title: str, ncols: int, title_rows: bool = True) -> None:
    """Landscape A4 at the legible detail scale (see ``printing``); the sheets
    with their own layout (About, Charts, Presets) call this."""
    from sheetgen.workbook import printing

    printing.page_setup(ws, title, title_rows=f"{HEADER_ROW}:{HEADER_ROW}" if title_rows else None)


def preset_rows(scenarios: list[Scenario]) -> dict[str, list[tuple[list[Any], str]]]:
    """Rows of the four Presets tables: the presets, then any custom model or
    hardware the scenarios define (so their INDEX/MATCH lookups find them)."""
    from sheetgen import presets

    models = dict(presets.models())
    hardware = dict(presets.hardware())
    for s in scenarios:
        if models.get(s.model.id) not in (None, s.model):
            raise ValueError(f"two different models share the id {s.model.id!r}")
        models.setdefault(s.model.id, s.model)
        if hardware.get(s.hardware.id) not in (None, s.hardware):
            raise ValueError(f"two different accelerators share the id {s.hardware.id!r}")
        hardware.setdefault(s.hardware.id, s.hardware)
    rows: dict[str, list[tuple[list[Any], str]]] = {t: [] for t in TABLE_COLUMNS}
    model_origin, hw_origin = presets.origins("models"), presets.origins("hardware")
    for m in models.values():
        source = m.source or "custom model from the scenario file"
        source = _origin_note(model_origin.get(m.id), presets.models().get(m.id) == m) + source
        rows["models"].append(([getattr(m, c) for c in MODEL_COLUMNS], source))
    for hw in hardware.values():
        src = (
            "; ".join(f"{k}: {v}" for k, v in hw.sources)
            or "custom hardware from the scenario file"
        )
        src = _origin_note(hw_origin.get(hw.id), presets.hardware().get(hw.id) == hw) + src
        rows["hardware"].append(([getattr(hw, c) for c in HARDWARE_COLUMNS], src))
    tsrc = presets.table_sources()
    for r in presets.tables().recipes:
        rows["recipes"].append(
            ([getattr(r, c) for c in RECIPE_COLUMNS], r.source or tsrc["recipes"])
        )
    for name, nbytes in presets.tables().dtype_bytes:
        rows["dtypes"].append(([name, nbytes], tsrc["dtypes"]))
    return rows


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

    from sheetgen.limits import check_results, check_scenario_count
    from sheetgen.reference import compute
    from sheetgen.workbook import presentation
    from sheetgen.workbook.templates import load_templates

    templates = load_templates()
    table_rows = preset_rows(scenarios)
    n_presets = {t: len(r) for t, r in table_rows.items()}
    layout = plan_layout(templates, len(scenarios), n_presets)
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
            write_presets_sheet(wb, layout, table_rows)
    _define_list_names(wb, templates, layout)
    generated = generated or dt.datetime.now(dt.timezone.utc).replace(tzinfo=None, microsecond=0)
    presentation.write_about_sheet(wb, scenarios, generated.date())
    summary_at = wb.sheetnames.index("Summary")
    presentation.write_charts_sheet(wb, layout, scenarios, summary_at + 1)
    presentation.set_properties(wb, scenarios, generated)
    wb.active = wb.sheetnames.index("Summary")
    for ws in wb.worksheets:
        ws.sheet_view.tabSelected = ws.title == "Summary"
    wb.calculation.fullCalcOnLoad = True
    return wb, cached
