"""Open a workbook file safely: one line saying why a file is not a readable .xlsx
(missing, too large, encrypted or legacy .xls, not a zip, corrupt), then either the
whole workbook (openpyxl, for ``check`` and the engines) or only the sheets a reader
needs (``open_sheets``: Inputs and Presets for ``inputs`` and ``generate --from``)."""

from __future__ import annotations

import contextlib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sheetgen.errors import SheetgenError, short

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # encrypted .xlsx and legacy .xls


def check_xlsx(path: str | Path) -> Path:
    """``path`` if it is a readable .xlsx zip, else a one-line SheetgenError saying why
    (missing, a directory, a device, too large on disk or uncompressed, empty,
    encrypted or legacy .xls, not a zip, corrupt)."""
    from sheetgen.errors import quote_path
    from sheetgen.scenarios.input_files import (
        MAX_UNCOMPRESSED_BYTES,
        MAX_WORKBOOK_BYTES,
        check_regular,
        path_error,
    )

    path = Path(path)
    where = quote_path(path)
    check_regular(path, "workbook (.xlsx)", MAX_WORKBOOK_BYTES)
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError as e:
        raise path_error(path, e, "workbook (.xlsx)") from None
    if not head:
        raise SheetgenError(where, "is empty, not an .xlsx workbook")
    if head == OLE_MAGIC:
        raise SheetgenError(
            where,
            "is encrypted (password-protected) or a legacy .xls file; save it as an "
            "unprotected .xlsx workbook",
        )
    if not zipfile.is_zipfile(path):
        raise SheetgenError(where, "is not an .xlsx workbook (not a zip archive, or truncated)")
    try:
        with zipfile.ZipFile(path) as z:
            declared = sum(info.file_size for info in z.infolist())
            if declared > MAX_UNCOMPRESSED_BYTES:
                raise SheetgenError(
                    where,
                    f"unpacks to {declared / 2**20:,.0f} MiB; a workbook may unpack to at most "
                    f"{MAX_UNCOMPRESSED_BYTES // 2**20} MiB (a zip bomb, or not a sheetgen "
                    "workbook)",
                )
            bad = z.testzip()
            if bad is not None:
                raise SheetgenError(where, f"is corrupt (damaged member {short(bad)})")
            if "xl/workbook.xml" not in z.namelist():
                raise SheetgenError(where, "is a zip archive but not an .xlsx workbook")
    except SheetgenError:
        raise
    except Exception as e:  # noqa: BLE001 - zipfile raises many kinds on damaged files
        raise SheetgenError(where, f"is corrupt: {type(e).__name__}: {short(str(e))}") from None
    return path


def open_workbook(path: str | Path, data_only: bool = False) -> Any:
    """openpyxl workbook, or a one-line SheetgenError saying why the file cannot be read."""
    path = check_xlsx(path)
    with _unreadable(path):
        return load_quietly(path, data_only=data_only)


@contextlib.contextmanager
def _unreadable(path: Path) -> Iterator[None]:
    """Any exception inside as one line: the file cannot be read as a workbook."""
    try:
        yield
    except Exception as e:  # openpyxl raises many kinds on damaged files
        raise SheetgenError(
            str(path), f"cannot be read as a workbook: {type(e).__name__}: {e}"[:300]
        ) from None


def load_quietly(path: Path, **options: Any) -> Any:
    """openpyxl's load_workbook, its warnings silenced (e.g. "Workbook contains no
    default style" on files Gnumeric saved)."""
    import warnings

    import openpyxl

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return openpyxl.load_workbook(path, **options)


@dataclass
class StoredCell:
    """One stored cell of a sheet ``open_sheets`` read (openpyxl's cell attributes)."""

    row: int
    column: int
    value: Any = None
    data_type: str = "n"

    @property
    def coordinate(self) -> str:
        from openpyxl.utils import get_column_letter

        return f"{get_column_letter(self.column)}{self.row}"


class StoredSheet:
    """The stored cells of one sheet, read once: ``cell(row=, column=)`` is a lookup
    (an empty cell for one the file does not hold), so no reader walks rows."""

    def __init__(self, title: str, cells: dict[tuple[int, int], StoredCell]) -> None:
        self.title = title
        self._cells = cells

    def cell(self, row: int, column: int) -> StoredCell:
        return self._cells.get((row, column)) or StoredCell(row, column)


@dataclass
class StoredBook:
    """The sheets ``open_sheets`` read, and every sheet name the file holds."""

    sheetnames: list[str]
    sheets: dict[str, StoredSheet]

    def __getitem__(self, name: str) -> StoredSheet:
        return self.sheets[name]


def open_sheets(path: str | Path, names: tuple[str, ...]) -> tuple[StoredBook, StoredBook]:
    """The sheets ``names`` of ``path`` (those it holds), as typed and as last
    calculated, or a one-line SheetgenError saying why the file cannot be read.

    openpyxl's read-only mode parses only the sheets asked for (a full load parses
    every sheet, twice as long on a sheetgen workbook); its stored dimensions are
    ignored (``reset_dimensions``), so a file that misstates them still reads whole."""
    path = check_xlsx(path)
    books = []
    with _unreadable(path):
        for data_only in (False, True):
            wb = load_quietly(path, read_only=True, data_only=data_only)
            try:
                sheets = {n: _stored_sheet(wb[n]) for n in names if n in wb.sheetnames}
                books.append(StoredBook(list(wb.sheetnames), sheets))
            finally:
                wb.close()
    return books[0], books[1]


def _stored_sheet(ws: Any) -> StoredSheet:
    ws.reset_dimensions()
    cells = {
        (c.row, c.column): StoredCell(c.row, c.column, c.value, c.data_type)
        for row in ws.iter_rows()
        for c in row
        if getattr(c, "row", None) is not None and c.value is not None
    }
    return StoredSheet(ws.title, cells)
