"""`sheetgen advise`: the layout search ranks with the reference engine's numbers,
writes plans that fit, and beats hand-written layouts for the same inputs."""

from __future__ import annotations

import json
import random
import re
import sys
import time
from collections import Counter
from dataclasses import fields, replace
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from helpers import build_matrix, libreoffice_values, mismatches, same

from sheetgen.advise import Goal, _with_layout, layouts, search, usable_plan
from sheetgen.cli import main
from sheetgen.reference import compute
from sheetgen.run_fields import RUN_DEFAULTS
from sheetgen.scenario import Run
from sheetgen.scenario_file import load_scenarios, scenario_from_dict

BASE = {"model": "llama3-70b", "hardware": "h100-sxm", "n_gpus": 64, "train_tokens": "2T"}
# Layouts a planner would try by hand for Llama 3 70B on 64 H100s (Megatron-style).
HAND_WRITTEN = [
    {"tp": 8, "pp": 1, "zero_stage": 1, "recompute": "selective", "sequence_parallel": 1},
    {"tp": 8, "pp": 2, "zero_stage": 1, "recompute": "selective", "sequence_parallel": 1},
    {"tp": 8, "pp": 4, "zero_stage": 1, "recompute": "selective"},
    {"tp": 4, "pp": 4, "zero_stage": 1, "recompute": "full"},
    {"tp": 8, "pp": 4, "pp_virtual_stages": 2, "zero_stage": 1, "recompute": "selective"},
    {"tp": 8, "pp": 8, "zero_stage": 0, "recompute": "selective", "sequence_parallel": 1},
    {"tp": 1, "pp": 1, "zero_stage": 3, "recompute": "full"},
    {"tp": 2, "pp": 1, "zero_stage": 3, "recompute": "selective", "cp": 2},
]


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[Path, float, str]:
    folder = tmp_path_factory.mktemp("advise")
    plans = folder / "plans.yaml"
    start = time.perf_counter()
    result = run(
        "advise", "--model", "llama3-70b", "--hardware", "h100-sxm", "--gpus", "64",
        "--tokens", "2T", "--write", str(plans),
    )  # fmt: skip
    seconds = time.perf_counter() - start
    assert result.exit_code == 0, result.output
    return plans, seconds, result.output


def test_written_plans_fit_on_64_gpus(written) -> None:
    plans, seconds, output = written
    assert seconds < 30, f"advise took {seconds:.1f}s"
    scenarios = load_scenarios(plans)
    assert len(scenarios) == 5
    for s in scenarios:
        v = compute(s)
        assert s.run.n_gpus == 64 and v["n_gpus_layout"] == 64, s.name
        assert v["fits_per_gpu"] == 1 and v["checks_ok"] == 1, s.name
        assert v["plan_ok"] == 1, f"{s.name}: {v['plan_verdict']}"
    assert "rejected:" in output and "does not fit" in output and "divisibility" in output


def test_top_plan_beats_every_hand_written_layout(written) -> None:
    top = compute(load_scenarios(written[0])[0])
    tried = 0
    for layout in HAND_WRITTEN:
        v = compute(scenario_from_dict({**BASE, **layout}))
        if not usable_plan(v):
            continue
        tried += 1
        assert top["train_days_wall_layout"] <= v["train_days_wall_layout"] * (1 + 1e-12), (
            f"hand-written {layout}: {v['train_days_wall_layout']:.3f} d beats the advised "
            f"{top['train_days_wall_layout']:.3f} d"
        )
    assert tried >= 4, "too few hand-written layouts fit to compare with"


def test_ranked_by_days_then_cost_and_counts_add_up() -> None:
    base = scenario_from_dict(BASE)
    result = search(base, Goal(gpus=64), top=8)
    days = [p.days for p in result.plans]
    assert days == sorted(days)
    assert result.candidates == result.fitting + sum(result.rejected.values())
    assert result.rejected["does not fit"] > 0 and result.rejected["divisibility"] > 0


