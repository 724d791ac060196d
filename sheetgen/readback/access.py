"""Reading a workbook back (a facade): ``workbook_open`` opens the file safely,
``workbook_read`` reads the cells (layout, inputs, Presets tables),
``workbook_scenarios`` turns them into scenarios and scenarios into a scenario file.
The names other modules import from here stay."""

from __future__ import annotations

from sheetgen.readback.opening import OLE_MAGIC, check_xlsx, open_workbook
from sheetgen.readback.reading import (
    DERIVED_IN_WORKBOOK,
    NUMERIC_KINDS,
    REQUIRED_SHEETS,
    SheetLayout,
    WorkbookInputs,
    formula_cells,
    input_cell,
    read_inputs,
    read_tables,
    require_sheets,
    scenario_names,
    sheet_layout,
    used_cells,
    used_rows,
)
from sheetgen.readback.scenarios import scenario_results, scenarios_from_workbook, scenarios_to_yaml

__all__ = [
    "DERIVED_IN_WORKBOOK",
    "NUMERIC_KINDS",
    "OLE_MAGIC",
    "REQUIRED_SHEETS",
    "SheetLayout",
    "WorkbookInputs",
    "check_xlsx",
    "formula_cells",
    "input_cell",
    "open_workbook",
    "read_inputs",
    "read_tables",
    "require_sheets",
    "scenario_names",
    "scenario_results",
    "scenarios_from_workbook",
    "scenarios_to_yaml",
    "sheet_layout",
    "used_cells",
    "used_rows",
]
