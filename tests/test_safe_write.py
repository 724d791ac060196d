"""sheetgen.output.safe_write on its own: the publish rules, races between threads, cleanup."""

from __future__ import annotations

import errno
import json
import os
import threading
from pathlib import Path

import pytest

from sheetgen.errors import SheetgenError
from sheetgen.output import safe_write


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(safe_write.TMP_SUFFIX))


def publish(path: Path, data: bytes, force: bool = False) -> safe_write.Published:
    return safe_write.publish_bytes(safe_write.target(path, "x", force=force), data)


def test_new_then_rerun_then_edit(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "plan.txt"
    assert publish(out, b"one") == safe_write.Published(out)
    assert publish(out, b"two") == safe_write.Published(out, replaced=True)
    out.write_bytes(b"two, edited")
    result = publish(out, b"three")
    assert result.kept is not None and result.edited
    assert result.kept.read_bytes() == b"two, edited" and out.read_bytes() == b"three"
    assert result.kept.name.startswith("plan.kept-") and result.kept.suffix == ".txt"
    record = json.loads((out.parent / safe_write.RECORD_NAME).read_text())
    assert set(record["files"]) == {"plan.txt"}  # kept copies are the user's, not recorded
    assert leftovers(out.parent) == []


@pytest.mark.parametrize(
    "record", ["missing", "not json", "not a mapping", "other file", "wrong size"]
)
def test_an_unknown_file_is_kept_whatever_the_record_says(tmp_path: Path, record: str) -> None:
    out = tmp_path / "plan.txt"
    publish(out, b"sheetgen's")
    rec = tmp_path / safe_write.RECORD_NAME
    doc = json.loads(rec.read_text())
    if record == "missing":
        rec.unlink()
    elif record == "not json":
        rec.write_text("{")
    elif record == "not a mapping":
        rec.write_text("[1, 2]")
    elif record == "other file":
        rec.write_text(json.dumps({"files": {"other.txt": doc["files"]["plan.txt"]}}))
    else:
        doc["files"]["plan.txt"]["bytes"] += 1
        rec.write_text(json.dumps(doc))
    result = publish(out, b"new")
    assert result.kept is not None and result.kept.read_bytes() == b"sheetgen's"


@pytest.mark.parametrize("written", ["soon", None, 10**30, -1])
def test_a_record_time_that_cannot_be_a_race_is_a_rerun(tmp_path: Path, written) -> None:
    out = tmp_path / "plan.txt"
    publish(out, b"one")
    rec = tmp_path / safe_write.RECORD_NAME
    doc = json.loads(rec.read_text())
    doc["files"]["plan.txt"]["written_ns"] = written  # corrupt, or a clock set back
    rec.write_text(json.dumps(doc))
    assert publish(out, b"two").replaced and out.read_bytes() == b"two"


def test_a_record_newer_than_the_run_is_a_concurrent_run(tmp_path: Path) -> None:
    out = tmp_path / "plan.txt"
    slow = safe_write.target(out, "x")  # started before the other run published
    publish(out, b"the other run's")
    with pytest.raises(SheetgenError, match="another sheetgen run wrote it.*--force"):
        safe_write.publish_bytes(slow, b"mine")
    assert out.read_bytes() == b"the other run's" and leftovers(tmp_path) == []
    forced = safe_write.target(out, "x", force=True)
    publish(out, b"later")  # a newer record ...
    assert safe_write.publish_bytes(forced, b"forced").forced  # ... --force replaces anyway


@pytest.mark.parametrize("where", ["write", "fsync", "link"])
@pytest.mark.parametrize("error", [KeyboardInterrupt, OSError])
def test_cleanup_on_every_failure(tmp_path: Path, monkeypatch, where: str, error: type) -> None:
    out = tmp_path / "new" / "deeper" / "plan.txt"
    exc = error() if error is KeyboardInterrupt else OSError(errno.ENOSPC, "No space left")

    def fail(*args: object) -> None:
        raise exc

    if where == "fsync":
        monkeypatch.setattr(os, "fsync", fail)
    if where == "link":
        monkeypatch.setattr(os, "link", fail)

    def write(fh) -> None:  # type: ignore[no-untyped-def]
        fh.write(b"half")
        if where == "write":
            fail()

    t = safe_write.target(out, "x")
    with pytest.raises(SheetgenError if error is OSError else KeyboardInterrupt):
        safe_write.publish(t, write)
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []  # no file, no temporary file, no folder it made


def test_without_hard_links(tmp_path: Path, monkeypatch) -> None:
    """File systems without hard links (FAT, some shares): rename instead."""

    def no_link(*args: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_link)
    out = tmp_path / "plan.txt"
    assert not publish(out, b"one").replaced
    assert publish(out, b"two").replaced
    out.write_bytes(b"edited")
    result = publish(out, b"three")
    assert result.kept is not None and result.kept.read_bytes() == b"edited"
    assert out.read_bytes() == b"three" and leftovers(tmp_path) == []


def test_a_link_is_followed_and_kept(tmp_path: Path) -> None:
    real = tmp_path / "shared" / "plan.txt"
    real.parent.mkdir()
    real.write_bytes(b"x")
    link = tmp_path / "plan.txt"
    link.symlink_to(real)
    with pytest.raises(SheetgenError, match=r"is a symbolic link \(to .*\); pass --force"):
        publish(link, b"new")  # without --force: refused, nothing written
    assert real.read_bytes() == b"x"
    result = publish(link, b"new", force=True)
    assert result.path == real and link.is_symlink() and real.read_bytes() == b"new"


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize(
    "points_to", ["missing folder", "missing file", "a dangling link", "device"]
)
def test_a_link_to_no_regular_file_is_refused(tmp_path: Path, force: bool, points_to: str) -> None:
    """A dangling link would create the file (and its folders) wherever it points."""
    where = {
        "missing folder": tmp_path / "elsewhere" / "deep" / "x.txt",
        "missing file": tmp_path / "x.txt",
        "a dangling link": tmp_path / "sub" / "link",
        "device": Path("/dev/null"),
    }[points_to]
    (tmp_path / "sub").mkdir()
    if points_to == "a dangling link":
        where.symlink_to(tmp_path / "nowhere" / "x.txt")
    link = tmp_path / "plan.txt"
    link.symlink_to(where)
    with pytest.raises(SheetgenError, match="is a symbolic link to .*refusing") as e:
        safe_write.target(link, "x", force=force)
    assert "\n" not in str(e.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.txt", "sub"]
    assert [p.name for p in (tmp_path / "sub").iterdir()] == (
        ["link"] if "link" in points_to else []
    )


def test_a_read_only_file_needs_force(tmp_path: Path) -> None:
    """An earlier output made read-only (chmod 444) is not replaced without --force,
    whether it turned read-only before the command started or while it ran."""
    out = tmp_path / "plan.txt"
    publish(out, b"one")
    out.chmod(0o444)
    with pytest.raises(SheetgenError, match="plan.txt: is read-only; pass --force"):
        publish(out, b"two")
    out.chmod(0o644)
    late = safe_write.target(out, "x")  # writable when the command started ...
    out.chmod(0o444)  # ... read-only by the time it publishes
    with pytest.raises(SheetgenError, match="is read-only; pass --force"):
        safe_write.publish_bytes(late, b"two")
    assert out.read_bytes() == b"one" and leftovers(tmp_path) == []
    assert publish(out, b"three", force=True).forced and out.read_bytes() == b"three"


def test_yaml_suffixes(tmp_path: Path) -> None:
    for name in ("plans.yaml", "plans.YML"):
        assert safe_write.target(tmp_path / name, "x", suffix=safe_write.YAML_SUFFIXES)
    with pytest.raises(SheetgenError, match=r"plan.xlsx must end in .yaml or .yml$"):
        safe_write.target(tmp_path / "plan.xlsx", "x", suffix=safe_write.YAML_SUFFIXES)


def test_engines_replace_without_a_record(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.bin", tmp_path / "out" / "dst.bin"
    src.write_bytes(b"made by LibreOffice")
    dst.parent.mkdir()
    dst.write_bytes(b"old")
    assert safe_write.replace_with_copy(src, dst) == dst
    assert dst.read_bytes() == b"made by LibreOffice"
    assert sorted(p.name for p in dst.parent.iterdir()) == ["dst.bin"]


def test_messages_are_one_line(tmp_path: Path) -> None:
    odd = tmp_path / "a\nb.txt"
    assert "\n" not in safe_write.shown(odd) and "\\n" in safe_write.shown(odd)
    long = tmp_path / ("x" * 400)
    assert len(safe_write.shown(long)) <= 120
    kept = safe_write.Published(odd, kept=tmp_path / "a\nb.kept.txt", edited=True)
    assert "\n" not in kept.line() and "kept as" in kept.line()


def _race(out: Path, n: int, barrier: threading.Barrier | None, monkeypatch) -> list[object]:
    """``n`` threads publish their own bytes to ``out``; return what each got."""
    if barrier is not None:
        real = safe_write._folder_locked

        def wait_then_lock(folder: Path):  # type: ignore[no-untyped-def]
            barrier.wait(timeout=30)
            return real(folder)

        monkeypatch.setattr(safe_write, "_folder_locked", wait_then_lock)
    results: list[object] = [None] * n
    targets = [safe_write.target(out, "x") for _ in range(n)]  # all started before any wrote

    def run(i: int) -> None:
        try:
            results[i] = safe_write.publish_bytes(targets[i], f"writer {i}\n".encode() * 1000)
        except SheetgenError as e:
            results[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    monkeypatch.undo()
    return results


@pytest.mark.parametrize("overlap", ["all at the publish step", "as they come"])
def test_threads_racing_to_one_new_path(tmp_path: Path, monkeypatch, overlap: str) -> None:
    for attempt in range(10):
        out = tmp_path / f"run{attempt}" / "plan.txt"
        barrier = threading.Barrier(6) if overlap.startswith("all") else None
        results = _race(out, 6, barrier, monkeypatch)
        won = [i for i, r in enumerate(results) if isinstance(r, safe_write.Published)]
        lost = [r for r in results if isinstance(r, SheetgenError)]
        assert len(won) == 1 and len(lost) == 5, (attempt, results)
        assert all("another sheetgen run" in str(e) for e in lost), lost
        assert out.read_bytes() == f"writer {won[0]}\n".encode() * 1000
        assert sorted(p.name for p in out.parent.iterdir()) == [safe_write.RECORD_NAME, "plan.txt"]


def _sigterm_at(monkeypatch, name: str, nth: int, before: bool = False) -> None:
    """Make ``os.<name>`` send this process SIGTERM just after (or just before) its
    ``nth`` call on one of sheetgen's temporary files: the earliest (latest) moment
    a real signal could land."""
    import signal

    real = getattr(os, name)
    calls = []

    def with_sigterm(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        ours = Path(path).name.startswith(safe_write.TMP_PREFIX)
        if ours:
            calls.append(path)
        hit = ours and len(calls) == nth
        if hit and before:
            os.kill(os.getpid(), signal.SIGTERM)
        result = real(path, *args, **kwargs)
        if hit and not before:
            os.kill(os.getpid(), signal.SIGTERM)
        return result

    monkeypatch.setattr(os, name, with_sigterm)


@pytest.mark.parametrize(
    "moment",
    [
        ("open", 1, False),  # the output's temporary file has just been created
        ("open", 2, False),  # the record's temporary file has just been created
        ("replace", 1, True),  # the record is about to be moved into place
    ],
    ids=["output-created", "record-created", "record-about-to-replace"],
)
def test_a_signal_at_any_moment_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch, moment: tuple[str, int, bool]
) -> None:
    """SIGTERM just after a temporary file is created (before the code that removes it
    could know of it), or just before the record of outputs is moved into place: the
    command unwinds (Interrupted) and no temporary file stays."""
    from sheetgen.output.interrupt import Interrupted, signals_unwind

    name, nth, before = moment
    # A second thread, as pytest-xdist's worker and many programs have: the kernel may
    # hand a process-directed signal to it, and Python still runs the handler in the
    # main thread at its next statement (blocking the signal in one thread is no hold).
    done = threading.Event()
    other = threading.Thread(target=done.wait, daemon=True)
    other.start()
    _sigterm_at(monkeypatch, name, nth, before)
    try:
        with signals_unwind(), pytest.raises(Interrupted):
            publish(tmp_path / "plan.txt", b"data")
    finally:
        monkeypatch.undo()
        done.set()
        other.join()
    assert leftovers(tmp_path) == [], moment
