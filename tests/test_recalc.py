"""Tests for sheetgen.checking.recalc: LibreOffice and `formulas` recalculation, layout reading.

Run with ``cd /work/main && PYTHONPATH=. python3 -m pytest tests/test_recalc.py``.
Tests marked ``libreoffice`` need LibreOffice headless; they are skipped where it is
absent, unless SHEETGEN_REQUIRE_LIBREOFFICE=1, which turns the skip into a failure.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sheetgen.checking.recalc import (
    RecalcError,
    find_soffice,
    libreoffice_available,
    read_values,
    recalc_formulas,
    recalc_libreoffice,
    values_libreoffice,
)

PEAK_TFLOPS = 312
PRICES = {"A100": 2.0, "H100": 4.5}

# What the formulas of the workbook built by make_book() should give.
INPUTS = {
    ("Inputs", "gpus", "base"): 8,
    ("Inputs", "gpus", "big"): 64,
    ("Inputs", "model", "base"): "A100",
    ("Inputs", "model", "big"): "H100",
    ("Inputs", "zero", "base"): 0,
    ("Inputs", "zero", "big"): 0,
}


def expected_values(gpus_base: int = 8) -> dict[tuple[str, str, str], object]:
    """Values every engine should produce for make_book(gpus_base=...)."""
    gpus = {"base": gpus_base, "big": 64}
    model = {"base": "A100", "big": "H100"}
    out: dict[tuple[str, str, str], object] = dict(INPUTS)
    out[("Inputs", "gpus", "base")] = gpus_base
    for s in ("base", "big"):
        flops = gpus[s] * PEAK_TFLOPS
        out[("Calc", "total_tflops", s)] = flops
        out[("Calc", "price", s)] = PRICES[model[s]]
        out[("Calc", "price_named", s)] = PRICES[model[s]]
        out[("Calc", "cost", s)] = gpus[s] * PRICES[model[s]]
        out[("Calc", "family", s)] = "hopper" if model[s] == "H100" else "ampere"
        out[("Calc", "is_big", s)] = gpus[s] > 16
        out[("Calc", "per_zero", s)] = "#DIV/0!"
    return out


def make_book(path: Path, gpus_base: int = 8) -> Path:
    """Write a small workbook in sheetgen's layout with openpyxl (no cached values).

    Inputs: header on row 2 (title above), a section heading row, a data validation.
    Calc: cross-sheet references, a named single cell (PEAK), named ranges in
    INDEX/MATCH, INDEX/MATCH into a plain range, IF with a string comparison, a
    boolean, a #DIV/0! cell. Prices: a lookup table without header row (skipped).
    """
    import openpyxl
    from openpyxl.workbook.defined_name import DefinedName
    from openpyxl.worksheet.datavalidation import DataValidation

    wb = openpyxl.Workbook()
    inp = wb.active
    inp.title = "Inputs"
    inp.append(["Planning inputs"])
    inp.append(["key", "quantity", "unit", "base", "big", "formula in words", "notes"])
    inp.append(["gpus", "GPU count", "count", gpus_base, 64, "", "ignored column"])
    inp.append(["model", "GPU model", "", "A100", "H100", ""])
    inp.append([None, "Section: edge cases"])
    inp.append(["zero", "a zero", "", 0, 0, ""])
    dv = DataValidation(type="list", formula1='"A100,H100"', allow_blank=False)
    inp.add_data_validation(dv)
    dv.add("D4:E4")

    calc = wb.create_sheet("Calc")
    calc.append(["key", "quantity", "unit", "base", "big", "formula in words"])
    rows = {
        "total_tflops": ("TFLOP/s", "=Inputs!{c}3*PEAK", "gpus times peak"),
        "price": ("$/h", "=INDEX(Prices!$B$1:$B$2,MATCH(Inputs!{c}4,Prices!$A$1:$A$2,0))", ""),
        "price_named": ("$/h", "=INDEX(PriceCol,MATCH(Inputs!{c}4,ModelCol,0))", ""),
        "cost": ("$/h", "=Inputs!{c}3*{c}4", "gpus times price"),
        "family": ("", '=IF(Inputs!{c}4="H100","hopper","ampere")', ""),
        "is_big": ("", "=Inputs!{c}3>16", ""),
    }
    for key, (unit, formula, words) in rows.items():
        calc.append([key, key, unit, formula.format(c="D"), formula.format(c="E"), words])
    calc.append([None, "Errors"])
    calc.append(
        ["per_zero", "division by zero", "", "=Inputs!D3/Inputs!D6", "=Inputs!E3/Inputs!E6"]
    )

    prices = wb.create_sheet("Prices")
    for name, price in PRICES.items():
        prices.append([name, price])
    prices["D1"] = PEAK_TFLOPS
    wb.defined_names["PEAK"] = DefinedName("PEAK", attr_text="Prices!$D$1")
    wb.defined_names["PriceCol"] = DefinedName("PriceCol", attr_text="Prices!$B$1:$B$2")
    wb.defined_names["ModelCol"] = DefinedName("ModelCol", attr_text="Prices!$A$1:$A$2")
    wb.save(path)
    return path


def assert_values(actual: dict, expected: dict) -> None:
    assert set(actual) == set(expected)
    for key, want in expected.items():
        got = actual[key]
        if isinstance(want, bool) or isinstance(want, str):
            assert got == want, key
            assert type(got) is type(want), key
        else:
            assert got == pytest.approx(want), key


@pytest.fixture
def tmpdir_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point tempfile at an empty directory so leftovers can be detected."""
    tdir = tmp_path / "tmp"
    tdir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tdir))
    return tdir


