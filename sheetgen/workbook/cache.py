"""Store values as the cached results of formula cells in a saved .xlsx.

openpyxl writes formulas with empty cached values, so viewers that do not
calculate (mail previews, pandas, openpyxl ``data_only=True``) would show
blanks.  sheetgen fills each formula's cached value with the Python
reference's value for that key and scenario.  The formulas stay untouched and
``fullCalcOnLoad`` stays set, so spreadsheet applications recalculate anyway;
the tests recalculate workbooks written without this cache.
"""

from __future__ import annotations

import math
import re
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

NS_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
NS_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_CELL_RE = re.compile(r'<c r="([A-Z]+[0-9]+)"([^>]*)><f>(.*?)</f><v\s*/>(</c>)', re.S)


def sheet_parts(z: zipfile.ZipFile) -> dict[str, str]:
    """Sheet title -> part name inside the zip."""
    import xml.etree.ElementTree as ET

    wb = ET.fromstring(z.read("xl/workbook.xml"))
    rels = ET.fromstring(z.read("xl/_rels/workbook.xml.rels"))
    targets = {r.get("Id"): r.get("Target") for r in rels}
    out = {}
    for sheet in wb.iter(f"{{{NS_MAIN}}}sheet"):
        target = targets[sheet.get(f"{{{NS_REL}}}id")]
        out[sheet.get("name")] = target.lstrip("/") if target.startswith("/") else f"xl/{target}"
    return out


def _cached(value: Any) -> tuple[str, str] | None:
    """(type attribute, <v> text) for a value, or None to leave the cell uncached."""
    if isinstance(value, bool):
        return ' t="b"', "1" if value else "0"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return "", repr(float(value)) if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return ' t="str"', escape(value)


def escape(text: str) -> str:
    """XML character data: &, < and > escaped (as xml.sax.saxutils.escape, without
    importing it: it pulls in urllib and http.client)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return None


def inject_cached_values(path: Path, values: dict[str, dict[str, Any]]) -> None:
    """Rewrite ``path`` in place with ``values[sheet][cell]`` as cached formula results."""
    path = Path(path)
    with zipfile.ZipFile(path) as z:
        parts = sheet_parts(z)
        wanted = {parts[s]: v for s, v in values.items() if s in parts}
        fd, tmp_name = tempfile.mkstemp(suffix=".xlsx", dir=path.parent)
        try:
            _rewrite(z, fd, wanted)
        except BaseException:  # an error or an interruption (SIGTERM) leaves no temp file
            Path(tmp_name).unlink(missing_ok=True)
            raise
    shutil.move(tmp_name, path)


def _rewrite(z: zipfile.ZipFile, fd: int, wanted: dict[str, dict[str, Any]]) -> None:
    """Copy every part of ``z`` to the open file ``fd``, filling cached values on the way."""
    with open(fd, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as out:
        for item in z.infolist():
            data = z.read(item.filename)
            if item.filename in wanted:
                cells = wanted[item.filename]

                def fill(m: re.Match, cells: dict[str, Any] = cells) -> str:
                    ref, attrs, formula, close = m.groups()
                    cached = _cached(cells.get(ref))
                    if cached is None:
                        return m.group(0)
                    t_attr, text = cached
                    if ' t="' in attrs:
                        attrs = re.sub(r'\s+t="[^"]*"', "", attrs)
                    return f'<c r="{ref}"{attrs}{t_attr}><f>{formula}</f><v>{text}</v>{close}'

                data = _CELL_RE.sub(fill, data.decode("utf-8")).encode("utf-8")
            out.writestr(item, data)