def test_the_reasons_and_the_summary_read_as_a_person_would_write_them() -> None:
    """Each plan's reason names only terms that differ by at least 0.5% of the step and
    differ once printed (never "exposed dp comm 0.00s vs 0.00s"); the summary line says
    "on 64 GPUs" and, for several accelerators, "GPUs of each of N accelerators"."""
    from dataclasses import replace as swap

    from sheetgen.advise import WHY_MATERIAL, why_better
    from sheetgen.tables import advise_summary

    base = scenario_from_dict(BASE)
    result = search(base, Goal(gpus=64), top=8)
    plans = result.plans
    assert len(plans) >= 3
    term = re.compile(r"(compute|bubble|exposed dp comm) ([\d.]+)(s|%) vs ([\d.]+)(s|%)")
    keys = {"compute": "step_compute_seconds", "exposed dp comm": "comm_dp_exposed_seconds"}
    for a, b in zip(plans, plans[1:], strict=False):
        why = why_better(a, b)
        for label, x, unit, y, _ in term.findall(why):
            assert x != y, f"{why!r}: a term printed equal on both sides"
            if unit == "s":
                gap = abs(float(a.values[keys[label]]) - float(b.values[keys[label]]))
                step = max(a.values["step_seconds_predicted"], b.values["step_seconds_predicted"])
                assert gap >= WHY_MATERIAL * step, f"{why!r}: {label} differs by {gap:.4f}s"
    assert why_better(plans[-1], None) == "last shown"
    line = advise_summary(result)
    assert line.startswith(f"searched {result.candidates:,} layouts on 64 GPUs in "), line
    several = swap(result, accelerators=("h100-sxm", "a100-80gb"), gpu_counts=(1, 16384))
    assert " on 1 to 16,384 GPUs of each of 2 accelerators in " in advise_summary(several)
    assert " on 1 GPU in " in advise_summary(swap(result, gpu_counts=(1,)))


def test_fast_path_equals_the_full_reference() -> None:
    """The search's cached evaluation is the reference's Parallelism sheet, key for key."""
    from sheetgen.reference.parallelism import parallelism

    base = scenario_from_dict({**BASE, "model": "mixtral-8x7b"})
    cands = list(layouts(base, 64, Counter()))
    kwargs = {f.name: getattr(base.run, f.name) for f in fields(Run) if f.init}
    random.seed(13)
    for lay in random.sample(cands, 40):
        s = _with_layout(base, kwargs, lay)
        derived = RUN_DEFAULTS["pp_microbatches"]
        assert s.run == replace(base.run, pp_microbatches=derived, **lay), lay
        full = compute(s)
        for key, value in parallelism(s).items():
            assert same(value, full[key]), f"{lay}: {key} {value} vs {full[key]}"
    # Every candidate is a layout the scenario validation itself accepts.
    assert all(c["n_gpus"] == c["dp"] * c["tp"] * c["pp"] * c["cp"] for c in cands)


def test_moe_uses_expert_parallelism() -> None:
    base = scenario_from_dict({**BASE, "model": "mixtral-8x7b"})
    result = search(base, Goal(gpus=64), top=3)
    assert result.plans
    eps = {lay["ep"] for lay in layouts(base, 64, Counter())}
    assert eps >= {1, 2, 4, 8}
    for p in result.plans:
        assert 8 % p.scenario.run.ep == 0 and p.values["chk_ep_divides_experts"] == 1


def test_embedding_and_loss_in_layer_places_open_the_stages_they_divide() -> None:
    """Llama 3 405B's 126 layers split over 16 stages only with the embedding and the
    loss in layer places (128 = 16 x 8, The Llama 3 Herd of Models, section 3.3.2): on
    16,384 GPUs (powers of two) the search offers pp 16 only then, and every chunk
    holds whole places."""
    base = {**BASE, "model": "llama3-405b", "n_gpus": 16384, "seq_len": 8192,
            "global_batch_tokens": "16Mi"}  # fmt: skip
    even = scenario_from_dict(base)
    split = scenario_from_dict({**base, "pp_split_embedding_loss": 1})
    pps = {lay["pp"] for lay in layouts(even, 16384, Counter())}
    stages = {(lay["pp"], lay["pp_virtual_stages"]) for lay in layouts(split, 16384, Counter())}
    assert pps == {1, 2}  # 126 = 2 x 3^2 x 7
    assert {(16, 1), (16, 2), (16, 4), (32, 4), (64, 2)} <= stages
    # One place per chunk, so that "the first model chunk on the first stage has only
    # the embedding" (section 3.3.2): 128 = 16 stages x 8 chunks.
    assert (16, 8) in stages
    assert all(128 % (pp * v) == 0 and pp <= 126 for pp, v in stages if pp > 1)
    assert (128, 1) not in stages  # 128 places, but more stages than layers


