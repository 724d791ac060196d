"""docs/DESIGN.md describes the tree as it is: every module under sheetgen/ and every
sheet of the workbook is named in it, and every module, file and sheet it names exists.

A module is named by its path (``sheetgen/workbook/layout.py``), by its path inside
the package (``workbook/layout.py``) or, where no other module shares it, by its file
name in backquotes (`` `layout.py` ``).  A package (``__init__.py``) is named by its
folder (``sheetgen/engines/``)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "DESIGN.md"
MODULES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "sheetgen").rglob("*.py"))
# Names DESIGN.md uses for files outside sheetgen/ (tests, benchmarks, tools).
OTHER_DIRS = ("tests", "benchmarks", "tools", ".ci")
# `something.py` in backquotes or a path ending in .py.
PY_NAME = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.py)\b")


def _text() -> str:
    return DESIGN.read_text(encoding="utf-8")


def named(module: str, text: str) -> bool:
    """Whether ``text`` names ``module`` (a path like sheetgen/workbook/layout.py)."""
    path = Path(module)
    if path.name == "__init__.py":
        return f"{path.parent.as_posix()}/" in text or f"`{path.parent.as_posix()}`" in text
    inner = module.removeprefix("sheetgen/")
    if module in text or re.search(rf"(?<![\w/]){re.escape(inner)}\b", text):
        return True
    unique = Counter(Path(m).name for m in MODULES)[path.name] == 1
    return unique and f"`{path.name}`" in text


@pytest.mark.parametrize("module", MODULES)
def test_every_module_is_named_in_design(module):
    assert named(module, _text()), f"{module} is not mentioned in docs/DESIGN.md"


def test_a_new_module_without_a_mention_fails():
    """The rule above catches an unmentioned module (and accepts the forms it allows)."""
    text = _text()
    assert not named("sheetgen/workbook/brand_new_module.py", text)
    assert named("sheetgen/workbook/x.py", "see `sheetgen/workbook/x.py`")
    assert named("sheetgen/workbook/x.py", "see `workbook/x.py`")
    assert not named("sheetgen/workbook/x.py", "see `sheetgen/workbook/xy.py`")


def _exists(name: str) -> bool:
    if (ROOT / name).is_file():
        return True
    if "/" in name and (ROOT / "sheetgen" / name).is_file():
        return True
    base = Path(name).name
    if any(Path(m).name == base and m.endswith(name) for m in MODULES):
        return True
    return any((ROOT / d / name).is_file() for d in OTHER_DIRS)


def test_every_python_file_design_names_exists():
    missing = sorted({n for n in PY_NAME.findall(_text()) if not _exists(n)})
    assert not missing, f"docs/DESIGN.md names files that do not exist: {missing}"


def test_sheet_list_is_the_workbook_in_order(tmp_path):
    """The "Sheets, in order" list equals the sheets a generated workbook has."""
    import openpyxl

    from sheetgen.scenarios.files import default_scenario_path, load_scenarios
    from sheetgen.workbook import write_workbook

    section = _text().split("## Sheets, in order", 1)[1]
    listed = [s.strip() for s in section.split(". Every", 1)[0].replace("\n", " ").split(",")]
    path = write_workbook(
        load_scenarios(default_scenario_path()), tmp_path / "w.xlsx", cache_values=False
    )
    sheets = openpyxl.load_workbook(path, read_only=True).sheetnames
    assert listed == sheets, f"DESIGN.md lists {listed}, the workbook has {sheets}"


def test_every_template_sheet_has_its_template_named():
    """Each sheet's template file (templates/NN_name.yaml) is named in DESIGN.md, and
    every template DESIGN.md names exists."""
    text = _text()
    templates = sorted(p.name for p in (ROOT / "templates").glob("*.yaml"))
    for name in templates:
        assert f"templates/{name}" in text, f"templates/{name} not in docs/DESIGN.md"
    for name in set(re.findall(r"templates/([\w.-]+\.yaml)", text)):
        assert name in templates, f"docs/DESIGN.md names templates/{name}, which is absent"


def test_every_module_attribute_design_names_exists():
    """`module.name` references (e.g. `workbook_io.scenario_names`) resolve."""
    import importlib

    short_names = {}
    for m in MODULES:
        dotted = m.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        short_names[dotted] = dotted
        short_names[dotted.removeprefix("sheetgen.")] = dotted
        short_names.setdefault(dotted.rsplit(".", 1)[-1], dotted)
    checked, missing = 0, []
    for ref in set(re.findall(r"`([a-z_][\w.]*\.[A-Za-z_]\w*)(?:\(\))?`", _text())):
        if ref.endswith(".py"):
            continue
        parts = ref.split(".")
        for i in range(len(parts) - 1, 0, -1):
            module = short_names.get(".".join(parts[:i]))
            if module is None:
                continue
            obj = importlib.import_module(module)
            for attr in parts[i:]:
                obj = getattr(obj, attr, None)
            checked += 1
            if obj is None:
                missing.append(ref)
            break
    assert checked >= 5, f"only {checked} references found: the pattern is broken"
    assert not missing, f"docs/DESIGN.md names attributes that do not exist: {missing}"
