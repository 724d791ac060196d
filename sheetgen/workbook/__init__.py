"""Write the planning workbook: build with openpyxl, cache reference values, publish safely.

One module per workbook part (``builder`` lays the sheets out from ``templates``;
``xlsx_writer`` writes the file).  It reads ``scenarios``, ``catalog`` and the
``reference`` (for cached values) and writes through ``output``; the command line,
``readback`` and ``checking`` import it.  ``save_workbook`` is its public entry.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sheetgen.errors import SheetgenError, short
from sheetgen.output import safe_write

if TYPE_CHECKING:  # pragma: no cover
    from sheetgen.scenarios.scenario import Scenario


def write_workbook(
    scenarios: list[Scenario], path: Path, force: bool = False, cache_values: bool = True
) -> Path:
    """Write the workbook to ``path`` (see :func:`save_workbook`); return the path."""
    t = safe_write.target(path, "sheetgen.xlsx", force=force, suffix=".xlsx")
    return save_workbook(scenarios, t, cache_values).path


def save_workbook(
    scenarios: list[Scenario], t: safe_write.Target, cache_values: bool = True
) -> safe_write.Published:
    """Build the workbook and publish it at ``t`` through ``sheetgen.output.safe_write``.

    Written to a temporary file beside the target and published atomically: an
    interrupted run leaves the old file (or none) and no temporary file.  An
    existing file is replaced when it is exactly what sheetgen last wrote there,
    kept under a timestamped name when it is not, and replaced whatever it is
    with ``force`` (see ``safe_write``).  With ``cache_values`` the reference
    values are stored as the formulas' cached results, so viewers that do not
    calculate still show numbers.
    """
    if t.path.suffix.lower() != ".xlsx":
        raise SheetgenError(t.field, f"{short(str(t.path))} must end in .xlsx")
    if not scenarios:
        raise SheetgenError("scenarios", "no scenarios to write")
    from sheetgen.workbook import xlsx_writer
    from sheetgen.workbook.builder import build

    with collections_paused():
        wb, cached = build(scenarios)  # validates every result before anything is written
        try:
            return safe_write.publish(
                t, lambda fh: xlsx_writer.save(wb, fh, cached if cache_values else None)
            )
        finally:
            release(wb)


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
