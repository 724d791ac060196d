"""How much of the test suite's time is spreadsheet-engine work (issue 25's 4-minute target).

Runs the suite (pytest, its default options: every CPU through pytest-xdist) with this
file as a pytest plugin that times every engine call the tests make in-process:
LibreOffice conversions (recalculation and PDF export), Gnumeric, pycel and formulas.
Then prints the suite's wall time, the summed test durations, the engine seconds per
engine and per test module, the seconds spent recalculating a workbook some test had
already recalculated byte for byte in the same engine, and the wall time the engine work
alone needs on this machine's cores.

    python benchmarks/suite_engine_time.py [extra pytest arguments]

Engine calls made by a ``sheetgen`` subprocess that a test starts are not timed (a few
tests run the CLI in a child process); the figures are a lower bound on engine time.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOG_ENV = "SHEETGEN_ENGINE_LOG"
ROOT = Path(__file__).resolve().parent.parent


# --- the plugin (loaded in pytest and in every xdist worker) -------------------------


def _digest(src: object) -> str:
    try:
        return hashlib.sha256(Path(str(src)).read_bytes()).hexdigest()[:16]
    except OSError:
        return "?"


def _record(log: str, kind: str, digest: str, started: float) -> None:
    entry = {
        "kind": kind,
        "hash": digest,
        "seconds": time.perf_counter() - started,
        "test": os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0],
    }
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def _timed(log: str, kind: str, fn):
    @functools.wraps(fn)
    def inner(src, *args, **kwargs):
        started, digest = time.perf_counter(), _digest(src)
        try:
            return fn(src, *args, **kwargs)
        finally:
            _record(log, kind, digest, started)

    return inner


def _timed_conversion(log: str, converted):
    """``libreoffice.converted`` is a context manager: time it up to its ``yield``."""
    plain = converted.__wrapped__

    @contextlib.contextmanager
    def inner(src, convert_to, *args, **kwargs):
        started, digest = time.perf_counter(), _digest(src)
        with contextlib.contextmanager(plain)(src, convert_to, *args, **kwargs) as out:
            _record(log, "libreoffice " + convert_to.split(":")[0], digest, started)
            yield out

    return inner


def install(log: str) -> None:
    """Replace each engine entry point, wherever a sheetgen module holds it."""
    import importlib
    import pkgutil

    import sheetgen
    from sheetgen.engines import gnumeric, inprocess, libreoffice

    for info in pkgutil.walk_packages(sheetgen.__path__, "sheetgen."):
        if not info.name.endswith("__main__"):  # that one runs the CLI
            importlib.import_module(info.name)
    swaps = {
        libreoffice.converted: _timed_conversion(log, libreoffice.converted),
        gnumeric.values_gnumeric: _timed(log, "gnumeric", gnumeric.values_gnumeric),
        inprocess.recalc_pycel: _timed(log, "pycel", inprocess.recalc_pycel),
        inprocess.recalc_formulas: _timed(log, "formulas", inprocess.recalc_formulas),
    }
    for name, module in list(sys.modules.items()):
        if name == "sheetgen" or name.startswith("sheetgen."):
            for attr, value in list(vars(module).items()):
                with contextlib.suppress(TypeError):  # an unhashable value
                    if value in swaps:
                        setattr(module, attr, swaps[value])


def pytest_configure(config) -> None:
    log = os.environ.get(LOG_ENV)
    if log:
        install(log)


# --- the report ----------------------------------------------------------------------

DURATION = re.compile(r"^([\d.]+)s (?:call|setup|teardown)\s+(\S+)")


def report(log_lines: list[str], pytest_out: str, wall: float, cores: int) -> str:
    calls = [json.loads(line) for line in log_lines if line.strip()]
    tests = collections.Counter()
    for line in pytest_out.splitlines():
        m = DURATION.match(line)
        if m:
            tests[m.group(2).split("::")[0]] += float(m.group(1))
    per_engine: dict[str, list[float]] = collections.defaultdict(list)
    per_module = collections.Counter()
    seen: set[tuple[str, str]] = set()
    repeated = 0.0
    for c in calls:
        per_engine[c["kind"]].append(c["seconds"])
        per_module[c["test"].split("::")[0]] += c["seconds"]
        key = (c["kind"], c["hash"])
        if key in seen and c["hash"] != "?":
            repeated += c["seconds"]
        seen.add(key)
    engine = sum(c["seconds"] for c in calls)
    summed = sum(tests.values())
    out = [
        f"suite wall time {wall:.0f} s on {cores} cores; summed test durations {summed:.0f} s",
        f"engine calls {len(calls)}, {engine:.0f} s ({engine / summed:.0%} of the summed durations)"
        if summed
        else f"engine calls {len(calls)}, {engine:.0f} s",
    ]
    for kind, secs in sorted(per_engine.items(), key=lambda kv: -sum(kv[1])):
        out.append(f"  {kind:20s} {len(secs):4d} calls {sum(secs):7.1f} s")
    out.append(f"recalculating a workbook already recalculated in that engine: {repeated:.0f} s")
    out.append(
        f"engine work alone on {cores} cores: at least {engine / cores:.0f} s of wall time; "
        f"the other work {max(summed - engine, 0) / cores:.0f} s"
    )
    out.append("modules, summed durations (engine seconds):")
    for module, secs in tests.most_common(15):
        out.append(f"  {module:45s} {secs:7.1f} s ({per_module.get(module, 0.0):.1f} s engine)")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="sheetgen-engine-time-") as tmp:
        log = Path(tmp) / "engine-calls.jsonl"
        log.touch()
        env = dict(os.environ)
        env[LOG_ENV] = str(log)
        here = str(Path(__file__).resolve().parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        cmd += ["-p", Path(__file__).stem, "--durations=0", *argv]
        started = time.perf_counter()
        run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        print(run.stdout.strip().splitlines()[-1] if run.stdout.strip() else "(no output)")
        print(report(log.read_text().splitlines(), run.stdout, wall, os.cpu_count() or 1))
        return run.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
