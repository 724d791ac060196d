"""pycel's formula compilation done once per formula *shape*, not once per cell.

pycel turns every formula into a line of Python (``ExcelFormula.python_code``)
through openpyxl's tokenizer, a shunting-yard parser, a syntax tree and code
generation: about 3 ms a formula, three quarters of :func:`recalc_pycel`'s time
on a sheetgen workbook. sheetgen's formulas are few shapes repeated: one formula
per row across the scenario columns, the same row shapes on many rows. Two
formulas have the same *shape* when they are on the same sheet and their text is
the same once every A1 reference (``D12``, ``$D$5``, ``Inputs!E7``,
``'Other sheet'!B2:C9``) is replaced by a placeholder; string literals are kept.

For the first formula of a shape pycel does its plain work, and the Python it
wrote is cut at the address strings it put there (``_C_("Calc!D12")``,
``_R_("Calc!B2:C9")``, ``_REF_(...)``) into a template. A later formula of the
shape gets the template with its own references, each turned into the address
string exactly as pycel's ``RangeNode`` does (``$`` removed, the cell's sheet
when the reference names none, ``AddressRange.create``), and the addresses the
formula needs (``needed_addresses``) from the same strings. Evaluation is
pycel's own, unchanged.

Why it gives pycel's own result:

* The Python pycel writes depends on the formula's tokens; a reference token's
  own text enters only through its address string (code generation never looks
  at which cell it is), so two formulas of one shape differ only there.
* A template is kept only when it passes these checks on the formula it came
  from, otherwise the shape stays on the plain path for good: the address
  strings in the Python are, in order and in number, exactly the formula's
  references as above (so a defined name, an R1C1 or table reference, a
  multi-area range, ``ROW()`` without argument or anything else that makes pycel
  write an address the text does not show leaves the shape on the plain path);
  filling the template with the formula's own references gives back pycel's
  Python character for character; and the addresses read from the strings equal
  pycel's ``needed_addresses``.
* Filling a template, a reference whose kind (one cell or a range) differs from
  the template's, or any error, leaves that cell to pycel's plain path.
* ``tests/test_pycel_fast.py`` compares the Python of every formula cell and
  every value with the plain path on generated workbooks, so a pycel release
  that writes its Python differently fails there, not silently.

Templates are workbook-independent (a defined name never gets one), so they are
kept for the process (bounded) and a second workbook starts warm. Uses pycel's
``ExcelCompiler.Cell`` factory attribute and ``ExcelFormula``'s ``_python_code``
and ``_needed_addresses`` caches (pycel 1.0b30); where these are absent
:func:`install` does nothing and pycel runs as it always did.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

# A string literal (kept), or an A1 reference: an optional sheet (quoted or bare)
# then a cell or a cell range. Not inside a name (``x_D5``) or brackets, not a
# function (``LOG10(``), not followed by more of a name, a sheet mark or a colon.
_FORMULA_PART = re.compile(
    r"""("(?:[^"]|"")*")"""
    r"""|(?<![\w.$'!\[])((?:'(?:[^']|'')+'|[A-Za-z_][\w.]*)!)?"""
    r"""\$?[A-Z]{1,3}\$?[0-9]+(?::\$?[A-Z]{1,3}\$?[0-9]+)?(?![\w(!.:\[\]])"""
)
# The address strings pycel writes into its Python (``excelformula.ADDR_FUNCS_NAMES``).
_CODE_ADDRESS = re.compile(r'\b_(?:C|R|REF)_\("([^"\\]*)"\)')
_SLOT = "\x00"
_MAX_SHAPES = 50_000
_MAX_ADDRESSES = 200_000


@dataclass(frozen=True)
class Template:
    """Python of one formula shape, cut at the address strings: ``parts`` has one
    more item than ``ranges`` (whether each address was a range). ``compiled``:
    pycel's compilation of the shape with a placeholder string for each address
    (the code object, the names it uses, the placeholders), or None."""

    parts: tuple[str, ...]
    ranges: tuple[bool, ...]
    compiled: tuple[Any, frozenset[str], tuple[str, ...]] | None = None

    def fill(self, addresses: list[str]) -> str:
        out = [self.parts[0]]
        for address, part in zip(addresses, self.parts[1:], strict=True):
            out.append(address)
            out.append(part)
        return "".join(out)


