"""Every command that writes a file, against every way writing can go wrong.

Writers: ``generate``, ``pdf`` (LibreOffice replaced by a fake printer, the
publish path is the real one), ``presets import -o``, ``advise --write`` and
``inputs -o``.  For each: reruns (an unedited output is replaced, an edited one
survives byte for byte), ``-o DIR``, file modes under umask 022 and 077,
file-system errors (a name or folder name over 255 bytes, a folder that is a
file, permission denied, a full disk, a file-size limit), targets that are not
regular files or are the input, and concurrent runs to one new path.  Each
failure must be one line ``error: <path>: <reason>``, exit code 2, and leave
no file behind.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from sheetgen.cli.commands import main
from sheetgen.output import safe_write

HERE = Path(__file__).parent
BASE = ["--model", "llama3-8b", "--hardware", "h100-sxm"]
sys.path.insert(0, str(HERE))
from writer_run import FAKE_PDF, install_fake_pdf  # noqa: E402


@dataclass(frozen=True)
class Writer:
    name: str
    argv: Callable[[Path, str], list[str]]  # (inputs folder, output) -> arguments
    default: str  # the file name written inside ``-o DIR``
    suffix: str
    valid: Callable[[Path], bool]


def _yaml_with(key: str) -> Callable[[Path], bool]:
    return lambda p: key in (yaml.safe_load(p.read_text()) or {})


WRITERS = {
    w.name: w
    for w in (
        Writer("generate", lambda i, o: ["generate", *BASE, "-o", o], "sheetgen.xlsx", ".xlsx",
               lambda p: zipfile.is_zipfile(p) and "xl/workbook.xml" in zipfile.ZipFile(p).namelist()),
        Writer("pdf", lambda i, o: ["pdf", str(i / "book.xlsx"), "-o", o], "book.pdf", ".pdf",
               lambda p: p.read_bytes() == FAKE_PDF),
        Writer("import", lambda i, o: ["presets", "import", str(i / "cfg.json"), "--id", "m1",
                                       "-o", o], "m1.yaml", ".yaml", _yaml_with("id")),
        Writer("advise", lambda i, o: ["advise", *BASE, "--gpus", "8", "--top", "1", "--write", o],
               "plans.yaml", ".yaml", _yaml_with("scenarios")),
        Writer("inputs", lambda i, o: ["inputs", str(i / "book.xlsx"), "-o", o], "book.yaml",
               ".yaml", _yaml_with("scenarios")),
    )
}  # fmt: skip


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workbook and a config.json the writers read (outside the folders checked)."""
    from sheetgen.scenarios.files import default_scenario_path, load_scenarios
    from sheetgen.workbook import write_workbook

    folder = tmp_path_factory.mktemp("inputs")
    write_workbook(load_scenarios(default_scenario_path())[:1], folder / "book.xlsx")
    (folder / "cfg.json").write_bytes((HERE / "fixtures/hf_configs/llama3.2-1b.json").read_bytes())
    return folder


@pytest.fixture(autouse=True)
def fake_pdf(monkeypatch: pytest.MonkeyPatch) -> None:
    import sheetgen.engines.pdf as pdf

    monkeypatch.setattr(pdf, "converted", pdf.converted)  # restored after the test
    install_fake_pdf()


def cli(args: list[str]):
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{args}: raised {type(result.exception).__name__}: {result.exception}"
    )
    return result


def one_error_line(result, reason: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert reason in lines[0] and len(lines[0]) <= 300, lines[0]
    assert "Traceback" not in result.output
    return lines[0]


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# ----------------------------------------------------------------------- reruns


@pytest.mark.parametrize("writer", WRITERS)
def test_rerun_replaces_own_output_and_keeps_an_edit(writer: str, inputs: Path, tmp_path: Path):
    w = WRITERS[writer]
    out = tmp_path / f"out{w.suffix}"
    for attempt in ("first", "rerun"):
        result = cli(w.argv(inputs, str(out)))
        assert result.exit_code == 0, (attempt, result.output)
        assert w.valid(out), attempt
    assert "replaced" in result.output
    edited = out.read_bytes() + b"\n# my edit\n"
    out.write_bytes(edited)
    result = cli(w.argv(inputs, str(out)))
    assert result.exit_code == 0, result.output
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("out.kept-")]
    assert len(kept) == 1 and kept[0].suffix == w.suffix, names(tmp_path)
    assert kept[0].read_bytes() == edited  # byte for byte
    assert w.valid(out) and out.read_bytes() != edited
    (line,) = [s for s in result.output.splitlines() if s.startswith("wrote")]
    assert str(out) in line and str(kept[0]) in line and "edited" in line
    again = cli(w.argv(inputs, str(out)))  # the new output is sheetgen's: replaced, nothing kept
    assert again.exit_code == 0 and len(list(tmp_path.glob("out.kept-*"))) == 1
    assert [n for n in names(tmp_path) if n.startswith(".")] == [safe_write.RECORD_NAME]


