"""The global batch as a decision in ``sheetgen advise`` (issue 41): which batches the
search tries, which one it keeps, and why, in words.

Without ``--global-batch-tokens`` the layouts are searched at the scenario's batch and
at each doubling of it while it stays within the compute-optimal batch B_opt (the
Scaling sheet's ``batch_opt_tokens``: Bi et al. 2024 (DeepSeek-AI), DeepSeek LLM,
arXiv:2401.02954, section 3.1).  Doubling keeps every batch a whole number of the
scenario's sequences
that splits wherever the scenario's batch splits (and over twice the replicas); up to
B_opt the fit does not ask for a smaller batch, so the advisor is free to take the
faster one.  The batch kept is the one whose best plan ranks first by the goal's first
quantity (days; with a deadline, cost), or the smallest batch within ``WHY_MATERIAL``
(0.5%) of it: closer than that the step-time model cannot tell them apart, and a
smaller batch is the nearer to the scenario's own choice.

Imports ``sheetgen.planning.layout_search`` (the search at one batch) for its types;
``advise`` imports this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sheetgen.planning.why import WHY_MATERIAL
from sheetgen.scenarios.run_fields import FIELD

if TYPE_CHECKING:  # pragma: no cover
    from sheetgen.planning.layout_search import Goal, Plan, Search

# Each batch tried is the previous one times this: whole sequences, and a batch that
# splits over dp replicas also splits over 2 dp.
BATCH_STEP = 2
MEBI = 2**20


def kept_because(base: Any) -> str | None:
    """Why the scenario's batch is kept without a search, or None: training phases each
    set their own batch, and LoRA / QLoRA fine-tuning is not what the pretraining fit
    describes."""
    from sheetgen.reference.finetune import FINETUNE_RECIPES

    if base.run.phases:
        return "each training phase sets its own batch"
    if base.run.recipe in FINETUNE_RECIPES:
        return (
            f"{base.run.recipe} fine-tuning, which the pretraining fit (Scaling sheet) does not "
            "describe"
        )
    return None


def batch_sizes(batch: int, batch_opt: float) -> tuple[int, ...]:
    """The scenario's ``batch``, then each doubling of it up to ``batch_opt`` (and within
    the run setting's own range); only ``batch`` when it is already at or above it."""
    high = FIELD["global_batch_tokens"].limit
    top = min(batch_opt, high[1] if high else batch_opt)
    sizes = [batch]
    while sizes[-1] * BATCH_STEP <= top:
        sizes.append(sizes[-1] * BATCH_STEP)
    return tuple(sizes)


def tokens_text(tokens: float) -> str:
    """A batch in tokens as people write it: 16Mi for 16 x 2^20, else 4.5M (or 512K)."""
    if tokens >= MEBI and tokens % MEBI == 0:
        return f"{tokens // MEBI:,.0f}Mi"
    if tokens >= 10**6:
        return f"{tokens / 10**6:,.1f}M"
    return f"{tokens / 10**3:,.1f}K"


def _first(plan: Plan, goal: Goal) -> float:
    """The goal's first ranked quantity (Goal.rank_key): days, or cost with a deadline."""
    return plan.cost if goal.deadline_days is not None else plan.days


