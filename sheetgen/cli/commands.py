"""The command line: a thin layer over the library.

This module holds the commands; the flags, error handling and helpers they share
are in ``sheetgen.cli.support``.  Heavy modules (pandas, openpyxl, yaml) are
imported inside the commands so that ``sheetgen --help`` stays fast.  Every bad
input ends as one line on stderr and exit code 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sheetgen import __version__
from sheetgen.cli.support import (
    DEFAULT_TIMEOUT_S,
    FORCE_HELP,
    OneLineGroup,
    handle_errors,
    openpyxl_without_numpy,
    parse_timeout,
    presets_option,
    scenario_options,
    scenarios_from_args,
    timeout_option,
)
from sheetgen.engines import ENGINES
from sheetgen.errors import SheetgenError

if TYPE_CHECKING:  # pragma: no cover
    from sheetgen.output.safe_write import Published, Target


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


PRESET_NOUN = {"models": "model", "hardware": "hardware", "recipes": "recipe"}


def _listing(kind: str) -> None:
    noun = PRESET_NOUN[kind]

    @presets_cmd.command(kind, help=f"List the {noun} presets with their sources and origins.")
    @click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table")
    @presets_option
    @handle_errors
    def listing(fmt: str) -> None:
        from sheetgen.cli.tables import presets_frame, render

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
    from sheetgen.catalog.hf_import import import_config
    from sheetgen.output import safe_write

    if preset_id is not None and not preset_id.strip():
        raise SheetgenError("--id", "must not be empty")
    pid, text = import_config(config, preset_id)
    if output is None:
        click.echo(text, nl=False)
        return
    t = safe_write.target(
        output, f"{pid}.yaml", force=force, inputs=[config], suffix=safe_write.YAML_SUFFIXES
    )
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
    from sheetgen.cli.compute_output import check_table_size, write_computed
    from sheetgen.cli.tables import compute_frame, render
    from sheetgen.scenarios.files import default_scenario_path, load_scenarios

    scenarios = scenarios_from_args(scenario_file, flags)
    if not scenarios:
        scenarios = load_scenarios(default_scenario_path())
    if fmt in ("json", "csv"):  # written as computed: 16,379 scenarios are gigabytes
        write_computed(scenarios, fmt, lambda text: click.echo(text, nl=False))
        return
    check_table_size(len(scenarios))
    click.echo(render(compute_frame(scenarios), fmt, wide=True))


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
    openpyxl_without_numpy()
    from sheetgen.output import safe_write
    from sheetgen.scenarios.files import default_scenario_path, load_scenarios
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
        from sheetgen.readback.scenarios import scenarios_from_workbook

        scenarios = scenarios_from_workbook(from_workbook)
    else:
        scenarios = scenarios_from_args(scenario_file, flags)
    if not scenarios:
        scenarios = load_scenarios(default_scenario_path())
    published = save_workbook(scenarios, out)
    click.echo(published.line())
    from sheetgen.cli.tables import summary_lines

    for line in summary_lines(scenarios):
        click.echo(line)
    if pdf_out is not None:
        click.echo(_write_pdf(published.path, pdf_out, ("Summary",)).line())


def _write_pdf(
    workbook: Path, out: Target, sheets: tuple[str, ...], timeout: float = DEFAULT_TIMEOUT_S
) -> Published:
    """Print ``sheets`` of ``workbook`` and publish the PDF at ``out``."""
    from sheetgen.checking.recalc import RecalcError, export_pdf
    from sheetgen.output import safe_write

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
    from sheetgen.output import safe_write
    from sheetgen.readback.opening import check_xlsx

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

    from sheetgen.checking.check import check_workbook
    from sheetgen.checking.findings import render_report

    report = check_workbook(Path(workbook), engine=engine, timeout=parse_timeout(timeout))
    click.echo(render_report(report, fmt))
    sys.exit(1 if report.problems else 0)


@main.command("inputs")
@click.argument("workbook", type=click.Path(dir_okay=False))
@click.option("-o", "--output", default=None, type=click.Path(),
              help="write the scenario file here (a .yaml/.yml file or a folder), not to "
                   "stdout")  # fmt: skip
@click.option("--force", is_flag=True, help=FORCE_HELP)
@presets_option
@handle_errors
def inputs_cmd(workbook: str, output: str | None, force: bool) -> None:
    """Export the inputs of WORKBOOK (custom presets included) as a scenario file."""
    from sheetgen.output import safe_write
    from sheetgen.readback.scenarios import scenarios_from_workbook, scenarios_to_yaml

    out = None
    if output is not None:
        name = f"{Path(workbook).stem or 'inputs'}.yaml"
        out = safe_write.target(
            output, name, force=force, inputs=[workbook], suffix=safe_write.YAML_SUFFIXES
        )
    text = scenarios_to_yaml(scenarios_from_workbook(workbook))
    if out is None:
        click.echo(text, nl=False)
        return
    click.echo(safe_write.publish_text(out, text).line())


from sheetgen.cli.plans import (  # noqa: E402
    advise_cmd,
    benchmark_check_cmd,
    memory_check_cmd,
    serving_check_cmd,
)

for _command in (benchmark_check_cmd, memory_check_cmd, serving_check_cmd, advise_cmd):
    main.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    run()
