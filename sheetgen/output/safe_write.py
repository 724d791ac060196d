"""Publishing a file the user asked for: one atomic, umask-honouring write for every command.

Every command that writes a file (``generate``, ``--pdf``, ``pdf``, ``presets
import -o``, ``advise --write``, ``inputs -o``; the engines' ``deliver``) calls
:func:`target` before doing any work, then :func:`publish` (docs/DESIGN.md,
"Writing files", has the full rules):

- :func:`target` (``sheetgen.output.targets``, imported here): the target of
  ``-o`` resolved and checked before any work starts.
- :func:`publish`: a temporary file in the target's folder, created with mode
  0666 so the kernel applies the umask, flushed and fsynced, then published
  create-exclusive with ``os.link`` (two runs racing to a new path cannot both
  win) or by ``os.replace`` where replacing is allowed; the temporary name (and
  any folder made for it) is removed however the write ends.
- Reruns: ``.sheetgen-outputs.json`` (:data:`RECORD_NAME`) in the folder holds
  the SHA-256, size and time of what sheetgen last wrote under each name.
  Without ``--force``, a target holding exactly that is replaced, unless the
  record is newer than this command's start (another run won a race: "exists;
  pass --force"); anything else is kept byte for byte under a timestamped second
  name (a hard link) before the new file takes the name.  The decision runs
  under an exclusive ``flock`` on the folder.  A lost or unreadable record only
  ever causes an extra kept copy, never a loss.

Errors are :class:`SheetgenError` with the path as the field: ``error:
<path>: <reason>``, one line, exit code 2.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import json
import os
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from sheetgen.errors import SheetgenError
from sheetgen.output.interrupt import deferred
from sheetgen.output.targets import (  # target and shown: callers import them from here
    NAME_MAX,
    Target,
    check_existing,
    check_writable,
    fs_error,
    shown,
    target,
)
from sheetgen.output.targets import YAML_SUFFIXES as YAML_SUFFIXES  # callers' suffix

RECORD_NAME = ".sheetgen-outputs.json"
TMP_PREFIX = ".sheetgen-"
TMP_SUFFIX = ".tmp"


@dataclass(frozen=True)
class Published:
    """What :func:`publish` did, and the one line that says so."""

    path: Path
    replaced: bool = False  # an unedited earlier output (or, with --force, anything) replaced
    kept: Path | None = None  # the file that was there, kept under this name
    edited: bool = False  # the kept file had been changed since sheetgen wrote it
    forced: bool = False  # replaced under --force, whatever it held

    def line(self) -> str:
        if self.kept is not None:
            why = (
                "edited since sheetgen wrote it"
                if self.edited
                else "no record of sheetgen writing it"
            )
            return f"wrote {shown(self.path)}; the file that was there ({why}) is kept as " + shown(
                self.kept
            )
        if self.forced:
            return f"wrote {shown(self.path)} (replaced the file that was there: --force)"
        if self.replaced:
            return f"wrote {shown(self.path)} (replaced the earlier output)"
        return f"wrote {shown(self.path)}"


def publish(t: Target, write: Callable[[IO[bytes]], object]) -> Published:
    """Write the file with ``write(binary file object)`` and publish it at ``t.path``.

    See the module's docstring for the rules; raises SheetgenError (``<path>:
    <reason>``) on any file-system error, with the temporary file removed.
    """
    made: list[Path] = []
    owned: list[Path] = []  # the temporary file, noted the moment it exists
    published = False
    try:
        with _file_size_errors():
            made = _make_parents(t.path)
            tmp = _write_tmp(t.path.parent, write, owned)
            digest, size = _digest(tmp)
            with _folder_locked(t.path.parent):
                result = _publish_locked(t, tmp, digest, size)
                published = True
            return result
    except OSError as e:
        raise fs_error(t.path, e) from None
    finally:
        for tmp in owned:  # gone already when it was published (renamed or linked)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if not published:
            for folder in reversed(made):
                with contextlib.suppress(OSError):
                    os.rmdir(folder)


def publish_bytes(t: Target, data: bytes) -> Published:
    """:func:`publish` of ``data``."""
    return publish(t, lambda fh: fh.write(data))


def publish_text(t: Target, text: str) -> Published:
    """:func:`publish` of ``text`` as UTF-8."""
    return publish_bytes(t, text.encode("utf-8"))


def publish_copy(t: Target, source: Path) -> Published:
    """:func:`publish` of a copy of the file ``source`` (e.g. LibreOffice's output)."""
    import shutil

    def copy(fh: IO[bytes]) -> None:
        with open(source, "rb") as src:
            shutil.copyfileobj(src, fh, 1 << 20)

    return publish(t, copy)


def replace_with_copy(source: Path, dst: Path, field: str = "dst") -> Path:
    """Atomically replace (or create) ``dst`` with a copy of ``source``: the
    engines' library calls, which overwrite by contract (not a user's rerun)."""
    t = target(dst, Path(dst).name or "out", field=field, force=True, inputs=[source])
    return publish_copy(dataclasses.replace(t, record=False), source).path


def _make_parents(path: Path) -> list[Path]:
    """Create the missing folders above ``path``; return those made, outermost first."""
    missing = []
    parent = path.parent
    while not parent.exists():
        missing.append(parent)
        if parent == parent.parent:
            break
        parent = parent.parent
    made = []
    for folder in reversed(missing):
        try:
            os.mkdir(folder)
        except FileExistsError:
            continue
        made.append(folder)
    return made


def _write_tmp(folder: Path, write: Callable[[IO[bytes]], object], owned: list[Path]) -> Path:
    """A new temporary file in ``folder`` holding what ``write`` wrote, on disk.

    The file is appended to ``owned`` in the same breath as it is created (SIGTERM and
    SIGHUP held back in between), so that the caller's cleanup always knows of it."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = folder / f"{TMP_PREFIX}{secrets.token_hex(8)}{TMP_SUFFIX}"
        with deferred():
            try:
                fd = os.open(tmp, flags, 0o666)  # the kernel applies the umask
            except FileExistsError:
                continue
            owned.append(tmp)
        break
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def _digest(path: Path) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
            size += len(block)
    return h.hexdigest(), size


def _publish_locked(t: Target, tmp: Path, digest: str, size: int) -> Published:
    path = t.path
    for _ in range(3):
        st = check_existing(path, t.field, list(t.inputs))
        if st is None:
            try:
                os.link(tmp, path)  # fails if the name exists: create-exclusive
            except FileExistsError:
                continue  # appeared meanwhile (a writer that takes no lock): decide again
            except OSError as e:
                if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
                    raise
                if path.exists():  # no hard links here (FAT, some shares): rename instead
                    continue
                os.replace(tmp, path)
            _record(t, digest, size)
            return Published(path)
        if t.force:
            os.replace(tmp, path)
            _record(t, digest, size)
            return Published(path, replaced=True, forced=True)
        check_writable(path, st)
        entry = _records(path.parent).get(path.name)
        unedited = (
            isinstance(entry, dict)
            and entry.get("bytes") == st.st_size
            and entry.get("sha256") == _digest(path)[0]
        )
        if unedited:
            assert isinstance(entry, dict)
            written = entry.get("written_ns")
            written = written if isinstance(written, int) else 0
            # Written after this run started (and not in the future: a clock set back).
            if t.started_ns <= written <= time.time_ns():
                raise SheetgenError(
                    shown(path),
                    "exists: another sheetgen run wrote it while this one ran; "
                    "pass --force to overwrite it",
                )
            os.replace(tmp, path)
            _record(t, digest, size)
            return Published(path, replaced=True)
        kept = _keep_aside(path)
        os.replace(tmp, path)
        _record(t, digest, size)
        return Published(path, kept=kept, edited=entry is not None)
    raise SheetgenError(shown(path), "keeps changing while sheetgen writes it; try again")


def _keep_aside(path: Path) -> Path:
    """A second name for the file at ``path`` (a hard link: the same bytes, untouched)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    stem, suffix = path.stem, path.suffix
    for n in range(1, 1000):
        tag = f".kept-{stamp}" + (f"-{n}" if n > 1 else "") + suffix
        room = NAME_MAX - len(os.fsencode(tag))
        base = os.fsencode(stem)[:room].decode("utf-8", "ignore")
        aside = path.with_name(base + tag)
        try:
            os.link(path, aside)
            return aside
        except FileExistsError:
            continue
        except OSError as e:
            if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
                raise
            if aside.exists():
                continue
            os.rename(path, aside)  # no hard links: the name moves, the bytes do not
            return aside
    raise SheetgenError(shown(path), "too many kept copies beside it; remove some")


def _records(folder: Path) -> dict[str, object]:
    try:
        with open(folder / RECORD_NAME, "rb") as fh:
            doc = json.loads(fh.read(1 << 22))
    except (OSError, ValueError):
        return {}
    files = doc.get("files") if isinstance(doc, dict) else None
    return files if isinstance(files, dict) else {}


def _record(t: Target, digest: str, size: int) -> None:
    """Note what sheetgen wrote at ``t.path`` (a failure only costs a later extra copy)."""
    if not t.record:
        return
    path = t.path
    files = _records(path.parent)
    files[path.name] = {"sha256": digest, "bytes": size, "written_ns": time.time_ns()}
    for name in [n for n in files if n != path.name]:
        if not (path.parent / name).exists():
            del files[name]  # outputs removed since
    text = json.dumps({"written_by": "sheetgen", "files": files}, indent=1, sort_keys=True)
    owned: list[Path] = []
    try:
        tmp = _write_tmp(path.parent, lambda fh: fh.write(text.encode("utf-8")), owned)
        os.replace(tmp, path.parent / RECORD_NAME)
    except OSError:
        return
    finally:  # also on an interruption: no temporary record file stays
        for tmp in owned:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


@contextlib.contextmanager
def _folder_locked(folder: Path) -> Iterator[None]:
    """An exclusive flock on ``folder`` (where flock exists; else no lock)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


@contextlib.contextmanager
def _file_size_errors() -> Iterator[None]:
    """Past a file-size limit (``ulimit -f``) a write fails with EFBIG instead of the
    kernel's SIGXFSZ killing the process and leaving the temporary file behind."""
    sig = getattr(signal, "SIGXFSZ", None)
    if sig is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(sig, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(sig, previous)
