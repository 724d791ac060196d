"""Imports inside sheetgen/workbook go one way (issue 25): no module reaches itself
through the modules it imports, counting imports inside functions (the lazy ones)
and leaving out those under ``if TYPE_CHECKING:`` (never run)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["sheetgen.workbook"]


def module_files(package: str) -> dict[str, Path]:
    folder = ROOT.joinpath(*package.split("."))
    out = {}
    for path in sorted(folder.glob("*.py")):
        out[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return out


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imported(path: Path, package: str, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that ``path`` imports when it runs."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = {id(n) for t in ast.walk(tree) if _type_checking_only(t) for n in ast.walk(t)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # a relative import
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            subs = {f"{base}.{a.name}" for a in node.names}
            found |= subs & modules
            if subs - modules:  # names defined in ``base`` itself
                found.add(base)
    return found & modules


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle found by a depth-first search, each as the path that closes it."""
    out, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                out.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return out


def import_graph(package: str) -> dict[str, set[str]]:
    files = module_files(package)
    names = set(files)
    return {m: imported(p, package, names) - {m} for m, p in files.items()}


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(package: str) -> None:
    found = cycles(import_graph(package))
    assert not found, "import cycles: " + "; ".join(" -> ".join(c) for c in found)


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_lazy_imports_count_and_type_checking_ones_do_not(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg import b\n"
        "def f():\n    from pkg import c\n    from . import d\n    from pkg import e_func\n",
        encoding="utf-8",
    )
    modules = {"pkg", "pkg.b", "pkg.c", "pkg.d"}
    assert imported(src, "pkg", modules) == {"pkg", "pkg.c", "pkg.d"}