def test_readme_generate_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's main command, `sheetgen generate`, run twice: both exit 0."""
    monkeypatch.chdir(tmp_path)
    first, second = cli(["generate"]), cli(["generate"])
    assert first.exit_code == 0 and second.exit_code == 0, second.output
    assert (
        second.output.splitlines()[0] == "wrote output/sheetgen.xlsx (replaced the earlier output)"
    )
    assert names(tmp_path / "output") == [safe_write.RECORD_NAME, "sheetgen.xlsx"]


@pytest.mark.parametrize("writer", WRITERS)
def test_force_replaces_without_keeping(writer: str, inputs: Path, tmp_path: Path):
    w = WRITERS[writer]
    out = tmp_path / f"out{w.suffix}"
    out.write_bytes(b"someone else's file")
    result = cli([*w.argv(inputs, str(out)), "--force"])
    assert result.exit_code == 0 and w.valid(out), result.output
    assert names(tmp_path) == sorted([safe_write.RECORD_NAME, out.name])


# ------------------------------------------------------------- -o DIR and modes


@pytest.mark.parametrize("form", ["existing folder", "trailing slash, folder absent"])
@pytest.mark.parametrize("writer", WRITERS)
def test_output_folder(writer: str, form: str, inputs: Path, tmp_path: Path):
    w = WRITERS[writer]
    folder = tmp_path / "team" / "models"
    if form == "existing folder":
        folder.mkdir(parents=True)
        arg = str(folder)
    else:
        arg = str(folder) + os.sep
    result = cli(w.argv(inputs, arg))
    assert result.exit_code == 0, result.output
    assert w.valid(folder / w.default), names(folder)
    assert f"wrote {folder / w.default}" in result.output


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
@pytest.mark.parametrize("writer", WRITERS)
def test_modes_follow_the_umask(writer: str, mask: int, mode: int, inputs: Path, tmp_path: Path):
    w = WRITERS[writer]
    old = os.umask(mask)
    try:
        result = cli(w.argv(inputs, str(tmp_path / "new") + os.sep))
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    written = tmp_path / "new" / w.default
    assert stat.S_IMODE(written.stat().st_mode) == mode, oct(written.stat().st_mode)
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o777 & ~mask


# ------------------------------------------------------------ file-system errors


def _deny(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.open

    def open_(path, flags, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(path).startswith(str(folder)) and flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)


def _full(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", fsync)


FAILURES = {
    "name over 255 bytes": (lambda w, s: w / ("n" * 300 + s), None, "File name too long"),
    "folder over 255 bytes": (lambda w, s: w / ("d" * 300) / f"out{s}", None, "File name too long"),
    "folder is a file": (lambda w, s: w / "afile" / f"out{s}",
                         lambda w, m: (w / "afile").write_text("x"), "Not a directory"),
    "permission denied": (lambda w, s: w / "sub" / f"out{s}", _deny, "Permission denied"),
    "disk full": (lambda w, s: w / "sub" / f"out{s}", _full, "No space left on device"),
}  # fmt: skip


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("writer", WRITERS)
def test_file_system_errors(writer: str, failure: str, inputs: Path, tmp_path: Path, monkeypatch):
    w = WRITERS[writer]
    where, setup, reason = FAILURES[failure]
    folder = tmp_path / "w"
    folder.mkdir()
    if setup is not None:
        setup(folder, monkeypatch)
    before = names(folder)
    out = where(folder, w.suffix)
    line = one_error_line(cli(w.argv(inputs, str(out))), reason)
    assert line.startswith(f"error: {safe_write.shown(out)}:") or "…" in line, line
    monkeypatch.undo()
    assert names(folder) == before  # no temporary file, record or folder left


def run_process(args: list[str], **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(HERE / "writer_run.py"), *args],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **env},
    )  # fmt: skip


