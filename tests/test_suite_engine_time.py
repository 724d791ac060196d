"""benchmarks/suite_engine_time.py, the measurement behind docs/DESIGN.md's "where the
time goes": its report adds the engine calls up per engine and per module, counts a
repeated recalculation of the same bytes in the same engine, and divides by the cores."""

from __future__ import annotations

import json

from helpers import benchmark_script


def test_report_sums_engines_modules_and_repeats() -> None:
    calls = [
        ("libreoffice xlsx", "aa", 4.0, "tests/test_a.py::t1"),
        ("libreoffice xlsx", "aa", 3.0, "tests/test_a.py::t2"),  # the same bytes again
        ("libreoffice xlsx", "bb", 5.0, "tests/test_b.py::t1"),
        ("pycel", "aa", 2.0, "tests/test_b.py::t1"),  # same bytes, another engine
    ]
    log = [json.dumps({"kind": k, "hash": h, "seconds": s, "test": t}) for k, h, s, t in calls]
    durations = "\n".join(
        ["8.00s call     tests/test_a.py::t1", "2.00s setup    tests/test_a.py::t2",
         "10.00s call     tests/test_b.py::t1", "0.50s teardown tests/test_c.py::t9"]
    )  # fmt: skip
    out = benchmark_script("suite_engine_time").report(log, durations, wall=12.0, cores=2)
    assert "summed test durations 20 s" in out
    assert "engine calls 4, 14 s (68% of the summed durations)" in out
    assert "libreoffice xlsx        3 calls    12.0 s" in out
    assert "pycel                   1 calls     2.0 s" in out
    assert "already recalculated in that engine: 3 s" in out
    assert "at least 7 s of wall time; the other work 3 s" in out
    assert "tests/test_b.py" in out and "(7.0 s engine)" in out
