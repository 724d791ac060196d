"""Issue 26.9: lower bounds and cross-field limits, so that no input divides by
(nearly) zero or gives an estimate of millions of days beside an OK verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hostile_helpers import BASE, one_line

from sheetgen.scenarios.files import scenario_from_dict
from sheetgen.scenarios.limits import HARDWARE_LOWEST, ZERO_OR_AT_LEAST
from sheetgen.scenarios.run_fields import RUN_DEFAULTS

# --- measured calibration: 0 or at least the bound --------------------------------


@pytest.mark.parametrize("value", ["1e-300", "1e-320", "5e-324", "half the bound"])
@pytest.mark.parametrize("key", sorted(ZERO_OR_AT_LEAST))
def test_tiny_measured_values_are_refused(key: str, value: str) -> None:
    flag = "--" + key.replace("_", "-")
    if value == "half the bound":
        value = repr(ZERO_OR_AT_LEAST[key][0] / 2)
    one_line(["compute", *BASE, flag, value], expect=f"{flag}: must be 0 or at least")


# Settings that were accepted down to 5e-324 before they had a lowest value other than 0
# (a price of 1e-320 made a workbook that failed its own check; 1e-300 requests/s showed
# #NUM!; 5e-324 divided by zero).
TINY_BEFORE = [
    "price_per_gpu_hour",
    "price_per_gpu_hour_reserved",
    "serve_price_per_gpu_hour",
    "electricity_price_per_kwh",
    "serve_requests_per_s",
    "inf_collective_latency_s",
    "contingency",
    "chinchilla_e",
    "mem_headroom",
    "goodput_range",
]


@pytest.mark.parametrize("key", TINY_BEFORE)
def test_settings_that_took_subnormals_have_a_lowest_value(key: str) -> None:
    assert key in ZERO_OR_AT_LEAST
    flag = "--" + key.replace("_", "-")
    one_line(["compute", *BASE, flag, "1e-320"], expect=f"{flag}: must be 0 or at least")


@pytest.mark.parametrize("key", ["slo_ttft_s", "slo_tpot_s", "serve_hours_per_month"])
def test_tiny_positive_serving_times_are_refused(key: str) -> None:
    flag = "--" + key.replace("_", "-")
    one_line(["compute", *BASE, flag, "1e-300"], expect=f"{flag}: must be from")


# --- Chinchilla's constants: within limits that keep every formula finite ---------

CHINCHILLA_FLAGS = ["--chinchilla-a", "--chinchilla-b", "--chinchilla-alpha", "--chinchilla-beta"]


@pytest.mark.parametrize("value", ["1e-300", "1e-200", "1e-320", "5e-324", "1e300"])
@pytest.mark.parametrize("flag", CHINCHILLA_FLAGS)
def test_chinchilla_constants_out_of_range_are_one_line(flag: str, value: str) -> None:
    one_line(["compute", *BASE, flag, value], expect=f"{flag}: must be from")


def test_chinchilla_constant_out_of_range_in_advise_and_yaml(tmp_path: Path) -> None:
    one_line(
        ["advise", *BASE, "--gpus", "64", "--tokens", "1T", "--chinchilla-b", "1e-250"],
        expect="--chinchilla-b: must be from",
    )
    item = {"name": "c", "model": "llama3-8b", "hardware": "h100-sxm", "chinchilla_alpha": 1e-300}
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({"scenarios": [item]}))
    one_line(["compute", str(spec)], expect="chinchilla_alpha: must be from")


@pytest.mark.parametrize("exponents", [(0.05, 0.05), (0.05, 2), (2, 0.05), (2, 2)])
@pytest.mark.parametrize("scales", [(1e-3, 1e6), (1e6, 1e-3), (1e-3, 1e-3), (1e6, 1e6)])
@pytest.mark.parametrize("run", [(1, "llama3-405b", 8), (10**17, "llama3-8b", 10**7)])
def test_chinchilla_limits_keep_the_scaling_finite(exponents, scales, run) -> None:
    """Every corner of the limits, at the smallest and largest plans: finite numbers."""
    import math

    from sheetgen.reference.scaling import scaling
    from sheetgen.scenarios.run_fields import FIELD

    assert (FIELD["chinchilla_alpha"].limit[0], FIELD["chinchilla_a"].limit[:2]) == (
        0.05,
        (1e-3, 10**6),
    )
    tokens, model, gpus = run
    item = {"name": "c", "model": model, "hardware": "h100-sxm", "train_tokens": tokens}
    item |= {"n_gpus": gpus, "chinchilla_e": 100}
    item |= dict(zip(["chinchilla_a", "chinchilla_b"], scales, strict=True))
    item |= dict(zip(["chinchilla_alpha", "chinchilla_beta"], exponents, strict=True))
    out = scaling(scenario_from_dict(item))
    numbers = [v for v in out.values() if isinstance(v, float)]
    assert numbers and all(math.isfinite(v) and abs(v) < 1e300 for v in numbers), out


@pytest.mark.parametrize("key", sorted(ZERO_OR_AT_LEAST))
def test_measured_zero_and_the_bound_itself_are_accepted(key: str) -> None:
    low = ZERO_OR_AT_LEAST[key][0]
    for value in (0, low):
        item = {"name": "m", "model": "llama3-8b", "hardware": "h100-sxm", key: value}
        assert getattr(scenario_from_dict(item).run, key) == value


# --- hardware: no link or chip below the bound --------------------------------------


@pytest.mark.parametrize("key", sorted(HARDWARE_LOWEST))
def test_tiny_hardware_values_are_refused(key: str, tmp_path: Path) -> None:
    item = {"name": "h", "model": "llama3-8b", "hardware": {"base": "h100-sxm", key: 1e-300}}
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({"scenarios": [item]}))
    one_line(["compute", str(spec)], expect=f"hardware.{key}: must be 0 or at least")


# --- pp_microbatches against the batch -----------------------------------------------


def _per_replica(**run) -> int:
    s = {**RUN_DEFAULTS, **run}
    dp = s["n_gpus"] // (s.get("tp") or 1) // (s.get("pp") or 1) // (s.get("cp") or 1)
    return s["global_batch_tokens"] // (s["seq_len"] * s["micro_batch"] * dp)


PP_CASES = {
    "1e9 on 1,024 sequences": {"pp_microbatches": "1e9", "n_gpus": 1},
    "one above the batch": {"pp_microbatches": _per_replica(n_gpus=8) + 1, "n_gpus": 8},
    "pp 4 with 1e6": {"pp_microbatches": 10**6, "n_gpus": 64, "pp": 4},
}


@pytest.mark.parametrize("case", PP_CASES)
def test_more_microbatches_than_the_batch_holds_are_refused(case: str) -> None:
    args = ["compute", *BASE]
    for key, value in PP_CASES[case].items():
        args += ["--" + key.replace("_", "-"), str(value)]
    one_line(args, expect="--pp-microbatches")


def test_microbatches_equal_to_the_batch_are_accepted() -> None:
    n = _per_replica(n_gpus=8)
    item = {"name": "p", "model": "llama3-8b", "hardware": "h100-sxm", "pp_microbatches": n}
    assert scenario_from_dict(item).run.pp_microbatches == n
