"""Spreadsheet dates: Excel's 1900 date system, the serial numbers a workbook stores,
and the dates a spreadsheet can show.

A date helper, not a limit and not a dataclass: ``scenario``, ``parse``, ``limits``,
the reference and the command line all read dates through here, and this module
imports nothing of sheetgen's.
"""

from __future__ import annotations

import datetime as dt

# Excel's 1900 date system: serial 1 = 1900-01-01, and serials count from
# 1899-12-30 for every date from 1900-03-01 on (Excel's phantom 1900-02-29).
EXCEL_EPOCH = dt.date(1899, 12, 30)
# The last date Excel and LibreOffice can show (serial 2,958,465): no finish date
# may pass it (limits.check_results).
SPREADSHEET_DATE_MAX = dt.date(9999, 12, 31)
# The start dates a scenario may give.  The spend-by-month table reaches 36 months
# and up to 4 fiscal years past the start; every date it shows must stay before
# SPREADSHEET_DATE_MAX, hence five years earlier.
START_DATE_MIN = dt.date(1901, 1, 1)
START_DATE_MAX = dt.date(9994, 12, 31)


def excel_serial(day: dt.date) -> int:
    """The spreadsheet serial number of a date (2025-01-01 -> 45658)."""
    return (day - EXCEL_EPOCH).days


def date_from_serial(serial: float) -> dt.date:
    return EXCEL_EPOCH + dt.timedelta(days=int(serial))
