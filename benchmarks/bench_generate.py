"""Time `generate` against the bare-openpyxl floor, and the engines' recalculation.

Run:  python benchmarks/bench_generate.py [--repeat N] [--no-engines] [--ratio-only]

0. `sheetgen --help` (wall and CPU time of the process).
1. `sheetgen generate` for the default workbook and for 100 scenarios, each
   against ``openpyxl_floor.py`` writing the same cell values and formulas with
   openpyxl alone. Both run as fresh processes (interpreter start and imports
   included), alternately, ``--repeat`` times; the figures are medians of the
   child processes' CPU time (user + system) and wall time, and the ratio is
   generate / floor (issue 42's target: <= 1.3 for both; ``--ratio-only`` stops
   after these two lines). The children run with bytecode
   caching on (``PYTHONDONTWRITEBYTECODE`` removed, ``PYTHONPYCACHEPREFIX`` a
   temporary folder, one warm-up run each), as an installed sheetgen runs:
   ``pip install`` compiles its modules, and without that every run would
   compile sheetgen's source again while the one-file floor compiles next to
   nothing.
2. In-process `write_workbook` for 1, 10 and 100 scenarios.
3. Recalculation of those workbooks by each available engine.

Prints figures; nothing here is asserted anywhere.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from sheetgen.catalog import presets
from sheetgen.scenarios.files import default_scenario_path, scenario_from_dict
from sheetgen.workbook import write_workbook

HERE = Path(__file__).resolve().parent
TARGET_RATIO = 1.3  # issue 42: generate within 1.3x the floor's CPU
ROOT = HERE.parent


def scenario_items(n: int) -> list[dict]:
    models = itertools.cycle(presets.models())
    hardware = itertools.cycle(["h100-sxm", "h200", "b200", "mi300x", "a100-80gb"])
    return [
        {
            "name": f"S{i + 1}",
            "model": next(models),
            "hardware": next(hardware),
            "n_gpus": 8 * (1 + i % 16),
            "seq_len": [2048, 4096, 8192][i % 3],
        }
        for i in range(n)
    ]


def scenarios(n: int) -> list:
    return [scenario_from_dict(item, i + 1) for i, item in enumerate(scenario_items(n))]


def timed(fn, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


CHILD_ENV = dict(os.environ)


def run_child(cmd: list[str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=CHILD_ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def cell_dump(workbook: Path, target: Path) -> int:
    """Every non-empty cell of ``workbook`` (formulas as text) as JSON; the cell count."""
    import datetime as dt
    import warnings

    import openpyxl

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wb = openpyxl.load_workbook(workbook)
    sheets, count = [], 0
    for ws in wb.worksheets:
        cells = []
        for row in ws.iter_rows():
            for c in row:
                v = c.value
                if v is None:
                    continue
                if isinstance(v, (dt.datetime, dt.date)):
                    v = {"date": v.isoformat()}
                cells.append([c.row, c.column, v])
        sheets.append([ws.title, cells])
        count += len(cells)
    target.write_text(json.dumps(sheets), encoding="utf-8")
    return count


def against_floor(name: str, spec: Path, tmp: Path, repeat: int) -> float:
    """Print generate's CPU and wall time against the floor's; return the CPU ratio."""
    out = tmp / f"{spec.stem}.xlsx"
    generate = [
        sys.executable,
        "-m",
        "sheetgen.cli.commands",
        "generate",
        str(spec),
        "-o",
        str(out),
    ]
    subprocess.run([*generate, "--force"], check=True, stdout=subprocess.DEVNULL, env=CHILD_ENV)
    dump = tmp / f"{spec.stem}.cells.json"
    n_cells = cell_dump(out, dump)
    floor = [sys.executable, str(HERE / "openpyxl_floor.py"), str(dump), str(tmp / "floor.xlsx")]
    run_child(floor)  # warm-up: its bytecode cached too
    gen_cpu, gen_wall, floor_cpu, floor_wall = [], [], [], []
    for _ in range(repeat):
        cpu, wall = run_child([*generate, "--force"])
        gen_cpu.append(cpu)
        gen_wall.append(wall)
        cpu, wall = run_child(floor)
        floor_cpu.append(cpu)
        floor_wall.append(wall)
    g, f = statistics.median(gen_cpu), statistics.median(floor_cpu)
    gw, fw = statistics.median(gen_wall), statistics.median(floor_wall)
    print(
        f"{name:<28}{n_cells:>8,} cells  generate {g:6.2f} s CPU ({gw:5.2f} s wall)  "
        f"floor {f:6.2f} s CPU ({fw:5.2f} s wall)  ratio {g / f:4.2f} (wall {gw / fw:4.2f})"
    )
    return g / f


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-engines", action="store_true")
    parser.add_argument(
        "--ratio-only", action="store_true", help="only generate vs the floor (CPU ratios)"
    )
    args = parser.parse_args()
    os.chdir(ROOT)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        run_child([sys.executable, "-m", "sheetgen.cli.commands", "--help"])  # warm-up
        spec100 = tmp / "hundred.yaml"
        spec100.write_text(yaml.safe_dump({"scenarios": scenario_items(100)}, sort_keys=False))
        helps = [
            run_child([sys.executable, "-m", "sheetgen.cli.commands", "--help"]) for _ in range(5)
        ]
        print(
            f"sheetgen --help: {statistics.median(w for _, w in helps):.3f} s wall, "
            f"{statistics.median(c for c, _ in helps):.3f} s CPU (median of 5; target < 0.3 s)\n"
        )
        print(f"generate vs the bare-openpyxl floor, medians of {args.repeat} alternating runs")
        ratios = [
            against_floor("default workbook", default_scenario_path(), tmp, args.repeat),
            against_floor("100 scenarios", spec100, tmp, args.repeat),
        ]
        print(
            f"CPU ratio generate / floor: default {ratios[0]:.2f}, 100 scenarios "
            f"{ratios[1]:.2f} (target <= {TARGET_RATIO})"
        )
        if args.ratio_only:
            return

        print(f"\n{'what':<44}{'median s':>10}{'min s':>10}")
        paths = {}
        for n in (1, 10, 100):
            sc = scenarios(n)
            path = tmp / f"bench{n}.xlsx"
            paths[n] = path
            med, best = timed(
                lambda sc=sc, path=path: write_workbook(sc, path, force=True), args.repeat
            )
            print(f"{f'write_workbook, {n} scenarios':<44}{med:>10.3f}{best:>10.3f}")
        if args.no_engines:
            return
        from sheetgen.checking.recalc import engine_available, recalculate

        for engine in ("pycel", "gnumeric", "libreoffice", "formulas"):
            if not engine_available(engine):
                print(f"{engine}: not available, skipped")
                continue
            for n in (1, 10, 100):
                if engine == "formulas" and n == 100:
                    continue  # minutes
                med, best = timed(lambda n=n, e=engine: recalculate(paths[n], e, 600), 1)
                print(f"{f'{engine} recalc + read, {n} scenarios':<44}{med:>10.3f}{best:>10.3f}")


if __name__ == "__main__":
    main()
