"""Recalculate sheetgen workbooks and read back their computed values.

Two engines are offered:

* **LibreOffice** (:func:`recalc_libreoffice`, :func:`values_libreoffice`): runs
  ``soffice --headless --convert-to xlsx`` in a fresh private user profile whose
  ``registrymodifications.xcu`` sets ``OOXMLRecalcMode`` and ``ODFRecalcMode`` to
  0 ("always recalculate on load"). Without that setting LibreOffice keeps
  whatever cached ``<v>`` values the file carries, so a stale or deliberately
  wrong cached value would come back unchanged. Each call uses its own profile,
  input copy and output directory, so calls may run in parallel; the input file
  is never modified. LibreOffice writes its internal errors (``Err:502``,
  ``Err:522`` circular reference, ...) to .xlsx as ``#VALUE!``, and gives
  ``#VALUE!`` where Excel gives ``#NUM!`` (e.g. ``SQRT(-1)``).

* **formulas** (:func:`recalc_formulas`): evaluates the workbook in-process with
  the `formulas <https://pypi.org/project/formulas/>`_ package (tested with 1.3.4).
  Found by experiment to work: workbook-scoped defined names for single cells and
  ranges (including ranges used inside ``INDEX``/``MATCH``), cross-sheet
  references (also to sheet names with spaces), ``INDEX``/``MATCH``/``VLOOKUP``/
  ``XLOOKUP``, ``IF``/``IFS``/``IFERROR``, string comparison in ``IF``
  (case-insensitive like Excel), ``&`` concatenation, ``TEXT``, ``ROUNDUP``,
  ``CEILING``, ``SUMPRODUCT``, ``MAXIFS``, ``LET``, literal error cells, and
  ``#DIV/0!``/``#N/A``/``#NAME?`` results. Data validation is ignored (harmless).
  Not supported, or different from Excel/LibreOffice:

  - sheet-scoped defined names (``localSheetId``) are ignored, so formulas that
    use them evaluate to ``#REF!``; an undefined name also gives ``#REF!``
    (Excel: ``#NAME?``);
  - unknown functions give ``#NAME?``; ``OFFSET`` is unknown (``#NAME?``) and
    ``INDIRECT`` gives ``#REF!``;
  - circular references give ``#REF!`` (the model is not built with
    ``circular=True``);
  - a sheet whose name contains an apostrophe breaks references to that sheet
    (formulas on it evaluate to ``#REF!``);
  - references to other workbooks are not resolved.

Both engines return values in the shape produced by :func:`read_values`:
``{(sheet_title, key, scenario_name): value}``, where each value is a plain
Python scalar (``int``, ``float``, ``str``, ``bool``, ``None``) and error values
are their strings such as ``"#DIV/0!"``.

Dates (cells with a date number format, which openpyxl reads as ``datetime``)
are returned as serial numbers of the Excel 1900 date system (45658 =
2025-01-01), the numbers the formulas compute with.

Workbook layout read (every sheet sheetgen writes): the header row is the first
of rows 1..10 whose column A is exactly ``key``; columns B and C hold
``quantity`` and ``unit``; columns D, E, ... hold scenario names up to (not
including) the first header cell that is ``formula in words`` or empty. Every
row below the header whose column A is a non-empty string is a data row keyed by
that string (a later duplicate key overwrites an earlier one); rows with empty
column A are section headings and are skipped. Sheets without a header row are
skipped.

openpyxl and formulas are imported lazily, so importing this module is cheap.
"""

from __future__ import annotations

import contextlib
import glob
import html
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import warnings
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "RecalcError",
    "export_pdf",
    "find_soffice",
    "libreoffice_available",
    "read_values",
    "recalc_formulas",
    "recalc_libreoffice",
    "values_libreoffice",
]

Values = dict[tuple[str, str, str], object]

HEADER_KEY = "key"
HEADER_END = "formula in words"
HEADER_SEARCH_ROWS = 10
FIRST_SCENARIO_COL = 4  # column D (1-based)

