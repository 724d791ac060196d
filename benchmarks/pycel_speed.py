"""Time `recalc_pycel` before and after compiling formulas by shape, side by side.

Run:  python benchmarks/pycel_speed.py [--scenarios N]

Writes two workbooks without cached values, as the test matrices are written
(`cache_values=False`, so pycel's plain path has to evaluate every formula
too): the default scenario file (`sheetgen generate`'s workbook) and a larger
matrix of N scenarios (default 13, the size of tests/test_workbook.py's
matrix). For each it times, in this one process:

* old: ``recalc_pycel(path, plain=True)``, pycel as sheetgen used it before
  (its own loader, every formula parsed and compiled by pycel);
* new, cold: ``recalc_pycel(path)`` (the file read once, each formula shape
  compiled once, the cycle collector paused) with no formula shape known yet;
* new, warm: the same again, the shapes known (as in a test process that
  recalculates several workbooks);

prints the seconds and old / new, and checks that every cell's value is the
same in the three (same type, equal; NaN equals NaN). Exits 1 on a difference.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_generate import scenarios  # noqa: E402

from sheetgen.engines import pycel_fast  # noqa: E402
from sheetgen.engines.inprocess import recalc_pycel  # noqa: E402
from sheetgen.scenarios.files import default_scenario_path, load_scenarios  # noqa: E402
from sheetgen.workbook import write_workbook  # noqa: E402


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def differences(old: dict, new: dict) -> list[str]:
    keys = set(old) | set(new)
    return sorted(
        f"{k}: {old.get(k, '<missing>')!r} != {new.get(k, '<missing>')!r}"
        for k in keys
        if k not in old or k not in new or not same(old[k], new[k])
    )


def timed(fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def compare(name: str, path: Path) -> bool:
    old_s, old = timed(lambda: recalc_pycel(path, plain=True))
    pycel_fast.clear()
    before = pycel_fast.stats()
    cold_s, cold = timed(lambda: recalc_pycel(path))
    after = pycel_fast.stats()
    warm_s, warm = timed(lambda: recalc_pycel(path))
    templated = after["templated"] - before["templated"]
    shapes = after["plain"] - before["plain"]
    bad = differences(old, cold) + differences(old, warm)
    print(
        f"{name:<34}{len(old):>7} cells {templated + shapes:>6} formulas {shapes:>5} shapes\n"
        f"  old {old_s:7.2f} s   new cold {cold_s:6.2f} s ({old_s / cold_s:4.1f}x)"
        f"   new warm {warm_s:6.2f} s ({old_s / warm_s:4.1f}x)   "
        + ("every cell identical" if not bad else f"{len(bad)} DIFFERENT")
    )
    for line in bad[:20]:
        print("   ", line)
    return not bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=13)
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        default = write_workbook(
            load_scenarios(default_scenario_path()), Path(tmp) / "default.xlsx", cache_values=False
        )
        ok &= compare("default workbook", default)
        matrix = write_workbook(
            scenarios(args.scenarios), Path(tmp) / "matrix.xlsx", cache_values=False
        )
        ok &= compare(f"matrix, {args.scenarios} scenarios", matrix)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
