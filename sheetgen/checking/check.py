"""Check a (possibly edited) workbook: recalculate it, recompute the reference from
its own inputs, and report every cell that disagrees.

A finding names the sheet, key and scenario, what was expected and what was
found.  Kinds:

* ``missing sheet`` / ``missing row`` — a sheet or a template row was deleted;
* ``constant`` — a derived cell holds a typed value instead of its formula;
* ``formula changed`` — a derived cell's formula is not the template's, compared as
  token streams (``formula_compare``): a file re-saved by LibreOffice, Gnumeric or
  Excel with no edits compares clean;
* ``error value`` / ``blank`` — the cell computes to an error or nothing;
* ``value differs`` — the recalculated value is not the reference's;
* ``stored value differs`` — the value stored in the file (what viewers that do not
  calculate, pandas and mail previews show) is not the formula's result;
* ``no stored values`` (a warning, not a problem) — formula cells saved without their
  result, by a program that does not calculate: viewers that do not calculate show
  them blank;
* ``defined name`` — a workbook name (``train_days_1``) is missing or does not point
  at its key's cell for its scenario (other workbooks linking to it would get
  another number);
* ``check failed`` — an error check on the Checks sheet is 0;
* ``input invalid`` — a scenario's inputs cannot be used (the reason says why).

Warnings on the Checks sheet (an uneven split, …), the verdict's tests (the
peak does not fit, the batch does not split) and the verdict itself are listed
with kind ``warning`` and do not count as problems: the file is not tampered with,
the plan is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from sheetgen.checking.formula_compare import same_formula
from sheetgen.errors import SheetgenError
from sheetgen.reference.checks import VERDICT_TESTS

PROBLEM_KINDS = (
    "missing sheet",
    "missing row",
    "constant",
    "formula changed",
    "error value",
    "blank",
    "value differs",
    "stored value differs",
    "defined name",
    "check failed",
    "input invalid",
)


@dataclass(frozen=True)
class Finding:
    kind: str
    sheet: str
    key: str
    scenario: str
    expected: Any = None
    actual: Any = None
    detail: str = ""

    @property
    def is_problem(self) -> bool:
        return self.kind in PROBLEM_KINDS


@dataclass
class Report:
    path: str
    engine: str
    scenarios: list[str]
    findings: list[Finding]
    cells_compared: int

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.is_problem]

    def records(self) -> list[dict[str, Any]]:
        return [asdict(f) for f in self.findings]


def _whole_columns(template: str) -> bool:
    """Where the template spans a whole value column ({sheet:…}, {all_sheets}), the
    range ends are not compared: deleting or adding a row at a sheet's end moves them."""
    return "{sheet:" in template or "{all_sheets}" in template


def _is_error(v: Any) -> bool:
    return isinstance(v, str) and (v.startswith("#") or v.startswith("Err:"))


def _same(actual: Any, expected: Any, rel: float) -> bool:
    import math

    if isinstance(expected, str):
        return isinstance(actual, str) and actual == expected
    if isinstance(actual, bool) or not isinstance(actual, (int, float)):
        return False
    if expected == 0:
        return abs(actual) <= 1e-12
    return math.isclose(actual, expected, rel_tol=rel)


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
                found, n = _cell_findings(
                    row, t.sheet, cell, i, name, layout, values, reference.get(name), rel
                )
                findings.extend(found)
                compared += n
                if not row.input:
                    kept = stored[t.sheet][cell.coordinate]
                    findings.extend(_stored_findings(row, t.sheet, kept, name, values, rel))
                    if kept.value is None and cell.data_type == "f":
                        unstored[t.sheet] = unstored.get(t.sheet, 0) + 1
            if row.name and not row.mirror:
                findings.extend(_name_findings(wb, row.key, t.sheet, r, sl))
    if unstored:
        findings.append(_unstored_finding(unstored))
    return Report(
        path=where,
        engine=engine,
        scenarios=names,
        findings=_errors_from_invalid_inputs(findings),
        cells_compared=compared,
    )


SHOWN_ERROR_CELLS = 3  # cells named in the one finding for a scenario's error values


def _errors_from_invalid_inputs(findings: list[Finding]) -> list[Finding]:
    """A scenario with an invalid input has error values wherever the input flows (an
    n_gpus of 'abc' gives over 700): one finding says how many and names the first
    cells, after the input finding that explains them."""
    from sheetgen.wording import plural

    invalid = {f.scenario for f in findings if f.kind == "input invalid"}
    errors: dict[str, list[Finding]] = {}
    kept = []
    for f in findings:
        if f.kind == "error value" and f.scenario in invalid:
            errors.setdefault(f.scenario, []).append(f)
        else:
            kept.append(f)
    for scenario, found in errors.items():
        first = ", ".join(f"{f.sheet} {f.key} ({f.detail})" for f in found[:SHOWN_ERROR_CELLS])
        more = len(found) - SHOWN_ERROR_CELLS
        detail = (
            f"{plural(len(found), 'cell')} compute to error values, following from the "
            f"invalid input: {first}" + (f" and {more:,} more" if more > 0 else "")
        )
        kept.append(Finding("error value", "", "", scenario, detail=detail))
    return kept


