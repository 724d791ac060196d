"""Time reading a workbook's inputs back (`sheetgen inputs`, `generate --from`).

Run:  python benchmarks/bench_read_inputs.py [--repeat N] [--scenarios N ...]

For a workbook generated from the first N default-like scenarios, side by side in one
run, alternately, ``--repeat`` times (medians of wall time):

1. ``open_sheets``: the Inputs and Presets sheets only, openpyxl read-only, as typed
   and as last calculated (what ``read_inputs`` opens);
2. two full openpyxl loads of the whole workbook (formulas and cached values: what
   ``read_inputs`` opened before ``open_sheets``, and what ``check`` still opens);
3. ``scenario_results``: the whole read, the scenarios validated included.

Prints figures; nothing here is asserted anywhere.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from sheetgen.readback.opening import open_sheets, open_workbook
from sheetgen.readback.reading import REQUIRED_SHEETS
from sheetgen.readback.scenarios import scenario_results
from sheetgen.scenarios.files import default_scenario_path, load_scenarios
from sheetgen.workbook import write_workbook


def _timed(fn, *args, **kwargs) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def _full_loads(path: Path) -> None:
    open_workbook(path)
    open_workbook(path, data_only=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--scenarios", type=int, nargs="+", default=[1, 3, 12])
    args = parser.parse_args()
    base = load_scenarios(default_scenario_path())
    print(f"{'scenarios':>9} {'open_sheets':>12} {'2 full loads':>13} {'ratio':>6} {'read all':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.scenarios:
            scenarios = [replace(base[i % len(base)], name=f"plan {i + 1}") for i in range(n)]
            path = write_workbook(scenarios, Path(tmp) / f"s{n}.xlsx")
            runs: dict[str, list[float]] = {"sheets": [], "full": [], "all": []}
            for _ in range(args.repeat):
                runs["sheets"].append(_timed(open_sheets, path, REQUIRED_SHEETS))
                runs["full"].append(_timed(_full_loads, path))
                runs["all"].append(_timed(scenario_results, path))
            sheets, full, whole = (statistics.median(runs[k]) for k in ("sheets", "full", "all"))
            print(f"{n:>9} {sheets:>11.3f}s {full:>12.3f}s {sheets / full:>6.2f} {whole:>8.3f}s")


if __name__ == "__main__":
    main()
