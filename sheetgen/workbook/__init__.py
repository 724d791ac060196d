"""Write the planning workbook: build with openpyxl, cache reference values, save safely."""

from __future__ import annotations

import gc
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
    from sheetgen.workbook.builder import build

    with collections_paused():
        wb, cached = build(scenarios)  # validates every result before anything is written
        try:
            _save(wb, cached if cache_values else None, path)
        finally:
            release(wb)
    return path


def _save(wb: Any, cached: dict[str, dict[str, Any]] | None, path: Path) -> None:
    """Save beside ``path``, then rename over it."""
    from sheetgen.workbook import xlsx_writer

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
        xlsx_writer.save(wb, tmp, cached)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; a workbook is not
        os.replace(tmp, path)
    except OSError as e:
        raise SheetgenError("--output", f"cannot write {path}: {e.strerror}") from None
    finally:
        if tmp.exists():
            tmp.unlink()


@contextmanager
def collections_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while the workbook is built and saved.

    Building creates a graph of live objects the collector tracks (cells, styles,
    rows: 18,000 for one scenario, 230,000 for 100) and next to no garbage; with the
    collector on, its passes over the growing graph, freeing nothing, took about
    15 ms of 0.25 s for the default workbook and 150 ms of 1.7 s for 100 scenarios.
    Plain reference counting still frees what is dropped; the collector is switched
    back on (if it was on) however the block ends, and its next pass frees the cycles
    the finished workbook leaves.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def release(wb: Any) -> None:
    """Empty the sheets of a saved workbook, so that reference counting frees it.

    Each cell, row dimension and merged range points back at its sheet, so a
    dropped workbook is garbage only the cyclic collector can free: a pass over
    every cell (10-20 ms for the default workbook, the first collection after
    ``collections_paused`` ends).  With those dropped first, reference counting
    frees them as soon as nothing else refers to the workbook.
    """
    for ws in wb.worksheets:
        ws._cells.clear()  # openpyxl 3.1's cell store (see xlsx_writer)
        ws.merged_cells.ranges.clear()  # a merged range holds its first cell
        ws.row_dimensions.clear()
        ws.column_dimensions.clear()
