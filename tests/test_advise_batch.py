"""The global batch as a decision in `sheetgen advise` (issue 41, item 4).

Without --global-batch-tokens advise searches the batch too (the scenario's, doubled up
to the Scaling sheet's compute-optimal batch) and says which it kept and why; with the
flag the batch is fixed.  The bar: Llama 3 405B on 16,384 H100 and 15.6T tokens, no
batch flag, is no slower than 1.25x the best plan at the Llama 3 paper's 16Mi batch.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import yaml
from click.testing import CliRunner

from sheetgen.cli import main
from sheetgen.planning.advise import Goal, search, search_layouts
from sheetgen.planning.batch import batch_sizes, tokens_text
from sheetgen.reference import compute
from sheetgen.scenarios.files import load_scenarios, scenario_from_dict

MI = 2**20
LLAMA_405B = {
    "model": "llama3-405b", "hardware": "h100-sxm", "n_gpus": 16384, "train_tokens": "15.6T",
}  # fmt: skip
ARGS_405B = (
    "advise", "--model", "llama3-405b", "--hardware", "h100-sxm", "--gpus", "16384",
    "--tokens", "15.6T",
)  # fmt: skip
# Dubey et al. 2024, The Llama 3 Herd of Models, arXiv:2407.21783, section 3.4.1: 16M
# tokens per step for most of the 405B run.
PAPER_BATCH = 16 * MI
# The bar: the batch advise chooses is no slower than 1.25x the paper's batch.
BAR = 1.25


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def searched_405b():
    base = scenario_from_dict(LLAMA_405B)
    searched = search(base, Goal(gpus=16384, search_batch=True))
    at_paper = replace(base, run=replace(base.run, global_batch_tokens=PAPER_BATCH))
    return searched, search_layouts(at_paper, Goal(gpus=16384))


def test_batch_sizes_double_up_to_the_optimum() -> None:
    assert batch_sizes(4 * MI, 68e6) == tuple(n * MI for n in (4, 8, 16, 32, 64))
    assert batch_sizes(16 * MI, 10e6) == (16 * MI,), "above B_opt: the scenario's only"
    assert batch_sizes(3 * 4096, 4 * 4096) == (3 * 4096,)
    assert batch_sizes(4096, 1e30)[-1] <= 10**12, "within the run setting's range"
    assert [tokens_text(n) for n in (16 * MI, 4_500_000, 65536)] == ["16Mi", "4.5M", "65.5K"]


def test_405b_without_a_batch_is_within_the_bar_of_the_papers_batch(searched_405b) -> None:
    searched, at_paper = searched_405b
    choice = searched.batch
    assert choice is not None and choice.sizes[0] == 4 * MI
    best, paper = searched.plans[0], at_paper.plans[0]
    assert best.days <= BAR * paper.days, (
        f"advise without a batch: {best.days:.2f} d at {tokens_text(choice.tokens)}; at the "
        f"paper's 16Mi: {paper.days:.2f} d (bar {BAR}x)"
    )
    assert best.scenario.run.global_batch_tokens == choice.tokens
    assert choice.tokens <= choice.batch_opt, "never past the compute-optimal batch"
    assert best.values["batch_opt_tokens"] == pytest.approx(choice.batch_opt, rel=1e-12)
    # The batch kept is the best at each batch searched, or within 0.5% of it.
    days = [p.days for p in choice.best if p is not None]
    assert best.days <= min(days) * 1.005
    # Every plan shown is at the chosen batch and recomputes to itself.
    for plan in searched.plans:
        assert plan.scenario.run.global_batch_tokens == choice.tokens
        assert compute(plan.scenario)["plan_days_wall"] == pytest.approx(plan.days, rel=1e-12)
    assert searched.candidates == searched.fitting + sum(searched.rejected.values())


def test_the_batch_kept_at_the_scenarios_batch_is_the_fixed_search(searched_405b) -> None:
    """The search at the scenario's batch inside the batch search is exactly the search
    with the batch fixed (the counts and the best plan)."""
    searched, _ = searched_405b
    fixed = search(scenario_from_dict(LLAMA_405B), Goal(gpus=16384))
    assert fixed.batch is None
    assert searched.batch.best[0].days == pytest.approx(fixed.plans[0].days, rel=1e-12)


def test_advise_says_which_batch_it_chose_and_why() -> None:
    result = run(*ARGS_405B)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    reason = next(line for line in lines if line.startswith("global batch "))
    assert "searched from the scenario's 4Mi doubling up to the compute-optimal" in reason
    assert "at the scenario's batch" in reason and "bubble" in reason, reason
    tried = next(line for line in lines if line.startswith("batches tried"))
    for size in ("4Mi", "8Mi", "16Mi", "32Mi", "64Mi"):
        assert f"{size} " in tried, tried


def test_the_flag_fixes_the_batch() -> None:
    result = run(*ARGS_405B, "--global-batch-tokens", "16Mi")
    assert result.exit_code == 0, result.output
    assert "global batch 16Mi tokens as given (--global-batch-tokens): 0.25x" in result.output
    assert "batches tried" not in result.output


def test_the_written_workbook_carries_the_chosen_batch(tmp_path, searched_405b) -> None:
    plans = tmp_path / "plans.yaml"
    result = run(*ARGS_405B, "--top", "2", "--write", str(plans))
    assert result.exit_code == 0, result.output
    chosen = searched_405b[0].batch.tokens
    items = yaml.safe_load(plans.read_text())["scenarios"]
    assert [item["global_batch_tokens"] for item in items] == [chosen] * len(items)
    first = load_scenarios(plans)[0]
    assert first.run.global_batch_tokens == chosen
    values = compute(first)
    assert values["plan_days_wall"] == pytest.approx(searched_405b[0].plans[0].days, rel=1e-9)
    assert values["plan_ok"] == 1, values["plan_verdict"]
    # The workbook generated from the written file holds it on Inputs.
    from sheetgen.readback.access import read_inputs
    from sheetgen.workbook import write_workbook

    book = write_workbook(load_scenarios(plans), tmp_path / "plans.xlsx", cache_values=False)
    assert read_inputs(book).values[0]["global_batch_tokens"] == chosen


def test_a_batch_that_gains_nothing_keeps_the_scenarios() -> None:
    """Llama 3 70B on 64 H100: no pipeline bubble and little dp traffic, so doubling the
    batch gains under 0.5% and the scenario's 4Mi is kept, saying so."""
    base = scenario_from_dict(
        {"model": "llama3-70b", "hardware": "h100-sxm", "n_gpus": 64, "train_tokens": "2T"}
    )
    result = search(base, Goal(gpus=64, search_batch=True))
    choice = result.batch
    assert len(choice.sizes) > 1 and choice.index == 0, choice.tried()
    assert "larger batches gain under 0.5%" in choice.reason()


