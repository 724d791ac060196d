"""How fast `sheetgen advise` searches: candidate layouts per second.

    python benchmarks/bench_advise.py

Prints, per case, the candidates considered (rejected for divisibility or batch
included), those evaluated with the reference engine, the seconds and both rates.
The "batch searched" cases search every batch advise tries without
--global-batch-tokens (the scenario's, doubled up to the compute-optimal batch), their
counts summed over the batches.
"""

from __future__ import annotations

from sheetgen.planning.advise import REJECT_BATCH, REJECT_DIVISIBILITY, Goal, search
from sheetgen.scenarios.files import scenario_from_dict

CASES = [
    ("llama3-70b, 64 x H100", {"model": "llama3-70b", "n_gpus": 64}, Goal(gpus=64)),
    ("mixtral-8x7b, 64 x H100", {"model": "mixtral-8x7b", "n_gpus": 64}, Goal(gpus=64)),
    ("llama3-405b, 16,384 x H100", {"model": "llama3-405b", "n_gpus": 16384}, Goal(gpus=16384)),
    ("llama3-70b, deadline 30 d", {"model": "llama3-70b"}, Goal(deadline_days=30)),
    # advise without --global-batch-tokens: the batch searched too (issue 41).
    (
        "llama3-405b, 16,384, batch searched",
        {"model": "llama3-405b", "n_gpus": 16384, "train_tokens": "15.6T"},
        Goal(gpus=16384, search_batch=True),
    ),
    (
        "llama3-70b, 64, batch searched",
        {"model": "llama3-70b", "n_gpus": 64},
        Goal(gpus=64, search_batch=True),
    ),
    (
        "llama3-70b, 30 d, batch searched",
        {"model": "llama3-70b"},
        Goal(deadline_days=30, search_batch=True),
    ),
]


def main() -> None:
    for label, spec, goal in CASES:
        base = scenario_from_dict({"hardware": "h100-sxm", "train_tokens": "2T", **spec})
        r = search(base, goal)
        evaluated = r.candidates - r.rejected[REJECT_DIVISIBILITY] - r.rejected[REJECT_BATCH]
        print(
            f"{label:34s} {r.candidates:>8,} candidates {evaluated:>8,} evaluated "
            f"{r.seconds:6.2f} s  {r.rate:>8,.0f}/s  ({evaluated / r.seconds:,.0f} evaluated/s)"
        )


if __name__ == "__main__":
    main()
