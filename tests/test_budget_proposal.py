"""Issue 11, a plan a budget committee can read: the cost range, the sensitivity
table, spend by month / fiscal quarter / fiscal year, energy counted once, the
new inputs' validation, the CLI summary, and the new keys in LibreOffice and the
in-process engine."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from helpers import build_matrix, calc, gnumeric_values, libreoffice_values, mismatches

from sheetgen.checking.recalc import recalc_pycel
from sheetgen.cli.commands import main
from sheetgen.reference import compute
from sheetgen.scenarios.dates import excel_serial
from sheetgen.scenarios.files import load_scenarios
from sheetgen.scenarios.run_fields import FISCAL_YEAR_SLOTS, MFU_RANGE, MONTH_SLOTS, QUARTER_SLOTS

ROOT = Path(__file__).resolve().parents[1]
DEFAULTS = load_scenarios(ROOT / "presets" / "scenarios" / "default.yaml")


def months_total(r: dict, prefix: str = "month_cost_usd", slots: int = MONTH_SLOTS) -> float:
    return sum(r[f"{prefix}_{n}"] for n in range(1, slots + 1))


@pytest.mark.parametrize("s", DEFAULTS, ids=[s.name for s in DEFAULTS])
def test_default_scenarios_range_months_and_energy(s) -> None:
    r = compute(s)
    name = s.name
    assert r["cost_total_usd_low"] < r["cost_total_usd"] < r["cost_total_usd_high"], name
    assert r["train_days_wall_low"] < r["plan_days_wall"] < r["train_days_wall_high"], name
    assert r["finish_date_low"] < r["finish_date"] < r["finish_date_high"], name
    # The months add up to the total: the horizon covers every default plan.
    assert r["month_cost_after_horizon_usd"] == 0, name
    assert months_total(r) == pytest.approx(r["cost_total_usd"], rel=1e-12), name
    assert r[f"month_cost_cum_usd_{MONTH_SLOTS}"] == r["cost_total_usd"], name
    assert months_total(r, "month_gpu_hours") == pytest.approx(r["plan_gpu_hours"], rel=1e-12)
    assert months_total(r, "quarter_cost_usd", QUARTER_SLOTS) == pytest.approx(
        r["cost_total_usd"], rel=1e-12
    ), name
    assert months_total(r, "fy_cost_usd", FISCAL_YEAR_SLOTS) == pytest.approx(
        r["cost_total_usd"], rel=1e-12
    ), name
    # Energy: shown in kWh, billed only when the GPU-hour price excludes power.
    assert s.run.price_includes_power == 1
    assert r["energy_kwh"] > 0 and r["energy_cost_usd"] == 0, name
    owned = calc(name, model=s.model.id, n_gpus=s.run.n_gpus, price_includes_power=0)
    assert owned["energy_cost_usd"] > 0, name
    assert (
        owned["cost_total_usd"]
        > calc(name, model=s.model.id, n_gpus=s.run.n_gpus)["cost_total_usd"]
    )


def test_range_is_the_plan_at_the_range_inputs() -> None:
    base = {"model": "llama3-8b", "n_gpus": 8, "train_tokens": "100B", "mfu": 0.4}
    r = calc("range", **base, mfu_range=0.25, goodput_range=0.05)
    best = calc("best", **{**base, "mfu": 0.5}, goodput=0.95)
    worst = calc("worst", **{**base, "mfu": 0.3}, goodput=0.85)
    assert (r["mfu_low"], r["mfu_high"]) == pytest.approx((0.3, 0.5), rel=1e-12)
    assert (r["goodput_low"], r["goodput_high"]) == pytest.approx((0.85, 0.95), rel=1e-12)
    assert r["train_days_wall_low"] == pytest.approx(best["plan_days_wall"], rel=1e-12)
    assert r["cost_total_usd_low"] == pytest.approx(best["cost_total_usd"], rel=1e-12)
    assert r["cost_total_usd_high"] == pytest.approx(worst["cost_total_usd"], rel=1e-12)
    # Defaults: the calibration's 90th-percentile error around the MFU used, goodput
    # +/- 5 points.
    d = calc("defaults", **base)
    assert (d["mfu_low"], d["mfu_high"]) == pytest.approx(
        (0.4 * (1 - MFU_RANGE), 0.4 * (1 + MFU_RANGE)), rel=1e-12
    )
    assert (d["goodput_low"], d["goodput_high"]) == pytest.approx((0.85, 0.95), rel=1e-12)


@pytest.mark.parametrize("mfu", [0.05, 0.2, 0.4, 0.62, 0.95])
@pytest.mark.parametrize("source", ["typed", "layout"])
def test_range_holds_the_plan_days_after_an_mfu_edit(mfu: float, source: str) -> None:
    """The range is a formula of the central value: editing the MFU moves it too."""
    r = calc("edited", model="llama3-8b", n_gpus=64, mfu=mfu, mfu_source=source)
    assert r["train_days_wall_low"] < r["plan_days_wall"] < r["train_days_wall_high"], (
        source,
        mfu,
    )
    assert r["cost_total_usd_low"] < r["cost_total_usd"] < r["cost_total_usd_high"]


def test_sensitivity_moves_one_driver() -> None:
    base = {
        "model": "llama3-8b",
        "n_gpus": 8,
        "train_tokens": "100B",
        "sensitivity_step": 0.1,
        "mfu": 0.4,
    }
    r = calc("sens", **base)
    more_tokens = calc("tokens", **{**base, "train_tokens": "110B"})
    assert r["sens_tokens_up_usd"] == pytest.approx(
        more_tokens["cost_total_usd"] - r["cost_total_usd"], rel=1e-9
    )
    higher_price = calc("price", **base, price_per_gpu_hour=2.2)
    assert r["sens_price_up_usd"] == pytest.approx(
        higher_price["cost_total_usd"] - r["cost_total_usd"], rel=1e-9
    )
    lower_mfu = calc("mfu", **{**base, "mfu": 0.36})
    assert r["sens_mfu_down_usd"] == pytest.approx(
        lower_mfu["cost_total_usd"] - r["cost_total_usd"], rel=1e-9
    )
    assert r["sens_mfu_down_usd"] > 0 > r["sens_mfu_up_usd"]


def test_months_follow_the_calendar_and_the_fiscal_year() -> None:
    # 70B on 64 H100s: 456 wall-clock days from 2027-01-15; fiscal year from October.
    r = calc(
        "months",
        model="llama3-70b",
        n_gpus=64,
        train_tokens="2T",
        seq_len=8192,
        recompute="full",
        start_date="2027-01-15",
        fiscal_year_start_month=10,
    )
    assert r["month_start_1"] == excel_serial(dt.date(2027, 1, 1))
    assert r["month_start_13"] == excel_serial(dt.date(2028, 1, 1))
    # January holds 17 days of the plan (15th to 31st) at 64 GPUs x 24 h.
    assert r["month_gpu_hours_1"] == pytest.approx(17 * 64 * 24, rel=1e-12)
    assert r["month_gpu_hours_2"] == pytest.approx(28 * 64 * 24, rel=1e-12)
    assert r["quarter_start_1"] == excel_serial(dt.date(2027, 1, 1))  # FY Q2: Jan-Mar
    assert r["fy_start_1"] == excel_serial(dt.date(2026, 10, 1))
    assert r["fy_start_2"] == excel_serial(dt.date(2027, 10, 1))
    assert r["fy_cost_usd_1"] == pytest.approx(
        sum(r[f"month_cost_usd_{n}"] for n in range(1, 10)), rel=1e-12
    )
    # A six-month horizon: the rest is one remainder, and everything still adds up.
    short = calc(
        "short",
        model="llama3-70b",
        n_gpus=64,
        train_tokens="2T",
        start_date="2027-01-15",
        month_horizon=6,
    )
    assert short["month_cost_usd_7"] == 0
    assert short["month_cost_after_horizon_usd"] > 0
    assert months_total(short) + short["month_cost_after_horizon_usd"] == pytest.approx(
        short["cost_total_usd"], rel=1e-12
    )


@pytest.mark.parametrize(
    "settings, field",
    [
        ({"mfu_range": -0.1}, "mfu_range"),
        ({"mfu_range": 1}, "mfu_range"),
        ({"goodput_range": 1}, "goodput_range"),
        ({"goodput_range": -0.05}, "goodput_range"),
        ({"mfu_source": "guess"}, "mfu_source"),
        ({"mfu_source": "measured"}, "mfu_source"),  # nothing measured
        ({"fiscal_year_start_month": 13}, "fiscal_year_start_month"),
        ({"fiscal_year_start_month": 0}, "fiscal_year_start_month"),
        ({"price_includes_power": 2}, "price_includes_power"),
        ({"month_horizon": MONTH_SLOTS + 1}, "month_horizon"),
        ({"sensitivity_step": 1}, "sensitivity_step"),
        ({"sensitivity_step": -0.1}, "sensitivity_step"),
    ],
)
def test_bad_new_inputs_end_in_one_line_and_exit_2(tmp_path: Path, settings, field) -> None:
    spec = tmp_path / "bad.yaml"
    item = {"name": "bad", "model": "llama3-8b", "hardware": "h100-sxm", **settings}
    spec.write_text(yaml.safe_dump({"scenarios": [item]}))
    result = CliRunner().invoke(main, ["compute", str(spec)])
    assert result.exit_code == 2, (settings, result.output)
    assert result.output.strip().count("\n") == 0, result.output
    assert field in result.output, (settings, result.output)


def test_generate_prints_short_lines_verdict_first(tmp_path: Path) -> None:
    out = tmp_path / "plan.xlsx"
    result = CliRunner().invoke(main, ["generate", "-o", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    too_long = [line for line in lines if len(line) > 100]
    assert not too_long, too_long
    for s in DEFAULTS:
        at = lines.index(f"  {s.name}")
        verdict, days, cost = lines[at + 1 : at + 4]
        assert verdict.lstrip().startswith(("OK", "NOT OK")), verdict  # plan_ok first
        assert "days" in days and "GPU-h" in days, days
        assert cost.lstrip().startswith("cost $") and "range" in cost, cost


MATRIX = [
    {
        "name": "8B owned, FY from October, mid-month start",
        "model": "llama3-8b",
        "hardware": "h100-sxm",
        "n_gpus": 8,
        "train_tokens": "1T",
        "start_date": "2027-01-15",
        "fiscal_year_start_month": 10,
        "price_includes_power": 0,
    },
    {
        "name": "70B, 6-month horizon, wide range",
        "model": "llama3-70b",
        "hardware": "h200",
        "n_gpus": 64,
        "train_tokens": "2T",
        "start_date": "2026-11-30",
        "month_horizon": 6,
        "fiscal_year_start_month": 4,
        "mfu_range": 0.25,
        "goodput_range": 0.1,
        "sensitivity_step": 0.2,
    },
    {
        "name": "8B phased, free GPUs, leap-day start",
        "model": "llama3-8b",
        "hardware": "mi300x",
        "n_gpus": 8,
        "train_tokens": "100B",
        "price_per_gpu_hour": 0,
        "start_date": "2028-02-29",
        "fiscal_year_start_month": 7,
        "phases": [
            {"tokens": "50B", "seq_len": 2048, "mfu": 0.38},
            {"tokens": "50B", "seq_len": 8192, "mfu": 0.42},
        ],
    },
    {
        "name": "405B paper layout, reserved, owned",
        "model": "llama3-405b",
        "hardware": "h100-sxm",
        "n_gpus": 16384,
        "tp": 8,
        "pp": 16,
        "train_tokens": "15.6T",
        "price_basis": "reserved",
        "price_includes_power": 0,
        "start_date": "2027-12-20",
        "fiscal_year_start_month": 12,
    },
]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory):
    return build_matrix(tmp_path_factory.mktemp("budget"), MATRIX, "budget")


@pytest.mark.libreoffice
def test_new_keys_equal_reference_in_libreoffice(lo, matrix) -> None:
    path, _scenarios, reference = matrix
    bad = mismatches(libreoffice_values(path), reference)
    assert not bad, "\n".join(bad[:40])


def test_new_keys_equal_reference_in_pycel(matrix) -> None:
    path, _scenarios, reference = matrix
    bad = mismatches(recalc_pycel(path), reference)
    assert not bad, "\n".join(bad[:40])


@pytest.mark.gnumeric
def test_new_keys_equal_reference_in_gnumeric(matrix) -> None:
    path, _scenarios, reference = matrix
    bad = mismatches(gnumeric_values(path), reference)
    assert not bad, "\n".join(bad[:40])


def test_no_cell_cites_a_seed_document_and_about_lists_references(tmp_path: Path) -> None:
    import re

    import openpyxl

    from sheetgen.catalog.references import REFERENCES
    from sheetgen.workbook import write_workbook

    book = write_workbook(DEFAULTS, tmp_path / "plan.xlsx")
    wb = openpyxl.load_workbook(book)
    seed = re.compile(r"\bseed\b|seed 00\d", re.IGNORECASE)
    cited = [
        f"{ws.title}!{c.coordinate}: {c.value[:60]}"
        for ws in wb.worksheets
        for row in ws.iter_rows()
        for c in row
        if isinstance(c.value, str) and seed.search(c.value)
    ]
    assert not cited, cited
    about = [c for row in wb["About"].iter_rows() for c in row if c.hyperlink]
    links = {c.hyperlink.target for c in about}
    assert {link for _s, _t, link in REFERENCES} <= links