_XLSX_FILTER = "xlsx:Calc MS Excel 2007 XML"
_COMMON_SOFFICE_PATHS = (
    "/usr/bin/soffice",
    "/usr/lib/libreoffice/program/soffice",
    "/opt/libreoffice*/program/soffice",
    "/Applications/LibreOffice.app/Contents/MacOS/soffice",
)
_REGISTRY_XCU = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" \
xmlns:xs="http://www.w3.org/2001/XMLSchema" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">\
<prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">\
<prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""
_TAIL_LINES = 15

# formulas keys look like "'[book.xlsx]SHEET NAME'!D12" (sheet upper-cased, a quote
# inside the sheet name is not escaped).
_FORMULAS_CELL_KEY = re.compile(
    r"^'\[(?P<book>[^\]]*)\](?P<sheet>.*)'!\$?(?P<col>[A-Z]{1,3})\$?(?P<row>[0-9]+)$"
)
_formulas_lock = threading.Lock()


class RecalcError(Exception):
    """A recalculation engine is missing, timed out, crashed or produced no output."""


# --------------------------------------------------------------------------- layout


def _is_blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and value.strip() == "")


def _layout_values(title: str, rows: Sequence[Sequence[object]]) -> Values:
    """Apply the sheetgen layout rules to one sheet given as a 2-D list of values.

    ``rows[r][c]`` is the value of the cell at 0-based row ``r`` and column ``c``.
    """

    def cell(r: int, c: int) -> object:
        if r < len(rows) and c < len(rows[r]):
            return rows[r][c]
        return None

    header = next(
        (r for r in range(min(HEADER_SEARCH_ROWS, len(rows))) if cell(r, 0) == HEADER_KEY),
        None,
    )
    if header is None:
        return {}

    scenarios: list[tuple[int, str]] = []
    c = FIRST_SCENARIO_COL - 1
    while True:
        name = cell(header, c)
        if _is_blank(name) or name == HEADER_END:
            break
        scenarios.append((c, name if isinstance(name, str) else str(name)))
        c += 1

    out: Values = {}
    for r in range(header + 1, len(rows)):
        key = cell(r, 0)
        if not isinstance(key, str) or key.strip() == "":
            continue
        for col, scenario in scenarios:
            out[(title, key, scenario)] = _serial(cell(r, col))
    return out


def _serial(value: object) -> object:
    """Dates come back as spreadsheet serial numbers (Excel 1900 date system), as stored.

    openpyxl turns a number in a date-formatted cell into a ``datetime``; sheetgen
    compares dates as the numbers the formulas compute with.
    """
    import datetime as dt

    if isinstance(value, (dt.datetime, dt.date)):
        from openpyxl.utils.datetime import to_excel

        return to_excel(value)
    return value


@contextlib.contextmanager
def _open_workbook(path: Path, data_only: bool) -> Iterator[Any]:
    import openpyxl

    with warnings.catch_warnings():
        # e.g. "Data Validation extension is not supported and will be removed"
        warnings.simplefilter("ignore", UserWarning)
        wb = openpyxl.load_workbook(path, data_only=data_only)
    try:
        yield wb
    finally:
        wb.close()


def read_values(path: Path) -> Values:
    """Read the cached values of a workbook laid out as sheetgen writes it.

    Opens ``path`` with openpyxl ``data_only=True`` (so formula cells give the
    value cached in the file, or ``None`` when the file carries none) and returns
    ``{(sheet_title, key, scenario_name): value}``; error values are strings such
    as ``"#DIV/0!"``.
    """
    path = Path(path)
    out: Values = {}
    with _open_workbook(path, data_only=True) as wb:
        for ws in wb.worksheets:
            rows = [list(r) for r in ws.iter_rows(values_only=True)]
            out.update(_layout_values(ws.title, rows))
    return out


# --------------------------------------------------------------------- LibreOffice


