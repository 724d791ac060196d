"""Comparison helpers shared by the workbook tests."""

from __future__ import annotations

import math
from typing import Any

REL = 1e-9


def is_error(value: Any) -> bool:
    return isinstance(value, str) and (value.startswith("#") or value.startswith("Err:"))


def same(actual: Any, expected: Any, rel: float = REL) -> bool:
    if isinstance(expected, str):
        return actual == expected
    if isinstance(actual, bool) or not isinstance(actual, (int, float)):
        return False
    if expected == 0:
        return abs(actual) <= 1e-12
    return math.isclose(actual, expected, rel_tol=rel)


def mismatches(
    values: dict[tuple[str, str, str], Any],
    reference: dict[str, dict[str, Any]],
    scenarios: list[str] | None = None,
) -> list[str]:
    """Lines 'sheet key [scenario]: workbook=… reference=… (rel diff …)' for every disagreement.

    Also reports reference keys with no workbook cell and workbook cells with no
    reference value.
    """
    out = []
    names = scenarios or list(reference)
    seen: set[tuple[str, str]] = set()
    for (sheet, key, scen), v in sorted(values.items(), key=lambda kv: str(kv[0])):
        if scen not in names:
            continue
        seen.add((key, scen))
        if key not in reference[scen]:
            out.append(f"{sheet} {key} [{scen}]: workbook row has no reference value")
            continue
        r = reference[scen][key]
        if not same(v, r):
            diff = ""
            if isinstance(v, (int, float)) and isinstance(r, (int, float)) and r:
                diff = f" (rel diff {(v - r) / r:+.3e})"
            out.append(f"{sheet} {key} [{scen}]: workbook={v!r} reference={r!r}{diff}")
    for scen in names:
        for key in reference[scen]:
            if (key, scen) not in seen:
                out.append(f"{key} [{scen}]: reference key has no workbook row")
    return out


def build_matrix(folder, items: list[dict], stem: str):
    """Write ``items`` as a scenario file, load it, and generate its workbook without
    cached values.  Returns (workbook path, scenarios, {name: reference values})."""
    import yaml

    from sheetgen.reference import compute
    from sheetgen.scenarios.files import load_scenarios
    from sheetgen.workbook import write_workbook

    spec = folder / f"{stem}.yaml"
    spec.write_text(yaml.safe_dump({"scenarios": items}, sort_keys=False))
    scenarios = load_scenarios(spec)
    path = write_workbook(scenarios, folder / f"{stem}.xlsx", cache_values=False)
    return path, scenarios, {s.name: compute(s) for s in scenarios}


def libreoffice_values(path):
    """LibreOffice-recalculated values of ``path``; skips (or fails in CI) without LibreOffice."""
    from conftest import require_libreoffice

    from sheetgen.checking.recalc import values_libreoffice

    require_libreoffice()
    return values_libreoffice(path, timeout=240)


def gnumeric_values(path):
    """Gnumeric-recalculated values of ``path``; skips (or fails in CI) without ssconvert."""
    from conftest import require_gnumeric

    from sheetgen.checking.recalc import values_gnumeric

    require_gnumeric()
    return values_gnumeric(path, timeout=240)


def calc(name: str, **settings: Any) -> dict[str, Any]:
    """Every reference key of one scenario (hardware defaults to h100-sxm);
    ``_scenario`` names the scenario in assertion messages."""
    from sheetgen.reference import compute
    from sheetgen.scenarios.files import scenario_from_dict

    settings.setdefault("hardware", "h100-sxm")
    r = dict(compute(scenario_from_dict({"name": name, **settings})))
    r["_scenario"] = name
    return r


def expect(
    r: dict[str, Any], key: str, expected: float, what: str = "expected", **tol: float
) -> None:
    """Assert one key of one scenario at the given tolerance, naming both in the message."""
    import pytest

    got = r[key]
    assert got == pytest.approx(expected, **tol), (
        f"{r['_scenario']}: {key}={got!r}, {what} {expected!r} ({tol})"
    )


def benchmark_script(name: str) -> Any:
    """The script ``benchmarks/<name>.py`` loaded as a module (benchmarks/ is no package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