def test_file_size_limit_every_writer(inputs: Path, tmp_path: Path):
    """ulimit -f: the kernel's EFBIG (not SIGXFSZ killing the process), one line each."""
    for name, w in WRITERS.items():
        folder = tmp_path / name
        folder.mkdir()
        out = folder / f"out{w.suffix}"
        proc = run_process(w.argv(inputs, str(out)), WRITER_FSIZE="300")
        assert proc.returncode == 2, (name, proc.returncode, proc.stderr)
        assert proc.stderr.strip() == f"error: {out}: File too large", (name, proc.stderr)
        assert names(folder) == [], (name, names(folder))


def _can_mount() -> bool:
    import shutil

    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c",
         "mount -t tmpfs -o size=4k tmpfs /mnt"],
        capture_output=True, timeout=30,
    )  # fmt: skip
    return probe.returncode == 0


# A real full disk and a real read-only folder: a tmpfs mounted in a private mount
# namespace (`unshare --mount`), which vanishes with the process however it ends.
MOUNTS = {
    "full": ("size=8k", 'dd if=/dev/zero of="$D/filler" bs=1k 2>/dev/null; ', "No space left on device"),
    "read-only": ("ro,size=8k", "", "Read-only file system"),
}  # fmt: skip


@pytest.mark.parametrize("mount", MOUNTS)
@pytest.mark.parametrize("writer", WRITERS)
def test_real_full_and_read_only_file_systems(writer: str, mount: str, inputs: Path, tmp_path):
    if not _can_mount():
        pytest.skip("needs unshare and mount (root with CAP_SYS_ADMIN); simulated above")
    w = WRITERS[writer]
    options, fill, reason = MOUNTS[mount]
    folder = tmp_path / "mnt"
    folder.mkdir()
    out = folder / f"out{w.suffix}"
    args = " ".join(f"'{a}'" for a in w.argv(inputs, str(out)))
    script = (
        f'D={folder}; mount -t tmpfs -o {options} tmpfs "$D" && {fill}'
        f'{sys.executable} {HERE / "writer_run.py"} {args}; rc=$?; echo; echo rc=$rc; ls -A "$D"'
    )
    proc = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    assert proc.stderr.strip() == f"error: {out}: {reason}", proc.stderr
    code, *listing = proc.stdout.rsplit("\nrc=", 1)[-1].split()
    assert code == "2" and listing == (["filler"] if fill else []), proc.stdout
    assert names(folder) == []  # the mount is gone with its namespace


STDOUT_COMMANDS = {
    "compute": lambda i: ["compute", *BASE],
    "presets models": lambda i: ["presets", "models"],
    "import": lambda i: ["presets", "import", str(i / "cfg.json")],
    "inputs": lambda i: ["inputs", str(i / "book.xlsx")],
    "advise": lambda i: ["advise", *BASE, "--gpus", "8", "--top", "1"],
    "generate": lambda i: ["generate", *BASE, "-o", str(i.parent / "full" / "x.xlsx")],
    "check": lambda i: ["check", str(i / "book.xlsx"), "--engine", "pycel"],
    "help": lambda i: ["--help"],
}


def test_stdout_on_a_full_device(inputs: Path):
    """`sheetgen compute > /dev/full`: one line, exit 2, for every command that prints."""
    for name, argv in STDOUT_COMMANDS.items():
        with open("/dev/full", "w") as full:
            proc = subprocess.run(
                [sys.executable, str(HERE / "writer_run.py"), *argv(inputs)],
                stdout=full, stderr=subprocess.PIPE, text=True, timeout=300,
            )  # fmt: skip
        assert proc.returncode == 2, (name, proc.returncode, proc.stderr)
        assert proc.stderr == "error: <stdout>: No space left on device\n", (name, proc.stderr)


# ------------------------------------------------- targets that must not be replaced


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _device(path: Path) -> None:
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null twin, in tmp


