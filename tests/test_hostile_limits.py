"""Issue 26.9: lower bounds and cross-field limits, so that no input divides by
(nearly) zero or gives an estimate of millions of days beside an OK verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hostile_helpers import BASE, one_line

from sheetgen.limits import HARDWARE_LOWEST, ZERO_OR_AT_LEAST
from sheetgen.run_fields import RUN_DEFAULTS
from sheetgen.scenario_file import scenario_from_dict

# --- measured calibration: 0 or at least the bound --------------------------------


@pytest.mark.parametrize("value", ["1e-300", "5e-324", "1e-9"])
@pytest.mark.parametrize("key", sorted(ZERO_OR_AT_LEAST))
def test_tiny_measured_values_are_refused(key: str, value: str) -> None:
    flag = "--" + key.replace("_", "-")
    one_line(["compute", *BASE, flag, value], expect=f"{flag}: must be 0 or at least")


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
