"""Unit constants, written once.

Decimal prefixes throughout, as vendors quote them: GB of memory, TB/s of
bandwidth and TFLOP/s of compute are powers of 1000 (the workbook's ``*10^9`` and
``*10^12`` are the same factors).  Binary sizes (GiB) appear only in the count
suffixes people type (``4Mi``), which ``sheetgen.scenarios.parse`` reads.

Every module that needs one of these imports it from here.
"""

from __future__ import annotations

KILO = 10**3
MEGA = 10**6
GIGA = 10**9  # GB -> bytes, GB/s -> bytes/s
TERA = 10**12  # TFLOP/s -> FLOP/s, TB/s -> bytes/s
PER_MILLION = MEGA  # prices and rates per million tokens

SECONDS_PER_HOUR = 3600
HOURS_PER_DAY = 24
SECONDS_PER_DAY = SECONDS_PER_HOUR * HOURS_PER_DAY

__all__ = [
    "GIGA",
    "HOURS_PER_DAY",
    "KILO",
    "MEGA",
    "PER_MILLION",
    "SECONDS_PER_DAY",
    "SECONDS_PER_HOUR",
    "TERA",
]
