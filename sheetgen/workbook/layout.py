"""Where everything lives in the workbook, known before any cell is written.

Layout of every templated sheet (DESIGN.md house style):

    row 1  title
    row 2  description
    row 4  key | quantity | unit | <scenario 1> ... <scenario n> | formula in words | source
    row 5+ one row per key (section headings have no key)

The Presets sheet stacks its lookup tables (``TABLE_COLUMNS``, in that order)
vertically, each followed by the block that prints its sources
(``Layout.sources``).  ``Layout`` maps every key to its sheet and row and every
table to its rows (the grid itself, re-exported here: ``sheetgen.workbook.grid``); a
formula refers to other rows by key, and ``translate`` turns
``{key}`` into the cell of the same scenario column (on whatever sheet the key
lives), and ``[table.column]`` into an absolute range of a Presets lookup table.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from openpyxl.utils import get_column_letter, quote_sheetname

from sheetgen.scenarios.scenario import HARDWARE_FIELDS, Model
from sheetgen.workbook.grid import FIRST_ROW as FIRST_ROW
from sheetgen.workbook.grid import FIRST_SCENARIO_COL as FIRST_SCENARIO_COL
from sheetgen.workbook.grid import HEADER_ROW as HEADER_ROW
from sheetgen.workbook.templates import (
    GROUP_RE,
    KEY_RE,
    SHEET_RE,
    TABLE_RE,
    SheetTemplate,
    check_keys,
)

PRESETS_SHEET = "Presets"
# Stands for the scenario's column letter in a formula translated once per row; a
# control character, so never part of a formula (sheetgen refuses them in text).
COLUMN = "\x00"
CUSTOM_ROWS = {"models": 5}

# Lookup tables on the Presets sheet: table -> column names (first is the id).
# The model table's columns are the Model dataclass's fields, in their order.
MODEL_COLUMNS = tuple(f.name for f in fields(Model) if f.name not in ("source", "params_published"))
# A preset's GPU-hour prices (blank when it carries none): the Hardware sheet ranks by them.
HARDWARE_PRICE_COLUMNS = ("price_per_gpu_hour", "price_per_gpu_hour_reserved")
HARDWARE_COLUMNS = ("id", "name", *HARDWARE_FIELDS, *HARDWARE_PRICE_COLUMNS)
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


@dataclass
class Layout:
    """Where every key and table lives, known before any formula is written."""

    n_scenarios: int
    cells: dict[str, tuple[str, int]] = field(default_factory=dict)  # key -> (sheet, row)
    # sheet -> first, last row that {sheet:X} (the no-error-values check's SUM) covers:
    # from the row after the sheet's last mirror row (a mirrored verdict depends on that
    # very check: summing it would be a circular reference) to its last row
    sheet_rows: dict[str, tuple[int, int]] = field(default_factory=dict)
    tables: dict[str, tuple[int, int]] = field(default_factory=dict)  # table -> first, last row
    # table -> first, last row of the sources block below it (title and header above first)
    sources: dict[str, tuple[int, int]] = field(default_factory=dict)
    # sheet -> key -> row of every keyed row on that sheet, mirrors included (for charts)
    sheet_keys: dict[str, dict[str, int]] = field(default_factory=dict)
    _row_formulas: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)

    def rows_on(self, sheet: str) -> dict[str, int]:
        return self.sheet_keys[sheet]

    def col(self, i: int | str) -> str:
        """Scenario ``i``'s column letter (``COLUMN`` passes through as the placeholder)."""
        if isinstance(i, str):  # COLUMN, the placeholder
            return i
        return get_column_letter(FIRST_SCENARIO_COL + i)

    def table_range(self, table: str, column: str) -> str:
        cols = TABLE_COLUMNS[table]
        if column not in cols:
            raise KeyError(f"table {table!r} has no column {column!r}")
        letter = get_column_letter(cols.index(column) + 1)
        first, last = self.tables[table]
        return f"{PRESETS_SHEET}!${letter}${first}:${letter}${last}"

    def ref(self, key: str, i: int | str, from_sheet: str) -> str:
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


def plan_layout(
    templates: tuple[SheetTemplate, ...],
    n_scenarios: int,
    n_presets: dict,
    n_sources: dict | None = None,
) -> Layout:
    """Where every key and table goes.  ``n_presets``: rows per Presets table;
    ``n_sources``: rows of the sources block below each table (none when absent)."""
    layout = Layout(n_scenarios=n_scenarios)
    for t in templates:
        row = FIRST_ROW
        first = FIRST_ROW
        for r in t.rows:
            if r.key and not r.mirror:
                layout.cells[r.key] = (t.sheet, row)
            if r.key:
                layout.sheet_keys.setdefault(t.sheet, {})[r.key] = row
            if r.mirror:
                first = row + 1  # see sheet_rows
            row += 1
        layout.sheet_rows[t.sheet] = (first, row - 1)
    # Presets: tables stacked vertically, each: title row, header row, data rows, blank
    # row, then its sources block: title row, header row, source rows, blank row.
    from sheetgen.scenarios.run_fields import HARDWARE_SLOTS

    row = 4
    for table in TABLE_COLUMNS:
        first = row + 2
        # The hardware table has one row per Hardware-sheet slot: presets, then custom rows.
        count = HARDWARE_SLOTS if table == "hardware" else n_presets[table]
        last = first + max(count, n_presets[table]) + CUSTOM_ROWS.get(table, 0) - 1
        layout.tables[table] = (first, last)
        row = last + 2
        n = (n_sources or {}).get(table, 0)
        if n:
            layout.sources[table] = (row + 2, row + 1 + n)
            row += n + 3
    return layout


def list_name(table: str, column: str) -> str:
    """The defined name of a Presets table column that drop-down lists use."""
    return f"list_{table}_{column}"


def header_formula(layout: Layout, i: int, from_sheet: str) -> str:
    """A sheet's scenario header: the scenario's name on Inputs."""
    return layout.translate("{scenario_name}", i, from_sheet)
