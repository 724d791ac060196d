"""The layout search behind ``sheetgen advise``, at one global batch.

The search enumerates layouts of one scenario — tp (inside a node, dividing the
query and KV heads), pp (dividing the layers, with 1, 2, 4 or 8 interleaved stages),
cp (dividing the sequence), ep (MoE: dividing the experts and dp x cp), dp from
the GPUs left, ZeRO 0-3, recomputation none / selective / full and the
micro-batch — and rejects, with a reason, those whose numbers do not divide,
whose global batch does not split into whole accumulation steps, or that do not
fit in memory.  Every number comes from the reference engine
(``sheetgen.reference``) on the workbook's own clock (``mfu_source: layout``):
the Parallelism sheet's memory per GPU and predicted step time.  During the
search a layout's days and total cost are the predicted-step days
(``train_days_wall_layout``) scaled to the plan's tokens, and its GPU-hours at the
plan's total cost per GPU-hour (price, billed energy, contingency: the same for every
layout), i.e. the Summary's ``plan_days_wall`` and ``cost_total_usd``; the plans shown are
recomputed whole with ``compute`` and report exactly those keys.  The keys that do
not depend on the layout (Params, Memory, FLOPs, Schedule) are computed once per
recomputation mode, micro-batch and GPU count.

Ranking: without a deadline, fewest wall-clock days, then cost, then fewer GPUs;
with a deadline, the cheapest plan that meets it, then fewer GPUs, then days.
Remaining ties go to less memory per GPU.

The search over global batches (``sheetgen.planning.batch``) and the advisor's entry
point (``sheetgen.planning.advise.search``) call ``search_layouts`` here; this module
imports neither.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from sheetgen.scenarios.run_fields import RUN_DEFAULTS
from sheetgen.scenarios.scenario import Run, Scenario
from sheetgen.units import HOURS_PER_DAY

TP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
CP_CHOICES = (1, 2, 4, 8)
VIRTUAL_CHOICES = (1, 2, 4, 8)
ZERO_STAGES = (0, 1, 2, 3)
RECOMPUTE = ("none", "selective", "full")
MICRO_BATCHES = (1, 2, 4, 8)
REJECT_DIVISIBILITY = "divisibility"
REJECT_BATCH = "batch"
REJECT_FIT = "does not fit"
REJECT_GOAL = "misses the goal"
REJECT_CHECKS = "fails a check"
LAYOUT_FIELDS = (
    "n_gpus", "tp", "pp", "pp_virtual_stages", "cp", "ep", "dp", "zero_stage",
    "recompute", "micro_batch", "sequence_parallel",
)  # fmt: skip


@dataclass(frozen=True)
class Goal:
    """What to search for: a fixed GPU count, a deadline (days) or a budget (USD)."""

    gpus: int | None = None
    deadline_days: float | None = None
    budget_usd: float | None = None
    max_gpus: int = 16384
    # Search the global batch too: the scenario's, doubled up to the compute-optimal one.
    search_batch: bool = False

    def gpu_counts(self, gpus_per_node: int) -> tuple[int, ...]:
        if self.gpus is not None:
            return (self.gpus,)
        counts = {n for n in (1, 2, 4) if n < gpus_per_node}
        n = gpus_per_node
        while n <= self.max_gpus:
            counts.add(n)
            n *= 2
        return tuple(sorted(counts))

    def meets(self, days: float, cost: float) -> bool:
        if self.deadline_days is not None and days > self.deadline_days:
            return False
        return self.budget_usd is None or cost <= self.budget_usd

    def rank_key(self, days: float, cost: float, gpus: int) -> tuple[float, ...]:
        if self.deadline_days is not None:
            return (cost, gpus, days)
        return (days, cost, gpus)


@dataclass(frozen=True)
class Plan:
    scenario: Scenario
    values: dict[str, Any]  # every key of the scenario, from sheetgen.reference.compute

    @property
    def days(self) -> float:
        return float(self.values["plan_days_wall"])

    @property
    def cost(self) -> float:
        return float(self.values["cost_total_usd"])

    def layout(self) -> dict[str, Any]:
        return {k: getattr(self.scenario.run, k) for k in LAYOUT_FIELDS}


@dataclass
class Search:
    goal: Goal
    plans: list[Plan] = field(default_factory=list)
    gpu_counts: tuple[int, ...] = ()
    candidates: int = 0
    fitting: int = 0
    rejected: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    # The accelerators searched when more than one (advise --hardware all).
    accelerators: tuple[str, ...] = ()
    # The batches searched and the one chosen (batch.BatchChoice), when searched.
    batch: Any = None

    @property
    def rate(self) -> float:
        return self.candidates / self.seconds if self.seconds > 0 else float("inf")


def usable_plan(values: dict[str, Any]) -> bool:
    """A plan sheetgen can recommend.  ``plan_ok`` when the reference has it (error
    checks pass, fits per GPU, the batch splits); until then the same three tests."""
    if "plan_ok" in values:
        return values["plan_ok"] == 1
    accum = values["grad_accum_steps"]
    return (
        values["checks_ok"] == 1
        and values["fits_per_gpu"] == 1
        and accum >= 1
        and float(accum).is_integer()
    )


def _divisors_and_powers(n: int, limit: int) -> list[int]:
    """Divisors of n up to limit, and the powers of two up to limit (the latter may be
    rejected for divisibility: a user reading the counts sees they were considered)."""
    out = {d for d in range(1, min(n, limit) + 1) if n % d == 0}
    p = 1
    while p <= limit:
        out.add(p)
        p *= 2
    return sorted(out)


def layouts(base: Scenario, n_gpus: int, rejected: Counter) -> Iterator[dict[str, Any]]:
    """Candidate layouts for ``n_gpus`` GPUs that divide evenly and split the batch;
    every other candidate is counted in ``rejected`` by reason."""
    from sheetgen.reference.parallelism import layer_places
    from sheetgen.reference.params import params

    m, run = base.model, base.run
    kv = params(m)["attn_kv_heads"]
    gpn = run.gpus_per_node
    inner = len(ZERO_STAGES) * len(RECOMPUTE) * len(MICRO_BATCHES)
    for tp in (t for t in TP_CHOICES if t <= min(gpn, n_gpus)):
        for pp in _divisors_and_powers(m.n_layers, n_gpus // tp):
            for v in VIRTUAL_CHOICES if pp > 1 else (1,):
                for cp in (c for c in CP_CHOICES if tp * pp * c <= n_gpus):
                    ok = m.n_heads % tp == 0 and kv % tp == 0
                    # Whole layers in every chunk: of n_layers + 2 places when the
                    # embedding and the loss take layer places (pp_split_embedding_loss).
                    places = layer_places(m.n_layers, run.pp_split_embedding_loss, pp)
                    ok = ok and pp <= m.n_layers and places % (pp * v) == 0
                    ok = ok and run.seq_len % cp == 0
                    ok = ok and n_gpus % (tp * pp * cp) == 0
                    dp = n_gpus // (tp * pp * cp)
                    eps = _divisors_and_powers(m.n_experts, dp * cp) if m.is_moe else [1]
                    if not ok:
                        rejected[REJECT_DIVISIBILITY] += inner * len(eps)
                        continue
                    for ep in eps:
                        if m.is_moe and (m.n_experts % ep or (dp * cp) % ep):
                            rejected[REJECT_DIVISIBILITY] += inner
                            continue
                        for mb in MICRO_BATCHES:
                            per_step = run.seq_len * mb * dp
                            if run.global_batch_tokens % per_step:
                                rejected[REJECT_BATCH] += inner // len(MICRO_BATCHES)
                                continue
                            for zero in ZERO_STAGES:
                                for rc in RECOMPUTE:
                                    yield {
                                        "n_gpus": n_gpus, "tp": tp, "pp": pp,
                                        "pp_virtual_stages": v, "cp": cp, "ep": ep, "dp": dp,
                                        "zero_stage": zero, "recompute": rc, "micro_batch": mb,
                                        "sequence_parallel": int(tp > 1),
                                    }  # fmt: skip


def _with_layout(base: Scenario, run_kwargs: dict[str, Any], layout: dict[str, Any]) -> Scenario:
    """``base`` on ``layout``: dp given, the accumulation steps derived by Run's own
    ``__post_init__``.  ``run_kwargs`` are the base run's settings.  Equivalent to
    ``dataclasses.replace`` (tests/test_advise.py checks it) without the frozen
    dataclass's per-field ``__init__``, which would otherwise be 40% of a search."""
    run = object.__new__(Run)
    run.__dict__.update(run_kwargs)
    run.__dict__.update(layout)
    run.__dict__["pp_microbatches"] = RUN_DEFAULTS["pp_microbatches"]  # "derive it"
    run.__post_init__()
    return Scenario(base.name, base.model, base.hardware, run, base.tables)