def live_processes_mentioning(text: str) -> list[str]:
    """Command lines of live (non-zombie) processes whose command line contains text."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != b"Z" and text.encode() in cmdline:
            found.append(f"{entry}: {cmdline.decode(errors='replace')}")
    return found


def tamper_cached_value(src: Path, dst: Path, cell: str, formula_part: str, new: str) -> None:
    """Copy src to dst, replacing the cached <v> of the formula cell `cell` whose
    formula contains `formula_part` (exactly one such cell must exist)."""
    pattern = re.compile(
        rb'(<c r="'
        + cell.encode()
        + rb'"[^>]*>\s*<f[^>]*>[^<]*'
        + re.escape(formula_part.encode())
        + rb"[^<]*</f>\s*<v>)[^<]*(</v>)"
    )
    hits = 0
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.startswith("xl/worksheets/"):
                data, n = pattern.subn(rb"\g<1>" + new.encode() + rb"\g<2>", data)
                hits += n
            zout.writestr(item, data)
    assert hits == 1, f"expected one cached value to tamper with, found {hits}"


def fake_soffice(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "fake-soffice"
    script.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


# ------------------------------------------------------------------ no engine needed


def test_import_is_cheap() -> None:
    code = (
        "import sys, sheetgen.checking.recalc; "
        "heavy = [m for m in ('openpyxl', 'formulas', 'pandas', 'numpy') if m in sys.modules]; "
        "sys.exit(', '.join(heavy) or None)"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr


def test_read_values_layout_without_cached_values(tmp_path: Path) -> None:
    book = make_book(tmp_path / "plan.xlsx")
    values = read_values(book)
    # openpyxl writes no cached values: formula cells read None, literals their value.
    expected = {k: (v if k[0] == "Inputs" else None) for k, v in expected_values().items()}
    assert values == expected
    assert not any(k[0] == "Prices" for k in values)  # no header row: skipped
    assert not any(k[2] in ("formula in words", "notes") for k in values)


def test_read_values_header_rules(tmp_path: Path) -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "S"
    for _ in range(4):
        ws.append([None, "preamble"])
    ws.append(["key", "quantity", "unit", "low", 2024, None, "after the gap"])
    ws.append(["a", "", "", 1, "#N/A", 3])
    ws.append([None, "heading"])
    ws.append([7, "", "", 99, 99])  # key is not a string: skipped
    ws.append(["b", "", "", True, None])
    late = wb.create_sheet("Late")
    for _ in range(10):
        late.append(["x"])
    late.append(["key", "q", "u", "s1"])  # row 11: beyond the search window
    late.append(["k", "", "", 1])
    wb.save(tmp_path / "h.xlsx")

    assert read_values(tmp_path / "h.xlsx") == {
        ("S", "a", "low"): 1,
        ("S", "a", "2024"): "#N/A",
        ("S", "b", "low"): True,
        ("S", "b", "2024"): None,
    }


def test_find_soffice_env_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    script = fake_soffice(tmp_path, "exit 0\n")
    monkeypatch.setenv("SHEETGEN_SOFFICE", str(script))
    assert find_soffice() == str(script)
    assert libreoffice_available()
    monkeypatch.setenv("SHEETGEN_SOFFICE", str(tmp_path / "does-not-exist"))
    assert find_soffice() is None
    assert not libreoffice_available()
    with pytest.raises(RecalcError, match="SHEETGEN_SOFFICE"):
        recalc_libreoffice(make_book(tmp_path / "b.xlsx"))


def test_silent_failure_is_detected(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tmpdir_clean: Path
) -> None:
    # Like soffice on a bad input: exit status 0, a message, and no output file.
    script = fake_soffice(tmp_path, "echo 'Error: source file could not be loaded' >&2\nexit 0\n")
    monkeypatch.setenv("SHEETGEN_SOFFICE", str(script))
    with pytest.raises(RecalcError, match="no valid .xlsx.*source file could not be loaded"):
        recalc_libreoffice(make_book(tmp_path / "b.xlsx"))
    assert list(tmpdir_clean.iterdir()) == []


def test_nonzero_exit_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    script = fake_soffice(tmp_path, "echo 'boom' \nexit 3\n")
    monkeypatch.setenv("SHEETGEN_SOFFICE", str(script))
    with pytest.raises(RecalcError, match="status 3.*boom"):
        recalc_libreoffice(make_book(tmp_path / "b.xlsx"))


def test_timeout_kills_whole_process_group(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tmpdir_clean: Path
) -> None:
    marker = str(tmp_path / "sleeper-marker")
    sleeper = f'"{sys.executable}" -c "import time; time.sleep(60)" "{marker}"'
    script = fake_soffice(tmp_path, f"{sleeper} &\n{sleeper}\n")
    monkeypatch.setenv("SHEETGEN_SOFFICE", str(script))
    start = time.monotonic()
    with pytest.raises(RecalcError, match="did not finish within 1 s"):
        recalc_libreoffice(make_book(tmp_path / "b.xlsx"), timeout=1)
    assert time.monotonic() - start < 10
    assert live_processes_mentioning(marker) == []
    assert list(tmpdir_clean.iterdir()) == []


def test_a_process_that_left_the_group_is_ended_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tmpdir_clean: Path
) -> None:
    """A child that starts a session of its own (outside the killed process group) but
    works in the run's directory is ended before that directory is removed."""
    escapee = (
        f'"{sys.executable}" -c "import os, sys, time; os.setsid(); time.sleep(60)" '
        '"$(pwd)/escaped" &'
    )
    script = fake_soffice(tmp_path, f"{escapee}\nsleep 0.5\nexit 3\n")
    monkeypatch.setenv("SHEETGEN_SOFFICE", str(script))
    with pytest.raises(RecalcError, match="status 3"):
        recalc_libreoffice(make_book(tmp_path / "b.xlsx"))
    assert live_processes_mentioning(str(tmpdir_clean)) == []
    assert list(tmpdir_clean.iterdir()) == []


