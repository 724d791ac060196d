"""Write the planning workbook: build with openpyxl, cache reference values, save safely."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from sheetgen.errors import SheetgenError, short

if TYPE_CHECKING:  # pragma: no cover
    from sheetgen.scenario import Scenario


def write_workbook(
    scenarios: list[Scenario], path: Path, force: bool = False, cache_values: bool = True
) -> Path:
    """Write the workbook to ``path``.

    An existing file is never overwritten unless ``force``; then the new file is
    written beside it and renamed over it, so an interrupted run leaves the old
    file intact.  With ``cache_values`` the reference values are stored as the
    formulas' cached results, so viewers that do not calculate still show numbers.
    """
    from sheetgen.workbook import xlsx_writer
    from sheetgen.workbook.builder import build

    path = Path(path)
    if not str(path).strip() or path.name in ("", ".", ".."):
        raise SheetgenError(
            "--output", f"{short(str(path))} is not a file name; give e.g. plan.xlsx"
        )
    if path.suffix.lower() != ".xlsx":
        raise SheetgenError("--output", f"{short(str(path))} must end in .xlsx")
    if path.is_dir():
        raise SheetgenError("--output", f"{path} is a directory")
    if path.exists() and not force:
        raise SheetgenError("--output", f"{path} exists; pass --force to overwrite it")
    if not scenarios:
        raise SheetgenError("scenarios", "no scenarios to write")
    wb, cached = build(scenarios)  # validates every result before anything is written
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{path.stem}-", suffix=".xlsx.tmp", dir=path.parent
        )
    except OSError as e:
        raise SheetgenError("--output", f"cannot write in {path.parent}: {e.strerror}") from None
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        xlsx_writer.save(wb, tmp, cached if cache_values else None)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; a workbook is not
        os.replace(tmp, path)
    except OSError as e:
        raise SheetgenError("--output", f"cannot write {path}: {e.strerror}") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return path
