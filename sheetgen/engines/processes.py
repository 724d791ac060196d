"""Run an external spreadsheet program in its own process group, and end it completely.

Both external engines (LibreOffice, Gnumeric) run through :func:`run_isolated`:
the program starts in a new session (its own process group), its output goes to
log files, and on a timeout, an error or a normal exit alike every process of
the group is killed, leaves first, then any process still naming the run's
private directory (one that left the group), so that nothing outlives the call. An
exception raised while waiting -- :class:`sheetgen.output.interrupt.Interrupted` from a
SIGTERM or SIGHUP handler, or ``KeyboardInterrupt`` -- takes the same path.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from sheetgen.engines.common import RecalcError

TAIL_LINES = 15


def tail(*files: Path, lines: int = TAIL_LINES) -> str:
    """The last non-blank lines of some log files, joined with `` | ``."""
    text: list[str] = []
    for f in files:
        try:
            text.extend(f.read_text(errors="replace").splitlines())
        except OSError:
            pass
    text = [t for t in text if t.strip()]
    return " | ".join(text[-lines:]) if text else "(no output)"


def live_group_members(pgid: int) -> dict[int, int]:
    """Return ``{pid: ppid}`` of the non-zombie processes in process group ``pgid``.

    Linux only (reads ``/proc``); elsewhere returns an empty dict.
    """
    members: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
            # "pid (comm) state ppid pgrp ..."; comm may contain spaces or parentheses
            state, ppid, pgrp = stat[stat.rindex(b")") + 2 :].split()[:3]
        except (OSError, ValueError):
            continue
        if int(pgrp) == pgid and state not in (b"Z", b"X"):
            members[int(entry)] = int(ppid)
    return members


def terminate_group(proc: subprocess.Popen[bytes], grace: float = 3.0) -> None:
    """SIGKILL every process in the group led by ``proc`` and reap ``proc``.

    Descendants are killed leaves first, so that each is reaped by its own parent
    (oosplash waits for soffice.bin) rather than orphaned to init as a zombie;
    then the whole group is killed with ``os.killpg``.
    """
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        members = live_group_members(proc.pid)
        members.pop(proc.pid, None)
        if not members:
            break
        parents = set(members.values())
        for pid in [p for p in members if p not in parents] or list(members):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    # SIGKILL is delivered asynchronously: wait until no member is still running, so
    # that none writes into a directory the caller is about to remove.
    while live_group_members(proc.pid) and time.monotonic() < deadline + grace:
        time.sleep(0.02)


def processes_naming(text: str) -> list[int]:
    """Pids of the live (non-zombie) processes, other than this one, whose command
    line contains ``text``. Linux only (reads ``/proc``); elsewhere an empty list."""
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    needle = text.encode()
    for entry in entries:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != b"Z" and needle in cmdline.replace(b"\0", b" "):
            found.append(int(entry))
    return found


def end_processes_naming(work: Path, patience: float = 10.0) -> None:
    """SIGKILL any process still naming ``work`` (the run's private directory) in its
    command line, and wait until none is left, for at most ``patience`` seconds.

    The process group is killed first (:func:`terminate_group`); this catches a
    process of the run that is no longer in it, or one that under load takes long to
    die, so that none writes into ``work`` (or makes it again) after it is removed.
    """
    deadline = time.monotonic() + patience
    while pids := processes_naming(str(work)):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return
        time.sleep(0.02)


def remove_tree(path: Path, patience: float = 3.0) -> None:
    """Remove ``path`` and everything in it, trying again while a process that was just
    killed may still be finishing a write inside it."""
    deadline = time.monotonic() + patience
    while True:
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path) or time.monotonic() > deadline:
            return
        time.sleep(0.05)


def run_isolated(
    cmd: Sequence[str],
    *,
    program: str,
    what: str,
    work: Path,
    timeout: float,
    env: dict[str, str] | None = None,
) -> int:
    """Run ``cmd`` in ``work`` in a new process group; return its exit status.

    Standard output and error go to ``work/stdout.log`` and ``work/stderr.log``
    (read them with :func:`tail`). The group is killed whatever happens.

    Raises:
        RecalcError: the program cannot be started, or does not finish within
            ``timeout`` seconds.
    """
    with open(work / "stdout.log", "wb") as out_f, open(work / "stderr.log", "wb") as err_f:
        try:
            proc = subprocess.Popen(
                list(cmd),
                stdin=subprocess.DEVNULL,
                stdout=out_f,
                stderr=err_f,
                cwd=work,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            raise RecalcError(f"could not start {program} ({cmd[0]}): {exc}") from exc
        except BaseException:
            # Interrupted (SIGTERM / SIGHUP) or Ctrl-C inside Popen, after the fork: the
            # program may be running with no Popen object to end it by; it names `work`.
            end_processes_naming(work)
            raise
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RecalcError(
                f"{program} did not finish within {timeout:g} s converting {what}; "
                "its process group was killed"
            ) from None
        finally:
            # On timeout, error, interruption or normal exit alike: nothing of the run survives.
            terminate_group(proc)
            end_processes_naming(work)