def test_missing_input(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        recalc_libreoffice(tmp_path / "nope.xlsx")
    with pytest.raises(FileNotFoundError):
        recalc_formulas(tmp_path / "nope.xlsx")


# ------------------------------------------------------------------------ formulas


def test_formulas_engine_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    book = make_book(tmp_path / "plan.xlsx")
    before = book.read_bytes()
    assert_values(recalc_formulas(book), expected_values())
    assert book.read_bytes() == before
    captured = capsys.readouterr()
    assert captured.out == "" and "it/s" not in captured.err  # no tqdm progress bar


def test_formulas_engine_sees_changed_input(tmp_path: Path) -> None:
    book = make_book(tmp_path / "plan.xlsx", gpus_base=24)
    assert_values(recalc_formulas(book), expected_values(gpus_base=24))


# --------------------------------------------------------------------- LibreOffice


@pytest.mark.libreoffice
def test_libreoffice_values(lo: None, tmp_path: Path, tmpdir_clean: Path) -> None:
    book = make_book(tmp_path / "plan.xlsx")
    before = book.read_bytes()
    values = values_libreoffice(book)
    assert_values(values, expected_values())
    assert values[("Calc", "per_zero", "base")] == "#DIV/0!"
    assert book.read_bytes() == before  # input untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.xlsx", "tmp"]
    assert list(tmpdir_clean.iterdir()) == []  # no profile or output dirs left


@pytest.mark.libreoffice
def test_libreoffice_recalc_to_dst_and_default(
    lo: None, tmp_path: Path, tmpdir_clean: Path
) -> None:
    book = make_book(tmp_path / "plan.xlsx")
    dst = recalc_libreoffice(book, tmp_path / "out" / "fresh.xlsx")
    assert dst == tmp_path / "out" / "fresh.xlsx"
    assert_values(read_values(dst), expected_values())
    assert list(tmpdir_clean.iterdir()) == []

    default = recalc_libreoffice(book)
    assert default.name == "plan.xlsx" and default.parent.parent == tmpdir_clean
    assert [p.name for p in tmpdir_clean.iterdir()] == [default.parent.name]
    assert_values(read_values(default), expected_values())

    into_dir = recalc_libreoffice(book, tmp_path / "out")
    assert into_dir == tmp_path / "out" / "plan.xlsx"
    assert_values(read_values(into_dir), expected_values())

    with pytest.raises(ValueError):
        recalc_libreoffice(book, book)
    with pytest.raises(ValueError):
        recalc_libreoffice(book, tmp_path)


@pytest.mark.libreoffice
def test_libreoffice_recalculates_after_openpyxl_edit(lo: None, tmp_path: Path) -> None:
    import openpyxl

    first = recalc_libreoffice(make_book(tmp_path / "plan.xlsx"), tmp_path / "first.xlsx")
    assert read_values(first)[("Calc", "total_tflops", "base")] == pytest.approx(8 * 312)

    wb = openpyxl.load_workbook(first)  # keeps formulas, drops cached values
    wb["Inputs"]["D3"] = 24
    wb.save(tmp_path / "edited.xlsx")
    assert read_values(tmp_path / "edited.xlsx")[("Calc", "total_tflops", "base")] is None

    assert_values(values_libreoffice(tmp_path / "edited.xlsx"), expected_values(gpus_base=24))


@pytest.mark.libreoffice
def test_libreoffice_ignores_wrong_cached_values(lo: None, tmp_path: Path) -> None:
    fresh = recalc_libreoffice(make_book(tmp_path / "plan.xlsx"), tmp_path / "fresh.xlsx")
    stale = tmp_path / "stale.xlsx"
    tamper_cached_value(fresh, stale, "D2", "PEAK", "1")
    stale_bytes = stale.read_bytes()
    assert read_values(stale)[("Calc", "total_tflops", "base")] == 1  # the lie is cached

    values = values_libreoffice(stale)
    assert values[("Calc", "total_tflops", "base")] == pytest.approx(8 * 312)
    assert_values(values, expected_values())
    assert stale.read_bytes() == stale_bytes


@pytest.mark.libreoffice
def test_libreoffice_timeout_leaves_nothing(lo: None, tmp_path: Path, tmpdir_clean: Path) -> None:
    book = make_book(tmp_path / "plan.xlsx")
    with pytest.raises(RecalcError, match="did not finish within 0.01 s"):
        recalc_libreoffice(book, tmp_path / "never.xlsx", timeout=0.01)
    assert live_processes_mentioning(str(tmpdir_clean)) == []
    assert list(tmpdir_clean.iterdir()) == []
    assert not (tmp_path / "never.xlsx").exists()


@pytest.mark.libreoffice
def test_libreoffice_parallel_calls(lo: None, tmp_path: Path, tmpdir_clean: Path) -> None:
    books = [make_book(tmp_path / f"plan{i}.xlsx", gpus_base=8 * (i + 1)) for i in range(3)]
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(values_libreoffice, books))
    for i, values in enumerate(results):
        assert_values(values, expected_values(gpus_base=8 * (i + 1)))
    assert list(tmpdir_clean.iterdir()) == []


@pytest.mark.libreoffice
def test_engines_agree(lo: None, tmp_path: Path) -> None:
    book = make_book(tmp_path / "plan.xlsx", gpus_base=12)
    lo_values = values_libreoffice(book)
    formulas_values = recalc_formulas(book)
    assert set(lo_values) == set(formulas_values)
    for key, value in lo_values.items():
        other = formulas_values[key]
        if isinstance(value, (str, bool)) or isinstance(other, (str, bool)):
            assert other == value, key
        else:
            assert other == pytest.approx(value), key