def test_a_deadline_chooses_the_batch_by_cost() -> None:
    base = scenario_from_dict({"model": "llama3-8b", "hardware": "h100-sxm", "train_tokens": "1T"})
    result = search(base, Goal(deadline_days=30, max_gpus=64, search_batch=True))
    choice = result.batch
    costs = [p.cost for p in choice.best if p is not None]
    assert result.plans[0].cost <= min(costs) * 1.005
    assert "$" in choice.tried()


def test_phases_keep_their_batches() -> None:
    base = load_scenarios(_presets_file("llama3-405b-phases.yaml"))[0]
    assert base.run.phases
    result = search(base, Goal(gpus=base.run.n_gpus, search_batch=True), top=1)
    assert result.batch is None


def _presets_file(name: str):
    from sheetgen.paths import presets_dir

    return presets_dir() / "scenarios" / name


def test_every_accelerator_says_its_batch(tmp_path) -> None:
    plans = tmp_path / "all.yaml"
    result = run(
        "advise", "--model", "llama3-8b", "--hardware", "all", "--gpus", "8", "--tokens",
        "1T", "--top", "2", "--write", str(plans),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("global batch "))
    items = yaml.safe_load(plans.read_text())["scenarios"]
    for item in items:
        assert f"{item['hardware']} {tokens_text(item['global_batch_tokens'])}" in line, line


def test_a_single_batch_says_why_it_is_the_only_one() -> None:
    """Llama 3 8B on 1T tokens: B_opt is 7.7M tokens, so 4Mi is searched alone (8Mi
    would pass it); a 16Mi scenario batch is at or above it."""
    base = scenario_from_dict(
        {"model": "llama3-8b", "hardware": "h100-sxm", "n_gpus": 64, "train_tokens": "1T"}
    )
    result = search(base, Goal(gpus=64, search_batch=True), top=1)
    assert result.batch.sizes == (4 * MI,)
    assert "twice it, 8Mi, would pass the compute-optimal 7.7M tokens" in result.batch.reason()
    big = replace(base, run=replace(base.run, global_batch_tokens=16 * MI))
    result = search(big, Goal(gpus=64, search_batch=True), top=1)
    assert "the scenario's: at or above the compute-optimal" in result.batch.reason()


SOUNDNESS_CASES = {
    "405B on 16,384": LLAMA_405B,
    "70B on 64": {"model": "llama3-70b", "hardware": "h100-sxm", "n_gpus": 64, "train_tokens": "4T"},
    "Mixtral on 64": {
        "model": "mixtral-8x7b", "hardware": "h100-sxm", "n_gpus": 64, "train_tokens": "8T",
    },
}  # fmt: skip


@pytest.mark.parametrize("case", SOUNDNESS_CASES)
def test_each_batch_searched_equals_a_search_at_that_batch_alone(case: str) -> None:
    """Skipping, at a larger batch, the layouts that did not fit at a smaller one changes
    nothing: each batch's best plan, and the counts summed over the batches, equal
    searches at each batch alone."""
    spec = SOUNDNESS_CASES[case]
    base = scenario_from_dict(spec)
    goal = Goal(gpus=spec["n_gpus"])
    searched = search(base, replace(goal, search_batch=True), top=1)
    assert len(searched.batch.sizes) > 1, case
    alone = [
        search_layouts(replace(base, run=replace(base.run, global_batch_tokens=n)), goal, top=1)
        for n in searched.batch.sizes
    ]
    for n, best, one in zip(searched.batch.sizes, searched.batch.best, alone, strict=True):
        where = f"{case}, {tokens_text(n)}"
        assert one.plans[0].days == pytest.approx(best.days, rel=1e-12), where
        assert one.plans[0].layout() == best.layout(), where
    assert searched.rejected == sum((one.rejected for one in alone), type(searched.rejected)())
    assert searched.fitting == sum(one.fitting for one in alone)


def test_fine_tuning_keeps_its_batch_and_says_why() -> None:
    args = ("advise", "--model", "llama3-8b", "--hardware", "h100-sxm", "--gpus", "1",
            "--tokens", "100M", "--recipe", "lora", "--top", "1")  # fmt: skip
    result = run(*args)
    assert result.exit_code == 0, result.output
    assert (
        "global batch 4Mi tokens, the scenario's, not searched: lora fine-tuning, which the "
        "pretraining fit (Scaling sheet) does not describe"
    ) in result.output
    base = scenario_from_dict({"model": "llama3-8b", "hardware": "h100-sxm", "recipe": "lora"})
    assert search(base, Goal(gpus=1, search_batch=True), top=1).batch is None
