"""A single-value flag given twice ends in one line naming it, exit code 2, on every
command (issue 22.4); flags meant to repeat keep working; advise --hardware all."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sheetgen.cli.commands import main

ROOT = Path(__file__).resolve().parents[1]
CONFIG = str(ROOT / "tests/fixtures/hf_configs/llama3.2-1b.json")
RUN = ["--model", "llama3-8b", "--hardware", "h100-sxm"]


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize(
    "args, flag",
    [
        (["compute", *RUN, "--gpus", "8", "--gpus", "16"], "--gpus"),
        (["compute", *RUN, "--hardware", "h200"], "--hardware"),
        (["compute", *RUN, "--seq-len=4096", "--seq-len", "8192"], "--seq-len"),
        (["compute", *RUN, "--format", "json", "--format", "csv"], "--format"),
        (["generate", *RUN, "--gpus", "8", "--gpus", "16", "-o", "x.xlsx"], "--gpus"),
        (["generate", *RUN, "-o", "a.xlsx", "--output", "b.xlsx"], "--output"),
        (["advise", *RUN, "--gpus", "8", "--top", "2", "--top", "3"], "--top"),
        (["advise", *RUN, "--gpus", "8", "--gpus", "16"], "--gpus"),
        (["presets", "import", CONFIG, "--id", "a", "--id", "b"], "--id"),
        (["presets", "import", CONFIG, "--force", "--force"], "--force"),
    ],
)
def test_repeated_single_value_flag_is_one_line_exit_2(args, flag, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code == 2, (args, result.output)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and "more than once" in lines[0], lines
    assert not list(tmp_path.iterdir()), "nothing is written"


def test_flags_meant_to_repeat_still_repeat(tmp_path: Path) -> None:
    book = tmp_path / "b.xlsx"
    assert run("generate", *RUN, "-o", str(book)).exit_code == 0
    # pdf --sheet repeats: parsing accepts it (the export itself needs LibreOffice).
    from sheetgen.cli.once import first_repeat

    pdf = main.commands["pdf"]
    ctx = pdf.make_context("pdf", [str(book)], resilient_parsing=True)
    params = pdf.get_params(ctx)
    assert first_repeat(params, [str(book), "--sheet", "Summary", "--sheet", "Hardware"]) is None
    assert first_repeat(params, [str(book), "-o", "a.pdf", "-o", "b.pdf"]) is not None
    # A value that looks like the flag is a value, not a second flag.
    compute = main.commands["compute"]
    ctx = compute.make_context("compute", [], resilient_parsing=True)
    named = ["--name", "--gpus", "--gpus", "8"]
    assert first_repeat(compute.get_params(ctx), named) is None


def test_advise_hardware_all_names_plans_on_several_accelerators() -> None:
    out = run(
        "advise", "--model", "llama3-8b", "--hardware", "all", "--gpus", "8",
        "--tokens", "1e11", "--top", "5", "--format", "json",
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    import json
    import re

    start = re.search(r"\[\s*\{", out.output).start()  # not the progress bar's "[###"
    plans = json.loads(out.output[start : out.output.rindex("]") + 1])
    names = [p["accelerator"] for p in plans]
    assert len(set(names)) >= 2 and len(names) == 5, names
    days = [p["days"] for p in plans]
    assert days == sorted(days)
    # One price drives every accelerator's cost: the command says so beside the ranking.
    assert "cost_usd at $2.00 per GPU-hour for every accelerator" in out.output
    # A gap the days column prints as 0.00 is no reason ("0.00 d sooner").
    assert "0.00 d sooner" not in out.output
