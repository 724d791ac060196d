"""Publishing a file the user asked for: one atomic, umask-honouring write for every command.

Every command that writes a file (``generate``, ``--pdf``, ``pdf``, ``presets
import -o``, ``advise --write``, ``inputs -o``; the engines' ``deliver``) calls
:func:`target` before doing any work, then :func:`publish` (docs/DESIGN.md,
"Writing files", has the full rules):

- :func:`target`: ``-o DIR`` (an existing folder or a trailing separator) means
  ``DIR/<default name>``; a target that is not a regular file, or that is one of
  the command's inputs, is refused, ``--force`` or not; a name the file system
  cannot hold is one line.  A symbolic link is refused unless ``--force`` is given
  and it names an existing regular file; a read-only file is refused without
  ``--force``.
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
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from sheetgen.errors import SheetgenError, short
from sheetgen.output.interrupt import deferred

RECORD_NAME = ".sheetgen-outputs.json"
TMP_PREFIX = ".sheetgen-"
TMP_SUFFIX = ".tmp"
NAME_MAX = 255  # bytes in one path component (Linux, macOS)
_SHOWN_CHARS = 120
YAML_SUFFIXES = (".yaml", ".yml")  # a scenario or preset file's name (advise --write, inputs -o)


def shown(path: str | Path) -> str:
    """``path`` as an error message prints it: as is when short and printable,
    else quoted and shortened, so that a message stays one line."""
    text = str(path)
    if len(text) <= _SHOWN_CHARS and text.isprintable():
        return text
    return short(text, _SHOWN_CHARS)


def fs_error(path: str | Path, err: OSError) -> SheetgenError:
    """``<path>: <reason>`` for a file-system error."""
    reason = err.strerror or type(err).__name__
    return SheetgenError(shown(path), reason)


@dataclass(frozen=True)
class Target:
    """Where a command will write, resolved and checked before any work starts."""

    path: Path
    field: str
    force: bool
    inputs: tuple[Path, ...]
    started_ns: int  # when the command began: records newer than this are a concurrent run
    record: bool = True  # note what was written (for reruns) in the folder's record


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


def target(
    output: str | Path | None,
    default_name: str,
    *,
    field: str = "--output",
    force: bool = False,
    inputs: Sequence[str | Path | None] = (),
    default_dir: str | Path = ".",
    suffix: str | tuple[str, ...] | None = None,
) -> Target:
    """The file to write for ``-o output`` (None: ``default_dir/default_name``).

    ``output`` ending in a path separator, or naming an existing directory, means
    ``output/default_name``.  Refuses, in one line: an empty name, a wrong
    ``suffix`` (one, or a tuple of those accepted), a name the file system cannot
    hold, a symbolic link (without ``--force``, or one that names no regular
    file), a read-only file (without ``--force``), an existing target that is
    not a regular file, and a target that is one of ``inputs``.
    """
    started = time.time_ns()
    if output is not None and not str(output).strip():
        raise SheetgenError(field, "is empty; give a file or folder name")
    if not default_name or os.sep in default_name or default_name in (".", ".."):
        raise SheetgenError(field, f"{shown(default_name)} is not a file name")
    if output is None:
        path = Path(default_dir) / default_name
    else:
        raw = str(output)
        path = Path(raw)
        if raw.endswith(("/", os.sep)) or _is_dir(path, field):
            path = path / default_name
    if path.name in ("", ".", ".."):
        raise SheetgenError(field, f"{shown(path)} is not a file name")
    if suffix is not None:
        accepted = (suffix,) if isinstance(suffix, str) else suffix
        if path.suffix.lower() not in accepted:
            raise SheetgenError(field, f"{shown(path)} must end in {' or '.join(accepted)}")
    path = _resolve_link(path, force)
    st = _check_existing(path, field, [Path(p) for p in inputs if p is not None])
    if st is not None and not force:
        _check_writable(path, st)
    return Target(path, field, force, tuple(Path(p) for p in inputs if p is not None), started)


def _is_dir(path: Path, field: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except FileNotFoundError:
        return False
    except OSError as e:
        raise fs_error(path, e) from None


def _resolve_link(path: Path, force: bool) -> Path:
    """A symbolic link as the target is refused, unless ``--force`` is given and it
    names an existing regular file, which is then the one replaced.  (Followed
    without --force, a link to a missing file would create it wherever the link
    points, folders included.)  Links among the folders above are followed."""
    try:
        is_link = stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return path  # absent (or unreadable: _check_existing says why)
    if not is_link:
        return path
    real = Path(os.path.realpath(path))
    try:
        regular = stat.S_ISREG(os.stat(real).st_mode)
    except OSError:
        regular = False
    if not regular:
        raise SheetgenError(
            shown(path),
            f"is a symbolic link to {shown(real)}, not to an existing regular file; refusing "
            "to write through it, --force or not",
        )
    if not force:
        raise SheetgenError(
            shown(path),
            f"is a symbolic link (to {shown(real)}); pass --force to replace the file it "
            "names, or give another name",
        )
    return real


def _check_writable(path: Path, st: os.stat_result) -> None:
    """Refuse to replace a read-only file (no write permission bit, or none for this
    user) without --force: its owner asked for it to be kept as it is."""
    if st.st_mode & 0o222 and os.access(path, os.W_OK):
        return
    raise SheetgenError(shown(path), "is read-only; pass --force to replace it")


def _check_existing(path: Path, field: str, inputs: list[Path]) -> os.stat_result | None:
    """The target's stat (None when absent); refuses a non-regular target or an input."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        _check_parent(path)
        return None
    except OSError as e:
        raise fs_error(path, e) from None
    if stat.S_ISDIR(st.st_mode):
        raise SheetgenError(shown(path), "is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise SheetgenError(shown(path), "is not a regular file; refusing to replace it")
    for source in inputs:
        with contextlib.suppress(OSError):
            if os.path.samefile(source, path):
                also = "" if str(source) == str(path) else f" ({shown(source)})"
                raise SheetgenError(shown(path), f"is an input{also}; write to another file")
    return st


def _check_parent(path: Path) -> None:
    """A name too long for the file system, or a folder that is a file, before any work."""
    if len(os.fsencode(path.name)) > NAME_MAX:
        raise fs_error(path, OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG)))
    parent = path.parent
    while True:
        try:
            st = os.stat(parent)
        except FileNotFoundError:
            if parent == parent.parent:
                return
            parent = parent.parent
            continue
        except OSError as e:
            raise fs_error(path, e) from None
        if not stat.S_ISDIR(st.st_mode):
            raise fs_error(path, OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)))
        return


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
        st = _check_existing(path, t.field, list(t.inputs))
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
        _check_writable(path, st)
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
