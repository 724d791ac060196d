"""The commands that judge and advise plans: ``benchmark-check`` and ``serving-check``
(the models against published measurements) and ``advise`` (the layout search), with
the search's progress line.  ``sheetgen.cli`` registers them on its group; like every
command they import heavy modules inside, so ``sheetgen --help`` stays fast.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from sheetgen.cli_once import OnceCommand
from sheetgen.cli_support import (
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
    from sheetgen import benchmarks
    from sheetgen.tables import benchmark_frame, render

    wanted = {"calibration": ("fit", "check")}.get(role, (role,))
    rows = [b for b in benchmarks.load() if role == "all" or b.role in wanted]
    results = [benchmarks.evaluate(b) for b in rows]
    if fmt == "markdown":
        click.echo(benchmarks.markdown(results), nl=False)
        return
    click.echo(render(benchmark_frame(results), fmt))
    for line in benchmarks.summary_lines(results):
        click.echo(line, err=fmt != "table")


@click.command("serving-check", cls=OnceCommand)
@check_format
@handle_errors
def serving_check_cmd(fmt: str) -> None:
    """Predicted vs published serving throughput of the published runs in
    presets/benchmarks/serving/ (the Serving sheet's continuous-batching model),
    with the error per run, then median and worst."""
    from sheetgen import serving_check
    from sheetgen.tables import render

    results = [serving_check.evaluate(r) for r in serving_check.load()]
    if fmt == "markdown":
        click.echo(serving_check.markdown(results), nl=False)
        return
    click.echo(render(serving_check.frame(results), fmt))
    click.echo(serving_check.summary_line(results), err=fmt != "table")


@click.command("advise", cls=OnceCommand)
@scenario_options
@click.option(
    "--deadline",
    type=float,
    default=None,
    metavar="DAYS",
    help="search GPU counts; keep plans done within DAYS, cheapest first",
)
@click.option(
    "--budget",
    type=float,
    default=None,
    metavar="USD",
    help="search GPU counts; keep plans whose total cost (Summary) is within USD, fastest first",
)
@click.option(
    "--max-gpus",
    type=int,
    default=16384,
    show_default=True,
    help="largest GPU count --deadline / --budget consider",
)
@click.option("--top", type=int, default=5, show_default=True, help="plans to show")
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
    deadline: float | None, budget: float | None, max_gpus: int, top: int, fmt: str,
    write: str | None, force: bool, **flags: Any,
) -> None:  # fmt: skip
    """Find the layout (tp, pp, cp, ep, dp, ZeRO, recomputation, micro-batch) that fits
    and finishes first, with the reference engine's memory and step-time estimate.

    Give --model, --hardware, --tokens and one of --gpus N, --deadline DAYS or
    --budget USD (plus any run flags: --seq-len, --global-batch-tokens, ...).
    --hardware all searches every accelerator preset (shipped and --presets) and
    ranks their plans together, each naming its accelerator.
    """
    from sheetgen.advise import Goal, search
    from sheetgen.tables import advise_frame, advise_summary, render

    for key in ADVISE_CHOOSES:
        if flags.get(key) is not None:
            raise SheetgenError(FLAG_OF[key], "advise chooses the layout; drop this flag")
    if flags.get("n_gpus") is None and deadline is None and budget is None:
        raise SheetgenError(
            "--gpus",
            "give --gpus N, --deadline DAYS or --budget USD (--gpus combines with "
            "either); got none",
        )
    for name, value in (("--deadline", deadline), ("--budget", budget)):
        if value is not None and not value > 0:
            raise SheetgenError(name, f"must be > 0, got {value!r}")
    if top < 1:
        raise SheetgenError("--top", f"must be >= 1, got {top}")
    if max_gpus < 1:
        raise SheetgenError("--max-gpus", f"must be >= 1, got {max_gpus}")
    from sheetgen import safe_write

    out = None
    if write is not None:
        out = safe_write.target(
            write, "plans.yaml", field="--write", force=force, suffix=safe_write.YAML_SUFFIXES
        )
    given = {k: v for k, v in flags.items() if v is not None and k != "scenario_name"}
    every = flags.get("hardware") == "all"  # advise --hardware all: every accelerator preset
    if every:
        from sheetgen import presets

        ids = list(presets.hardware())
        flags = {**flags, "hardware": ids[0]}
    base = scenarios_from_args(None, flags)[0]
    goal = Goal(
        gpus=base.run.n_gpus if flags.get("n_gpus") is not None else None,
        deadline_days=deadline, budget_usd=budget, max_gpus=max_gpus,
    )  # fmt: skip
    if every:
        from sheetgen.advise_hardware import search_all_hardware

        def on(hw_id: str) -> Any:
            return scenarios_from_args(None, {**flags, "hardware": hw_id})[0]

        result = search_all_hardware(on, ids, goal, top=top, progress=_progress_bar())
    else:
        result = search(base, goal, top=top, progress=_progress_bar())
    click.echo(advise_summary(result), err=fmt != "table")
    if not result.plans:
        raise SheetgenError("advise", "no layout fits and meets the goal; see the counts above")
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
        from sheetgen.advise import plans_yaml

        # The parsed values (numbers as numbers), not the flags' text.
        run_given = {
            k: getattr(base.run, k) for k in given if k not in ("model", "hardware", "n_gpus")
        }
        text = plans_yaml(result, run_given, name=flags.get("scenario_name"))
        published = safe_write.publish_text(out, text)
        click.echo(published.line(), err=fmt != "table")


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
