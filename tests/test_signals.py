"""SIGTERM and SIGHUP during `check`, `pdf` and `generate` end cleanly: LibreOffice's
process group killed, temporary profiles and files removed, one line, exit 128 + n.

Each test runs the real command in a subprocess with TMPDIR pointing at an empty
directory, waits until the run is under way (a LibreOffice process whose command
line names that directory, or the half-written workbook), sends the signal and
looks at what is left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from test_recalc import live_processes_mentioning

from sheetgen.cli.commands import main
from sheetgen.scenarios.files import default_scenario_path, load_scenarios
from sheetgen.workbook import write_workbook

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("signals")
    return write_workbook(load_scenarios(default_scenario_path()), folder / "plan.xlsx")


def start(args: list[str], tmpdir: Path) -> subprocess.Popen[str]:
    # PYTHONFAULTHANDLER: a run that does not end after the signal is sent SIGABRT by
    # `stop`, and Python prints where it was stuck (the test then fails with it).
    env = dict(os.environ, TMPDIR=str(tmpdir), PYTHONPATH=str(ROOT), PYTHONFAULTHANDLER="1")
    return subprocess.Popen(
        [sys.executable, "-m", "sheetgen.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def wait_for(condition, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


def soffice_running_in(tmpdir: Path) -> bool:
    return any("soffice" in p for p in live_processes_mentioning(str(tmpdir)))


def stop(proc: subprocess.Popen[str], sig: int) -> tuple[int, list[str]]:
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # the faulthandler prints every thread's stack
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        pytest.fail(f"still running 60 s after {signal.Signals(sig).name}; its stderr:\n{err}")
    return proc.returncode, [line for line in err.splitlines() if line.strip()]


def assert_nothing_left(tmpdir: Path) -> None:
    # The group is killed before the command returns; allow the kernel a moment to reap.
    assert wait_for(lambda: not live_processes_mentioning(str(tmpdir)), 5), (
        live_processes_mentioning(str(tmpdir))
    )
    assert sorted(p.name for p in tmpdir.iterdir()) == [], "temporary files left behind"


@pytest.mark.libreoffice
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_signal_during_check_stops_libreoffice(lo, plan: Path, tmp_path: Path, sig) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    before = plan.read_bytes()
    proc = start(["check", str(plan)], tmpdir)
    assert wait_for(lambda: soffice_running_in(tmpdir)), "LibreOffice never started"
    code, lines = stop(proc, sig)
    assert code == 128 + sig, lines
    assert len(lines) == 1 and sig.name in lines[0] and "Traceback" not in lines[0], lines
    assert_nothing_left(tmpdir)
    assert plan.read_bytes() == before


@pytest.mark.libreoffice
def test_sigterm_during_pdf_leaves_no_pdf(lo, plan: Path, tmp_path: Path) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    target = tmp_path / "out" / "plan.pdf"
    proc = start(["pdf", str(plan), "-o", str(target), "--timeout", "120"], tmpdir)
    assert wait_for(lambda: soffice_running_in(tmpdir)), "LibreOffice never started"
    code, lines = stop(proc, signal.SIGTERM)
    assert code == 128 + signal.SIGTERM, lines
    assert len(lines) == 1 and "SIGTERM" in lines[0], lines
    assert_nothing_left(tmpdir)
    assert not target.exists()
    assert not target.parent.exists() or list(target.parent.iterdir()) == []


def test_sigterm_during_generate_keeps_the_old_file(tmp_path: Path) -> None:
    """`generate --force` interrupted while writing: the old workbook stays, no temp file."""
    first = load_scenarios(default_scenario_path())[0]
    items = [
        {
            "name": f"plan {i}",
            "model": first.model.id,
            "hardware": first.hardware.id,
            "n_gpus": 8 * (i + 1),
        }
        for i in range(150)
    ]
    spec = tmp_path / "many.yaml"
    spec.write_text(yaml.safe_dump({"scenarios": items}))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / "plan.xlsx"
    target.write_bytes(b"the user's edited workbook")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = start(["generate", str(spec), "-o", str(target), "--force"], tmpdir)
    writing = wait_for(lambda: len(list(out_dir.iterdir())) > 1 or proc.poll() is not None)
    assert writing and proc.poll() is None, "generate finished before it could be interrupted"
    code, lines = stop(proc, signal.SIGTERM)
    assert code == 128 + signal.SIGTERM, lines
    assert len(lines) == 1 and "SIGTERM" in lines[0], lines
    assert [p.name for p in out_dir.iterdir()] == ["plan.xlsx"]
    assert target.read_bytes() == b"the user's edited workbook"
    assert list(tmpdir.iterdir()) == []


@pytest.mark.parametrize("command", ["check", "pdf"])
@pytest.mark.parametrize("value", ["-1", "0", "abc", "nan", "inf"])
def test_timeout_must_be_positive(plan: Path, tmp_path: Path, command: str, value: str) -> None:
    result = CliRunner().invoke(main, [command, str(plan), "--timeout", value])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "--timeout" in lines[0] and "> 0" in lines[0], lines
    assert not (tmp_path / "plan.pdf").exists() and not plan.with_suffix(".pdf").exists()


@pytest.mark.libreoffice
def test_pdf_timeout_is_honoured(lo, plan: Path, tmp_path: Path) -> None:
    target = tmp_path / "plan.pdf"
    result = CliRunner().invoke(main, ["pdf", str(plan), "-o", str(target), "--timeout", "0.01"])
    assert result.exit_code == 2, result.output
    assert "did not finish within 0.01 s" in result.output
    assert "\n" not in result.output.strip() and not target.exists()