@dataclass(frozen=True)
class BatchChoice:
    """The batches searched (``sizes``, the scenario's first), the best plan at each
    (None where no layout fits and meets the goal), the one kept and B_opt."""

    sizes: tuple[int, ...]
    best: tuple[Plan | None, ...]
    index: int
    batch_opt: float
    deadline: bool

    @property
    def tokens(self) -> int:
        return self.sizes[self.index]

    def _amount(self, plan: Plan) -> str:
        return f"${plan.cost:,.0f}" if self.deadline else f"{plan.days:.2f} d"

    def tried(self) -> str:
        """Each batch and its best plan: "4Mi 157.22 d, 8Mi 98.40 d, 16Mi none fits"."""
        parts = [
            f"{tokens_text(n)} {self._amount(p) if p is not None else 'none fits'}"
            for n, p in zip(self.sizes, self.best, strict=True)
        ]
        return ", ".join(parts)

    def reason(self) -> str:
        """Which batch was kept and why, in the numbers of the plans it compares."""
        chosen, plan = self.tokens, self.best[self.index]
        assert plan is not None
        seq = plan.scenario.run.seq_len
        opt = f"the compute-optimal {self.batch_opt / 10**6:,.1f}M tokens"
        head = (
            f"global batch {tokens_text(chosen)} tokens ({chosen // seq:,} sequences of "
            f"{seq:,}), searched from the scenario's {tokens_text(self.sizes[0])} doubling up "
            f"to {opt} (DeepSeek LLM fit, Scaling sheet)"
        )
        if len(self.sizes) == 1:
            where = (
                f"at or above {opt}"
                if chosen >= self.batch_opt
                else f"twice it, {tokens_text(chosen * BATCH_STEP)}, would pass {opt}"
            )
            return (
                f"global batch {tokens_text(chosen)} tokens, the scenario's: {where} (DeepSeek "
                "LLM fit, Scaling sheet), so no other batch is searched"
            )
        first = self.best[0]
        parts = [head]
        if self.index > 0 and first is not None:
            v, w = plan.values, first.values
            parts.append(
                f"{self._amount(plan)} vs {self._amount(first)} at the scenario's batch, MFU "
                f"{v['mfu_predicted']:.1%} vs {w['mfu_predicted']:.1%}, bubble "
                f"{v['pipeline_bubble']:.1%} vs {w['pipeline_bubble']:.1%}"
            )
        elif self.index > 0:
            parts.append("no layout fits and meets the goal at the scenario's batch")
        if self.index == len(self.sizes) - 1:
            parts.append(f"the largest batch within {opt}")
        else:
            parts.append(
                f"larger batches gain under {WHY_MATERIAL:.1%}, so the smaller batch is kept"
            )
        return "; ".join(parts)


def batch_lines(result: Search, base: Any) -> list[str]:
    """What ``advise`` says about the batch: the one chosen, why, and each batch tried;
    per accelerator with ``--hardware all``; or the batch given, against B_opt."""
    from sheetgen.reference.scaling import scaling

    choice = result.batch
    if choice is not None and len(choice.sizes) == 1:
        return [choice.reason()]
    if choice is not None:
        return [choice.reason(), f"batches tried (best plan at each): {choice.tried()}"]
    if result.goal.search_batch and result.accelerators:
        chosen = ", ".join(
            f"{p.scenario.hardware.id} {tokens_text(p.scenario.run.global_batch_tokens)}"
            for p in result.plans
        )
        return [
            f"global batch chosen per accelerator, each searched from the scenario's "
            f"{tokens_text(base.run.global_batch_tokens)} doubling up to the compute-optimal "
            f"batch (Scaling sheet): {chosen}"
        ]
    batch = base.run.global_batch_tokens
    kept = kept_because(base)
    if kept is not None:
        how = "the scenario's, not searched" if result.goal.search_batch else "as given"
        return [f"global batch {tokens_text(batch)} tokens, {how}: {kept}"]
    opt = float(scaling(base)["batch_opt_tokens"])
    return [
        f"global batch {tokens_text(batch)} tokens as given (--global-batch-tokens): "
        f"{batch / opt:.2f}x the compute-optimal {opt / 10**6:,.1f}M tokens (DeepSeek LLM "
        "fit, Scaling sheet)"
    ]


def choose(found: list[Search], sizes: tuple[int, ...], batch_opt: float, goal: Goal) -> Any:
    """The batch whose best plan ranks first by the goal's first quantity, or the smallest
    within WHY_MATERIAL of it; the scenario's batch when no batch has a plan."""
    best = tuple(f.plans[0] if f.plans else None for f in found)
    scored = [(_first(p, goal), i) for i, p in enumerate(best) if p is not None]
    index = 0
    if scored:
        lowest = min(q for q, _ in scored)
        index = min(i for q, i in scored if q <= lowest * (1 + WHY_MATERIAL))
    return BatchChoice(
        sizes=sizes, best=best, index=index, batch_opt=batch_opt,
        deadline=goal.deadline_days is not None,
    )  # fmt: skip
