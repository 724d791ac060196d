"""Where a command will write: the target of ``-o``, resolved and checked before any
work starts (the first half of the one safe write; ``safe_write`` publishes).

:func:`target`: ``-o DIR`` (an existing folder or a trailing separator) means
``DIR/<default name>``; a target that is not a regular file, or that is one of the
command's inputs, is refused, ``--force`` or not; a name the file system cannot hold
is one line.  A symbolic link is refused unless ``--force`` is given and it names an
existing regular file; a read-only file is refused without ``--force``.
``safe_write`` runs :func:`check_existing` and :func:`check_writable` again under its
folder lock, just before it publishes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sheetgen.errors import SheetgenError, short

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
    st = check_existing(path, field, [Path(p) for p in inputs if p is not None])
    if st is not None and not force:
        check_writable(path, st)
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
        return path  # absent (or unreadable: check_existing says why)
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


def check_writable(path: Path, st: os.stat_result) -> None:
    """Refuse to replace a read-only file (no write permission bit, or none for this
    user) without --force: its owner asked for it to be kept as it is."""
    if st.st_mode & 0o222 and os.access(path, os.W_OK):
        return
    raise SheetgenError(shown(path), "is read-only; pass --force to replace it")


def check_existing(path: Path, field: str, inputs: list[Path]) -> os.stat_result | None:
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
