"""One cell of a checked workbook against the template and the reference: its formula
(a typed value, or one that is not the template's), its recalculated value, the value
stored with it, and the workbook names that point at it.  ``check`` runs these over
every keyed row; each returns the findings (``findings.Finding``) it makes."""

from __future__ import annotations

from typing import Any

from sheetgen.checking.findings import Finding
from sheetgen.checking.formula_compare import same_formula


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


def cell_findings(
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


def stored_findings(
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


def name_findings(wb: Any, key: str, sheet: str, row: int, sl: Any) -> list[Finding]:
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
