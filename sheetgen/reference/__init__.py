"""The independent Python implementation of the workbook's math.

One module per derived sheet; each is a pure function of a Scenario that
returns ``{key: value}``.  ``compute`` merges them.  These functions never read
the templates: the workbook and this package share only keys and inputs.
"""

from __future__ import annotations

from functools import lru_cache

from sheetgen.reference.budget import budget
from sheetgen.reference.budget_range import budget_range
from sheetgen.reference.checks import checks
from sheetgen.reference.clock import clock
from sheetgen.reference.finetune import finetune
from sheetgen.reference.flops import flops, mfu_from_throughput, throughput_from_mfu
from sheetgen.reference.hardware_compare import hardware_compare
from sheetgen.reference.inference import inference
from sheetgen.reference.inputs import KeyValues, inputs
from sheetgen.reference.kv_cache import kv_cache
from sheetgen.reference.memory import memory
from sheetgen.reference.months import months
from sheetgen.reference.parallelism_sheet import parallelism
from sheetgen.reference.params import params
from sheetgen.reference.phases import phases
from sheetgen.reference.scaling import scaling
from sheetgen.reference.schedule import schedule
from sheetgen.reference.serving import serving
from sheetgen.reference.sweeps import sweeps
from sheetgen.scenarios.scenario import Scenario

SECTIONS = {
    "inputs": inputs,
    "params": lambda s: params(s.model),
    "finetune": finetune,
    "memory": memory,
    "flops": flops,
    "scaling": scaling,
    "clock": clock,
    "kv_cache": kv_cache,
    "inference": inference,
    "serving": serving,
    "schedule": schedule,
    "parallelism": parallelism,
    "phases": phases,
    "budget": budget,
    "budget_range": budget_range,
    "months": months,
    "sweeps": sweeps,
    "checks": checks,
}


def compute(s: Scenario) -> KeyValues:
    """Every input and derived key of one scenario (a fresh dict the caller may change).

    Scenarios are frozen, so each distinct one is computed once per process: the
    workbook's cached values and ``generate``'s summary share one computation.
    """
    # The Hardware sheet also depends on the accelerators listed beside the scenario
    # (``Tables.hardware``, not part of a scenario's identity): computed apart.
    return {**_compute(s), **hardware_compare(s)}


@lru_cache(maxsize=1024)
def _compute(s: Scenario) -> KeyValues:
    out: KeyValues = {}
    for name, fn in SECTIONS.items():
        part = fn(s)
        clash = set(part) & set(out)
        if clash:
            raise RuntimeError(f"keys defined twice ({name}): {sorted(clash)}")
        out.update(part)
    return out


__all__ = [
    "budget",
    "budget_range",
    "compute",
    "checks",
    "finetune",
    "flops",
    "hardware_compare",
    "inference",
    "inputs",
    "kv_cache",
    "memory",
    "mfu_from_throughput",
    "months",
    "parallelism",
    "params",
    "scaling",
    "phases",
    "schedule",
    "serving",
    "sweeps",
    "throughput_from_mfu",
]
