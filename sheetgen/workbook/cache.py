"""Cached formula results: how a reference value is stored beside its formula.

openpyxl writes formulas with empty cached values, so viewers that do not
calculate (mail previews, pandas, openpyxl ``data_only=True``) would show
blanks.  sheetgen stores each formula's cached value, the Python reference's
value for that key and scenario, as the cell is written (``xlsx_writer``).  The
formulas stay untouched and ``fullCalcOnLoad`` stays set, so spreadsheet
applications recalculate anyway; the tests recalculate workbooks written
without this cache.
"""

from __future__ import annotations

import math
import zipfile
from typing import Any

NS_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
NS_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def sheet_parts(z: zipfile.ZipFile) -> dict[str, str]:
    """Sheet title -> part name inside the zip."""
    import xml.etree.ElementTree as ET

    wb = ET.fromstring(z.read("xl/workbook.xml"))
    rels = ET.fromstring(z.read("xl/_rels/workbook.xml.rels"))
    targets = {r.get("Id"): r.get("Target", "") for r in rels}
    out: dict[str, str] = {}
    for sheet in wb.iter(f"{{{NS_MAIN}}}sheet"):
        target = targets[sheet.get(f"{{{NS_REL}}}id")] or ""
        out[sheet.get("name", "")] = (
            target.lstrip("/") if target.startswith("/") else f"xl/{target}"
        )
    return out


def cached_xml(value: Any) -> tuple[str, str] | None:
    """(type attribute, <v> text) for a cached value, or None to leave the cell uncached
    (no value, or one a cell cannot hold: NaN, infinity)."""
    if isinstance(value, bool):
        return ' t="b"', "1" if value else "0"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return "", repr(float(value)) if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return ' t="str"', escape(value)
    return None


def escape(text: str) -> str:
    """XML character data: &, < and > escaped (as xml.sax.saxutils.escape, without
    importing it: it pulls in urllib and http.client)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