def _input_key(field: str) -> str:
    """The key of a cross-field error's field, "Inputs column E 'name'.mfu_source" ->
    "mfu_source" (the finding names the sheet and the scenario itself)."""
    import re

    found = re.match(r"Inputs column [A-Z]+ .*\.([a-z][a-z0-9_]*)$", field, re.S)
    return found.group(1) if found else field


def _formula_findings(row: Any, sheet: str, cell: Any, i: int, name: str, layout: Any) -> list:
    """A typed value where a formula belongs, or a formula that is not the template's."""
    raw = cell.value
    if cell.data_type != "f" or not isinstance(raw, str):
        detail = f"{cell.coordinate} holds a typed value, not its formula"
        return [Finding("constant", sheet, row.key, name, actual=raw, detail=detail)]
    try:
        expected = layout.translate(row.formula or "", i, sheet)
    except KeyError as e:
        detail = f"cannot rebuild the template formula: {e}"
        return [Finding("formula changed", sheet, row.key, name, actual=raw, detail=detail)]
    if not same_formula(expected, raw, _whole_columns(row.formula or "")):
        detail = f"{cell.coordinate} differs from the template"
        return [Finding("formula changed", sheet, row.key, name, expected, raw, detail)]
    return []


def _cell_findings(
    row: Any,
    sheet: str,
    cell: Any,
    i: int,
    name: str,
    layout: Any,
    values: dict,
    reference: dict[str, Any] | None,
    rel: float,
) -> tuple[list[Finding], int]:
    """Findings for one cell, and 1 if its value was compared with the reference."""
    found = [] if row.input else _formula_findings(row, sheet, cell, i, name, layout)
    actual = values.get((sheet, row.key, name))
    if _is_error(actual):
        return [*found, Finding("error value", sheet, row.key, name, actual=actual,
                                detail=cell.coordinate)], 0  # fmt: skip
    if actual is None or actual == "":
        return [*found, Finding("blank", sheet, row.key, name, detail=cell.coordinate)], 0
    if row.check and actual == 0:
        detail = check_detail(row, name, layout, values)
        if row.check in ("error", "master"):
            found.append(Finding("check failed", sheet, row.key, name, 1, 0, detail))
        else:
            found.append(Finding("warning", sheet, row.key, name, 1, 0, detail))
    expected = None if reference is None else reference.get(row.key)
    if expected is None:
        return found, 0
    if row.input and isinstance(actual, str) and isinstance(expected, str):
        # Typed choices are matched as the workbook's formulas match them (Excel's = and
        # MATCH ignore case): 'Typed' is the typed clock, read back as 'typed'.
        if actual.casefold() == expected.casefold():
            actual = expected
    if not _same(actual, expected, rel):
        detail = cell.coordinate
        if isinstance(actual, (int, float)) and isinstance(expected, (int, float)) and expected:
            detail += f", relative difference {(actual - expected) / expected:+.3g}"
        found.append(Finding("value differs", sheet, row.key, name, expected, actual, detail))
    return found, 1


MAX_NUMBERS = 8  # inputs quoted in a check's message


def check_detail(row: Any, name: str, layout: Any, values: dict) -> str:
    """Why a check is 0, in words: what it requires (its label), the recalculated
    values its formula reads (the first MAX_NUMBERS; the verdict's own text for the
    verdict) and its explanation."""
    import re

    from sheetgen.wording import plural

    keys = list(dict.fromkeys(re.findall(r"\{([a-z][a-z0-9_]*)\}", row.formula or "")))
    numbers = []
    for key in keys[:MAX_NUMBERS]:
        where = layout.cells.get(key)
        if where is not None and (where[0], key, name) in values:
            numbers.append(f"{key} = {_quoted(values[(where[0], key, name)])}")
    if len(keys) > MAX_NUMBERS:
        numbers.append(f"{plural(len(keys) - MAX_NUMBERS, 'more input')} on the Checks sheet")
    verdict = values.get(("Checks", "plan_verdict", name))
    said = f"not met: {row.label}"
    if row.key == "plan_ok" and isinstance(verdict, str):
        said += f" (verdict: {verdict})"
    if numbers:
        said += f"; with {', '.join(numbers)}"
    return f"{said}. {row.explanation}".strip() if row.explanation else said


