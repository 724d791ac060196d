"""Compare spreadsheet formulas by meaning, not spelling.

A formula is tokenized (openpyxl's Tokenizer, the Excel grammar) and each token
normalised, so that what Excel, LibreOffice and Gnumeric change when they
re-save a file does not count as an edit:

* sheet names: ``'Inputs'!D8`` = ``Inputs!D8`` (quotes only where needed,
  doubled quotes inside), and sheet names compare case-insensitively;
* ``$`` anchors, letter case of cell references, function names and booleans;
* whitespace tokens and function prefixes such as ``_xlfn.`` / ``_xlws.``;
* numbers by value (``1E3`` = ``1000`` = ``1000.0``);
* a single-cell range written as a range (``A1:A1`` = ``A1``).

Everything else — another cell, another operator, another function, another
constant — stays different, so a real edit is still reported.
"""

from __future__ import annotations

import re
from functools import lru_cache

_PREFIXES = ("_XLFN._XLWS.", "_XLFN.", "_XLWS.", "_XLUDF.")
_CELL = r"\$?[A-Za-z]{1,3}\$?[0-9]+"
_SINGLE_RANGE_RE = re.compile(rf"^({_CELL}):({_CELL})$")


def _sheet_ref(text: str) -> str:
    """``'Sheet name'!$A$1:$B$2`` -> ``SHEET NAME!A1:B2``."""
    sheet, bang, ref = text.rpartition("!")
    if bang:
        sheet = sheet.strip()
        if len(sheet) >= 2 and sheet[0] == sheet[-1] == "'":
            sheet = sheet[1:-1].replace("''", "'")
        # A 3-D or external reference keeps its text, unquoted.
        sheet = sheet.upper() + "!"
    ref = ref.replace("$", "").upper()
    m = _SINGLE_RANGE_RE.match(ref)
    if m and m.group(1) == m.group(2):
        ref = m.group(1)
    return sheet + ref


def _number(text: str) -> str:
    try:
        value = float(text)
    except ValueError:
        return text.upper()
    return repr(value)


@lru_cache(maxsize=65_536)
def formula_tokens(formula: str) -> tuple[tuple[str, str], ...]:
    """The formula as (kind, normalised text) tokens; whitespace dropped."""
    from openpyxl.formula.tokenizer import Token, Tokenizer

    text = formula if formula.startswith("=") else "=" + formula
    try:
        items = Tokenizer(text).items
    except Exception:  # noqa: BLE001 - an unparsable formula compares as its text
        return (("text", " ".join(formula.split()).upper()),)
    out = []
    for tok in items:
        if tok.type == Token.WSPACE:
            continue
        value = tok.value
        if tok.type == Token.OPERAND:
            if tok.subtype == Token.RANGE:
                value = _sheet_ref(value)
            elif tok.subtype == Token.NUMBER:
                value = _number(value)
            elif tok.subtype in (Token.LOGICAL, Token.ERROR):
                value = value.upper()
            # TEXT operands keep their spelling: "abc" and "ABC" differ.
        elif tok.type == Token.FUNC:
            value = value.upper()
            for prefix in _PREFIXES:
                if value.startswith(prefix):
                    value = value[len(prefix) :]
                    break
        elif tok.type in (Token.SEP, Token.OP_PRE, Token.OP_IN, Token.OP_POST, Token.PAREN):
            value = value.strip()
        out.append((f"{tok.type}:{tok.subtype}", value))
    return tuple(out)


def strip_range_rows(tokens: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """Range operands without their row numbers (``D5:D80`` -> ``D:D``): used where a
    template spans a whole value column whose end legitimately moves with rows."""
    out = []
    for kind, value in tokens:
        if kind.startswith("OPERAND:RANGE") and ":" in value:
            value = re.sub(r"([A-Z]+)[0-9]+", r"\1", value)
        out.append((kind, value))
    return tuple(out)


def same_formula(a: str, b: str, whole_columns: bool = False) -> bool:
    """Whether two formulas mean the same (see the module docstring)."""
    ta, tb = formula_tokens(a), formula_tokens(b)
    if whole_columns:
        ta, tb = strip_range_rows(ta), strip_range_rows(tb)
    return ta == tb
