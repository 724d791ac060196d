"""The commands that judge and advise plans: ``benchmark-check``, ``memory-check`` and
``serving-check`` (the models against published measurements) and ``advise`` (the
layout search), with the search's progress line.  ``sheetgen.cli.commands`` registers them
on its group; like every command they import heavy modules inside, so ``sheetgen --help``
stays fast.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from sheetgen.cli.once import OnceCommand
from sheetgen.cli.support import (
    FLAG_OF,
    FORCE_HELP,
    handle_errors,
    presets_option,
    scenario_options,
    scenarios_from_args,
)
from sheetgen.errors import SheetgenError

# The --format of the two checks against published measurements.
check_format = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json", "markdown"]),
    default="table",
    help="markdown: the block docs/DESIGN.md holds",
)

# advise --top: more plans than anyone reads, and bounded work and memory (each plan
# shown keeps its scenario and every computed value; 10^11 once took minutes and 1.3 GB).
MAX_TOP = 1000

# The layout flags advise chooses itself (given, they are refused).
ADVISE_CHOOSES = (
    "tp", "pp", "cp", "ep", "dp", "zero_stage", "recompute", "micro_batch",
    "sequence_parallel", "pp_virtual_stages", "pp_microbatches",
)  # fmt: skip


@click.command("benchmark-check", cls=OnceCommand)
@click.option(
    "--role",
    type=click.Choice(["all", "calibration", "fit", "check", "holdout"]),
    default="all",
    show_default=True,
    help=(
        "the rows the model was fitted on, those only checked, both (calibration: the "
        "table docs/DESIGN.md holds), other organisations' runs held out (never "
        "fitted), or all"
    ),
)
@check_format
@handle_errors
def benchmark_check_cmd(role: str, fmt: str) -> None:
    """Predicted vs published throughput of the published training runs in
    presets/benchmarks/ (the step-time model behind the layout clock), with the
    error per run, then median, worst and how many layouts fit in memory."""
    from sheetgen.calibration import benchmarks
    from sheetgen.cli.tables import benchmark_frame, render

    wanted = {"calibration": ("fit", "check")}.get(role, (role,))
    rows = [b for b in benchmarks.load() if role == "all" or b.role in wanted]
    results = [benchmarks.evaluate(b) for b in rows]
    if fmt == "markdown":
        click.echo(benchmarks.markdown(results), nl=False)
        return
    click.echo(render(benchmark_frame(results), fmt))
    for line in benchmarks.summary_lines(results):
        click.echo(line, err=fmt != "table")


@click.command("memory-check", cls=OnceCommand)
@click.option(
    "--role",
    type=click.Choice(["all", "fit", "check"]),
    default="all",
    show_default=True,
    help="the rows the allocator's reserve share was fitted on, those only checked, or all",
)
@check_format
@handle_errors
def memory_check_cmd(role: str, fmt: str) -> None:
    """Predicted vs measured peak memory per GPU of the published runs in
    presets/benchmarks/memory/ (each compared on the counter its source measured:
    PyTorch's peak allocated or reserved, or nvidia-smi), with the error per run, then
    median, worst, rows within ±20% and the fit / out-of-memory verdicts."""
    import pandas as pd

    from sheetgen.calibration import memory_check
    from sheetgen.cli.tables import render
    from sheetgen.scenarios.run_fields import RUN_DEFAULTS

    rows = [r for r in memory_check.load() if role in ("all", r.role)]
    results = [memory_check.evaluate(r) for r in rows]
    if fmt == "markdown":
        click.echo(memory_check.markdown(results), nl=False)
        return
    click.echo(render(pd.DataFrame(memory_check.frame_rows(results)), fmt))
    shipped = RUN_DEFAULTS["mem_reserved_share"]
    lines = memory_check.summary_lines(results)
    lines.append(memory_check.reserve_line(memory_check.load_reserve(), shipped))
    for line in lines:
        click.echo(line, err=fmt != "table")


@click.command("serving-check", cls=OnceCommand)
@check_format
@handle_errors
def serving_check_cmd(fmt: str) -> None:
    """Predicted vs published serving figures (output tok/s, time per output token,
    time to first token) of the published runs in presets/benchmarks/serving/ (the
    serving step model), with the error per run, then median, 90th percentile and
    worst per figure and per role (fit, check)."""
    from sheetgen.calibration import serving_check
    from sheetgen.cli.tables import render

    results = [serving_check.evaluate(r) for r in serving_check.load()]
    if fmt == "markdown":
        click.echo(serving_check.markdown(results), nl=False)
        return
    click.echo(render(serving_check.frame(results), fmt))
    for line in serving_check.summary_lines(results):
        click.echo(line, err=fmt != "table")


@click.command("advise", cls=OnceCommand)
@scenario_options
@click.option(
    "--deadline",
    default=None,
    metavar="DAYS",
    help="search GPU counts; keep plans done within DAYS (> 0), cheapest first",
)
@click.option(
    "--budget",
    default=None,
    metavar="USD",
    help=(
        "search GPU counts; keep plans whose total cost (Summary) is within USD (> 0; "
        "2.5M, 800K and 1,000,000 are read), fastest first"
    ),
)
@click.option(
    "--max-gpus",
    default="16384",
    metavar="N",
    show_default=True,
    help="largest GPU count --deadline / --budget consider (at most the --gpus limit, 10^7)",
)
@click.option(
    "--top", type=int, default=5, show_default=True, help=f"plans to show, 1 to {MAX_TOP:,}"
)
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table")
@click.option(
    "--write",
    "write",
    default=None,
    type=click.Path(),
    help=(
        "write the plans as a scenario file that `generate` takes: a .yaml/.yml name, or a "
        "folder (plans.yaml in it)"
    ),
)
@click.option("--force", is_flag=True, help=FORCE_HELP)
@presets_option
@handle_errors
def advise_cmd(
    deadline: str | None, budget: str | None, max_gpus: str, top: int, fmt: str,
    write: str | None, force: bool, **flags: Any,
) -> None:  # fmt: skip
    """Find the layout (tp, pp, cp, ep, dp, ZeRO, recomputation, micro-batch) that fits
    and finishes first, with the reference engine's memory and step-time estimate.

    Give --model, --hardware, --tokens and one of --gpus N, --deadline DAYS or
    --budget USD (plus any run flags: --seq-len, --global-batch-tokens, ...).
    Without --global-batch-tokens the global batch is searched too: the scenario's,
    doubled up to the compute-optimal batch (Scaling sheet); advise says which it kept
    and why.
    --hardware all searches every accelerator preset (shipped and --presets) and
    ranks their plans together, each naming its accelerator.
    """
    from sheetgen.cli.tables import advise_frame, advise_summary, render
    from sheetgen.planning.advise import Goal, search

    for key in ADVISE_CHOOSES:
        if flags.get(key) is not None:
            raise SheetgenError(FLAG_OF[key], "advise chooses the layout; drop this flag")
    if flags.get("n_gpus") is None and deadline is None and budget is None:
        raise SheetgenError(
            "--gpus",
            "give --gpus N, --deadline DAYS or --budget USD (--gpus combines with "
            "either); got none",
        )
    days = _goal_amount(deadline, "--deadline", "days", "30 or 4.5")
    usd = _goal_amount(budget, "--budget", "USD", "250000, 2.5M or 1,000,000", suffixes=True)
    if not 1 <= top <= MAX_TOP:
        raise SheetgenError("--top", f"must be from 1 to {MAX_TOP:,}, got {top}")
    largest = _max_gpus(max_gpus)
    from sheetgen.output import safe_write

    out = None
    if write is not None:
        out = safe_write.target(
            write, "plans.yaml", field="--write", force=force, suffix=safe_write.YAML_SUFFIXES
        )
    given = {k: v for k, v in flags.items() if v is not None and k != "scenario_name"}
    every = flags.get("hardware") == "all"  # advise --hardware all: every accelerator preset
    if every:
        from sheetgen.catalog import presets

        ids = list(presets.hardware())
        flags = {**flags, "hardware": ids[0]}
    base = scenarios_from_args(None, flags)[0]
    goal = Goal(
        gpus=base.run.n_gpus if flags.get("n_gpus") is not None else None,
        deadline_days=days, budget_usd=usd, max_gpus=largest,
        search_batch=flags.get("global_batch_tokens") is None,
    )  # fmt: skip
    if every:
        from sheetgen.planning.hardware import search_all_hardware

        def on(hw_id: str) -> Any:
            return scenarios_from_args(None, {**flags, "hardware": hw_id})[0]

        result = search_all_hardware(on, ids, goal, top=top, progress=_progress_bar())
    else:
        result = search(base, goal, top=top, progress=_progress_bar())
    click.echo(advise_summary(result), err=fmt != "table")
    if not result.plans:
        raise SheetgenError("advise", "no layout fits and meets the goal; see the counts above")
    from sheetgen.planning.batch import batch_lines

    for line in batch_lines(result, base):
        click.echo(line, err=fmt != "table")
    click.echo(render(advise_frame(result), fmt))
    if every:  # one price for every accelerator: say so beside the ranking it drives
        from sheetgen.reference.schedule import gpu_price_used
        from sheetgen.wording import money

        price = money(gpu_price_used(base))
        click.echo(
            f"cost_usd at {price} per GPU-hour for every accelerator (the run's price, "
            "--price-per-gpu-hour; no preset carries a market rate): rank by cost only "
            "after pricing each with your quote",
            err=fmt != "table",
        )
    if out is not None:
        from sheetgen.planning.write import plans_yaml

        # The parsed values (numbers as numbers), not the flags' text.
        run_given = {
            k: getattr(base.run, k) for k in given if k not in ("model", "hardware", "n_gpus")
        }
        text = plans_yaml(result, run_given, name=flags.get("scenario_name"))
        published = safe_write.publish_text(out, text)
        click.echo(published.line(), err=fmt != "table")


def _goal_amount(
    value: str | None, flag: str, unit: str, example: str, suffixes: bool = False
) -> float | None:
    """A goal flag's value: a finite number > 0 (with --budget, optionally followed by
    K, M, B or T, as --tokens reads them); anything else is one line naming the flag."""
    import math

    from sheetgen.errors import short
    from sheetgen.scenarios.parse import THOUSANDS_SUFFIXES, parse_number

    if value is None:
        return None
    text, scale = value.strip(), 1
    if suffixes and len(text) > 1 and text[-1].upper() in THOUSANDS_SUFFIXES:
        text, scale = text[:-1].rstrip(), THOUSANDS_SUFFIXES[text[-1].upper()]
    try:
        number = parse_number(text, flag) * scale
    except SheetgenError:
        number = math.nan
    if not math.isfinite(number):
        raise SheetgenError(
            flag, f"expected a finite number of {unit} > 0 (such as {example}), got {short(value)}"
        )
    if not number > 0:
        raise SheetgenError(flag, f"must be > 0 (a number of {unit} such as {example}), got "
                            f"{short(value)}")  # fmt: skip
    return number


def _max_gpus(value: str) -> int:
    """--max-gpus: a whole count (as --gpus reads it) within --gpus' own range."""
    from sheetgen.scenarios.limits import RUN_LIMITS, check_range
    from sheetgen.scenarios.parse import parse_count

    n = parse_count(value, "--max-gpus")
    low, high, why = RUN_LIMITS["n_gpus"]
    check_range("--max-gpus", n, low, high, why, value)
    return n


def _progress_bar(stream: Any = None) -> Callable[[int, int], None]:
    """A progress line on stderr, shown once a search has run for more than a second, and
    only on a terminal: a pipe, a log or a test's captured output gets no bar."""
    import time

    stream = sys.stderr if stream is None else stream
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return lambda done, total: None
    start = time.perf_counter()
    state = {"shown": False, "last": 0.0}

    def show(done: int, total: int) -> None:
        elapsed = time.perf_counter() - start
        if elapsed < 1 and not state["shown"]:
            return
        if done < total and elapsed - state["last"] < 0.25:  # a few updates a second
            return
        state["shown"], state["last"] = True, elapsed
        width = 30
        filled = int(width * done / total) if total else width
        bar = "#" * filled + "-" * (width - filled)
        end = "\n" if done >= total else ""
        click.echo(f"\rsearching [{bar}] {done:,}/{total:,} layouts {elapsed:.1f}s{end}",
                   err=True, nl=False)  # fmt: skip

    return show
