"""Static lint of every formula the generator writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_workbook import matrix_items

from sheetgen.scenarios.files import load_scenarios_text
from sheetgen.workbook import write_workbook
from sheetgen.workbook.lint import lint_formula, lint_workbook, valid_defined_name


def test_generated_formulas_pass_lint(tmp_path: Path) -> None:
    import yaml

    scenarios = load_scenarios_text(yaml.safe_dump({"scenarios": matrix_items()}))
    path = write_workbook(scenarios, tmp_path / "lint.xlsx")
    problems = lint_workbook(path)
    assert not problems, "\n".join(problems[:40])


@pytest.mark.parametrize(
    "formula, problem",
    [
        ("=A1*1e9", "E-notation"),
        ("=XLOOKUP(A1,B1:B3,C1:C3)", "XLOOKUP"),
        ("=OFFSET(A1,1,1)", "OFFSET"),
        ("=_xlfn.IFS(A1>1,2)", "_xlfn"),
        ("=A1*1000", "literal 1000"),
        ("=Table1[col]*2", "structured"),
        ("=A1*3", "literal 3"),
    ],
)
def test_lint_catches(formula: str, problem: str) -> None:
    problems = lint_formula(formula)
    assert any(problem in p for p in problems), problems


@pytest.mark.parametrize(
    "formula",
    [
        "=Inputs!D5*10^12",
        "='KV cache'!E12/86400",
        '=IF(D5="gated",2,1)',
        '=IF(D5="x1e9",1,0)',
        "=INDEX(Presets!$C$6:$C$21,MATCH(D5,Presets!$A$6:$A$21,0))",
        "=SUM(AB12:AB40)*24",
    ],
)
def test_lint_accepts(formula: str) -> None:
    assert lint_formula(formula) == []


def test_declared_constants_are_allowed() -> None:
    assert lint_formula("=3*D5", constants=(3,)) == []


@pytest.mark.parametrize("name, ok", [
    ("train_days_1", True),
    ("params_total_12", True),
    ("bf16", False),
    ("h100", False),
    ("R1C1", False),
    ("L1", False),
    ("1abc", False),
    ("a b", False),
])  # fmt: skip
def test_defined_name_validity(name: str, ok: bool) -> None:
    assert valid_defined_name(name) is ok


def test_every_row_shown_in_seconds_names_its_unit() -> None:
    """A printed time needs its unit beside it: every template row formatted as
    seconds says "s" in the unit column (the Serving sheet's candidate rows did not)."""
    from sheetgen.workbook.templates import load_templates

    bare = [
        f"{t.sheet}: {row.key} ({row.unit or 'no unit'})"
        for t in load_templates()
        for row in t.rows
        if row.fmt == "seconds" and row.unit != "s"
    ]
    assert not bare, "rows formatted as seconds without unit s: " + ", ".join(bare)
