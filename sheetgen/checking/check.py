"""Check a (possibly edited) workbook: recalculate it, recompute the reference from
its own inputs, and report every cell that disagrees.

A finding names the sheet, key and scenario, what was expected and what was found;
its kinds, the report and their words are in ``findings``, the comparisons of one
cell in ``cells``.  This module reads the file back, rebuilds its layout and runs
the comparisons over every keyed row of every template.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from sheetgen.checking.compare_cells import cell_findings, name_findings, stored_findings
from sheetgen.checking.findings import (
    Finding,
    Report,
    errors_from_invalid_inputs,
    unstored_finding,
)
from sheetgen.errors import SheetgenError


def mirror_rows() -> frozenset[tuple[str, str]]:
    """(sheet, key) of every row that shows a key computed on another sheet."""
    from sheetgen.workbook.templates import load_templates

    return frozenset(
        (t.sheet, r.key) for t in load_templates() for r in t.rows if r.mirror and r.key
    )


def file_layout(wb: Any, n_scenarios: int):
    """A ``workbook.layout.Layout`` rebuilt from where the keys and tables really are
    in ``wb``."""
    from sheetgen.readback.reading import sheet_layout, table_blocks, used_cells
    from sheetgen.workbook.layout import Layout

    layout = Layout(n_scenarios=n_scenarios)
    mirrors = mirror_rows()
    grids = {ws.title: used_cells(ws) for ws in wb.worksheets}  # read once: no row loops
    for ws in wb.worksheets:
        cells = grids[ws.title]
        sl = sheet_layout(ws, cells)
        if sl is None:
            continue
        used = [r for (r, c), v in cells.items() if c in (1, 2) and v != ""]
        last = max([sl.header_row, *(r for r in used if r > sl.header_row)])
        mirrored = [row for key, row in sl.rows.items() if (ws.title, key) in mirrors]
        layout.sheet_rows[ws.title] = (max([sl.header_row, *mirrored]) + 1, last)
        for key, row in sl.rows.items():
            # A key's home is where the template computes it, not a sheet that mirrors it
            # (every Summary row is a mirror).
            if (ws.title, key) not in mirrors:
                layout.cells.setdefault(key, (ws.title, row))
    if "Presets" in wb.sheetnames:
        for block in table_blocks(grids["Presets"]):
            if block.name is not None:
                layout.tables[block.name] = (block.header_row + 1, block.last_row)
    return layout


def recalculated_values(path: Path, engine: str, timeout: float) -> dict:
    from sheetgen.checking.recalc import RecalcError, recalculate

    try:
        return recalculate(path, engine, timeout=timeout)
    except RecalcError as e:
        raise SheetgenError("--engine", f"{engine} could not recalculate {path}: {e}") from None


def shown_names(values: dict, typed: list[str]) -> list[str]:
    """The scenario names as the recalculated Inputs ``scenario_name`` row shows them, in
    column order (every sheet's header shows that row, and the engine's values are keyed
    by it): a name typed as a formula is known only once it is computed.  ``typed``
    (the cells as typed) when the engine gave a different number of columns."""
    shown = [str(s) for (sheet, key, s) in values if sheet == "Inputs" and key == "scenario_name"]
    return shown if len(shown) == len(typed) else typed


def calculated_inputs(wb: Any, stored: Any, layout: Any, names: list[str], values: dict) -> None:
    """Give an input typed as a formula that no program calculated (openpyxl saves no
    result) the value the engine just computed for it, in ``stored`` (the in-memory
    copy; the file is never written): the plan is checked as the formula computes."""
    ws, cached = wb["Inputs"], stored["Inputs"]
    for key, row in layout.rows.items():
        for i, name in enumerate(names[: len(layout.scenarios)]):
            cell = ws.cell(row=row, column=layout.first_col + i)
            computed = values.get(("Inputs", key, name))
            if cell.data_type == "f" and computed is not None:
                target = cached.cell(row=row, column=cell.column)
                if target.value is None:
                    target.value = computed


def check_workbook(
    path: str | Path, engine: str = "libreoffice", timeout: float = 180, rel: float = 1e-9
) -> Report:
    """Recalculate ``path`` (never modifying it) and compare it with the reference."""
    from sheetgen.readback.opening import open_workbook
    from sheetgen.readback.reading import require_sheets, scenario_names, sheet_layout
    from sheetgen.readback.scenarios import scenario_results
    from sheetgen.reference import compute
    from sheetgen.workbook.templates import load_templates

    path = Path(path)
    where = str(path)
    wb = open_workbook(path)
    require_sheets(wb, where)
    stored = open_workbook(path, data_only=True)
    inputs_layout = sheet_layout(wb["Inputs"])
    if inputs_layout is None or not inputs_layout.scenarios:
        raise SheetgenError(where, "sheet 'Inputs' has no header row with scenario columns")
    values = recalculated_values(path, engine, timeout)
    names = shown_names(values, scenario_names(wb))
    calculated_inputs(wb, stored, inputs_layout, names, values)
    results = scenario_results(path, (wb, stored), names)
    layout = file_layout(wb, len(names))
    findings: list[Finding] = []
    reference: dict[str, dict[str, Any]] = {}
    for name, result in zip(names, results, strict=True):
        if isinstance(result, SheetgenError):
            field = result.field.rsplit(": ", 1)[-1]
            # "Inputs!D10 (micro_batch)": an emptied or non-numeric cell, named by its key
            cell, _, key = field.partition(" (")
            detail = f"{cell}: {result.message}" if key else result.message
            field = key.rstrip(")") if key else _input_key(field)
            findings.append(Finding("input invalid", "Inputs", field, name, detail=detail))
        else:
            reference[name] = compute(replace(result, name=name))  # the name as computed
    if len(set(names)) < len(names):
        # The engines' values are keyed by the shown name: with two columns of one name
        # every later comparison would mix them. The duplicate is the finding.
        invalid = [f for f in findings if f.kind == "input invalid"]
        return Report(path=where, engine=engine, scenarios=names, findings=invalid,
                      cells_compared=0)  # fmt: skip
    compared = 0
    unstored: dict[str, int] = {}  # formula cells saved without their result, per sheet
    for t in load_templates():
        if t.sheet not in wb.sheetnames:
            findings.append(Finding("missing sheet", t.sheet, "", "", detail="sheet deleted"))
            continue
        ws = wb[t.sheet]
        sl = sheet_layout(ws)
        if sl is None:
            findings.append(Finding("missing sheet", t.sheet, "", "", detail="header row missing"))
            continue
        for row in t.keyed_rows:
            if row.key not in sl.rows:
                findings.append(
                    Finding("missing row", t.sheet, row.key or "", "", detail="row deleted")
                )
                continue
            r = sl.rows[row.key]
            for i, name in enumerate(names[: len(sl.scenarios)]):
                cell = ws.cell(row=r, column=sl.first_col + i)
                found, n = cell_findings(
                    row, t.sheet, cell, i, name, layout, values, reference.get(name), rel
                )
                findings.extend(found)
                compared += n
                if not row.input:
                    kept = stored[t.sheet][cell.coordinate]
                    findings.extend(stored_findings(row, t.sheet, kept, name, values, rel))
                    if kept.value is None and cell.data_type == "f":
                        unstored[t.sheet] = unstored.get(t.sheet, 0) + 1
            if row.name and not row.mirror:
                findings.extend(name_findings(wb, row.key, t.sheet, r, sl))
    if unstored:
        findings.append(unstored_finding(unstored))
    return Report(
        path=where,
        engine=engine,
        scenarios=names,
        findings=errors_from_invalid_inputs(findings),
        cells_compared=compared,
    )


def _input_key(field: str) -> str:
    """The key of a cross-field error's field, "Inputs column E 'name'.mfu_source" ->
    "mfu_source" (the finding names the sheet and the scenario itself)."""
    import re

    found = re.match(r"Inputs column [A-Z]+ .*\.([a-z][a-z0-9_]*)$", field, re.S)
    return found.group(1) if found else field
