"""Save a built workbook: openpyxl writes every part, sheetgen writes the cell rows.

openpyxl serialises each cell through an element tree (et_xmlfile in pure
Python where lxml is absent): about 30 µs a cell, most of the time `generate`
spends on a large workbook.  Here the ``<sheetData>`` of each worksheet is
written as text, cell by cell, with what openpyxl 3.1 writes for the cells
sheetgen makes (numbers, booleans, dates, formulas, hyperlinks), plus each
formula's cached value (``cache.cached_xml``) in the same pass.  Text cells are
stored as Excel stores them, in the shared-string table
(``xl/sharedStrings.xml``, ``t="s"`` cells holding an index; openpyxl 3.1 writes
inline strings, which Apache POI and tools built on it do not edit and re-save
cleanly); a formula's text result stays its cached value (``t="str"``), as
Excel writes it.  Everything else of the sheet (dimension, views, columns,
conditional formats, validations, print set-up, drawings) and every other part
of the package comes from openpyxl's own writer, the string table's content
type and workbook relationship added; a sheet holding anything this writer does
not handle (comments, rich text, array or data-table formulas) is written by
openpyxl whole (with inline strings).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import defaultdict
from io import BytesIO
from pathlib import Path
from typing import IO, Any

from openpyxl.cell.rich_text import CellRichText
from openpyxl.utils.datetime import to_excel
from openpyxl.worksheet._writer import WorksheetWriter
from openpyxl.writer.excel import ExcelWriter
from openpyxl.xml.constants import (
    ARC_SHARED_STRINGS,
    ARC_WORKBOOK_RELS,
    SHARED_STRINGS,
    SHEET_MAIN_NS,
)
from openpyxl.xml.functions import Element

from sheetgen.output.interrupt import zip_for_writing
from sheetgen.workbook.cache import cached_xml, escape

_EMPTY_SHEET_DATA = re.compile(rb"<sheetData\s*/>|<sheetData>\s*</sheetData>")


class Unsupported(Exception):
    """A cell this writer leaves to openpyxl (its sheet is then written by openpyxl)."""


def save(wb: Any, path: Path | IO[bytes], cached: dict[str, dict[str, Any]] | None = None) -> None:
    """Write ``wb`` to ``path`` as openpyxl's ``Workbook.save`` would, storing
    ``cached[sheet][cell]`` as the cached result of each formula cell."""
    # What openpyxl's save_workbook does before writing.
    wb.properties.modified = dt.datetime.now(tz=dt.timezone.utc).replace(tzinfo=None)
    with zip_for_writing(path) as archive:  # path: or the safe writer's open temporary file
        _Writer(wb, archive, cached or {}).write_data()


class _SharedStringsPart:
    """The string table as the package manifest lists it (a content-type override)."""

    path = "/" + ARC_SHARED_STRINGS
    mime_type = SHARED_STRINGS


class _Archive:
    """The zip archive, with the string table's relationship added to the workbook's
    relationships as openpyxl writes them; everything else passed through."""

    def __init__(self, archive: Any) -> None:
        self._archive = archive

    def writestr(self, name: str, data: Any) -> None:
        if name == ARC_WORKBOOK_RELS:
            from openpyxl.packaging.relationship import Relationship, RelationshipList
            from openpyxl.xml.functions import fromstring, tostring

            rels = RelationshipList.from_tree(fromstring(data))
            rels.append(Relationship(type="sharedStrings", Target="sharedStrings.xml"))
            data = tostring(rels.to_tree())
        self._archive.writestr(name, data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._archive, name)


class _Writer(ExcelWriter):
    def __init__(self, wb: Any, archive: Any, cached: dict[str, dict[str, Any]]) -> None:
        super().__init__(wb, _Archive(archive))
        self._cached = cached
        self._strings: dict[str, int] = {}  # text -> index in the string table
        self._string_cells = 0

    def write_data(self) -> None:
        self.manifest.append(_SharedStringsPart)
        super().write_data()
        self._archive.writestr(ARC_SHARED_STRINGS, string_table(self._strings, self._string_cells))

    def write_worksheet(self, ws: Any) -> None:
        try:
            rows, links, n = sheet_data(ws, self._cached.get(ws.title, {}), self._strings)
            self._string_cells += n
        except Unsupported:
            super().write_worksheet(ws)
            return
        from openpyxl.drawing.spreadsheet_drawing import SpreadsheetDrawing

        # As ExcelWriter.write_worksheet, with the rows spliced in.
        ws._drawing = SpreadsheetDrawing()
        ws._drawing.charts = ws._charts
        ws._drawing.images = ws._images
        writer = _RowlessWriter(ws, out=BytesIO())  # empties ws._hyperlinks
        ws._hyperlinks.extend(links)
        writer.write()
        ws._rels = writer._rels
        xml, n = _EMPTY_SHEET_DATA.subn(lambda _: rows.encode("utf-8"), writer.read(), count=1)
        if n != 1:  # pragma: no cover - openpyxl changed how it writes an empty sheetData
            raise RuntimeError(f"sheet {ws.title!r}: no empty <sheetData> to fill")
        self._archive.writestr(ws.path[1:], xml)
        self.manifest.append(ws)


class _RowlessWriter(WorksheetWriter):
    """openpyxl's worksheet writer with an empty ``<sheetData/>`` in place of the rows."""

    def write_rows(self) -> None:
        xf = self.xf.send(True)
        xf.write(Element("sheetData"))
        self.xf.send(None)