def _strings(code: Any) -> list[str]:
    """Every string constant of ``code`` and of the code objects inside it."""
    out: list[str] = []
    for const in code.co_consts:
        if isinstance(const, str):
            out.append(const)
        elif hasattr(const, "co_consts"):
            out.extend(_strings(const))
    return out


def _with_strings(code: Any, new: dict[str, str]) -> Any:
    """``code`` with each string constant that is a key of ``new`` replaced."""
    consts = tuple(
        new.get(c, c)
        if isinstance(c, str)
        else _with_strings(c, new)
        if hasattr(c, "co_consts")
        else c
        for c in code.co_consts
    )
    return code.replace(co_consts=consts)


def _compile(parts: tuple[str, ...]) -> tuple[Any, frozenset[str], tuple[str, ...]] | None:
    """pycel's compilation of a shape, each address a placeholder string constant.

    Kept only when each placeholder is one whole string constant, once, and no
    other constant contains one. The addresses are only ever arguments of
    ``_C_``/``_R_``/``_REF_`` calls, which pycel's syntax-tree rewrite and Python's
    compiler never inspect or fold, so putting a cell's addresses in their place
    gives the code pycel compiles from that cell's Python (up to the sharing of
    equal constants)."""
    from pycel.excelformula import ExcelFormula

    holders = tuple(f"<sheetgen slot {i}>" for i in range(len(parts) - 1))
    code, names = ExcelFormula(
        "=" + Template(parts, ()).fill(list(holders)), formula_is_python_code=True
    ).compiled_python
    strings = _strings(code)
    for holder in holders:
        if strings.count(holder) != 1 or sum(holder in s for s in strings) != 1:
            return None
    return code, frozenset(names), holders


def _filled_code(
    compiled: tuple[Any, frozenset[str], tuple[str, ...]], texts: list[str]
) -> tuple[Any, set[str]]:
    """``ExcelFormula.compiled_python`` for a cell whose addresses are ``texts``."""
    code, names, holders = compiled
    return _with_strings(code, dict(zip(holders, texts, strict=True))), set(names)


_NO_TEMPLATE = Template((), ())  # a shape pycel always compiles itself
_templates: dict[tuple[str, str], Template] = {}
_lock = threading.Lock()
_addresses: dict[tuple[str, str], tuple[str, bool, Any]] = {}
_stats = {"templated": 0, "plain": 0}


