"""Run the sheetgen CLI in a process of its own, as the writer tests need it.

``python tests/writer_run.py ARGS...`` runs ``sheetgen ARGS...`` with, from the
environment:

- ``WRITER_FSIZE=N``: a file-size limit of N bytes (``ulimit -f``), so that a
  write past it fails with EFBIG;
- ``WRITER_BARRIER=DIR`` and ``WRITER_PARTIES=N``: each run, once its file is
  written and just before it publishes, waits until N runs have reached that
  point, so that racing runs really overlap;
- LibreOffice replaced by a fake PDF printer (``FAKE_PDF``), so that ``pdf`` runs
  in a fraction of a second.  The PDF path is otherwise the real one.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

FAKE_PDF = b"%PDF-1.4\n" + b"% sheetgen test page\n" * 200 + b"%%EOF\n"


def install_fake_pdf() -> None:
    """``pdf`` prints FAKE_PDF (made now, before any file-size limit) instead of
    running LibreOffice."""
    import sheetgen.engines.pdf as pdf

    work = tempfile.mkdtemp(prefix="sheetgen-fake-pdf-")
    atexit.register(shutil.rmtree, work, True)
    made = Path(work) / "out.pdf"
    made.write_bytes(FAKE_PDF)

    @contextlib.contextmanager
    def fake_converted(src: Path, *args: object, **kwargs: object) -> Iterator[Path]:
        yield made

    pdf.converted = fake_converted  # type: ignore[assignment]


def install_barrier(folder: Path, parties: int) -> None:
    from sheetgen.output import safe_write

    original = safe_write._folder_locked

    def wait_then_lock(where: Path):  # type: ignore[no-untyped-def]
        (folder / f"ready-{os.getpid()}").touch()
        deadline = time.monotonic() + 60
        while len(list(folder.iterdir())) < parties and time.monotonic() < deadline:
            time.sleep(0.01)
        return original(where)

    safe_write._folder_locked = wait_then_lock  # type: ignore[assignment]


def main() -> None:
    import resource

    limit = os.environ.get("WRITER_FSIZE")
    install_fake_pdf()
    if limit:
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), int(limit)))
    if os.environ.get("WRITER_BARRIER"):
        install_barrier(Path(os.environ["WRITER_BARRIER"]), int(os.environ["WRITER_PARTIES"]))
    from sheetgen.cli.commands import main as cli

    cli(sys.argv[1:], prog_name="sheetgen")


if __name__ == "__main__":
    main()
