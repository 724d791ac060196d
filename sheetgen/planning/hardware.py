"""``sheetgen advise --hardware all``: the layout search on every accelerator preset
(shipped and a team's own), their best plans ranked together on the same clock.

Each accelerator is searched as ``advise`` searches one (``advise.search``: the
Summary's ``plan_days_wall`` and ``cost_total_usd`` on the layout clock, the price the
scenario gives or the preset carries); each one's best plan is then ranked by the same
goal (fewest days, then cost, then GPUs; with a deadline the cheapest first), each
naming its accelerator, so the table compares accelerators, not one chip's variants.
An accelerator that refuses the run settings is counted among the rejections with its
reason, not an error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sheetgen.errors import SheetgenError
from sheetgen.planning.advise import Goal, Search, search

ALL = "all"


def search_all_hardware(
    make_base: Callable[[str], Any],
    hardware_ids: list[str],
    goal: Goal,
    top: int = 5,
    progress: Callable[[int, int], None] | None = None,
) -> Search:
    """Search every accelerator in ``hardware_ids`` (``make_base(id)`` builds the scenario
    on it) and keep the best plan of each, the ``top`` best of those first."""
    merged = Search(goal=goal, accelerators=tuple(hardware_ids))
    counts: set[int] = set()
    for k, hw_id in enumerate(hardware_ids):
        try:
            base = make_base(hw_id)
        except SheetgenError as e:
            merged.rejected[f"{hw_id}: {e.message}"] += 1
            continue
        found = search(
            base, goal, top=1, progress=_overall(progress, merged, len(hardware_ids) - k)
        )
        counts.update(found.gpu_counts)
        merged.plans.extend(found.plans)
        merged.candidates += found.candidates
        merged.fitting += found.fitting
        merged.rejected.update(found.rejected)
        merged.seconds += found.seconds
    merged.gpu_counts = tuple(sorted(counts))
    merged.plans.sort(
        key=lambda p: (
            *goal.rank_key(p.days, p.cost, p.scenario.run.n_gpus),
            p.values["mem_total_per_gpu"],
        )
    )
    del merged.plans[top:]
    return merged


def _overall(progress: Callable[[int, int], None] | None, merged: Search, left: int) -> Any:
    """One progress bar over every accelerator: layouts done so far of an estimate of all
    (this search's count for each accelerator left)."""
    if progress is None:
        return None
    before = merged.candidates

    def show(done: int, total: int) -> None:
        progress(before + done, before + total * left)

    return show