def search_layouts(
    base: Scenario,
    goal: Goal,
    top: int = 5,
    progress: Callable[[int, int], None] | None = None,
    unfit: set[tuple] | None = None,
) -> Search:
    """Enumerate, evaluate and rank layouts of ``base`` at its own global batch.
    ``unfit``: layouts (their values in LAYOUT_FIELDS order) known not to fit at a smaller
    batch, counted as not fitting unevaluated (the peak per GPU never falls as the batch
    grows: only the micro-batches in flight, min(pp, m), move with it); the layouts that
    do not fit here are added to it."""
    from sheetgen.reference import compute
    from sheetgen.reference.flops import flops
    from sheetgen.reference.memory import memory
    from sheetgen.reference.parallelism import parallelism_given
    from sheetgen.reference.params import params

    start = time.perf_counter()
    base = _on_layout_clock(base)
    result = Search(goal=goal)
    shared: dict[tuple, tuple] = {}
    p = params(base.model)
    ranked: list[tuple[tuple, Scenario]] = []
    counts = goal.gpu_counts(base.run.gpus_per_node)
    result.gpu_counts = counts
    candidates = [lay for n in counts for lay in layouts(base, n, result.rejected)]
    total = len(candidates) + sum(result.rejected.values())
    result.candidates = total
    done = sum(result.rejected.values())
    run_kwargs = {f.name: getattr(base.run, f.name) for f in fields(Run) if f.init}
    # Total cost per GPU-hour (price + billed energy, x (1 + contingency); also with a
    # price of 0) and plan days per predicted-step days (tokens / whole steps): the same
    # for every layout.
    values = compute(base)
    cost_per_gpu_hour = values["cost_total_usd"] / values["plan_gpu_hours"]
    days_per_step_days = base.run.train_tokens / base.run.global_batch_tokens / values["steps"]
    for i, lay in enumerate(candidates):
        known = tuple(lay.values())
        if unfit is not None and known in unfit:
            result.rejected[REJECT_FIT] += 1
            continue
        s = _with_layout(base, run_kwargs, lay)
        key = (lay["recompute"], lay["micro_batch"], lay["n_gpus"])
        if key not in shared:
            from sheetgen.reference.schedule import schedule

            shared[key] = (memory(s), flops(s), schedule(s))
        mem, f, sch = shared[key]
        par = parallelism_given(s, p, mem, f, sch)
        days = par["train_days_wall_layout"] * days_per_step_days
        cost = lay["n_gpus"] * days * HOURS_PER_DAY * cost_per_gpu_hour
        if not par["fits_per_gpu"]:
            result.rejected[REJECT_FIT] += 1
            if unfit is not None:
                unfit.add(known)
        elif not goal.meets(days, cost):
            result.rejected[REJECT_GOAL] += 1
        else:
            result.fitting += 1
            rank = goal.rank_key(days, cost, lay["n_gpus"])
            ranked.append(((*rank, par["mem_total_per_gpu"]), s))
        if progress is not None and i % 256 == 0:
            progress(done + i, total)
    ranked.sort(key=lambda item: item[0])
    for _, s in ranked:
        values = compute(s)
        if usable_plan(values):
            result.plans.append(Plan(scenario=s, values=values))
        else:  # an error check the layout-only pass does not see
            result.fitting -= 1
            result.rejected[REJECT_CHECKS] += 1
        if len(result.plans) >= top:
            break
    result.seconds = time.perf_counter() - start
    if progress is not None:
        progress(total, total)
    return result


def _on_layout_clock(base: Scenario) -> Scenario:
    """``base`` with ``mfu_source: layout``: advise ranks on the predicted step time."""
    from dataclasses import replace

    if base.run.mfu_source == "layout":
        return base
    return replace(base, run=replace(base.run, mfu_source="layout"))


def layout_label(lay: dict[str, Any]) -> str:
    v = f" v{lay['pp_virtual_stages']}" if lay["pp_virtual_stages"] > 1 else ""
    ep = f" ep{lay['ep']}" if lay["ep"] > 1 else ""
    sp = " sp" if lay["sequence_parallel"] else ""
    return (
        f"tp{lay['tp']}{sp} pp{lay['pp']}{v} cp{lay['cp']}{ep} dp{lay['dp']} "
        f"zero{lay['zero_stage']} {lay['recompute']} mb{lay['micro_batch']}"
    )
