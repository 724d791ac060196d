"""SIGTERM and SIGHUP end a command the way Ctrl-C does: by unwinding, so cleanup runs.

By default Python dies on SIGTERM or SIGHUP at once, skipping every ``finally``:
a LibreOffice or Gnumeric started in its own process group keeps running, and
its temporary profile, the workbook copy and a half-written output file stay
behind. Inside :func:`signals_unwind`, both signals raise :class:`Interrupted`
in the main thread instead; the engines' ``finally`` blocks then kill the
program's process group and remove their temporary directories, and the writers
remove their temporary files. ``Interrupted`` derives from ``BaseException``
(like ``KeyboardInterrupt``) so that ``except Exception`` never swallows it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import zipfile
from collections.abc import Iterator
from typing import IO

SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


# The main thread's hold on interruptions (:func:`deferred`): how many holds are open,
# and the signal that arrived during one.
class _Hold:
    depth: int = 0
    pending: int | None = None


_held = _Hold()


class Interrupted(BaseException):
    """A SIGTERM or SIGHUP arrived while a command ran."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.name = signal.Signals(signum).name
        super().__init__(self.name)

    @property
    def exit_code(self) -> int:
        """128 + the signal number, as a shell reports a process ended by that signal."""
        return 128 + self.signum


@contextlib.contextmanager
def signals_unwind() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise :class:`Interrupted`.

    A second signal during the cleanup that follows is ignored, so cleanup
    finishes. Outside the main thread (where handlers cannot be set) this does
    nothing. The previous handlers are restored afterwards.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_interrupted(signum: int, _frame: object) -> None:
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        if _held.depth:
            _held.pending = signum  # raised as the held statements end
            return
        raise Interrupted(signum)

    previous = {sig: signal.signal(sig, raise_interrupted) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold an interruption back while the block runs: a SIGTERM or SIGHUP that arrives
    meanwhile raises :class:`Interrupted` as the block ends, not inside it.

    For the few statements that must not be split: creating a temporary file and
    noting it for cleanup, so that no signal can land between the two. The signal
    itself may reach any thread of the process, but Python runs its handler in the
    main thread, which is where the handler of :func:`signals_unwind` looks at this
    hold; in another thread (whose statements a handler never interrupts) this does
    nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _held.depth += 1
    try:
        yield
    finally:
        _held.depth -= 1
        pending = _held.pending
        if _held.depth == 0 and pending is not None:
            _held.pending = None
            raise Interrupted(pending)


@contextlib.contextmanager
def zip_for_writing(target: str | os.PathLike[str] | IO[bytes]) -> Iterator[zipfile.ZipFile]:
    """A deflated zip archive written to ``target`` (a path, or an open binary file left
    open), whose closing never hides the exception that stopped the writing.

    A signal that lands inside an entry leaves that entry's handle open, and closing
    the archive then raises ValueError ("open writing handle"): a traceback and exit 1
    instead of one line and exit 128 + n. On any exception the archive is closed as
    far as it can be, the file released, and the first exception raised; the partial
    file is the caller's to remove.
    """
    opened = open(target, "wb") if isinstance(target, (str, os.PathLike)) else None
    with opened or contextlib.nullcontext(target) as raw:
        archive = zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED, allowZip64=True)
        try:
            yield archive
        except BaseException:
            try:
                archive.close()
            except Exception:
                # Abandoned: without this, the archive's finaliser would try closing
                # again on the released file (an "Exception ignored" on stderr).
                archive.fp = None
            raise
        archive.close()