def _quoted(value: Any) -> str:
    """A recalculated value as a reader would type it: 126, 0.42, 1.6e+06, 'text'."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.3g}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _stored_findings(
    row: Any, sheet: str, cell: Any, name: str, values: dict, rel: float
) -> list[Finding]:
    """The cached value stored with a formula must be the formula's result."""
    import datetime as dt

    stored = cell.value
    actual = values.get((sheet, row.key, name))
    if stored is None or actual is None or _is_error(actual):
        return []  # nothing stored (files written without a cache), or reported already
    if isinstance(stored, (dt.datetime, dt.date)):
        from openpyxl.utils.datetime import to_excel

        stored = to_excel(stored)
    if isinstance(stored, bool):
        stored = int(stored)
    if isinstance(actual, bool):
        actual = int(actual)
    if _is_error(stored) or not _same(stored, actual, rel):
        detail = f"{cell.coordinate}: stored value differs from the formula's result"
        return [Finding("stored value differs", sheet, row.key, name, actual, stored, detail)]
    return []


def _unstored_finding(unstored: dict[str, int]) -> Finding:
    """One warning for formula cells saved without their result (a program that does not
    calculate, such as openpyxl, wrote the file): not wrong, but viewers that do not
    calculate (pandas, mail previews, some phones) show them blank."""
    from sheetgen.wording import plural

    total = sum(unstored.values())
    sheets = ", ".join(sorted(unstored, key=lambda s: -unstored[s])[:4])
    more = f" and {plural(len(unstored) - 4, 'more sheet')}" if len(unstored) > 4 else ""
    detail = (
        f"{plural(total, 'formula cell')} ({sheets}{more}) have no stored result: a program "
        "that does not calculate saved the file, so pandas and mail previews show them "
        "blank; open and save it in Excel or LibreOffice before sending it"
    )
    return Finding("no stored values", "", "", "", detail=detail)


def _name_findings(wb: Any, key: str, sheet: str, row: int, sl: Any) -> list[Finding]:
    """Each scenario's workbook name ``<key>_<n>`` points at its key's cell."""
    from openpyxl.utils import get_column_letter, quote_sheetname

    from sheetgen.checking.formula_compare import formula_tokens

    out = []
    for i, scen in enumerate(sl.scenarios):
        label = f"{key}_{i + 1}"
        expected = f"{quote_sheetname(sheet)}!${get_column_letter(sl.first_col + i)}${row}"
        defined = wb.defined_names.get(label)
        if defined is None:
            out.append(Finding("defined name", sheet, key, scen, expected, None,
                               f"workbook name {label} is missing"))  # fmt: skip
            continue
        found = defined.attr_text or ""
        if formula_tokens(found) != formula_tokens(expected):
            out.append(Finding("defined name", sheet, key, scen, expected, found,
                               f"workbook name {label} points elsewhere"))  # fmt: skip
    return out


def render_report(report: Report, fmt: str) -> str:
    import json

    if fmt == "json":
        return json.dumps(
            {
                "file": report.path,
                "engine": report.engine,
                "scenarios": report.scenarios,
                "cells_compared": report.cells_compared,
                "problems": len(report.problems),
                "findings": report.records(),
            },
            indent=1,
            default=str,
        )
    from sheetgen.wording import plural

    lines = [finding_line(f) for f in report.findings]
    n = len(report.problems)
    warnings = len(report.findings) - n
    verdict = "OK" if n == 0 else plural(n, "problem")
    if warnings:
        verdict += f", {plural(warnings, 'warning')}"
    lines.append(
        f"{verdict}: {plural(report.cells_compared, 'cell')} of "
        f"{plural(len(report.scenarios), 'scenario')} compared with the reference ({report.engine})"
    )
    return "\n".join(lines)


# The verdict and its two tests: a 0 is a plan that cannot run as entered (reported
# beside the warnings, as neither is a fault of the file).
VERDICT_KEYS = frozenset({"plan_ok", *VERDICT_TESTS})


def finding_line(f: Finding) -> str:
    """One finding in words: level and kind, the check or key and its sheet, the
    scenario, the numbers, and why."""
    level = "FAIL" if f.is_problem else "WARN"
    if f.kind in ("warning", "check failed"):
        kind = "warning" if f.kind == "warning" else "error check failed"
        if f.kind == "warning" and f.key in VERDICT_KEYS:  # not OK, yet not tampering
            kind = "plan not OK"
        scen = f", scenario {f.scenario!r}" if f.scenario else ""
        return f"{level} {kind}: {f.key} on {f.sheet}{scen} is 0 (1 = pass), {f.detail}"
    what = f"{f.sheet} {f.key}".strip()  # other findings: "Schedule train_days [name]"
    if not what:  # a finding about the whole file, or a whole scenario
        scen = f" [{f.scenario}]" if f.scenario else ""
        return f"{level} {f.kind}{scen}: {f.detail}"
    scen = f" [{f.scenario}]" if f.scenario else ""
    vals = ""
    if f.expected is not None or f.actual is not None:
        vals = f": expected {f.expected!r}, found {f.actual!r}"
    extra = f" ({f.detail})" if f.detail else ""
    return f"{level} {f.kind}: {what}{scen}{vals}{extra}"
