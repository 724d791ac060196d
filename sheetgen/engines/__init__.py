"""Spreadsheet engines that recalculate a sheetgen workbook, one module each.

* :mod:`~sheetgen.engines.libreoffice` -- LibreOffice headless, forced
  recalculation on load in a private profile (the default for ``check``);
  :mod:`~sheetgen.engines.pdf` prints through it.
* :mod:`~sheetgen.engines.gnumeric` -- Gnumeric's ``ssconvert --recalc``.
* :mod:`~sheetgen.engines.inprocess` -- pycel and formulas, in this process.

:mod:`~sheetgen.engines.common` holds the error type and the layout reader
they all return through; :mod:`~sheetgen.engines.processes` the process-group
control of the two external programs. Every engine returns
``{(sheet, key, scenario): value}`` and never modifies its input.
"""

from __future__ import annotations

from pathlib import Path

from sheetgen.engines.common import RecalcError, Values

#: Engine names accepted by :func:`recalculate` and ``sheetgen check --engine``.
ENGINES = ("libreoffice", "gnumeric", "pycel", "formulas")


def engine_available(engine: str) -> bool:
    """Whether ``engine`` can run here (its program or package is installed)."""
    import importlib.util

    if engine == "libreoffice":
        from sheetgen.engines.libreoffice import libreoffice_available

        return libreoffice_available()
    if engine == "gnumeric":
        from sheetgen.engines.gnumeric import gnumeric_available

        return gnumeric_available()
    if engine in ("pycel", "formulas"):
        return importlib.util.find_spec(engine) is not None
    raise ValueError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")


def recalculate(path: Path, engine: str = "libreoffice", timeout: float = 120) -> Values:
    """Recalculate the workbook at ``path`` with ``engine`` and return its values.

    ``timeout`` bounds the external programs (LibreOffice, Gnumeric); the
    in-process engines ignore it.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: ``engine`` is not one of :data:`ENGINES`.
        RecalcError: the engine is missing, times out or fails.
    """
    if engine == "libreoffice":
        from sheetgen.engines.libreoffice import values_libreoffice

        return values_libreoffice(path, timeout=timeout)
    if engine == "gnumeric":
        from sheetgen.engines.gnumeric import values_gnumeric

        return values_gnumeric(path, timeout=timeout)
    if engine == "pycel":
        from sheetgen.engines.inprocess import recalc_pycel

        return recalc_pycel(path)
    if engine == "formulas":
        from sheetgen.engines.inprocess import recalc_formulas

        return recalc_formulas(path)
    raise ValueError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")


__all__ = ["ENGINES", "RecalcError", "Values", "engine_available", "recalculate"]
