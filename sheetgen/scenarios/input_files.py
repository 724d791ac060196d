"""Every file sheetgen reads, opened one way: a regular file of bounded size, or one
line ``<path>: <reason>`` (issue 26.2 and 26.9).

A path with a component over 255 bytes, a folder or file that cannot be read, a
device (``/dev/zero``), a FIFO or a file larger than the cap ends in a
``SheetgenError`` naming the path (quoted when it holds a line break) instead of a
traceback or a MemoryError.  Reading stops one byte past the cap, so a file whose
size the system does not report (``/proc``) cannot exhaust memory either.

The caps, and why they are where they are:

* text inputs (scenario files, presets, tables, config.json): 64 MiB.  A scenario
  file that lists all 60-odd settings for each of the 16,379 scenarios a workbook
  holds is about 30 MB; the largest Hugging Face config.json files (with label
  maps) are a few MB.
* workbooks: 256 MiB on disk and 256 MiB uncompressed in all (the sizes the zip's
  directory declares, which zipfile enforces when openpyxl reads the members).  The
  default workbook of 3 scenarios is 0.8 MB uncompressed, so the cap holds
  several hundred scenarios; openpyxl needs several times the XML's size in memory,
  so a 1 MB zip bomb declaring gigabytes is refused before it is loaded.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

from sheetgen.errors import SheetgenError, quote_path

MiB = 1024 * 1024
MAX_TEXT_BYTES = 64 * MiB
MAX_WORKBOOK_BYTES = 256 * MiB
MAX_UNCOMPRESSED_BYTES = 256 * MiB


def _mib(n: int) -> str:
    return f"{n / MiB:,.1f} MiB" if n < 10 * MiB else f"{n / MiB:,.0f} MiB"


def os_reason(e: OSError) -> str:
    """A short reason for an OSError, as ``error: <path>: <reason>`` shows it."""
    if e.errno == errno.ENAMETOOLONG:
        return "file name too long (a name in the path is over 255 bytes)"
    return e.strerror or type(e).__name__


def path_error(path: Any, e: OSError, what: str) -> SheetgenError:
    """The one-line error for an OSError met while reading ``path``."""
    if e.errno == errno.ENOENT:
        return SheetgenError(quote_path(path), f"{what} not found")
    return SheetgenError(quote_path(path), f"cannot read {what}: {os_reason(e)}")


def check_regular(path: Any, what: str, limit: int) -> os.stat_result:
    """``os.stat(path)`` of a regular file no larger than ``limit``, else one line."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise path_error(path, e, what) from None
    if stat.S_ISDIR(st.st_mode):
        raise SheetgenError(quote_path(path), f"is a directory, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        raise SheetgenError(
            quote_path(path), f"is not a regular file (a device, FIFO or socket); give a {what}"
        )
    if st.st_size > limit:
        raise SheetgenError(
            quote_path(path),
            f"is {_mib(st.st_size)}; a {what} may be at most {_mib(limit)}",
        )
    return st


def read_bytes(path: Any, what: str, limit: int | None = None) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (default MAX_TEXT_BYTES),
    or one line saying why not."""
    limit = MAX_TEXT_BYTES if limit is None else limit
    check_regular(path, what, limit)
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as e:
        raise path_error(path, e, what) from None
    if len(data) > limit:
        raise SheetgenError(quote_path(path), f"is over {_mib(limit)}; a {what} may not be")
    return data


def read_text(path: Any, what: str, limit: int | None = None) -> str:
    """A UTF-8 text file's contents (see ``read_bytes``)."""
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SheetgenError(quote_path(path), f"cannot read {what}: not UTF-8 text") from None


def exists(path: Any) -> bool:
    """``Path(path).exists()`` that answers False, never raises, for a path the system
    refuses to look up (a name over 255 bytes, a loop of links): reading it then
    names the reason."""
    try:
        return Path(path).exists()
    except (OSError, ValueError):
        return False


def is_dir(path: Any, field: str) -> bool:
    """Whether ``path`` is a folder; a path the system refuses is one line naming ``field``."""
    try:
        return Path(path).is_dir()
    except OSError as e:
        raise SheetgenError(field, f"{quote_path(path)}: {os_reason(e)}") from None
    except ValueError:
        raise SheetgenError(field, f"{quote_path(path)}: not a valid path") from None
