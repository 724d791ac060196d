"""Excel's limits, enforced on generated workbooks (issue 10): a file Excel would repair
or reject never leaves the generator.  The lint itself must catch each breach."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from openpyxl.worksheet.datavalidation import DataValidation

from sheetgen.scenarios.files import default_scenario_path, load_scenarios
from sheetgen.workbook import write_workbook
from sheetgen.workbook.lint import (
    MAX_FORMULA_CHARS,
    MAX_NESTING,
    excel_limits,
    lint_formula,
    lint_workbook,
)


def test_default_workbook_within_excel_limits(tmp_path: Path) -> None:
    path = write_workbook(load_scenarios(default_scenario_path()), tmp_path / "d.xlsx")
    problems = lint_workbook(path)
    assert not problems, "\n".join(problems[:40])
    wb = openpyxl.load_workbook(path)
    lists = [
        dv for ws in wb.worksheets for dv in ws.data_validations.dataValidation if dv.type == "list"
    ]
    assert lists, "the Inputs drop-downs are missing"
    titles = {dv.errorTitle for ws in wb.worksheets for dv in ws.data_validations.dataValidation}
    assert all(len(t) <= 32 for t in titles), titles


@pytest.mark.parametrize(
    "formula, problem",
    [
        ("=MOD(A1,1)", "MOD"),
        ("=A1+" + "+".join(["B2"] * (MAX_FORMULA_CHARS // 3)), "characters"),
        ("=" + "ABS(" * (MAX_NESTING + 1) + "A1" + ")" * (MAX_NESTING + 1), "nesting"),
    ],
)
def test_formula_limits_are_caught(formula: str, problem: str) -> None:
    problems = lint_formula(formula)
    assert any(problem in p for p in problems), problems


def test_nesting_at_the_limit_passes() -> None:
    formula = "=" + "ABS(" * MAX_NESTING + "A1" + ")" * MAX_NESTING
    assert lint_formula(formula) == []


def _book_with(title: str = "Inputs", **dv_fields: str) -> openpyxl.Workbook:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = title
    dv = DataValidation(type=dv_fields.pop("type", "whole"), formula1=dv_fields.pop("f", "1"))
    for k, v in dv_fields.items():
        setattr(dv, k, v)
    dv.add("D5")
    ws.add_data_validation(dv)
    return wb


@pytest.mark.parametrize(
    "book, problem",
    [
        (lambda: _book_with(title="A sheet name longer than thirty-one"), "sheet name"),
        (lambda: _book_with(errorTitle="Invalid measured_tokens_per_s_per_gpu"), "title"),
        (lambda: _book_with(error="x" * 256), "message"),
        (lambda: _book_with(type="list", f="Presets!$A$6:$A$30"), "defined name"),
    ],
    ids=["sheet name", "dv title", "dv message", "list source"],
)
# The over-long sheet name is the point of the first case: openpyxl's warning about it
# is expected, not a sign of trouble in the suite's output.
@pytest.mark.filterwarnings("ignore:Title is more than 31 characters:UserWarning")
def test_workbook_limits_are_caught(book, problem: str) -> None:
    problems = excel_limits(book())
    assert any(problem in p for p in problems), problems


def test_list_sources_through_names_and_literals_pass() -> None:
    from openpyxl.workbook.defined_name import DefinedName

    wb = _book_with(type="list", f="list_models_id")
    wb.defined_names["list_models_id"] = DefinedName("list_models_id", attr_text="Inputs!$A$1")
    assert excel_limits(wb) == []
    assert excel_limits(_book_with(type="list", f='"flash,naive"')) == []
