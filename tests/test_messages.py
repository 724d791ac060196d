"""Messages a person reads (issue 24.4): every check finding names the check, the
scenario, the numbers and the reason; counts agree with their nouns; money keeps its
significant digits in text and in the workbook's price formats; dates are ISO."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from sheetgen.checking.check import check_workbook
from sheetgen.checking.findings import render_report
from sheetgen.cli.commands import main
from sheetgen.reference import compute
from sheetgen.scenarios.files import default_scenario_path, load_scenarios
from sheetgen.wording import money, plural
from sheetgen.workbook import write_workbook
from sheetgen.workbook.styles import NUMBER_FORMATS


@pytest.mark.parametrize(
    ("usd", "text"),
    [
        (0.0075, "$0.0075"),
        (0.0883, "$0.0883"),
        (0.7707, "$0.771"),
        (0.5, "$0.50"),
        (4.2248, "$4.22"),
        (0, "$0.00"),
        (1541478.2, "$1,541,478"),
        (-8000, "-$8,000"),
        (0.000123456, "$0.000123"),
    ],
)
def test_money_keeps_its_significant_digits(usd: float, text: str) -> None:
    assert money(usd) == text


@pytest.mark.parametrize(
    ("n", "word", "text"),
    [(1, "scenario", "1 scenario"), (3, "scenario", "3 scenarios"), (0, "cell", "0 cells"),
     (2517, "cell", "2,517 cells"), (1.0, "GPU", "1 GPU"), (8.0, "GPU", "8 GPUs")],
)  # fmt: skip
def test_plurals_agree(n: float, word: str, text: str) -> None:
    assert plural(n, word) == text


def test_price_formats_show_sub_cent_values() -> None:
    """The workbook's price format: cents from $1, significant digits below (LibreOffice
    and Excel read the two conditions the same way)."""
    fmt = NUMBER_FORMATS["usd2"]
    assert fmt.startswith('[<0.01]"$"0.0000##;[<1]"$"0.00##;'), fmt
    assert NUMBER_FORMATS["usd3"] == fmt


@pytest.fixture(scope="module")
def one_scenario_book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One scenario with a warning: the 405B paper layout without the embedding and
    loss in layer places, so pp x v (16 x 4) does not divide its 126 layers."""
    base = load_scenarios(default_scenario_path())
    paper = next(x for x in base if x.run.pp > 1)
    s = replace(paper, run=replace(paper.run, pp_split_embedding_loss=0))
    assert compute(s)["chk_pp_divides_layers"] == 0
    path = tmp_path_factory.mktemp("msg") / "one.xlsx"
    write_workbook([replace(s, name="Big plan")], path)
    return path


def test_check_names_check_scenario_numbers_and_reason(one_scenario_book: Path) -> None:
    text = render_report(check_workbook(one_scenario_book, engine="pycel"), "text")
    lines = text.splitlines()
    warn = next(line for line in lines if "chk_pp_divides_layers" in line)
    assert warn.startswith("WARN warning: chk_pp_divides_layers on Checks, scenario 'Big plan'")
    assert "not met: pp x v divides the layers" in warn
    assert re.search(
        r"n_layers = \d+, pp_split_active = 0, pp = \d+, pp_virtual_stages = \d+", warn
    ), warn
    assert "stages are uneven" in warn  # the reason, from the check's explanation
    assert "WARN warning:" not in text.replace("WARN warning: chk_", "")
    assert lines[-1].startswith("OK, 1 warning: ") and " of 1 scenario compared" in lines[-1]
    assert "1 scenarios" not in text and "1 warnings" not in text


def test_error_check_message_quotes_its_inputs(tmp_path: Path) -> None:
    import openpyxl

    base = load_scenarios(default_scenario_path())[:1]
    path = write_workbook(base, tmp_path / "b.xlsx")
    wb = openpyxl.load_workbook(path)
    ws = wb["Inputs"]
    row = next(r for r in range(1, ws.max_row + 1) if ws.cell(row=r, column=1).value == "mfu")
    ws.cell(row=row, column=4).value = 1.5
    wb.save(path)
    text = render_report(check_workbook(path, engine="pycel"), "text")
    line = next(x for x in text.splitlines() if "chk_mfu_range" in x)
    assert line.startswith("FAIL error check failed: chk_mfu_range on Checks, scenario ")
    assert "mfu = 1.5" in line and "fraction of the peak" in line
    assert re.search(r"^\d+ problems?(, \d+ warnings?)?: ", text.splitlines()[-1])


def test_generate_summary_money_and_plurals(tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["generate", "-o", str(tmp_path / "p.xlsx")])
    assert out.exit_code == 0, out.output
    assert "GPU(s)" not in out.output and "batch 1 on 1 GPU:" in out.output
    for s in load_scenarios(default_scenario_path()):
        r = compute(s)
        assert f"{money(r['cost_total_per_m_tokens'])} per M training tokens" in out.output
        # The capacity as the driver reports it, not rounded up past what the card holds
        # (an H100's 85.52 GB is "85.5", never "86").
        assert f"of {r['gpu_mem_bytes'] / 1e9:,.1f} GB/GPU" in out.output
    assert "of 85.5 GB/GPU" in out.output
    assert re.search(r"\d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}", out.output)
