"""What the speed work must not change: the templates read the same with libyaml's
loader as with PyYAML's pure-Python one, and a look applied through the shared
style records gives a cell exactly the style built attribute by attribute."""

from __future__ import annotations

import os

import pytest
import yaml

from sheetgen.paths import templates_dir
from sheetgen.workbook import styles


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML built without libyaml")
def test_templates_read_the_same_with_the_c_loader() -> None:
    paths = sorted(templates_dir().glob("*.yaml"))
    assert paths
    for path in paths:
        text = path.read_text(encoding="utf-8")
        pure = yaml.load(text, Loader=yaml.SafeLoader)  # noqa: S506
        fast = yaml.load(text, Loader=yaml.CSafeLoader)  # noqa: S506
        assert fast == pure, path.name


def test_templates_read_the_same_through_the_template_reader() -> None:
    """The node walker for templates gives what yaml.safe_load gives, file by file."""
    from sheetgen.workbook.templates import read_template_yaml

    for path in sorted(templates_dir().glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        assert read_template_yaml(text) == yaml.safe_load(text), path.name
    odd = "a: [1, 0x1F, 1_000, 2.5, .inf, true, no, ~, '3', 2027-01-01]\nb: {c: null}\n"
    with pytest.raises(ValueError, match="timestamp"):
        read_template_yaml(odd)  # dates are not template values
    odd = odd.replace(", 2027-01-01", "")
    assert read_template_yaml(odd) == yaml.safe_load(odd)


def test_looks_equal_styles_built_per_cell() -> None:
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font, PatternFill

    wb = Workbook()
    ws = wb.active
    how = styles.look(
        font={"color": styles.INPUT_FONT_COLOR, "italic": True},
        fill=styles.INPUT_FILL,
        align={"horizontal": "right", "vertical": "top", "wrap_text": False},
        number_format="#,##0.00",
    )
    apply = styles.looks(wb)
    first, second = ws["A1"], ws["A2"]
    apply(first, how)
    apply(second, how)  # the shared record, copied
    manual = ws["A3"]
    manual.font = Font(color=styles.INPUT_FONT_COLOR, italic=True)
    manual.fill = PatternFill("solid", fgColor=styles.INPUT_FILL)
    manual.alignment = Alignment(horizontal="right", vertical="top", wrap_text=False)
    manual.number_format = "#,##0.00"
    assert first.style_id == second.style_id == manual.style_id
    assert first._style is not second._style  # copies, never one shared record
    second.font = Font(bold=True)  # changing one cell later leaves the others alone
    assert first.font.b is not True and first.style_id == manual.style_id


def _default_workbook():
    from sheetgen.scenarios.files import default_scenario_path, load_scenarios
    from sheetgen.workbook.builder import build

    return build(load_scenarios(default_scenario_path()))[0]


@pytest.mark.parametrize("released", [False, True])
def test_a_released_workbook_leaves_no_cell_to_the_cycle_collector(released: bool) -> None:
    import gc

    from openpyxl.cell.cell import Cell, MergedCell

    from sheetgen.workbook import release

    gc.collect()
    with_collector = gc.isenabled()
    gc.disable()
    try:
        wb = _default_workbook()
        cells = sum(len(ws._cells) for ws in wb.worksheets)
        if released:
            release(wb)
        del wb
        gc.set_debug(gc.DEBUG_SAVEALL)  # keep what only the collector could free
        gc.collect()
        left = sum(isinstance(o, (Cell, MergedCell)) for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if with_collector:
            gc.enable()
    # The control: each cell points back at its sheet, so every cell waits for the collector.
    assert left == (0 if released else cells), f"{left} of {cells} cells left to the collector"


@pytest.mark.parametrize("enabled", [True, False])
def test_write_workbook_restores_the_collector(tmp_path, monkeypatch, enabled: bool) -> None:
    import gc

    from sheetgen.errors import SheetgenError
    from sheetgen.scenarios.files import default_scenario_path, load_scenarios
    from sheetgen.workbook import write_workbook

    scenarios = load_scenarios(default_scenario_path())
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        write_workbook(scenarios, tmp_path / "plan.xlsx")
        assert gc.isenabled() is enabled
        os.mkfifo(tmp_path / "fifo.xlsx")
        with pytest.raises(SheetgenError):  # not a regular file: fails before building
            write_workbook(scenarios, tmp_path / "fifo.xlsx")
        assert gc.isenabled() is enabled

        def full(fd: int) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "fsync", full)
        with pytest.raises(SheetgenError):  # fails while saving, inside the pause
            write_workbook(scenarios, tmp_path / "new.xlsx")
        monkeypatch.undo()
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def test_generate_imports_openpyxl_without_numpy_and_numpy_still_imports() -> None:
    """``generate`` imports openpyxl without numpy (0.09 s of its CPU); numpy and pandas
    import as usual afterwards."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from sheetgen.cli.support import openpyxl_without_numpy\n"
        "openpyxl_without_numpy()\n"
        "assert 'openpyxl' in sys.modules and 'numpy' not in sys.modules\n"
        "import openpyxl\n"
        "assert not openpyxl.NUMPY\n"
        "import numpy, pandas\n"
        "pandas.DataFrame({'a': [1]}).to_csv()\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-500:]