def test_deadline_and_budget() -> None:
    base = scenario_from_dict({**BASE, "model": "llama3-8b", "train_tokens": "1T"})
    by_deadline = search(base, Goal(deadline_days=30, max_gpus=512), top=4)
    assert by_deadline.plans
    costs = [p.cost for p in by_deadline.plans]
    assert all(p.days <= 30 for p in by_deadline.plans) and costs == sorted(costs)
    by_budget = search(base, Goal(budget_usd=400_000, max_gpus=512), top=4)
    assert by_budget.plans and all(p.cost <= 400_000 for p in by_budget.plans)
    assert [p.days for p in by_budget.plans] == sorted(p.days for p in by_budget.plans)
    assert by_budget.rejected["misses the goal"] > 0


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["--gpus", "64", "--tp", "2"], "--tp: advise chooses the layout"),
        ([], "give --gpus N, --deadline DAYS or --budget USD"),
        (["--gpus", "64", "--deadline", "0.001"], "no layout fits and meets the goal"),
        (["--deadline", "-3"], "--deadline: must be > 0"),
        (["--gpus", "64", "--top", "0"], "--top: must be from 1 to 1,000, got 0"),
        (["--gpus", "3"], "no layout fits"),
    ],
)
def test_bad_advise_input_ends_in_one_line(args: list[str], expect: str) -> None:
    result = run("advise", "--model", "llama3-70b", "--hardware", "h100-sxm", *args)
    assert result.exit_code == 2
    err = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(err) == 1 and expect in err[0], result.output


ADVISE = ("advise", "--model", "llama3-8b", "--hardware", "h100-sxm", "--tokens", "1T")


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["--deadline", "inf"], "--deadline: expected a finite number of days > 0 (such as 30"),
        (["--deadline", "1e400"], "--deadline: expected a finite number of days > 0"),
        (["--deadline", "nan"], "--deadline: expected a finite number of days > 0"),
        (["--deadline", "-inf"], "--deadline: expected a finite number of days > 0"),
        (["--deadline", "30K"], "--deadline: expected a finite number of days > 0"),
        (["--deadline", "0"], "--deadline: must be > 0 (a number of days such as 30 or 4.5)"),
        (["--budget", "inf"], "--budget: expected a finite number of USD > 0 (such as 250000, 2.5M"),
        (["--budget", "1e308T"], "--budget: expected a finite number of USD > 0"),
        (["--budget", "abc"], "--budget: expected a finite number of USD > 0"),
        (["--budget", "2,5M"], "--budget: expected a finite number of USD > 0"),
        (["--budget", "-1K"], "--budget: must be > 0 (a number of USD such as"),
        (["--budget", "x" * 500], "--budget: expected a finite number of USD > 0"),
        (["--deadline", "30", "--max-gpus", "10000000000"],
         "--max-gpus: must be from 1 to 10^7 (beyond any cluster planned"),
        (["--deadline", "30", "--max-gpus", "0"], "--max-gpus: must be from 1 to 10^7"),
        (["--deadline", "30", "--max-gpus", "2.5"], "--max-gpus: '2.5' is not a whole number"),
        (["--gpus", "8", "--top", "100000000000"], "--top: must be from 1 to 1,000, got 100000000000"),
        (["--gpus", "8", "--top", "1001"], "--top: must be from 1 to 1,000, got 1001"),
    ],
)  # fmt: skip
def test_goal_flags_refuse_what_no_search_can_use(args: list[str], expect: str, monkeypatch):
    """Non-finite goals, a --max-gpus past --gpus' own limit and a --top no one reads (10^11
    once ran for minutes in 1.3 GB) end in one line before any search starts."""
    import sheetgen.advise

    monkeypatch.setattr(sheetgen.advise, "search", lambda *a, **k: pytest.fail("searched"))
    result = CliRunner().invoke(main, [*ADVISE, *args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {expect}"), lines
    assert len(lines[0]) < 200 and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "deadline", "budget", "max_gpus", "top"),
    [
        (["--budget", "1M"], None, 1e6, 16384, 5),
        (["--budget", "2.5m"], None, 2.5e6, 16384, 5),
        (["--budget", "1,000,000"], None, 1e6, 16384, 5),
        (["--budget", "800K", "--max-gpus", "2K"], None, 8e5, 2000, 5),
        (["--budget", "1B", "--max-gpus", "10000000"], None, 1e9, 10**7, 5),
        (["--deadline", "4.5", "--top", "1000"], 4.5, None, 16384, 1000),
    ],
)
def test_goal_flags_read_as_other_flags(args, deadline, budget, max_gpus, top, monkeypatch):
    """--budget takes K, M, B, T and thousands commas as --tokens does; --max-gpus counts
    as --gpus does (2K, 10000000, its limit)."""
    import sheetgen.advise

    seen: list = []

    def fake_search(base, goal, *, top, progress):
        seen.append((goal, top))
        raise SystemExit(0)

    monkeypatch.setattr(sheetgen.advise, "search", fake_search)
    result = CliRunner().invoke(main, [*ADVISE, *args])
    assert result.exit_code == 0, result.output
    ((goal, shown),) = seen
    assert (goal.deadline_days, goal.budget_usd, goal.max_gpus, shown) == (
        deadline,
        budget,
        max_gpus,
        top,
    )