def shape(formula: str) -> tuple[str, list[str]]:
    """``formula`` with each A1 reference replaced by a placeholder, and the references."""
    refs: list[str] = []

    def cut(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return m.group(1)
        refs.append(m.group(0))
        return _SLOT

    return _FORMULA_PART.sub(cut, formula), refs


def _address(ref: str, sheet: str) -> tuple[str, bool, Any]:
    """What pycel's ``RangeNode._emit`` makes of the reference text ``ref`` on
    ``sheet``: the address string it writes, whether it is a range, and the
    ``AddressRange`` that ``needed_addresses`` reads back from that string."""
    key = (ref, sheet)
    known = _addresses.get(key)
    if known is None:
        from pycel.excelutil import AddressRange

        made = AddressRange.create(ref.replace("$", ""), sheet="" if "!" in ref else sheet)
        text = f"{made}"  # what RangeNode writes: format(address)
        known = (text, bool(made.is_range), AddressRange(text))
        if len(_addresses) >= _MAX_ADDRESSES:
            _addresses.clear()
        _addresses[key] = known
    return known


def _build(code: str, refs: list[str], sheet: str, needed: tuple) -> Template:
    """The template of ``code`` (pycel's Python for a formula with references
    ``refs``), or ``_NO_TEMPLATE`` where the checks in the module docstring fail."""
    from pycel.excelutil import uniqueify

    found = list(_CODE_ADDRESS.finditer(code))
    if len(found) != len(refs):
        return _NO_TEMPLATE
    addresses = [_address(ref, sheet) for ref in refs]
    texts = [text for text, _, _ in addresses]
    if any(m.group(1) != text for m, text in zip(found, texts, strict=True)):
        return _NO_TEMPLATE
    parts, start = [], 0
    for m in found:
        parts.append(code[start : m.start(1)])
        start = m.end(1)
    parts.append(code[start:])
    template = Template(tuple(parts), tuple(is_range for _, is_range, _ in addresses))
    if template.fill(texts) != code:
        return _NO_TEMPLATE
    if uniqueify(a for _, _, a in addresses) != tuple(needed):
        return _NO_TEMPLATE
    try:
        compiled = _compile(template.parts)
    except Exception:  # noqa: BLE001 - pycel compiles each formula of the shape itself
        compiled = None
    return Template(template.parts, template.ranges, compiled)


def _prime(cell: Any) -> None:
    """Give ``cell``'s formula its Python from its shape's template (or build one)."""
    formula = cell.formula
    text = getattr(formula, "base_formula", None)
    if not isinstance(text, str) or getattr(formula, "_python_code", 0) is not None:
        return
    if "[" in text:  # a table or another workbook: pycel alone
        return
    sheet = cell.sheet
    skeleton, refs = shape(text)
    key = (sheet, skeleton)
    template = _templates.get(key)
    if template is None:
        code = formula.python_code  # pycel's plain path, which the template must equal
        needed = formula.needed_addresses
        try:
            template = _build(code, refs, sheet, needed) if code else _NO_TEMPLATE
        except Exception:  # noqa: BLE001 - the shape stays on pycel's own path
            template = _NO_TEMPLATE
        with _lock:
            if len(_templates) >= _MAX_SHAPES:
                _templates.clear()
            _templates[key] = template
        _stats["plain"] += 1
        if template.compiled is not None:  # compiled once for the shape, this cell too
            formula._compiled_python = _filled_code(
                template.compiled, [text for text, _, _ in (_address(ref, sheet) for ref in refs)]
            )
        return
    if template is _NO_TEMPLATE:
        _stats["plain"] += 1
        return
    from pycel.excelutil import uniqueify

    addresses = [_address(ref, sheet) for ref in refs]
    if tuple(is_range for _, is_range, _ in addresses) != template.ranges:
        _stats["plain"] += 1
        return
    texts = [text for text, _, _ in addresses]
    formula._python_code = template.fill(texts)
    formula._needed_addresses = uniqueify(a for _, _, a in addresses)
    if template.compiled is not None:
        formula._compiled_python = _filled_code(template.compiled, texts)
    _stats["templated"] += 1


def install(compiler: Any) -> bool:
    """Make ``compiler`` (a fresh ``pycel.ExcelCompiler``) compile formulas by shape.

    Wraps its ``Cell`` factory; each new formula cell is primed, and a cell the
    priming fails on is left to pycel's plain path. Returns False, changing
    nothing, where this pycel lacks what the fast path relies on.
    """
    from pycel.excelformula import ExcelFormula

    make = getattr(compiler, "Cell", None)
    probe = ExcelFormula("=1")
    if make is None or not all(
        hasattr(probe, name)
        for name in ("base_formula", "_python_code", "_needed_addresses", "_compiled_python")
    ):
        return False

    def cell(*args: Any, **kwargs: Any) -> Any:
        made = make(*args, **kwargs)
        if getattr(made, "formula", None) is not None:
            try:
                _prime(made)
            except Exception:  # noqa: BLE001 - pycel's own path decides, and reports
                formula = made.formula
                formula._python_code = None
                formula._needed_addresses = None
                formula._compiled_python = None
        return made

    compiler.Cell = cell
    return True


def clear() -> None:
    """Forget every template (the benchmark's cold start)."""
    with _lock:
        _templates.clear()
        _addresses.clear()


def stats() -> dict[str, int]:
    """Formula cells compiled from a template and by pycel itself, since the start."""
    return dict(_stats)
