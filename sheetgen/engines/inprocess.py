"""In-process engines: pycel (the fast one) and formulas, behind one interface.

Both take a workbook path and return values in the ``read_values`` shape; both
read literal cells as stored and evaluate every formula cell from the formulas,
ignoring cached values.

* **pycel** (:func:`recalc_pycel`, `pycel <https://pypi.org/project/pycel/>`_,
  tested with 1.0b30) compiles each formula to Python and evaluates them all in
  one call. On sheetgen's test matrices it agrees with the reference on every
  cell and is about 3.5x faster than ``formulas`` (13 scenarios: ~7 s against
  ~24 s on a 2-core machine), the more since each formula shape is compiled
  once (:mod:`sheetgen.engines.pycel_fast`). Error results are their strings
  (``"#DIV/0!"``).
  Workbook-scoped defined names (cells and ranges) work; sheet-scoped ones,
  ``OFFSET``-style volatile functions and links to other workbooks are not
  used by sheetgen and are not relied on.

* **formulas** (:func:`recalc_formulas`, the
  `formulas <https://pypi.org/project/formulas/>`_ package, tested with 1.3.4).
  Found by experiment to work: workbook-scoped defined names for single cells
  and ranges (including ranges used inside ``INDEX``/``MATCH``), cross-sheet
  references (also to sheet names with spaces), ``INDEX``/``MATCH``/``VLOOKUP``/
  ``XLOOKUP``, ``IF``/``IFS``/``IFERROR``, string comparison in ``IF``
  (case-insensitive like Excel), ``&`` concatenation, ``TEXT``, ``ROUNDUP``,
  ``CEILING``, ``SUMPRODUCT``, ``MAXIFS``, ``LET``, literal error cells, and
  ``#DIV/0!``/``#N/A``/``#NAME?`` results. Data validation is ignored (harmless).
  Not supported, or different from Excel/LibreOffice: sheet-scoped defined
  names (``localSheetId``) are ignored (``#REF!``); an undefined name gives
  ``#REF!`` (Excel: ``#NAME?``); unknown functions give ``#NAME?``, ``OFFSET``
  is unknown and ``INDIRECT`` gives ``#REF!``; circular references give
  ``#REF!``; a sheet whose name contains an apostrophe breaks references to it;
  references to other workbooks are not resolved.

Both packages are imported only when called, so importing this module is cheap.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import re
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from sheetgen.engines import pycel_fast
from sheetgen.engines.common import (
    RecalcError,
    Values,
    grid_rows,
    layout_values,
    open_workbook,
    require_file,
    stored_cells,
)

# formulas keys look like "'[book.xlsx]SHEET NAME'!D12" (sheet upper-cased, a quote
# inside the sheet name is not escaped).
_FORMULAS_CELL_KEY = re.compile(
    r"^'\[(?P<book>[^\]]*)\](?P<sheet>.*)'!\$?(?P<col>[A-Z]{1,3})\$?(?P<row>[0-9]+)$"
)
_formulas_lock = threading.Lock()


# ------------------------------------------------------------------------ pycel


def _sheet_ref(title: str) -> str:
    return "'" + title.replace("'", "''") + "'"


def _pycel_plain(value: object) -> object:
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        value = value.item()
    if isinstance(value, tuple):  # a 1x1 range result
        while isinstance(value, tuple) and len(value) == 1:
            value = value[0]
    return value


def _pycel_defined_names(compiler: object) -> None:
    """Give pycel the workbook's defined names itself.

    pycel 1.0b30 reads ``workbook.defined_names.definedName``, which openpyxl 3.1
    replaced by a mapping; any formula using a name would then fail. The map it
    builds (name -> [(cell range, sheet)]) is filled here from the mapping, the
    same way, before anything is evaluated.
    """
    excel = compiler.excel  # type: ignore[attr-defined]
    names = excel.workbook.defined_names
    if hasattr(names, "definedName") or getattr(excel, "_defined_names", None) is not None:
        return  # an openpyxl that pycel reads by itself
    table = {}
    for name, defined in names.items():
        destinations = [
            (alias, sheet) for sheet, alias in defined.destinations if sheet in excel.workbook
        ]
        if destinations:
            table[str(name)] = destinations
    excel._defined_names = table


def _pycel_compiler(src: Path, plain: bool) -> Any:
    """A pycel compiler over ``src``, its defined names filled in.

    pycel's own loader (``plain``) reads the file twice, the second time for the
    cached values, and a formula cell with a cached value is then never
    evaluated: it reads back as cached. Otherwise the formula workbook alone is
    read, once, with pycel's own guard against openpyxl's date conversion, and
    handed to pycel, which then sees no cached values
    (``ExcelOpxWrapperNoData``): every formula cell is evaluated from its formula.
    """
    from pycel import ExcelCompiler

    if plain:
        compiler = ExcelCompiler(filename=str(src))
    else:
        from unittest import mock

        from openpyxl import load_workbook
        from pycel.excelwrapper import ExcelOpxWrapper

        with mock.patch("openpyxl.worksheet._reader.from_excel", ExcelOpxWrapper.from_excel):
            workbook = load_workbook(str(src))
        compiler = ExcelCompiler(excel=workbook)
    _pycel_defined_names(compiler)
    return compiler


def _one_by_one(src: Path, addresses: list[str], plain: bool) -> list[object]:
    """Evaluate cell by cell when a formula refers to a sheet that is gone (pycel raises
    KeyError "Worksheet ... does not exist" where Excel shows ``#REF!``): those cells,
    and the cells that depend on them, read ``#REF!``; the rest evaluate normally."""
    compiler = _pycel_compiler(src, plain)
    out: list[object] = []
    for address in addresses:
        try:
            out.append(compiler.evaluate(address))
        except Exception as exc:  # KeyError, or pycel's FormulaEvalError wrapping it
            if "does not exist" not in str(exc):
                raise
            out.append("#REF!")
    return out


def recalc_pycel(src: Path, *, plain: bool = False) -> Values:
    """Evaluate ``src`` in-process with pycel; values in the ``read_values`` shape.

    The file is read once and every formula cell evaluated (cached values
    ignored); each formula shape is compiled once (:mod:`sheetgen.engines.pycel_fast`:
    the same Python as pycel writes per formula); Python's cycle collector is
    paused during the call. ``plain`` is pycel on its own,
    as sheetgen used it before (for comparisons and the benchmark): its loader,
    which reads the file twice and returns a formula cell's cached value where
    the file has one, and its compilation formula by formula.

    Raises:
        FileNotFoundError: ``src`` does not exist.
        RecalcError: pycel is not installed or fails on the workbook.
    """
    src = require_file(src)
    try:
        import pycel  # noqa: F401
    except ImportError as exc:
        raise RecalcError(f"the pycel package is not installed ({exc})") from exc

    pycel_log = logging.getLogger("pycel")
    level = pycel_log.level
    pycel_log.setLevel(logging.ERROR)
    # pycel makes some 100,000 long-lived objects (cells, graph, syntax trees) and
    # Python's cycle collector walks the live ones again and again as they are
    # made: paused for this call (13 scenarios: 15.3 s -> 11.6 s, the same peak
    # memory, 455 MB), restored after, also on error.
    pause_gc = not plain and gc.isenabled()
    if pause_gc:
        gc.disable()
    try:
        compiler = _pycel_compiler(src, plain)
        if not plain:
            pycel_fast.install(compiler)
        wb = compiler.excel.workbook  # openpyxl, formulas kept
        addresses = [
            f"{_sheet_ref(ws.title)}!{c.coordinate}"
            for ws in wb.worksheets
            for c in sorted(stored_cells(ws), key=lambda c: (c.row, c.column))
            if c.data_type == "f"
        ]
        try:
            if addresses and hasattr(compiler, "_gen_graph"):
                # The dependency graph of every formula in one pass: evaluating a list
                # builds it cell by cell, and pycel 1.0b30 counts all the graph's edges
                # for a log line after each (13 scenarios: 6.2-8.8 s, 5.7-6.4 s so).
                compiler._gen_graph(addresses)
            results = compiler.evaluate(addresses) if addresses else ()
        except KeyError as exc:
            if "does not exist" not in str(exc):
                raise
            results = _one_by_one(src, addresses, plain)
    except Exception as exc:  # pycel raises many kinds of errors
        raise RecalcError(
            f"pycel failed on {src.name}: {type(exc).__name__}: {exc}".splitlines()[0]
        ) from exc
    finally:
        pycel_log.setLevel(level)
        if pause_gc:
            gc.enable()
    found = dict(zip(addresses, results, strict=True))
    out: Values = {}
    for ws in wb.worksheets:
        prefix = _sheet_ref(ws.title) + "!"

        def value(c: Any, prefix: str = prefix) -> Any:
            return _pycel_plain(found[prefix + c.coordinate]) if c.data_type == "f" else c.value

        out.update(layout_values(ws.title, grid_rows(ws, value)))
    return out


# --------------------------------------------------------------------- formulas


@contextlib.contextmanager
def _quiet_formulas_progress() -> Iterator[None]:
    """Silence the tqdm progress bar that ``ExcelModel.complete`` writes to stderr."""
    import functools
    import types

    import formulas.excel as fexcel

    original = getattr(fexcel, "tqdm", None)
    if original is None or not hasattr(original, "tqdm"):
        yield
        return
    fexcel.tqdm = types.SimpleNamespace(tqdm=functools.partial(original.tqdm, disable=True))
    try:
        yield
    finally:
        fexcel.tqdm = original


def _plain(value: object, error_types: tuple[type, ...], empty: object) -> object:
    """Unwrap a ``formulas`` result (Ranges / numpy array / XlError) to a Python scalar."""
    inner: Any = getattr(value, "value", value)  # Ranges -> numpy array
    if hasattr(inner, "shape") and hasattr(inner, "flat"):
        if inner.size == 0:
            return None
        inner = inner.flat[0]  # a single-cell key holds a 1x1 array
    if inner is empty:
        return None
    if isinstance(inner, error_types):
        return str(inner)
    if hasattr(inner, "item") and callable(inner.item):  # numpy scalar
        inner = inner.item()
    return inner


def _formulas_cells(solution: Iterable[tuple[object, object]], book: str) -> dict:
    """Map ``(SHEET_UPPER, column, row)`` (1-based) to the raw results for ``book``."""
    from openpyxl.utils.cell import column_index_from_string

    by_book: dict[str, dict[tuple[str, int, int], object]] = {}
    for key, value in solution:
        if not isinstance(key, str):
            continue
        m = _FORMULAS_CELL_KEY.match(key)
        if m is None:
            continue
        where = (m["sheet"].upper(), column_index_from_string(m["col"]), int(m["row"]))
        by_book.setdefault(m["book"].upper(), {})[where] = value
    if book.upper() in by_book:
        return by_book[book.upper()]
    # formulas spelled the book name differently: with a single book there is no doubt.
    return next(iter(by_book.values())) if len(by_book) == 1 else {}


def recalc_formulas(src: Path) -> Values:
    """Evaluate ``src`` in-process with the ``formulas`` package.

    Returns values in the shape of ``read_values``. Literal cells keep their
    value; a formula cell that ``formulas`` produced no result for reads ``None``.

    Raises:
        FileNotFoundError: ``src`` does not exist.
        RecalcError: ``formulas`` is not installed or fails on the workbook.
    """
    src = require_file(src)
    try:
        import formulas
        import schedula
        from formulas.tokens.operand import XlError
    except ImportError as exc:
        raise RecalcError(f"the formulas package is not installed ({exc})") from exc

    try:
        with _formulas_lock, _quiet_formulas_progress():
            model = formulas.ExcelModel().loads(str(src)).finish()
            solution = model.calculate()
    except Exception as exc:  # formulas raises many kinds of errors
        raise RecalcError(
            f"formulas failed on {src.name}: {type(exc).__name__}: {exc}".splitlines()[0]
        ) from exc

    cells = _formulas_cells(solution.items(), src.name)
    error_types: tuple[type, ...] = (XlError,)
    out: Values = {}
    with open_workbook(src, data_only=False) as wb:
        for ws in wb.worksheets:
            sheet = ws.title.upper()
            rows: list[list[object]] = []
            for row in ws.iter_rows():
                values: list[object] = []
                for c in row:
                    where = (sheet, c.column, c.row)
                    if where in cells:
                        values.append(_plain(cells[where], error_types, schedula.EMPTY))
                    elif c.data_type == "f":
                        values.append(None)
                    else:
                        values.append(c.value)
                rows.append(values)
            out.update(layout_values(ws.title, rows))
    return out
