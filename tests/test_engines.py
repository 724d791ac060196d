"""The engines behind one interface: pycel and Gnumeric on the small hand-made
workbook of test_recalc, the dispatcher, and Gnumeric's process control.

The scenario matrices are compared under every engine in test_workbook,
test_inference, test_parallelism and test_presentation.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import pytest
from test_recalc import (
    assert_values,
    expected_values,
    fake_soffice,
    live_processes_mentioning,
    make_book,
    tamper_cached_value,
)

from sheetgen.checking.recalc import (
    ENGINES,
    RecalcError,
    engine_available,
    find_ssconvert,
    recalc_pycel,
    recalculate,
    values_gnumeric,
)


@pytest.fixture
def tmpdir_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point tempfile at an empty directory so leftovers can be detected."""
    tdir = tmp_path / "tmp"
    tdir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tdir))
    return tdir


# ------------------------------------------------------------------------ pycel


def test_pycel_values(tmp_path: Path) -> None:
    book = make_book(tmp_path / "plan.xlsx")
    before = book.read_bytes()
    assert_values(recalc_pycel(book), expected_values())
    assert book.read_bytes() == before


def test_pycel_sees_changed_input(tmp_path: Path) -> None:
    assert_values(recalc_pycel(make_book(tmp_path / "p.xlsx", 24)), expected_values(24))


def test_pycel_missing_input(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        recalc_pycel(tmp_path / "nope.xlsx")


def test_pycel_failure_is_a_recalc_error(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-workbook.xlsx"
    bad.write_text("plain text")
    with pytest.raises(RecalcError, match="pycel failed on not-a-workbook.xlsx"):
        recalc_pycel(bad)


# ------------------------------------------------------------------- dispatcher


def test_recalculate_dispatches_to_every_available_engine(tmp_path: Path) -> None:
    book = make_book(tmp_path / "plan.xlsx", gpus_base=12)
    ran = []
    for engine in ENGINES:
        if not engine_available(engine):
            continue
        assert_values(recalculate(book, engine), expected_values(gpus_base=12))
        ran.append(engine)
    assert {"pycel", "formulas"} <= set(ran), f"in-process engines must be installed: {ran}"


def test_unknown_engine(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown engine 'excel'"):
        recalculate(make_book(tmp_path / "plan.xlsx"), "excel")
    with pytest.raises(ValueError):
        engine_available("excel")


# --------------------------------------------------------------------- Gnumeric


@pytest.mark.gnumeric
def test_gnumeric_values(gnumeric: None, tmp_path: Path, tmpdir_clean: Path) -> None:
    book = make_book(tmp_path / "plan.xlsx")
    before = book.read_bytes()
    values = values_gnumeric(book)
    assert_values(values, expected_values())
    assert values[("Calc", "per_zero", "base")] == "#DIV/0!"
    assert book.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.xlsx", "tmp"]
    assert list(tmpdir_clean.iterdir()) == []  # no private HOME or output left


@pytest.mark.gnumeric
@pytest.mark.libreoffice
def test_gnumeric_ignores_wrong_cached_values(gnumeric: None, lo: None, tmp_path: Path) -> None:
    from sheetgen.checking.recalc import read_values, recalc_libreoffice

    fresh = recalc_libreoffice(make_book(tmp_path / "plan.xlsx"), tmp_path / "fresh.xlsx")
    stale = tmp_path / "stale.xlsx"
    tamper_cached_value(fresh, stale, "D2", "PEAK", "1")
    assert read_values(stale)[("Calc", "total_tflops", "base")] == 1
    assert_values(values_gnumeric(stale), expected_values())


def test_gnumeric_missing_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SHEETGEN_SSCONVERT", str(tmp_path / "does-not-exist"))
    assert find_ssconvert() is None and not engine_available("gnumeric")
    with pytest.raises(RecalcError, match="SHEETGEN_SSCONVERT"):
        values_gnumeric(make_book(tmp_path / "b.xlsx"))


def test_gnumeric_silent_failure_is_detected(tmp_path: Path, monkeypatch, tmpdir_clean) -> None:
    script = fake_soffice(tmp_path, "echo 'could not read the file' >&2\nexit 0\n")
    monkeypatch.setenv("SHEETGEN_SSCONVERT", str(script))
    with pytest.raises(RecalcError, match="no valid .xlsx.*could not read the file"):
        values_gnumeric(make_book(tmp_path / "b.xlsx"))
    assert list(tmpdir_clean.iterdir()) == []


def test_gnumeric_timeout_kills_whole_process_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmpdir_clean: Path
) -> None:
    marker = str(tmp_path / "gnumeric-sleeper")
    sleeper = f'"{sys.executable}" -c "import time; time.sleep(60)" "{marker}"'
    script = fake_soffice(tmp_path, f"{sleeper} &\n{sleeper}\n")
    monkeypatch.setenv("SHEETGEN_SSCONVERT", str(script))
    start = time.monotonic()
    with pytest.raises(RecalcError, match="Gnumeric did not finish within 1 s"):
        values_gnumeric(make_book(tmp_path / "b.xlsx"), timeout=1)
    assert time.monotonic() - start < 10
    assert live_processes_mentioning(marker) == []
    assert list(tmpdir_clean.iterdir()) == []


@pytest.mark.gnumeric
@pytest.mark.parametrize("engine", ["gnumeric", "pycel"])
def test_check_with_engine(gnumeric: None, tmp_path: Path, engine: str) -> None:
    """`check --engine gnumeric|pycel` passes an untouched default workbook."""
    from click.testing import CliRunner

    from sheetgen.cli.commands import main

    book = tmp_path / "plan.xlsx"
    assert CliRunner().invoke(main, ["generate", "-o", str(book)]).exit_code == 0
    result = CliRunner().invoke(main, ["check", str(book), "--engine", engine])
    assert result.exit_code == 0, result.output
    assert f"({engine})" in result.output
