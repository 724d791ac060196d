"""Find the multi-GPU layout that fits and finishes first (``sheetgen advise``).

The layouts of one scenario are enumerated, evaluated and ranked at one global batch by
``sheetgen.planning.layout_search`` (its docstring states the search and the ranking).
The global batch (``Goal.search_batch``, advise without ``--global-batch-tokens``):
the layouts are searched at the scenario's batch and at each doubling of it up to the
compute-optimal batch (Scaling sheet, ``batch_opt_tokens``), and the batch whose best
plan comes first is kept, the smallest of those within the model's resolution
(``sheetgen.planning.batch``).  The names of the layout search are re-exported here,
the advisor's one entry point.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from sheetgen.planning.batch import batch_sizes, choose, kept_because
from sheetgen.planning.layout_search import (
    CP_CHOICES,
    LAYOUT_FIELDS,
    MICRO_BATCHES,
    RECOMPUTE,
    REJECT_BATCH,
    REJECT_CHECKS,
    REJECT_DIVISIBILITY,
    REJECT_FIT,
    REJECT_GOAL,
    TP_CHOICES,
    VIRTUAL_CHOICES,
    ZERO_STAGES,
    Goal,
    Plan,
    Search,
    _with_layout,
    layout_label,
    layouts,
    search_layouts,
    usable_plan,
)
from sheetgen.scenarios.scenario import Scenario

__all__ = [
    "TP_CHOICES",
    "CP_CHOICES",
    "VIRTUAL_CHOICES",
    "ZERO_STAGES",
    "RECOMPUTE",
    "MICRO_BATCHES",
    "REJECT_DIVISIBILITY",
    "REJECT_BATCH",
    "REJECT_FIT",
    "REJECT_GOAL",
    "REJECT_CHECKS",
    "LAYOUT_FIELDS",
    "Goal",
    "Plan",
    "Search",
    "usable_plan",
    "layouts",
    "_with_layout",
    "search_layouts",
    "layout_label",
    "search",
]


def search(
    base: Scenario,
    goal: Goal,
    top: int = 5,
    progress: Callable[[int, int], None] | None = None,
) -> Search:
    """Enumerate, evaluate and rank layouts of ``base`` (its model, hardware and run); with
    ``goal.search_batch`` at each batch ``batch.batch_sizes`` gives (not when
    ``batch.kept_because`` has a reason: phases, fine-tuning), keeping the plans of the
    batch ``batch.choose`` picks, the counts of every batch searched."""
    if not goal.search_batch or kept_because(base) is not None:
        return search_layouts(base, goal, top, progress)
    from dataclasses import replace

    from sheetgen.reference.scaling import scaling

    start = time.perf_counter()
    batch_opt = float(scaling(base)["batch_opt_tokens"])
    sizes = batch_sizes(base.run.global_batch_tokens, batch_opt)
    found: list[Search] = []
    unfit: set[tuple] = set()  # layouts that did not fit at a smaller batch
    for k, size in enumerate(sizes):
        at = replace(base, run=replace(base.run, global_batch_tokens=size))
        done = sum(f.candidates for f in found)
        part = _overall(progress, done, len(sizes) - k)
        found.append(search_layouts(at, goal, top, part, unfit))
    choice = choose(found, sizes, batch_opt, goal)
    result = found[choice.index]
    result.batch = choice
    result.candidates = sum(f.candidates for f in found)
    result.fitting = sum(f.fitting for f in found)
    result.rejected = sum((f.rejected for f in found), Counter())
    result.seconds = time.perf_counter() - start
    return result


def _overall(
    progress: Callable[[int, int], None] | None, before: int, left: int
) -> Callable[[int, int], None] | None:
    """One progress bar over every batch searched: layouts done of an estimate of all
    (this batch's count for each batch left)."""
    if progress is None:
        return None
    report = progress

    def show(done: int, total: int) -> None:
        report(before + done, before + total * left)

    return show