def sheet_data(
    ws: Any, cached: dict[str, Any], strings: dict[str, int]
) -> tuple[str, list[Any], int]:
    """The ``<sheetData>`` element of ``ws`` as text, the hyperlinks of its cells
    (written after the rows) and how many text cells it holds; each new text joins
    ``strings`` (text -> index in the string table).  Raises ``Unsupported`` for a
    cell it leaves to openpyxl."""
    from openpyxl.utils import get_column_letter

    style_ids = ws.parent._cell_styles  # IndexedList: add() gives a style's index
    known: dict[bytes, str] = {}  # a style record's bytes -> ' s="<index>"'
    epoch = ws.parent.epoch
    iso_dates = ws.parent.iso_dates
    dims = ws.row_dimensions
    rows: dict[int, list[Any]] = defaultdict(list)
    for (row, _col), cell in sorted(ws._cells.items()):
        rows[row].append(cell)
    for row in dims.keys() - rows.keys():  # styled or sized rows without cells
        rows[row] = []
    letters: dict[int, str] = {}
    out = ["<sheetData>"]
    links = []
    n_text = 0
    append = out.append
    for row in sorted(rows):
        attrs = "".join(f' {k}="{_attr(v)}"' for k, v in dims[row]) if row in dims else ""
        append(f'<row r="{row}"{attrs}>')
        for cell in rows[row]:
            if cell._comment is not None:
                raise Unsupported("comment")
            value = cell._value
            style = cell._style
            styled = bool(style) and any(style)  # Cell.has_style
            if value is None and not styled:
                continue
            letter = letters.get(cell.column)
            if letter is None:
                letter = letters[cell.column] = get_column_letter(cell.column)
            ref = f"{letter}{row}"
            if styled:
                key = style.tobytes()
                s = known.get(key)
                if s is None:
                    s = known[key] = f' s="{style_ids.add(style)}"'
            else:
                s = ""
            kind = cell.data_type
            if cell.hyperlink:
                links.append(cell.hyperlink)
            if kind == "f":
                if not isinstance(value, str):
                    raise Unsupported("array or data-table formula")
                stored = cached.get(ref)
                if type(stored) is float and math.isfinite(stored):  # most cached values
                    found: tuple[str, str] | None = ("", repr(stored))
                else:
                    found = cached_xml(stored)
                if found is None:
                    append(f'<c r="{ref}"{s}><f>{escape(value[1:])}</f><v/></c>')
                else:
                    t, text = found
                    append(f'<c r="{ref}"{s}{t}><f>{escape(value[1:])}</f><v>{text}</v></c>')
            elif kind == "s":
                if isinstance(value, CellRichText):
                    raise Unsupported("rich text")
                if value is None or value == "":  # an empty cell, as openpyxl reads ""
                    append(f'<c r="{ref}"{s}/>')
                    continue
                index = strings.get(value)
                if index is None:
                    index = strings[value] = len(strings)
                n_text += 1
                append(f'<c r="{ref}"{s} t="s"><v>{index}</v></c>')
            elif value is None:
                append(f'<c r="{ref}"{s} t="{kind}"/>')
            elif kind == "d":
                if getattr(value, "tzinfo", None) is not None:
                    raise TypeError("Excel does not support timezones in datetimes")
                if iso_dates and not isinstance(value, dt.timedelta):
                    append(f'<c r="{ref}"{s} t="d"><v>{value.isoformat()}</v></c>')
                else:
                    append(f'<c r="{ref}"{s} t="n"><v>{_number(to_excel(value, epoch))}</v></c>')
            elif kind in ("n", "b"):
                append(f'<c r="{ref}"{s} t="{kind}"><v>{_number(value)}</v></c>')
            else:  # "e" (an error value), "str", "inlineStr"
                append(f'<c r="{ref}"{s} t="{kind}"><v>{escape(str(value))}</v></c>')
        append("</row>")
    append("</sheetData>")
    return "".join(out), links, n_text


def string_table(strings: dict[str, int], count: int) -> str:
    """``xl/sharedStrings.xml``: the texts in index order (``strings`` is insertion-
    ordered), spaces kept where a text starts or ends with one, as Excel writes it."""
    out = [
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        f'<sst xmlns="{SHEET_MAIN_NS}" count="{count}" uniqueCount="{len(strings)}">'
    ]
    append = out.append
    for text in strings:
        stripped = text.strip()
        space = ' xml:space="preserve"' if stripped != text else ""
        append(f"<si><t{space}>{escape(text)}</t></si>")
    append("</sst>")
    return "".join(out)


def _number(value: Any) -> str:
    """A number as openpyxl writes it (``compat.safe_string``): 16 significant digits."""
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    return f"{value:.16g}"


def _attr(text: str) -> str:
    return escape(text).replace('"', "&quot;")
