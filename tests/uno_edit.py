"""Edit one input of an .xlsx in LibreOffice through UNO and save it as .xlsx
(issue 24.9: another application opens, edits and re-saves a sheetgen workbook).

Run with the Python that has LibreOffice's ``uno`` module (Debian: python3-uno):
    python3 uno_edit.py SOFFICE IN OUT SHEET KEY COLUMN VALUE
Finds the row of SHEET whose column A holds KEY, sets COLUMN (0-based) to VALUE
(a number), recalculates everything, and stores OUT with LibreOffice's own xlsx
writer ("Calc MS Excel 2007 XML").  LibreOffice runs in a private profile in a
temporary folder, listening on a pipe named for this process, and is terminated
at the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import uno  # type: ignore[import-not-found]
from com.sun.star.beans import PropertyValue  # type: ignore[import-not-found]


def prop(name: str, value: object) -> PropertyValue:
    p = PropertyValue()
    p.Name, p.Value = name, value
    return p


def main(soffice: str, src: str, out: str, sheet: str, key: str, col: str, value: str) -> None:
    pipe = f"sheetgen_uno_{os.getpid()}"
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.Popen(
            [soffice, "--headless", "--invisible", "--norestore", "--nologo",
             f"-env:UserInstallation={Path(profile).as_uri()}",
             f"--accept=pipe,name={pipe};urp;StarOffice.ComponentContext"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            local = uno.getComponentContext()
            resolver = local.ServiceManager.createInstanceWithContext(
                "com.sun.star.bridge.UnoUrlResolver", local
            )
            for _ in range(600):  # up to 60 s for LibreOffice to start
                try:
                    ctx = resolver.resolve(f"uno:pipe,name={pipe};urp;StarOffice.ComponentContext")
                    break
                except Exception:  # noqa: BLE001 - not listening yet
                    time.sleep(0.1)
            else:
                raise SystemExit("LibreOffice did not start")
            desktop = ctx.ServiceManager.createInstanceWithContext(
                "com.sun.star.frame.Desktop", ctx
            )
            doc = desktop.loadComponentFromURL(
                Path(src).resolve().as_uri(), "_blank", 0, (prop("Hidden", True),)
            )
            ws = doc.Sheets.getByName(sheet)
            rows = ws.getCellRangeByName("A1:A2000").getDataArray()
            row = next((i for i, (a,) in enumerate(rows) if a == key), None)
            if row is None:
                raise SystemExit(f"no row {key} on {sheet}")
            ws.getCellByPosition(int(col), row).setValue(float(value))
            doc.calculateAll()
            doc.storeToURL(
                Path(out).resolve().as_uri(), (prop("FilterName", "Calc MS Excel 2007 XML"),)
            )
            doc.close(True)
            try:
                desktop.terminate()
            except Exception:  # noqa: BLE001 - the bridge closes as LibreOffice exits
                pass
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    print(f"libreoffice (uno): saved {out}")


if __name__ == "__main__":
    main(*sys.argv[1:8])
