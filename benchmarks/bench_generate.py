"""Time `generate` for 1, 10 and 100 scenarios, and a LibreOffice recalculation.

Run:  python benchmarks/bench_generate.py [--repeat N] [--no-libreoffice]
Prints wall-clock figures; nothing here is asserted anywhere.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import time
from pathlib import Path

from sheetgen import presets
from sheetgen.recalc import libreoffice_available, recalc_formulas, values_libreoffice
from sheetgen.scenario_file import scenario_from_dict
from sheetgen.workbook import write_workbook


def scenarios(n: int) -> list:
    models = itertools.cycle(presets.models())
    hardware = itertools.cycle(["h100-sxm", "h200", "b200", "mi300x", "a100-80gb"])
    return [
        scenario_from_dict(
            {
                "name": f"S{i + 1}",
                "model": next(models),
                "hardware": next(hardware),
                "n_gpus": 8 * (1 + i % 16),
                "seq_len": [2048, 4096, 8192][i % 3],
            },
            i + 1,
        )
        for i in range(n)
    ]


def timed(fn, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-libreoffice", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'what':<44}{'median s':>10}{'min s':>10}")
        paths = {}
        for n in (1, 10, 100):
            sc = scenarios(n)
            path = Path(tmp) / f"bench{n}.xlsx"
            paths[n] = path
            med, best = timed(
                lambda sc=sc, path=path: write_workbook(sc, path, force=True), args.repeat
            )
            print(f"{f'generate, {n} scenarios':<44}{med:>10.3f}{best:>10.3f}")
        for n in (1, 10, 100):
            med, best = timed(lambda n=n: recalc_formulas(paths[n]), 1)
            print(f"{f'formulas engine recalc, {n} scenarios':<44}{med:>10.3f}{best:>10.3f}")
        if args.no_libreoffice or not libreoffice_available():
            print("LibreOffice: skipped")
            return
        for n in (1, 10, 100):
            med, best = timed(lambda n=n: values_libreoffice(paths[n], timeout=600), args.repeat)
            print(f"{f'LibreOffice recalc + read, {n} scenarios':<44}{med:>10.3f}{best:>10.3f}")


if __name__ == "__main__":
    main()
