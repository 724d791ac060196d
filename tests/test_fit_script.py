"""benchmarks/fit_throughput.py, the script the step-time model's free parameters
name as their source: it evaluates exactly what `sheetgen benchmark-check` does, and
its descent never ends worse than where it started."""

from __future__ import annotations

import pytest
from helpers import benchmark_script

from sheetgen.calibration import benchmarks


@pytest.fixture(scope="module")
def fit_script():
    return benchmark_script("fit_throughput")


def test_the_script_with_the_shipped_values_predicts_what_benchmark_check_prints(
    fit_script,
) -> None:
    rows = fit_script.calibration_rows(benchmarks.load())
    assert {b.role for b in rows} == {"fit", "check"}
    got = fit_script._evaluate(fit_script.shipped_params(), rows)
    for b, r in zip(rows, got, strict=True):
        want = benchmarks.evaluate(b)
        assert r.predicted_tps == pytest.approx(want.predicted_tps, rel=1e-12), (
            f"{b.id}: the fit script predicts {r.predicted_tps:.6g} tokens/s/GPU, "
            f"benchmark-check {want.predicted_tps:.6g}"
        )
        assert r.fits == want.fits, b.id


def test_the_descent_never_ends_above_its_start(fit_script) -> None:
    fit = [b for b in benchmarks.load() if b.role == "fit"]
    start = fit_script.shipped_params()
    before = fit_script.loss(fit_script._evaluate(start, fit))
    after, params = fit_script.descend(dict(start), fit)
    assert after <= before
    assert after == pytest.approx(fit_script.loss(fit_script._evaluate(params, fit)))
    for k, v in params.items():
        lo, hi = fit_script.BOUNDS[k.split(".")[-1]]
        assert lo <= v <= hi, f"{k} = {v} outside its bounds [{lo}, {hi}]"