def find_soffice() -> str | None:
    """Locate the LibreOffice ``soffice`` executable.

    ``SHEETGEN_SOFFICE``, when set (non-empty), is authoritative: its value (a path
    or a command name) is returned if it resolves to an executable, else ``None``.
    Otherwise ``soffice`` or ``libreoffice`` on ``PATH``, then common install
    locations, are tried.
    """
    override = os.environ.get("SHEETGEN_SOFFICE", "").strip()
    if override:
        return shutil.which(override)
    for name in ("soffice", "libreoffice"):
        found = shutil.which(name)
        if found:
            return found
    for pattern in _COMMON_SOFFICE_PATHS:
        for candidate in sorted(glob.glob(pattern)):
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return None


def libreoffice_available() -> bool:
    """Return whether a LibreOffice executable can be found (see :func:`find_soffice`)."""
    return find_soffice() is not None


def _tail(*files: Path, lines: int = _TAIL_LINES) -> str:
    text: list[str] = []
    for f in files:
        try:
            text.extend(f.read_text(errors="replace").splitlines())
        except OSError:
            pass
    text = [t for t in text if t.strip()]
    return " | ".join(text[-lines:]) if text else "(no output)"


def _live_group_members(pgid: int) -> dict[int, int]:
    """Return ``{pid: ppid}`` of the non-zombie processes in process group ``pgid``.

    Linux only (reads ``/proc``); elsewhere returns an empty dict.
    """
    members: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
            # "pid (comm) state ppid pgrp ..."; comm may contain spaces or parentheses
            state, ppid, pgrp = stat[stat.rindex(b")") + 2 :].split()[:3]
        except (OSError, ValueError):
            continue
        if int(pgrp) == pgid and state not in (b"Z", b"X"):
            members[int(entry)] = int(ppid)
    return members


def _terminate_group(proc: subprocess.Popen[bytes], grace: float = 3.0) -> None:
    """SIGKILL every process in the group led by ``proc`` and reap ``proc``.

    Descendants are killed leaves first, so that each is reaped by its own parent
    (oosplash waits for soffice.bin) rather than orphaned to init as a zombie;
    then the whole group is killed with ``os.killpg``.
    """
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        members = _live_group_members(proc.pid)
        members.pop(proc.pid, None)
        if not members:
            break
        parents = set(members.values())
        for pid in [p for p in members if p not in parents] or list(members):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def _soffice_or_raise() -> str:
    soffice = find_soffice()
    if soffice is None:
        hint = os.environ.get("SHEETGEN_SOFFICE", "").strip()
        detail = f"SHEETGEN_SOFFICE={hint!r} is not an executable" if hint else "not found"
        raise RecalcError(
            f"LibreOffice (soffice) {detail}; install LibreOffice or set SHEETGEN_SOFFICE"
        )
    return soffice


