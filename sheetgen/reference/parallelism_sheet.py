"""The Parallelism sheet's keys: the layout (``parallelism.layout``) and the keys that
need the Schedule (``parallelism.with_schedule``).

Its own module so that imports run one way: the clock reads the layout's predicted
MFU (``parallelism.predicted``), the Schedule reads the clock, and only this module
reads both the layout and the Schedule.
"""

from __future__ import annotations

from sheetgen.reference.flops import flops
from sheetgen.reference.memory import memory
from sheetgen.reference.parallelism import parallelism_given
from sheetgen.reference.params import params
from sheetgen.reference.schedule import schedule
from sheetgen.scenarios.scenario import Scenario


def parallelism(s: Scenario) -> dict[str, float]:
    """Every key of the Parallelism sheet for ``s``."""
    return parallelism_given(s, params(s.model), memory(s), flops(s), schedule(s))
