"""The command line: a thin layer over the library.

This module holds the commands; the flags, error handling and helpers they share
are in ``sheetgen.cli_support``.  Heavy modules (pandas, openpyxl, yaml) are
imported inside the commands so that ``sheetgen --help`` stays fast.  Every bad
input ends as one line on stderr and exit code 2.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sheetgen import __version__
from sheetgen.cli_support import (
    DEFAULT_TIMEOUT_S,
    FLAG_OF,
    OneLineGroup,
    handle_errors,
    parse_timeout,
    presets_option,
    scenario_options,
    scenarios_from_args,
    timeout_option,
)
from sheetgen.engines import ENGINES
from sheetgen.errors import SheetgenError

if TYPE_CHECKING:  # pragma: no cover
    from sheetgen.safe_write import Published, Target

FORCE_HELP = "replace the target whatever it holds (without it, a file you edited is kept)"


@click.group(cls=OneLineGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sheetgen")
def main() -> None:
    """LLM planning workbooks whose math lives in spreadsheet formulas."""


def run(prog_name: str | None = None) -> None:
    """The ``sheetgen`` command (and ``python -m sheetgen``, which names itself
    ``prog_name``): ``main`` as a process of its own.

    The process ends when the command does, and Python's shutdown runs the cyclic
    garbage collector over every object still alive: about 40 ms of a 0.5 s
    ``generate``, spent freeing memory the operating system takes back anyway.
    Freezing the objects (``gc.freeze``, registered before the command starts, so
    it runs after every exit handler the command registers) leaves them out of
    those passes; every exit handler and finalizer still runs.  ``main`` itself,
    as tests and other programs call it, leaves the collector alone.
    """
    import atexit
    import gc

    atexit.register(gc.freeze)
    main(prog_name=prog_name)


@main.group("presets")
def presets_cmd() -> None:
    """List the presets (with their sources and origins), or import a model."""


def _listing(kind: str) -> None:
    @presets_cmd.command(kind, help=f"List the {kind} presets with their sources and origins.")
    @click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table")
    @presets_option
    @handle_errors
    def listing(fmt: str) -> None:
        from sheetgen.tables import presets_frame, render

        click.echo(render(presets_frame(kind), fmt))


for _kind in ("models", "hardware", "recipes"):
    _listing(_kind)


@presets_cmd.command("import")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--id", "preset_id", default=None, help="preset id (default: from the file name)")
@click.option(
    "-o", "--output", default=None, type=click.Path(),
    help="write the preset here (a folder, or a name ending in /: <id>.yaml inside it) "
    "instead of standard output",
)  # fmt: skip
@click.option("--force", is_flag=True, help=FORCE_HELP)
@presets_option
@handle_errors
def import_cmd(config: str, preset_id: str | None, output: str | None, force: bool) -> None:
    """Write a model preset (YAML) from a local Hugging Face CONFIG.json (no network).

    Supported model types: llama, mistral, mixtral, qwen2, phi3, gemma, gemma2,
    deepseek_v2, deepseek_v3, gpt2, gpt_neox.
    """
    from sheetgen import safe_write
    from sheetgen.hf_import import import_config

    if preset_id is not None and not preset_id.strip():
        raise SheetgenError("--id", "must not be empty")
    pid, text = import_config(config, preset_id)
    if output is None:
        click.echo(text, nl=False)
        return
    t = safe_write.target(output, f"{pid}.yaml", force=force, inputs=[config])
    click.echo(safe_write.publish_text(t, text).line())


@main.command("compute")
@click.argument("scenario_file", required=False, type=click.Path(dir_okay=False))
@scenario_options
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table")
@presets_option
@handle_errors
def compute_cmd(scenario_file: str | None, fmt: str, **flags: Any) -> None:
    """Compute every input and derived key of the scenarios with the Python reference.

    Give a SCENARIO_FILE (YAML), or --model and --hardware with run flags for
    one scenario; with neither, the embedded default scenarios are used.
    """
    from sheetgen.scenario_file import default_scenario_path, load_scenarios
    from sheetgen.tables import compute_frame, render

    scenarios = scenarios_from_args(scenario_file, flags)
    if not scenarios:
        scenarios = load_scenarios(default_scenario_path())
    click.echo(render(compute_frame(scenarios), fmt, wide=fmt == "table"))


@main.command("generate")
@click.argument("scenario_file", required=False, type=click.Path(dir_okay=False))
@scenario_options
@click.option(
    "--from",
    "from_workbook",
    default=None,
    type=click.Path(dir_okay=False),
    help="regenerate from the inputs of an existing (possibly edited) workbook",
)
@click.option(
    "-o",
    "--output",
    "output",
    default=None,
    type=click.Path(),
    help="where to write the workbook, a file or a folder (default: output/<file name>.xlsx)",
)
@click.option("--force", is_flag=True, help=FORCE_HELP)
@click.option(
    "--pdf",
    "pdf",
    is_flag=True,
    help="also write the Summary as a PDF beside the workbook (needs LibreOffice)",
)
@presets_option
@handle_errors
def generate_cmd(
    scenario_file: str | None,
    from_workbook: str | None,
    output: str | None,
    force: bool,
    pdf: bool,
    **flags: Any,
) -> None:
    """Write a planning workbook (.xlsx) with live formulas.

    With no arguments, the embedded default scenarios are used and the workbook
    is written to output/sheetgen.xlsx.
    """
    from sheetgen import safe_write
    from sheetgen.scenario_file import default_scenario_path, load_scenarios
    from sheetgen.workbook import save_workbook

    source = scenario_file or from_workbook
    stem = Path(source).stem if source else "sheetgen"
    if from_workbook is not None:
        stem += "-regenerated"
    inputs = (from_workbook, scenario_file)
    out = safe_write.target(
        output, f"{stem}.xlsx", force=force, inputs=inputs, default_dir="output", suffix=".xlsx"
    )
    pdf_out = (
        safe_write.target(out.path.with_suffix(".pdf"), "x.pdf", force=force, inputs=inputs)
        if pdf
        else None
    )
    if from_workbook is not None:
        if scenario_file is not None or any(v is not None for v in flags.values()):
            raise SheetgenError("--from", "cannot be combined with a scenario file or flags")
        from sheetgen.workbook_scenarios import scenarios_from_workbook

        scenarios = scenarios_from_workbook(from_workbook)
    else:
        scenarios = scenarios_from_args(scenario_file, flags)
    if not scenarios:
        scenarios = load_scenarios(default_scenario_path())
    published = save_workbook(scenarios, out)
    click.echo(published.line())
    from sheetgen.tables import summary_lines

    for line in summary_lines(scenarios):
        click.echo(line)
    if pdf_out is not None:
        click.echo(_write_pdf(published.path, pdf_out, ("Summary",)).line())


def _write_pdf(
    workbook: Path, out: Target, sheets: tuple[str, ...], timeout: float = DEFAULT_TIMEOUT_S
) -> Published:
    """Print ``sheets`` of ``workbook`` and publish the PDF at ``out``."""
    from sheetgen import safe_write
    from sheetgen.recalc import RecalcError, export_pdf

    try:
        return export_pdf(
            workbook, out.path, sheets=sheets, timeout=timeout,
            publish=lambda produced: safe_write.publish_copy(out, produced),
        )  # fmt: skip
    except RecalcError as e:
        raise SheetgenError("pdf", str(e).splitlines()[0]) from None


@main.command("pdf")
@click.argument("workbook", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    "output",
    default=None,
    type=click.Path(),
    help="where to write the PDF, a file or a folder (default: the workbook's name with .pdf)",
)
@click.option(
    "--sheet",
    "sheets",
    multiple=True,
    help="sheet to print, repeatable, in workbook order (default: Summary)",
)
@click.option("--force", is_flag=True, help=FORCE_HELP)
@timeout_option
@presets_option
@handle_errors
def pdf_cmd(
    workbook: str, output: str | None, sheets: tuple[str, ...], force: bool, timeout: str | None
) -> None:
    """Print sheets of a workbook (default: the Summary) to PDF through LibreOffice.

    The workbook is recalculated first, so edits made in a spreadsheet show.
    """
    from sheetgen import safe_write
    from sheetgen.workbook_read import check_xlsx

    seconds = parse_timeout(timeout)
    src = check_xlsx(workbook)
    out = safe_write.target(
        output, f"{src.stem}.pdf", force=force, inputs=[src], default_dir=src.parent,
        suffix=".pdf",
    )  # fmt: skip
    click.echo(_write_pdf(src, out, sheets or ("Summary",), seconds).line())


@main.command("check")
@click.argument("workbook", type=click.Path(dir_okay=False))
@click.option(
    "--engine", type=click.Choice(ENGINES), default="libreoffice",
    help="spreadsheet engine that recalculates the file",
)  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@timeout_option
@presets_option
@handle_errors
def check_cmd(workbook: str, engine: str, fmt: str, timeout: str | None) -> None:
    """Recalculate WORKBOOK and compare every cell with the reference for its own inputs.

    Exit 0 when everything agrees, 1 when problems were found, 2 when the file
    cannot be read.  The file is never modified.
    """

    from sheetgen.check import check_workbook, render_report

    report = check_workbook(Path(workbook), engine=engine, timeout=parse_timeout(timeout))
    click.echo(render_report(report, fmt))
    sys.exit(1 if report.problems else 0)


@main.command("inputs")
@click.argument("workbook", type=click.Path(dir_okay=False))
@click.option("-o", "--output", default=None, type=click.Path(),
              help="write the scenario file here (a file or a folder), not to stdout")  # fmt: skip
@click.option("--force", is_flag=True, help=FORCE_HELP)
@presets_option
@handle_errors
def inputs_cmd(workbook: str, output: str | None, force: bool) -> None:
    """Export the inputs of WORKBOOK (custom presets included) as a scenario file."""
    from sheetgen import safe_write
    from sheetgen.workbook_scenarios import scenarios_from_workbook, scenarios_to_yaml

    out = None
    if output is not None:
        name = f"{Path(workbook).stem or 'inputs'}.yaml"
        out = safe_write.target(output, name, force=force, inputs=[workbook])
    text = scenarios_to_yaml(scenarios_from_workbook(workbook))
    if out is None:
        click.echo(text, nl=False)
        return
    click.echo(safe_write.publish_text(out, text).line())


ADVISE_CHOOSES = (
    "tp", "pp", "cp", "ep", "dp", "zero_stage", "recompute", "micro_batch",
    "sequence_parallel", "pp_virtual_stages", "pp_microbatches",
)  # fmt: skip


@main.command("benchmark-check")
@click.option(
    "--role",
    type=click.Choice(["all", "fit", "check"]),
    default="all",
    show_default=True,
    help="the rows the model was fitted on, those only checked, or both",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json", "markdown"]),
    default="table",
    help="markdown: the block docs/DESIGN.md holds",
)
@handle_errors
def benchmark_check_cmd(role: str, fmt: str) -> None:
    """Predicted vs published throughput of the published training runs in
    presets/benchmarks/ (the step-time model behind the layout clock), with the
    error per run, then median, worst and how many layouts fit in memory."""
    from sheetgen import benchmarks
    from sheetgen.tables import benchmark_frame, render

    rows = [b for b in benchmarks.load() if role in ("all", b.role)]
    results = [benchmarks.evaluate(b) for b in rows]
    if fmt == "markdown":
        click.echo(benchmarks.markdown(results), nl=False)
        return
    click.echo(render(benchmark_frame(results), fmt))
    for label, subset in (
        ("fit rows", [r for r in results if r.bench.role == "fit"]),
        ("check rows", [r for r in results if r.bench.role == "check"]),
        ("all rows", results),
    ):
        if subset:
            click.echo(
                benchmarks.summary_line(benchmarks.summarize(subset), label), err=fmt != "table"
            )


@main.command("serving-check")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json", "markdown"]),
    default="table",
    help="markdown: the block docs/DESIGN.md holds",
)
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


@main.command("advise")
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
    help="write the plans as a scenario file that `generate` takes (a folder: plans.yaml in it)",
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
        out = safe_write.target(write, "plans.yaml", field="--write", force=force)
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


if __name__ == "__main__":  # pragma: no cover
    run()