def _convert(
    src: Path,
    convert_to: str,
    out_suffix: str,
    timeout: float,
    valid: Any,
    prepare: Any = None,
) -> Path:
    """Run ``soffice --convert-to convert_to`` on a copy of ``src`` and return the output.

    Shared by every LibreOffice conversion: a fresh private profile that forces
    recalculation on load, a copy of the input (``prepare(copy)`` may edit it),
    the whole process group killed on timeout or exit, and the output checked
    with ``valid(path)`` because LibreOffice exits 0 even when it wrote nothing.
    The output is moved to a new temporary directory that the caller owns.
    """
    soffice = _soffice_or_raise()
    work = Path(tempfile.mkdtemp(prefix="sheetgen-lo-"))
    try:
        profile = work / "profile"
        (profile / "user").mkdir(parents=True)
        (profile / "user" / "registrymodifications.xcu").write_text(_REGISTRY_XCU, encoding="utf-8")
        indir, outdir = work / "in", work / "out"
        indir.mkdir()
        outdir.mkdir()
        suffix = src.suffix.lower() or ".xlsx"
        # The copy keeps the workbook's name (a footer may print it), made safe for a path.
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", src.stem).strip(".") or "workbook"
        inp = indir / f"{stem}{suffix}"
        shutil.copyfile(src, inp)
        if prepare is not None:
            prepare(inp)
        expected = outdir / f"{stem}{out_suffix}"
        stdout_log, stderr_log = work / "stdout.log", work / "stderr.log"

        cmd = [
            soffice,
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--norestore",
            "--nologo",
            "--nodefault",
            "--nolockcheck",
            "--convert-to",
            convert_to,
            "--outdir",
            str(outdir),
            str(inp),
        ]
        with open(stdout_log, "wb") as out_f, open(stderr_log, "wb") as err_f:
            try:
                proc = subprocess.Popen(
                    cmd,
                    stdin=subprocess.DEVNULL,
                    stdout=out_f,
                    stderr=err_f,
                    cwd=work,
                    start_new_session=True,
                )
            except OSError as exc:
                raise RecalcError(f"could not start LibreOffice ({soffice}): {exc}") from exc
            try:
                returncode = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise RecalcError(
                    f"LibreOffice did not finish within {timeout:g} s converting "
                    f"{src.name}; its process group was killed"
                ) from None
            finally:
                # On timeout, error or normal exit alike: nothing of the group survives.
                _terminate_group(proc)

        if returncode != 0:
            raise RecalcError(
                f"LibreOffice exited with status {returncode} converting {src.name}: "
                f"{_tail(stderr_log, stdout_log)}"
            )
        if not expected.is_file() or expected.stat().st_size == 0 or not valid(expected):
            raise RecalcError(
                f"LibreOffice wrote no valid {out_suffix} for {src.name}: "
                f"{_tail(stderr_log, stdout_log)}"
            )
        result = Path(tempfile.mkdtemp(prefix="sheetgen-lo-out-")) / f"{src.stem}{out_suffix}"
        shutil.move(str(expected), str(result))
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _deliver(produced: Path, dst: Path) -> Path:
    """Move a conversion's output to ``dst`` and remove its temporary directory."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(produced), str(dst))
    shutil.rmtree(produced.parent, ignore_errors=True)
    return dst


def recalc_libreoffice(src: Path, dst: Path | None = None, timeout: float = 120) -> Path:
    """Recalculate ``src`` with headless LibreOffice and write an .xlsx with fresh values.

    Every formula is recalculated on load (the cached values in ``src`` are
    ignored). The result goes to ``dst`` (a file path, overwritten if it exists,
    parent directories created; an existing directory gets ``<src stem>.xlsx``
    inside it) or, when ``dst`` is ``None``, to ``<src stem>.xlsx`` in a new
    temporary directory that the caller owns. ``src`` itself is never modified.

    Raises:
        FileNotFoundError: ``src`` does not exist.
        ValueError: ``dst`` is the same file as ``src``.
        RecalcError: LibreOffice is missing, does not finish within ``timeout``
            seconds (the whole process group is killed), exits abnormally, or
            writes no valid .xlsx.
    """
    src = Path(src)
    if not src.is_file():
        raise FileNotFoundError(f"workbook not found: {src}")
    if dst is not None:
        dst = Path(dst)
        if dst.is_dir():
            dst = dst / (src.stem + ".xlsx")
        if dst.exists() and dst.resolve() == src.resolve():
            raise ValueError(f"refusing to overwrite the input workbook {src}")
    produced = _convert(src, _XLSX_FILTER, ".xlsx", timeout, zipfile.is_zipfile)
    if dst is None:
        return produced
    return _deliver(produced, dst)


def _is_pdf(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(5) == b"%PDF-"


# A cell no sheetgen workbook uses, inside LibreOffice's default grid (1,024 columns).
_EMPTY_PRINT_AREA = "$AMJ$1048576"


def _show_only(sheets: Sequence[str]) -> Any:
    """An in-place edit of an .xlsx so that only ``sheets`` print.

    Every other sheet gets a print area on one empty cell, and LibreOffice
    suppresses empty pages. (Hiding a sheet is not enough: LibreOffice 7.4's PDF
    export prints hidden sheets too.) The chosen sheets keep their own print
    areas, page setup, headers and footers.
    """

    def prepare(path: Path) -> None:
        with zipfile.ZipFile(path) as z:
            items = [(i, z.read(i.filename)) for i in z.infolist()]
        out_items = []
        for item, data in items:
            if item.filename == "xl/workbook.xml":
                data = _print_only(data.decode("utf-8"), sheets).encode("utf-8")
            out_items.append((item, data))
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            for item, data in out_items:
                z.writestr(item, data)

    return prepare


def _print_only(workbook_xml: str, sheets: Sequence[str]) -> str:
    names = [html.unescape(n) for n in re.findall(r'<sheet [^>]*name="([^"]*)"', workbook_xml)]
    missing = [s for s in sheets if s not in names]
    if missing:
        raise RecalcError(f"no sheet named {missing[0]!r}; the workbook has {', '.join(names)}")

    def keep(m: re.Match) -> str:
        return m.group(0) if names[int(m.group(2))] in sheets else ""

    text = re.sub(
        r'<definedName name="_xlnm\.Print_(Area|Titles)" localSheetId="(\d+)"[^>]*>[^<]*'
        r"</definedName>",
        keep,
        workbook_xml,
    )
    blank = "".join(
        f'<definedName name="_xlnm.Print_Area" localSheetId="{i}">'
        f"'{html.escape(n.replace(chr(39), chr(39) * 2))}'!{_EMPTY_PRINT_AREA}</definedName>"
        for i, n in enumerate(names)
        if n not in sheets
    )
    if "</definedNames>" in text:
        return text.replace("</definedNames>", blank + "</definedNames>", 1)
    return text.replace("</sheets>", f"</sheets><definedNames>{blank}</definedNames>", 1)


def export_pdf(
    src: Path,
    dst: Path,
    sheets: Sequence[str] = ("Summary",),
    timeout: float = 120,
) -> Path:
    """Write the chosen sheets of workbook ``src`` as a PDF at ``dst`` through LibreOffice.

    The workbook is recalculated on load (as :func:`recalc_libreoffice`), every
    other sheet is hidden in a private copy so that only the chosen ones print,
    and each prints with its own print area and page setup. ``src`` is never
    modified; ``dst`` is overwritten.

    Raises:
        FileNotFoundError: ``src`` does not exist.
        RecalcError: LibreOffice is missing, times out, fails, a sheet does not
            exist, or no PDF came out.
    """
    src, dst = Path(src), Path(dst)
    if not src.is_file():
        raise FileNotFoundError(f"workbook not found: {src}")
    if not sheets:
        raise ValueError("no sheets to export")
    produced = _convert(
        src, "pdf:calc_pdf_Export", ".pdf", timeout, _is_pdf, prepare=_show_only(list(sheets))
    )
    return _deliver(produced, dst)


def values_libreoffice(src: Path, timeout: float = 120) -> Values:
    """Recalculate ``src`` with LibreOffice and return :func:`read_values` of the result.

    The temporary output is removed before returning. Raises as
    :func:`recalc_libreoffice`.
    """
    outdir = Path(tempfile.mkdtemp(prefix="sheetgen-recalc-out-"))
    try:
        out = recalc_libreoffice(Path(src), outdir / "recalculated.xlsx", timeout=timeout)
        return read_values(out)
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


# ------------------------------------------------------------------------ formulas


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
    inner = getattr(value, "value", value)  # Ranges -> numpy array
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

    Returns values in the shape of :func:`read_values`. Literal cells keep their
    value; a formula cell that ``formulas`` produced no result for reads ``None``.
    See the module docstring for what ``formulas`` does not support.

    Raises:
        FileNotFoundError: ``src`` does not exist.
        RecalcError: ``formulas`` is not installed or fails on the workbook.
    """
    src = Path(src)
    if not src.is_file():
        raise FileNotFoundError(f"workbook not found: {src}")
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
    with _open_workbook(src, data_only=False) as wb:
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
            out.update(_layout_values(ws.title, rows))
    return out