@pytest.mark.parametrize("make", [_fifo, _device], ids=["fifo", "device"])
@pytest.mark.parametrize("writer", WRITERS)
def test_non_regular_targets_are_refused(writer: str, make, inputs: Path, tmp_path: Path):
    w = WRITERS[writer]
    node = tmp_path / f"node{w.suffix}"
    try:
        make(node)
    except PermissionError:
        pytest.skip("this user may not create device nodes")
    kind = stat.S_IFMT(node.lstat().st_mode)
    one_error_line(cli([*w.argv(inputs, str(node)), "--force"]), "not a regular file")
    assert stat.S_IFMT(node.lstat().st_mode) == kind and names(tmp_path) == [node.name]


@pytest.mark.parametrize("writer", WRITERS)
def test_a_read_only_earlier_output_needs_force(writer: str, inputs: Path, tmp_path: Path):
    """chmod 444 on an earlier output: the rerun is refused (one line), --force replaces it."""
    w = WRITERS[writer]
    out = tmp_path / f"out{w.suffix}"
    assert cli(w.argv(inputs, str(out))).exit_code == 0
    out.chmod(0o444)
    before = out.read_bytes()
    one_error_line(cli(w.argv(inputs, str(out))), "is read-only; pass --force to replace it")
    assert out.read_bytes() == before and stat.S_IMODE(out.stat().st_mode) == 0o444
    assert names(tmp_path) == sorted([safe_write.RECORD_NAME, out.name])
    forced = cli([*w.argv(inputs, str(out)), "--force"])
    assert forced.exit_code == 0 and w.valid(out), forced.output


@pytest.mark.parametrize("force", [False, True], ids=["plain", "--force"])
@pytest.mark.parametrize("writer", WRITERS)
def test_a_dangling_link_is_not_written_through(writer: str, force: bool, inputs: Path, tmp_path):
    """-o a symbolic link to a missing file: refused, nothing created where it points."""
    w = WRITERS[writer]
    link = tmp_path / f"link{w.suffix}"
    elsewhere = tmp_path / "elsewhere"
    link.symlink_to(elsewhere / "dir" / f"x{w.suffix}")
    one_error_line(cli([*w.argv(inputs, str(link)), *(["--force"] if force else [])]),
                   "is a symbolic link to")  # fmt: skip
    assert not elsewhere.exists() and names(tmp_path) == [link.name]


@pytest.mark.parametrize("writer", WRITERS)
def test_a_link_to_a_file_needs_force(writer: str, inputs: Path, tmp_path: Path):
    w = WRITERS[writer]
    real, link = tmp_path / f"real{w.suffix}", tmp_path / f"link{w.suffix}"
    real.write_bytes(b"mine")
    link.symlink_to(real)
    one_error_line(cli(w.argv(inputs, str(link))), "is a symbolic link (to ")
    assert real.read_bytes() == b"mine"
    forced = cli([*w.argv(inputs, str(link)), "--force"])
    assert forced.exit_code == 0 and link.is_symlink() and w.valid(real), forced.output


@pytest.mark.parametrize("name", ["plan.xlsx", "plan", "plan.json", "plan.yaml.txt"])
@pytest.mark.parametrize("writer", ["advise", "inputs", "import"])
def test_scenario_writers_need_a_yaml_name(writer: str, name: str, inputs: Path, tmp_path: Path):
    """advise --write, inputs -o and presets import -o write YAML: a workbook's name (an earlier
    `generate -o plan.xlsx`, which they once replaced with YAML) is refused."""
    w = WRITERS[writer]
    out = tmp_path / name
    if name == "plan.xlsx":
        assert cli(["generate", *BASE, "-o", str(out)]).exit_code == 0
    before = names(tmp_path)
    data = out.read_bytes() if out.exists() else None
    one_error_line(cli([*w.argv(inputs, str(out)), "--force"]), "must end in .yaml or .yml")
    assert names(tmp_path) == before and (out.read_bytes() if out.exists() else None) == data
    assert cli(w.argv(inputs, str(tmp_path / "plan.yml"))).exit_code == 0


