"""LibreOffice headless: forced recalculation and conversion of a private copy.

:func:`recalc_libreoffice` and :func:`values_libreoffice` run
``soffice --headless --convert-to xlsx`` in a fresh private user profile whose
``registrymodifications.xcu`` sets ``OOXMLRecalcMode`` and ``ODFRecalcMode`` to
0 ("always recalculate on load"). Without that setting LibreOffice keeps
whatever cached ``<v>`` values the file carries, so a stale or deliberately
wrong cached value would come back unchanged. Each call uses its own profile,
input copy and output directory, so calls may run in parallel; the input file
is never modified. LibreOffice writes its internal errors (``Err:502``,
``Err:522`` circular reference, ...) to .xlsx as ``#VALUE!``, and gives
``#VALUE!`` where Excel gives ``#NUM!`` (e.g. ``SQRT(-1)``).

The profile, the copy and the output live in one temporary directory that is
removed when the call ends, however it ends (timeout, error, SIGTERM/SIGHUP
turned into :class:`sheetgen.output.interrupt.Interrupted`, Ctrl-C).
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

from sheetgen.engines.common import (
    RecalcError,
    Values,
    read_values,
    require_file,
    require_program,
)
from sheetgen.engines.processes import remove_tree, run_isolated, tail

XLSX_FILTER = "xlsx:Calc MS Excel 2007 XML"
_COMMON_SOFFICE_PATHS = (
    "/usr/bin/soffice",
    "/usr/lib/libreoffice/program/soffice",
    "/opt/libreoffice*/program/soffice",
    "/Applications/LibreOffice.app/Contents/MacOS/soffice",
)
_REGISTRY_XCU = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" \
xmlns:xs="http://www.w3.org/2001/XMLSchema" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">\
<prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">\
<prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""


def find_soffice() -> str | None:
    """Locate the LibreOffice ``soffice`` executable.

    ``SHEETGEN_SOFFICE``, when set (non-empty), is authoritative: its value (a path
    or a command name) is returned if it resolves to an executable, else ``None``.
    Otherwise ``soffice`` or ``libreoffice`` on ``PATH``, then common install
    locations, are tried.
    """
    override = os.environ.get("SHEETGEN_SOFFICE", "").strip()
    if override:
        return shutil.which(override)
    for name in ("soffice", "libreoffice"):
        found = shutil.which(name)
        if found:
            return found
    for pattern in _COMMON_SOFFICE_PATHS:
        for candidate in sorted(glob.glob(pattern)):
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return None


def libreoffice_available() -> bool:
    """Return whether a LibreOffice executable can be found (see :func:`find_soffice`)."""
    return find_soffice() is not None


def _soffice_or_raise() -> str:
    return require_program(
        find_soffice(), "SHEETGEN_SOFFICE", "LibreOffice (soffice)", "LibreOffice"
    )


def safe_stem(src: Path) -> str:
    """The workbook's name (a footer may print it), made safe for a path."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", src.stem).strip(".") or "workbook"


