"""Recalculate sheetgen workbooks and read back their computed values (a facade).

The engines live in :mod:`sheetgen.engines`, one module each (LibreOffice,
Gnumeric, in-process pycel and formulas, PDF export through LibreOffice); this
module keeps the names other modules import from ``sheetgen.checking.recalc``. Importing
it is cheap: openpyxl, pycel and formulas load only when an engine runs.
"""

from __future__ import annotations

from sheetgen.engines import ENGINES, engine_available, recalculate
from sheetgen.engines.common import RecalcError, Values, read_values
from sheetgen.engines.gnumeric import find_ssconvert, gnumeric_available, values_gnumeric
from sheetgen.engines.inprocess import recalc_formulas, recalc_pycel
from sheetgen.engines.libreoffice import (
    find_soffice,
    libreoffice_available,
    recalc_libreoffice,
    values_libreoffice,
)
from sheetgen.engines.pdf import export_pdf

__all__ = [
    "ENGINES",
    "RecalcError",
    "Values",
    "engine_available",
    "export_pdf",
    "find_soffice",
    "find_ssconvert",
    "gnumeric_available",
    "libreoffice_available",
    "read_values",
    "recalc_formulas",
    "recalc_libreoffice",
    "recalc_pycel",
    "recalculate",
    "values_gnumeric",
    "values_libreoffice",
]