SELF = {
    "pdf of a workbook named .pdf": lambda d: (d / "plan.pdf", ["pdf", str(d / "plan.pdf")]),
    "inputs -o the workbook": lambda d: (d / "x.xlsx", ["inputs", str(d / "x.xlsx"), "-o",
                                                        str(d / "x.xlsx")]),
    "inputs -o a link to it": lambda d: (d / "x.xlsx", ["inputs", str(d / "x.xlsx"), "-o",
                                                        str(d / "alias.yaml")]),
    "generate --from x -o x": lambda d: (d / "x.xlsx", ["generate", "--from", str(d / "x.xlsx"),
                                                        "-o", str(d / "x.xlsx")]),
    "import -o the config": lambda d: (d / "cfg.json", ["presets", "import", str(d / "cfg.json"),
                                                        "-o", str(d / "cfg.json")]),
}  # fmt: skip


@pytest.mark.parametrize("case", SELF)
def test_output_equal_to_an_input_is_refused(case: str, inputs: Path, tmp_path: Path):
    source, args = SELF[case](tmp_path)
    kind = "cfg.json" if source.suffix == ".json" else "book.xlsx"
    source.write_bytes((inputs / kind).read_bytes())
    (tmp_path / "alias.yaml").symlink_to(tmp_path / "x.xlsx")
    before = source.read_bytes()
    # inputs -o x.xlsx, import -o cfg.json: the name alone is refused (both write YAML),
    # before any look at what it is.
    by_name = ("inputs -o the workbook", "import -o the config")
    reason = "must end in .yaml or .yml" if case in by_name else "is an input"
    one_error_line(cli([*args, "--force"]), reason)
    assert source.read_bytes() == before


# ------------------------------------------------------------------------ races


@pytest.mark.parametrize("writer", WRITERS)
def test_concurrent_runs_to_one_new_path(writer: str, inputs: Path, tmp_path: Path):
    """Two runs that both reach the publish step before either has published: one
    writes, the other fails with "exists ... pass --force"; one complete file."""
    w = WRITERS[writer]
    for attempt in range(2):
        folder, barrier = tmp_path / f"out{attempt}", tmp_path / f"barrier{attempt}"
        barrier.mkdir()
        out = folder / f"out{w.suffix}"
        env = {"WRITER_BARRIER": str(barrier), "WRITER_PARTIES": "2"}
        procs = [
            subprocess.Popen(
                [sys.executable, str(HERE / "writer_run.py"), *w.argv(inputs, str(out))],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **env},
            )  # fmt: skip
            for _ in range(2)
        ]
        done = [(p.wait(timeout=300), *p.communicate()) for p in procs]
        codes = sorted(code for code, _, _ in done)
        assert codes == [0, 2], (attempt, done)
        (loser,) = [err for code, _, err in done if code == 2]
        assert loser.strip() == (
            f"error: {out}: exists: another sheetgen run wrote it while this one ran; "
            "pass --force to overwrite it"
        ), loser
        assert w.valid(out), attempt
        assert names(folder) == sorted([out.name, safe_write.RECORD_NAME]), names(folder)


@pytest.mark.parametrize("writer", ["generate", "import"])
def test_concurrent_runs_as_they_come(writer: str, inputs: Path, tmp_path: Path):
    """Without a barrier, whichever way the timing falls: one run creates the file; the
    other is refused, or (started after the first had finished) says it replaced it."""
    w = WRITERS[writer]
    for attempt in range(3):
        out = tmp_path / f"out{attempt}" / f"out{w.suffix}"
        procs = [
            subprocess.Popen(
                [sys.executable, str(HERE / "writer_run.py"), *w.argv(inputs, str(out))],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            )  # fmt: skip
            for _ in range(2)
        ]
        done = [(p.wait(timeout=300), *p.communicate()) for p in procs]
        created = [o for c, o, _ in done if c == 0 and f"wrote {out}\n" in o]
        replaced = [o for c, o, _ in done if c == 0 and "(replaced the earlier output)" in o]
        refused = [e for c, _, e in done if c == 2 and "another sheetgen run wrote it" in e]
        assert len(created) == 1 and len(replaced) + len(refused) == 1, (attempt, done)
        assert w.valid(out) and not list(out.parent.glob("*.tmp")), attempt
