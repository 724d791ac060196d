"""Gnumeric: ``ssconvert --recalc``, a second, independent spreadsheet engine.

:func:`values_gnumeric` copies the workbook into a private temporary directory
and runs ``ssconvert --recalc -T Gnumeric_Excel:xlsx2 in.xlsx out.xlsx`` there
(Debian/Ubuntu package ``gnumeric``), with ``HOME`` pointing into that directory
so Gnumeric's caches and settings never touch the user's; every formula is
recalculated before writing, so cached values in the input play no part. The
program runs in its own process group, killed on timeout, error or
interruption, and the directory is removed when the call ends. The input file is
never modified.

Gnumeric prints "Unexpected element" notes for OOXML parts it does not read
(header/footer variants, workbook protection); they do not affect values.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from pathlib import Path

from sheetgen.engines.common import (
    RecalcError,
    Values,
    read_values,
    require_file,
    require_program,
)
from sheetgen.engines.processes import remove_tree, run_isolated, tail

XLSX_EXPORTER = "Gnumeric_Excel:xlsx2"


def find_ssconvert() -> str | None:
    """Locate Gnumeric's ``ssconvert``: ``SHEETGEN_SSCONVERT`` when set (authoritative),
    else ``ssconvert`` on ``PATH``."""
    override = os.environ.get("SHEETGEN_SSCONVERT", "").strip()
    return shutil.which(override or "ssconvert")


def gnumeric_available() -> bool:
    """Return whether Gnumeric's ``ssconvert`` can be found."""
    return find_ssconvert() is not None


def values_gnumeric(src: Path, timeout: float = 120) -> Values:
    """Recalculate ``src`` with Gnumeric and return its values (``read_values`` shape).

    Raises:
        FileNotFoundError: ``src`` does not exist.
        RecalcError: ``ssconvert`` is missing, does not finish within ``timeout``
            seconds (its process group is killed), exits abnormally, or writes no
            valid .xlsx.
    """
    src = require_file(src)
    ssconvert = require_program(
        find_ssconvert(), "SHEETGEN_SSCONVERT", "Gnumeric (ssconvert)", "gnumeric"
    )
    work = Path(tempfile.mkdtemp(prefix="sheetgen-gnumeric-"))
    try:
        home = work / "home"
        home.mkdir()
        inp, out = work / "in.xlsx", work / "out.xlsx"
        shutil.copyfile(src, inp)
        env = dict(os.environ, HOME=str(home), GSETTINGS_BACKEND="memory")
        cmd = [ssconvert, "--recalc", "-T", XLSX_EXPORTER, str(inp), str(out)]
        returncode = run_isolated(
            cmd, program="Gnumeric", what=src.name, work=work, timeout=timeout, env=env
        )
        logs = (work / "stderr.log", work / "stdout.log")
        if returncode != 0:
            raise RecalcError(
                f"Gnumeric exited with status {returncode} converting {src.name}: {tail(*logs)}"
            )
        if not out.is_file() or out.stat().st_size == 0 or not zipfile.is_zipfile(out):
            raise RecalcError(f"Gnumeric wrote no valid .xlsx for {src.name}: {tail(*logs)}")
        return read_values(out)
    finally:
        remove_tree(work)
