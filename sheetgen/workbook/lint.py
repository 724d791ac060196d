"""Static lint of generated formulas (DESIGN.md house style).

* only the functions DESIGN.md allows (nothing that needs ``_xlfn.``),
* no E-notation literals,
* no numeric literal other than 0, 1, 2, unit factors (10^9, 10^12, 86400 s/day,
  24 h/day) and the constants a template row declares,
* defined names valid in Excel and Google Sheets (and never cell-like),
* no structured references, OFFSET or INDIRECT;
* Excel's limits (``excel_limits``): formulas at most 8,192 characters and 64 levels
  of nesting, sheet names at most 31 characters, data-validation titles at most 32 and
  messages at most 255, drop-down lists from a literal list or a defined name, and no
  MOD (Excel's MOD fails on large quotients; whole-number tests use ``x=INT(x)``).
"""

from __future__ import annotations

import re
from pathlib import Path

ALLOWED_FUNCTIONS = frozenset(
    {
        "SUM", "SUMPRODUCT", "MIN", "MAX", "ROUND", "ROUNDUP", "ROUNDDOWN", "CEILING",
        "FLOOR", "INT", "ABS", "SQRT", "POWER", "LN", "LOG", "EXP", "IF", "IFERROR",
        "AND", "OR", "NOT", "INDEX", "MATCH", "CHOOSE", "ISBLANK", "ISNUMBER", "TEXT",
    }
)  # fmt: skip
# Excel specifications and limits (Microsoft support: "Excel specifications and limits").
MAX_FORMULA_CHARS = 8192
MAX_NESTING = 64
MAX_SHEET_NAME = 31
MAX_DV_TITLE = 32
MAX_DV_MESSAGE = 255
UNIT_FACTORS = frozenset({86400.0, 24.0})
ALWAYS_OK = frozenset({0.0, 1.0, 2.0})

_STRING = re.compile(r'"(?:[^"]|"")*"')
_SHEET = re.compile(r"'(?:[^']|'')+'!|[A-Za-z_][A-Za-z0-9_.]*!")
_CELL = re.compile(r"\$?\b[A-Z]{1,3}\$?[0-9]+\b")
_FUNC = re.compile(r"\b([A-Za-z_][A-Za-z0-9_.]*)\s*\(")
_POWER10 = re.compile(r"\b10\^(9|12)\b")
_NUMBER = re.compile(r"(?<![A-Za-z_$.\d])(\d+(?:\.\d+)?)([eE][+-]?\d+)?(?![A-Za-z_\d])")
_NAME_OK = re.compile(r"^[A-Za-z_\\][A-Za-z0-9_.]*$")
_CELL_LIKE = re.compile(r"^[A-Za-z]{1,3}[0-9]+$|^[Rr][0-9]*[Cc][0-9]*$|^[Rr]$|^[Cc]$")


def strip_formula(formula: str) -> str:
    """The formula without its string literals and sheet prefixes."""
    text = formula[1:] if formula.startswith("=") else formula
    text = _STRING.sub('""', text)
    return _SHEET.sub("", text)


def lint_formula(formula: str, constants: tuple[float, ...] = ()) -> list[str]:
    problems = []
    text = strip_formula(formula)
    if "_xlfn" in text.lower() or "[" in text:
        problems.append("uses _xlfn functions or structured references")
    for name in _FUNC.findall(text):
        if name.upper() == "MOD":
            problems.append("MOD fails in Excel on large values: test x=INT(x) instead")
        elif name.upper() not in ALLOWED_FUNCTIONS:
            problems.append(f"function {name} is not allowed")
    if len(formula) > MAX_FORMULA_CHARS:
        problems.append(f"formula of {len(formula)} characters (Excel: {MAX_FORMULA_CHARS})")
    depth = nesting(text)
    if depth > MAX_NESTING:
        problems.append(f"nesting {depth} levels deep (Excel: {MAX_NESTING})")
    bare = _CELL.sub("", _POWER10.sub("", text))
    for digits, exponent in _NUMBER.findall(bare):
        if exponent:
            problems.append(f"E-notation literal {digits}{exponent}")
            continue
        value = float(digits)
        if value not in ALWAYS_OK and value not in UNIT_FACTORS and value not in constants:
            problems.append(f"literal {digits} is neither 0, 1, 2, a unit factor nor declared")
    return problems


def nesting(text: str) -> int:
    """The deepest parenthesis nesting of a formula (string literals stripped)."""
    depth = deepest = 0
    for ch in text:
        if ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")":
            depth -= 1
    return deepest


def excel_limits(wb) -> list[str]:
    """Breaches of Excel's limits outside the formulas: sheet names, data validation."""
    problems = []
    names = set(wb.defined_names)
    for ws in wb.worksheets:
        if len(ws.title) > MAX_SHEET_NAME:
            problems.append(f"sheet name {ws.title!r} is over {MAX_SHEET_NAME} characters")
        for dv in ws.data_validations.dataValidation:
            where = f"{ws.title}!{dv.sqref} data validation"
            if len(dv.errorTitle or "") > MAX_DV_TITLE or len(dv.promptTitle or "") > MAX_DV_TITLE:
                problems.append(f"{where}: title over {MAX_DV_TITLE} characters")
            if len(dv.error or "") > MAX_DV_MESSAGE or len(dv.prompt or "") > MAX_DV_MESSAGE:
                problems.append(f"{where}: message over {MAX_DV_MESSAGE} characters")
            source = (dv.formula1 or "").lstrip("=")
            if dv.type == "list" and not (source.startswith('"') or source in names):
                problems.append(f"{where}: list source {source!r} is not a defined name")
    return problems


def valid_defined_name(name: str) -> bool:
    return bool(_NAME_OK.match(name)) and not _CELL_LIKE.match(name) and len(name) <= 255


def lint_workbook(path: Path) -> list[str]:
    """Problems in every formula and defined name of a generated workbook."""
    import openpyxl

    from sheetgen.workbook.templates import load_templates

    declared = {r.key: r.constants for t in load_templates() for r in t.keyed_rows}
    wb = openpyxl.load_workbook(path)
    problems = []
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            key = row[0].value if row else None
            for cell in row:
                if isinstance(cell.value, str) and cell.value.startswith("="):
                    for p in lint_formula(cell.value, declared.get(key, ())):
                        problems.append(f"{ws.title}!{cell.coordinate} ({key}): {p}")
    problems.extend(excel_limits(wb))
    for name in wb.defined_names:
        if not valid_defined_name(name):
            problems.append(f"defined name {name!r} is not valid in Excel / Google Sheets")
    return problems
