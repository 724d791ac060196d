"""The default workbook recalculated by engines sheetgen does not ship: IronCalc,
and Formualizer; the cells each gets wrong.

Usage: python benchmarks/other_engines.py [--sheet Hardware] [--show N]

Writes the default workbook (presets/scenarios/default.yaml) without cached values,
lets each engine recalculate it and save the values it computed, reads them back
with sheetgen's own reader and compares every cell with the reference
(``sheetgen.reference.compute``).  Prints, per engine and sheet, the cells that
differ, and the first few of them.  The engines are optional packages
(``pip install ironcalc formualizer``); one that is not installed is reported as
such, not counted.  Apache POI is not among them: Debian's libapache-poi-java 4.0.1
opens no .xlsx (README, tests/test_other_writers.py) and poi-ooxml 5.x is not
installable here.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any


def _ironcalc(src: Path, out: Path) -> None:
    import ironcalc

    model = ironcalc.load_from_xlsx(str(src), "en", "UTC")
    model.evaluate()
    model.save_to_xlsx(str(out))


def _formualizer(src: Path, out: Path) -> None:
    import formualizer

    formualizer.recalculate_file(str(src), str(out))


def _same(got: Any, want: Any) -> bool:
    if isinstance(want, str) or isinstance(got, str):
        return str(got) == str(want)
    if got is None:
        return False
    if want == 0:
        return abs(got) <= 1e-12
    return math.isclose(got, want, rel_tol=1e-9)


def wrong_cells(values: dict, reference: dict) -> list[tuple[str, str, str, Any, Any]]:
    """(sheet, key, scenario, engine's value, reference) for every cell that differs."""
    out = []
    for (sheet, key, scen), got in sorted(values.items(), key=lambda kv: str(kv[0])):
        want = reference.get(scen, {}).get(key)
        if want is None:
            continue
        if not _same(got, want):
            out.append((sheet, key, scen, got, want))
    return out


def main() -> None:
    from sheetgen.engines.common import read_values
    from sheetgen.reference import compute
    from sheetgen.scenarios.files import default_scenario_path, load_scenarios
    from sheetgen.workbook import write_workbook

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sheet", default="", help="only this sheet (default: every sheet)")
    ap.add_argument("--show", type=int, default=5, help="wrong cells printed per engine")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp())
    scenarios = load_scenarios(default_scenario_path())
    src = write_workbook(scenarios, folder / "default.xlsx", cache_values=False)
    reference = {s.name: compute(s) for s in scenarios}
    engines: dict[str, Any] = {"ironcalc": _ironcalc, "formualizer": _formualizer}
    for name, run in engines.items():
        out = folder / f"{name}.xlsx"
        try:
            run(src, out)
        except ImportError:
            print(f"{name}: not installed")
            continue
        values = read_values(out)
        if args.sheet:
            values = {k: v for k, v in values.items() if k[0] == args.sheet}
        wrong = wrong_cells(values, reference)
        by_sheet = Counter(w[0] for w in wrong)
        sheets = ", ".join(f"{s} {n}" for s, n in by_sheet.most_common()) or "none"
        print(f"{name}: {len(wrong)} of {len(values)} cells wrong ({sheets})")
        for sheet, key, scen, got, want in wrong[: args.show]:
            print(f"  {sheet} {key} [{scen}]: {got!r}, reference {want!r}")


if __name__ == "__main__":
    main()
