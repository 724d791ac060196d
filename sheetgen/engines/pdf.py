"""Print chosen sheets of a workbook to PDF through LibreOffice (recalculated first)."""

from __future__ import annotations

import html
import re
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sheetgen.engines.common import RecalcError, require_file
from sheetgen.engines.libreoffice import converted, deliver
from sheetgen.output.interrupt import zip_for_writing

# A cell no sheetgen workbook uses, inside LibreOffice's default grid (1,024 columns).
_EMPTY_PRINT_AREA = "$AMJ$1048576"


def _is_pdf(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(5) == b"%PDF-"


def _show_only(sheets: Sequence[str]) -> Callable[[Path], None]:
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
        with zip_for_writing(path) as z:
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
    publish: Callable[[Path], Any] | None = None,
) -> Any:
    """Write the chosen sheets of workbook ``src`` as a PDF at ``dst`` through LibreOffice.

    The workbook is recalculated on load (as ``recalc_libreoffice``), every
    other sheet gets an empty print area in a private copy so that only the
    chosen ones print, and each prints with its own print area and page setup.
    ``src`` is never modified; ``dst`` is replaced only once the PDF is complete.
    With ``publish``, ``publish(produced PDF)`` delivers it instead (the CLI's
    ``sheetgen.output.safe_write`` rules) and its result is returned.

    Raises:
        FileNotFoundError: ``src`` does not exist.
        RecalcError: LibreOffice is missing, times out, fails, a sheet does not
            exist, or no PDF came out.
    """
    src, dst = require_file(src), Path(dst)
    if not sheets:
        raise ValueError("no sheets to export")
    prepare = _show_only(list(sheets))
    with converted(src, "pdf:calc_pdf_Export", ".pdf", timeout, _is_pdf, prepare) as produced:
        return deliver(produced, dst) if publish is None else publish(produced)
