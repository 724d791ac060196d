"""Why one plan of ``sheetgen advise`` ranks above the next, in the numbers its table
prints: the ranked quantity that decides (days, cost, GPUs, memory per GPU) when the
difference shows and is material, the step-time terms behind it, and what the plan
gives up; a tie at the model's resolution says so and names the rule that ordered
the two plans."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from sheetgen.planning.layout_search import Goal, Plan

# What the model resolves: a plan's days and cost, and the step terms behind them, are
# estimates (the step-time model is fitted to published runs with a median error of a
# few per cent), so a difference under 0.5% of the value is a tie, never a reason.
WHY_MATERIAL = 0.005
_NAMES = {"days": "days", "cost": "cost", "gpus": "GPUs", "mem": "memory per GPU"}


def _exact(q: str, plan: Plan) -> float:
    """The ranked quantity ``q`` of ``plan``, unrounded: what the ranking compares."""
    if q == "days":
        return plan.days
    if q == "cost":
        return plan.cost
    if q == "gpus":
        return plan.scenario.run.n_gpus
    return float(plan.values["mem_total_per_gpu"])


def _shown(q: str, plan: Plan) -> float:
    """``q`` as advise's table prints it (tables.advise_frame: days to 0.01, cost to
    the dollar, memory to 0.1 GB)."""
    if q == "days":
        return round(plan.days, 2)
    if q == "cost":
        return round(plan.cost)
    if q == "gpus":
        return plan.scenario.run.n_gpus
    return round(float(plan.values["mem_total_per_gpu"]) / 1e9, 1)


def _close(q: str, a: Plan, b: Plan) -> bool:
    x, y = _exact(q, a), _exact(q, b)
    return q != "gpus" and abs(x - y) < WHY_MATERIAL * max(abs(x), abs(y))


def _material(q: str, a: Plan, b: Plan) -> bool:
    """A difference in ``q`` is a reason only when the table shows it and it is at least
    WHY_MATERIAL of the larger value (any difference in a GPU count)."""
    return _shown(q, a) != _shown(q, b) and not _close(q, a, b)


def _compare(q: str, a: Plan, b: Plan) -> str:
    """``a`` against ``b`` in ``q`` as the table prints them: "0.59 d sooner" (or "0.59 d
    later"), "$1,200 cheaper", "fewer GPUs (64 vs 128)", "less memory per GPU (39.4 vs
    72.7 GB)"."""
    x, y = _shown(q, a), _shown(q, b)
    if q == "days":
        return f"{abs(y - x):.2f} d {'sooner' if x < y else 'later'}"
    if q == "cost":
        return f"${abs(y - x):,.0f} {'cheaper' if x < y else 'dearer'}"
    if q == "gpus":
        return f"{'fewer' if x < y else 'more'} GPUs ({x:,} vs {y:,})"
    return f"{'less' if x < y else 'more'} memory per GPU ({x:.1f} vs {y:.1f} GB)"


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def step_parts(v: dict[str, Any]) -> dict[str, float]:
    """The predicted step (``step_seconds_predicted``) as the seconds each term adds;
    they add up to it (sheetgen.reference.throughput: step = (compute x imbalance +
    loss + exposed tp/cp/ep + pipeline p2p) x (1 + bubble ratio) + exposed dp + host +
    optimizer)."""
    compute = float(v["step_compute_seconds"])
    return {
        "compute": compute,
        "stage imbalance": compute * (float(v["pipeline_stage_imbalance"]) - 1),
        "loss": float(v["step_loss_seconds"]),
        "exposed tp comm": float(v["comm_tp_exposed_seconds"]),
        "exposed cp comm": float(v["comm_cp_exposed_seconds"]),
        "exposed ep comm": float(v["comm_ep_exposed_seconds"]),
        "pipeline p2p comm": float(v["comm_pp_seconds"]),
        "bubble": float(v["step_microbatch_path_seconds"]) * float(v["pipeline_bubble_ratio"]),
        "exposed dp comm": float(v["comm_dp_exposed_seconds"]),
        "host offload": float(v["comm_host_seconds"]),
        "optimizer": float(v["step_optimizer_seconds"]),
    }


def _term_reasons(a: Plan, b: Plan) -> tuple[list[str], list[str]]:
    """The step terms that make ``a``'s step shorter than ``b``'s, largest first (at most
    three), and the largest that makes it longer ("compute 16.01s vs 15.82s").  A term
    counts when the seconds it adds differ by at least WHY_MATERIAL of the longer step
    and its two printed values differ; the bubble prints as the table's bubble column
    (its share of the pipeline's time), the others in seconds."""
    va, vb = a.values, b.values
    pa, pb = step_parts(va), step_parts(vb)
    step = max(float(va["step_seconds_predicted"]), float(vb["step_seconds_predicted"]))
    # Enough decimals that WHY_MATERIAL of the step shows (2 for a step of 2 s or more).
    digits = max(2, math.ceil(-math.log10(WHY_MATERIAL * step))) if step > 0 else 2
    gains: list[tuple[float, str]] = []
    losses: list[tuple[float, str]] = []
    for name, x in pa.items():
        gap = pb[name] - x
        if abs(gap) < WHY_MATERIAL * step:
            continue
        if name == "bubble":
            sx, sy = f"{va['pipeline_bubble']:.1%}", f"{vb['pipeline_bubble']:.1%}"
        else:
            sx, sy = f"{x:.{digits}f}s", f"{pb[name]:.{digits}f}s"
        if sx != sy:
            (gains if gap > 0 else losses).append((abs(gap), f"{name} {sx} vs {sy}"))
    gains.sort(key=lambda g: -g[0])
    worst = [max(losses, key=lambda g: g[0])[1]] if losses else []
    return [text for _, text in gains[:3]], worst


def why_better(a: Plan, b: Plan | None, goal: Goal | None = None) -> str:
    """Why plan ``a`` ranks above the next one ``b``, in numbers the table prints.

    The ranking compares unrounded values in the goal's order (``Goal.rank_key``: days,
    cost, GPUs; with a deadline cost, GPUs, days; then memory per GPU) and the first
    that differs decides.  When that difference is material (the table shows it and it
    is at least WHY_MATERIAL of the value) it is the reason, with the step terms that
    make the step shorter when it is days (or cost on as many GPUs); otherwise the two
    plans tie at the model's resolution and the reason says so, names the rule that
    ordered them ("listed by unrounded days") and adds the material differences that
    follow.  What ``a`` gives up ends the reason: "though compute 16.01s vs 15.82s"."""
    if b is None:
        return "last shown"
    deadline = goal is not None and goal.deadline_days is not None
    order = ("cost", "gpus", "days", "mem") if deadline else ("days", "cost", "gpus", "mem")
    decider = next((q for q in order if _exact(q, a) != _exact(q, b)), None)
    if decider is None:
        return "same days, cost, GPUs and memory per GPU; in search order"
    at = order.index(decider)
    before, after = order[:at], order[at + 1 :]
    parts: list[str] = []
    losses: list[str] = []
    if _material(decider, a, b):
        same = [_NAMES[q] for q in before if q != "gpus"]  # the GPUs column shows them
        if same:
            parts.append(f"same {_listed(same)}")
        parts.append(_compare(decider, a, b))
        # Days go as the step (the same steps, goodput); so does cost on as many GPUs of
        # one accelerator (one price), but not across GPU counts or prices.
        sa, sb = a.scenario, b.scenario
        same_clock = sa.run.n_gpus == sb.run.n_gpus and sa.hardware.id == sb.hardware.id
        if decider == "days" or (decider == "cost" and same_clock):
            gains, losses = _term_reasons(a, b)
            parts.extend(gains)
        # What the gain costs ("$1,200 dearer" on more GPUs); a gain in the other (cheaper
        # as well as sooner on as many GPUs) would only repeat it.
        for q in after:
            if q in ("days", "cost") and _material(q, a, b) and _exact(q, a) > _exact(q, b):
                losses.append(_compare(q, a, b))
    else:
        # A tie at the model's resolution: the unrounded values ordered the two plans.
        # "same days and cost" (equal), "... within 0.5%" (within WHY_MATERIAL), "... as
        # printed" (the table shows them equal, e.g. 0.03 d, though they differ by more).
        tied = [q for q in order if q != "gpus" and (q in before or q == decider or (
            q in ("days", "cost") and not _material(q, a, b)))]  # fmt: skip
        near = [q for q in tied if _close(q, a, b) or _exact(q, a) == _exact(q, b)]
        shown = [q for q in tied if q not in near]
        equal = all(_exact(q, a) == _exact(q, b) for q in near)
        groups = [(near, "" if equal else f" within {WHY_MATERIAL:.1%}"), (shown, " as printed")]
        groups = sorted((g for g in groups if g[0]), key=lambda g: order.index(g[0][0]))
        head = [f"same {_listed([_NAMES[q] for q in qs])}{how}" for qs, how in groups]
        parts = [", ".join(head), f"listed by unrounded {_NAMES[decider]}"]
        for q in after:
            if q not in tied and _material(q, a, b):
                better = _exact(q, a) < _exact(q, b)
                (parts if better else losses).append(_compare(q, a, b))
    if losses:
        parts.append("though " + ", ".join(losses))
    return "; ".join(parts)
