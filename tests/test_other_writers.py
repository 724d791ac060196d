"""Other applications open, edit and re-save a sheetgen workbook, and `check`
accepts the result (issue 24.9): LibreOffice through UNO (an input edited,
everything recalculated, saved by LibreOffice's own xlsx writer) and Gnumeric
(re-saved by ssconvert's xlsx writer).  Apache POI was tried: Debian's
libapache-poi-java 4.0.1 ships a poi-ooxml-schemas jar without the XMLBeans type
system, so it cannot open any .xlsx (see README)."""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import openpyxl
import pytest

from sheetgen.checking.check import check_workbook
from sheetgen.engines.libreoffice import find_soffice
from sheetgen.scenarios.files import default_scenario_path, load_scenarios
from sheetgen.workbook import write_workbook

HERE = Path(__file__).resolve().parent
SYSTEM_PYTHON = "/usr/bin/python3"  # the interpreter Debian's python3-uno serves


def uno_python() -> str:
    ok = Path(SYSTEM_PYTHON).exists() and (
        subprocess.run([SYSTEM_PYTHON, "-c", "import uno"], capture_output=True).returncode == 0
    )
    if not ok:
        if os.environ.get("SHEETGEN_REQUIRE_LIBREOFFICE") == "1":
            pytest.fail("python3-uno not found but SHEETGEN_REQUIRE_LIBREOFFICE=1")
        pytest.skip("LibreOffice's Python bridge (python3-uno) not installed")
    return SYSTEM_PYTHON


def has_shared_strings(path: Path) -> bool:
    with zipfile.ZipFile(path) as z:
        return "xl/sharedStrings.xml" in z.namelist()


def row_of(ws, key: str) -> int:
    return next(r for r in range(1, ws.max_row + 1) if ws.cell(row=r, column=1).value == key)


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("writers") / "plan.xlsx"
    write_workbook(load_scenarios(default_scenario_path()), path)
    assert has_shared_strings(path)
    return path


@pytest.mark.libreoffice
def test_libreoffice_edits_an_input_and_saves_and_check_accepts(
    lo, book: Path, tmp_path: Path
) -> None:
    python = uno_python()
    before = openpyxl.load_workbook(book)["Inputs"]
    n_gpus = before.cell(row=row_of(before, "n_gpus"), column=4).value
    out = tmp_path / "edited.xlsx"
    done = subprocess.run(
        [python, str(HERE / "uno_edit.py"), find_soffice(), str(book), str(out),
         "Inputs", "n_gpus", "3", str(2 * n_gpus)],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    ws = openpyxl.load_workbook(out)["Inputs"]
    assert ws.cell(row=row_of(ws, "n_gpus"), column=4).value == 2 * n_gpus
    report = check_workbook(out, engine="libreoffice")
    assert not report.problems, [(f.kind, f.key, f.scenario, f.detail) for f in report.problems]
    assert has_shared_strings(out)  # LibreOffice's writer keeps a string table too
    stored = openpyxl.load_workbook(out, data_only=True)["Inputs"]
    assert stored.cell(row=row_of(stored, "dp"), column=4).value == 2 * (
        openpyxl.load_workbook(book, data_only=True)["Inputs"]
        .cell(row=row_of(before, "dp"), column=4)
        .value
    )  # LibreOffice recalculated and cached the edit's consequences


@pytest.mark.libreoffice
def test_gnumeric_resaves_and_check_accepts(lo, book: Path, tmp_path: Path) -> None:
    from conftest import require_gnumeric

    require_gnumeric()
    out = tmp_path / "gnumeric.xlsx"
    env = {**os.environ, "HOME": str(tmp_path)}
    ssconvert = os.environ.get("SHEETGEN_SSCONVERT") or shutil.which("ssconvert")
    done = subprocess.run(
        [ssconvert, "--export-type=Gnumeric_Excel:xlsx2", str(book), str(out)],
        capture_output=True, text=True, timeout=240, env=env,
    )  # fmt: skip
    assert done.returncode == 0 and out.is_file(), done.stderr[-2000:]
    # pycel 1.0b30 cannot read a Gnumeric-written file (a thread-local it never set),
    # so LibreOffice recalculates it here.
    report = check_workbook(out, engine="libreoffice")
    assert not report.problems, [(f.kind, f.key, f.scenario, f.detail) for f in report.problems]