@contextlib.contextmanager
def converted(
    src: Path,
    convert_to: str,
    out_suffix: str,
    timeout: float,
    valid: Callable[[Path], bool],
    prepare: Callable[[Path], None] | None = None,
) -> Iterator[Path]:
    """Run ``soffice --convert-to convert_to`` on a copy of ``src``; yield the output.

    Shared by every LibreOffice conversion: a fresh private profile that forces
    recalculation on load, a copy of the input (``prepare(copy)`` may edit it),
    the whole process group killed on timeout or exit, and the output checked
    with ``valid(path)`` because LibreOffice exits 0 even when it wrote nothing.
    The output lives in a temporary directory removed when the ``with`` block ends:
    read it or copy it away inside the block.
    """
    soffice = _soffice_or_raise()
    work = Path(tempfile.mkdtemp(prefix="sheetgen-lo-"))
    try:
        profile = work / "profile"
        (profile / "user").mkdir(parents=True)
        (profile / "user" / "registrymodifications.xcu").write_text(_REGISTRY_XCU, encoding="utf-8")
        indir, outdir = work / "in", work / "out"
        indir.mkdir()
        outdir.mkdir()
        stem = safe_stem(src)
        inp = indir / f"{stem}{src.suffix.lower() or '.xlsx'}"
        shutil.copyfile(src, inp)
        if prepare is not None:
            prepare(inp)
        expected = outdir / f"{stem}{out_suffix}"
        cmd = [
            soffice,
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--norestore",
            "--nologo",
            "--nodefault",
            "--nolockcheck",
            "--convert-to",
            convert_to,
            "--outdir",
            str(outdir),
            str(inp),
        ]
        # LibreOffice's own temporary files (lu*.tmp) go into TMPDIR: a private one
        # inside the work folder, so that they go with it even after a SIGKILL.
        tmp = work / "tmp"
        tmp.mkdir()
        env = {**os.environ, "TMPDIR": str(tmp), "TMP": str(tmp), "TEMP": str(tmp)}
        returncode = run_isolated(
            cmd, program="LibreOffice", what=src.name, work=work, timeout=timeout, env=env
        )
        logs = (work / "stderr.log", work / "stdout.log")
        if returncode != 0:
            raise RecalcError(
                f"LibreOffice exited with status {returncode} converting {src.name}: {tail(*logs)}"
            )
        if not expected.is_file() or expected.stat().st_size == 0 or not valid(expected):
            raise RecalcError(
                f"LibreOffice wrote no valid {out_suffix} for {src.name}: {tail(*logs)}"
            )
        yield expected
    finally:
        remove_tree(work)


def deliver(produced: Path, dst: Path) -> Path:
    """Publish a copy of ``produced`` at ``dst`` atomically (``sheetgen.output.safe_write``):
    a temporary file beside it, fsynced, renamed; the umask applies.

    An interruption leaves no partial ``dst`` and no temporary file.
    """
    from sheetgen.output.safe_write import replace_with_copy

    return replace_with_copy(produced, Path(dst))


def recalc_libreoffice(src: Path, dst: Path | None = None, timeout: float = 120) -> Path:
    """Recalculate ``src`` with headless LibreOffice and write an .xlsx with fresh values.

    Every formula is recalculated on load (the cached values in ``src`` are
    ignored). The result goes to ``dst`` (a file path, overwritten if it exists,
    parent directories created; an existing directory gets ``<src stem>.xlsx``
    inside it) or, when ``dst`` is ``None``, to ``<src stem>.xlsx`` in a new
    temporary directory that the caller owns. ``src`` itself is never modified.

    Raises:
        FileNotFoundError: ``src`` does not exist.
        ValueError: ``dst`` is the same file as ``src``.
        RecalcError: LibreOffice is missing, does not finish within ``timeout``
            seconds (the whole process group is killed), exits abnormally, or
            writes no valid .xlsx.
    """
    src = require_file(src)
    if dst is not None:
        dst = Path(dst)
        if dst.is_dir():
            dst = dst / (src.stem + ".xlsx")
        if dst.exists() and dst.resolve() == src.resolve():
            raise ValueError(f"refusing to overwrite the input workbook {src}")
    with converted(src, XLSX_FILTER, ".xlsx", timeout, zipfile.is_zipfile) as produced:
        if dst is not None:
            return deliver(produced, dst)
        owned = Path(tempfile.mkdtemp(prefix="sheetgen-lo-out-"))
        try:
            return deliver(produced, owned / f"{src.stem}.xlsx")
        except BaseException:
            shutil.rmtree(owned, ignore_errors=True)
            raise


def values_libreoffice(src: Path, timeout: float = 120) -> Values:
    """Recalculate ``src`` with LibreOffice and return its values (``read_values`` shape).

    Nothing is left behind. Raises as :func:`recalc_libreoffice`.
    """
    src = require_file(src)
    with converted(src, XLSX_FILTER, ".xlsx", timeout, zipfile.is_zipfile) as produced:
        return read_values(produced)