def test_write_never_loses_a_file(tmp_path: Path) -> None:
    target = tmp_path / "plans.yaml"
    target.write_text("mine\n")
    result = run(
        "advise", "--model", "llama3-8b", "--hardware", "h100-sxm", "--gpus", "8",
        "--write", str(target),
    )  # fmt: skip
    assert result.exit_code == 0 and "kept as" in result.output
    (kept,) = tmp_path.glob("plans.kept-*.yaml")
    assert kept.read_text() == "mine\n" and "scenarios" in target.read_text()
    forced = run(
        "advise", "--model", "llama3-8b", "--hardware", "h100-sxm", "--gpus", "8",
        "--write", str(target), "--force", "--top", "2", "--format", "json",
    )  # fmt: skip
    assert forced.exit_code == 0
    assert len(yaml.safe_load(target.read_text())["scenarios"]) == 2
    out = forced.output  # the summary line goes to stderr, which CliRunner may mix in
    start = re.search(r"\[\s*\{", out).start()  # not the progress bar's "[###"
    rows = json.loads(out[start : out.rindex("]") + 1])
    assert [r["rank"] for r in rows] == [1, 2] and rows[0]["gpus"] == 8


def test_progress_bar_after_a_second(monkeypatch, capsys) -> None:
    from sheetgen import cli_plans as cli

    clock = iter([0.0, 0.5, 1.5, 1.6, 2.0, 2.1])
    monkeypatch.setattr(time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # capsys's stderr as a terminal
    show = cli._progress_bar()
    show(10, 100)  # 0.5 s: nothing yet
    assert capsys.readouterr().err == ""
    show(50, 100)  # 1.5 s: shown
    show(60, 100)  # 1.6 s: too soon after the last update
    show(70, 100)  # 2.0 s
    show(100, 100)  # the end is always shown
    err = capsys.readouterr().err
    assert "50/100 layouts" in err and "60/100" not in err and "70/100 layouts" in err
    assert "100/100 layouts" in err and err.endswith("\n")


def test_no_progress_bar_off_a_terminal(monkeypatch, capsys) -> None:
    """Piped or logged, a long search prints no bar: only the result and its errors."""
    from sheetgen import cli_plans as cli

    clock = iter([0.0, 5.0, 9.0])
    monkeypatch.setattr(time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    show = cli._progress_bar()
    show(50, 100)
    show(100, 100)
    assert capsys.readouterr().err == ""


def test_advised_plans_recalculate_in_libreoffice(tmp_path: Path) -> None:
    """The plans' workbooks (new keys train_days_wall_layout, cost_usd_layout included)
    equal the reference in LibreOffice: dense with cp / sp / ZeRO, and MoE with ep."""
    items = []
    for model, top in (("llama3-70b", 2), ("mixtral-8x7b", 2)):
        base = scenario_from_dict({**BASE, "model": model})
        for i, plan in enumerate(search(base, Goal(gpus=64), top=top).plans):
            item = {"name": f"{model} #{i + 1}", "model": model, "hardware": "h100-sxm",
                    "train_tokens": "2T", **plan.layout()}  # fmt: skip
            items.append(item)
    path, scenarios, reference = build_matrix(tmp_path, items, "advised")
    problems = mismatches(libreoffice_values(path), reference)
    assert not problems, "\n".join(problems[:20])
