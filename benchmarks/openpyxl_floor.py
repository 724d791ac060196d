"""The floor `generate` is measured against: the same cells written with openpyxl alone.

Usage: python benchmarks/openpyxl_floor.py CELLS.json OUT.xlsx

CELLS.json is ``[[sheet title, [[row, column, value], ...]], ...]``: every
non-empty cell of a generated workbook, formulas as their text (``=...``),
dates as ISO strings, read from it beforehand by ``bench_generate.py``. This
script imports openpyxl, reads that list, creates the sheets, assigns each value
and saves: no styles, validations, names, charts, print set-up, cached values or
reference computation -- what any workbook of those cells costs at least.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    import datetime as dt

    from openpyxl import Workbook

    src, out = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as fh:
        sheets = json.load(fh)
    wb = Workbook()
    wb.remove(wb.active)
    for title, cells in sheets:
        ws = wb.create_sheet(title)
        for row, column, value in cells:
            if isinstance(value, dict):  # {"date": "2027-01-01T00:00:00"}
                value = dt.datetime.fromisoformat(value["date"])
            ws.cell(row=row, column=column, value=value)
    wb.save(out)


if __name__ == "__main__":
    main()
