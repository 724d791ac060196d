"""Imports go one way (issues 25 and 42): no module of sheetgen reaches itself through
the modules it imports, counting imports inside functions (the lazy ones) and the
packages an import runs (``import a.b.c`` runs ``a/b/__init__.py``); a second test
counts the imports under ``if TYPE_CHECKING:`` too (never run, but a circle all the
same for a reader and for mypy).  And the house keeps its shape: at most 8 modules
directly in ``sheetgen/``, every package's ``__init__.py`` saying what it holds."""

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


def imported(path: Path, package: str, modules: set[str], type_hints: bool = False) -> set[str]:
    """The modules of ``modules`` that ``path`` imports when it runs (with
    ``type_hints``, also those it imports only for type checking)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set()
    if not type_hints:
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


def tree_modules() -> dict[str, tuple[Path, str]]:
    """Every module under sheetgen/: its dotted name -> (file, the package it sits in)."""
    out = {}
    for path in sorted((ROOT / "sheetgen").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            name = ".".join(parts[:-1])
            out[name] = (path, name)
        else:
            name = ".".join(parts)
            out[name] = (path, name.rpartition(".")[0])
    return out


def with_packages(module: str, deps: set[str], modules: set[str]) -> set[str]:
    """``deps`` and the packages importing them runs (``a.b`` for ``a.b.c``), less the
    packages ``module`` itself sits in (already running when it is imported)."""
    out = set(deps)
    for dep in deps:
        parts = dep.split(".")
        out |= {".".join(parts[:i]) for i in range(2, len(parts))}
    own = module.split(".")
    out -= {".".join(own[:i]) for i in range(1, len(own))}
    return (out & modules) - {module}


def tree_graph(type_hints: bool = False) -> dict[str, set[str]]:
    files = tree_modules()
    names = set(files)
    return {
        m: with_packages(m, imported(p, pkg, names, type_hints), names)
        for m, (p, pkg) in files.items()
    }


def test_no_import_cycle_in_sheetgen() -> None:
    graph = tree_graph()
    assert len(graph) > 90, f"only {len(graph)} modules found: the walk is broken"
    found = cycles(graph)
    assert not found, "import cycles: " + "; ".join(" -> ".join(c) for c in found)


def test_no_import_cycle_even_in_type_hints() -> None:
    found = cycles(tree_graph(type_hints=True))
    assert not found, "import cycles (type hints counted): " + "; ".join(
        " -> ".join(c) for c in found
    )


def test_an_import_runs_the_packages_above_it() -> None:
    modules = {"s", "s.p", "s.p.a", "s.q", "s.q.b"}
    assert with_packages("s.q.b", {"s.p.a"}, modules) == {"s.p.a", "s.p"}
    assert with_packages("s.p.a", {"s.p"}, modules) == set()  # its own package
    graph = {m: set() for m in modules}
    graph["s.p"] = {"s.q.b"}  # s/p/__init__.py imports s.q.b, which imports s.p.a:
    graph["s.q.b"] = with_packages("s.q.b", {"s.p.a"}, modules)
    assert cycles(graph) == [["s.p", "s.q.b", "s.p"]]


def test_the_house_has_at_most_8_modules_at_the_top() -> None:
    top = sorted(p.name for p in (ROOT / "sheetgen").glob("*.py"))
    assert len(top) <= 8, f"{len(top)} modules directly in sheetgen/: {top}"


@pytest.mark.parametrize(
    "package", sorted(p.parent.name for p in (ROOT / "sheetgen").glob("*/__init__.py"))
)
def test_every_package_says_what_it_holds(package: str) -> None:
    init = ROOT / "sheetgen" / package / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    assert len(doc.splitlines()) >= 3, (
        f"sheetgen/{package}/__init__.py: no docstring of a few lines"
    )
