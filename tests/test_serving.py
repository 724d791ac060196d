"""The Serving sheet (issue 23): a serving plan from a traffic target.

The issue's example, the invariants (GPUs = replicas x tp, replicas = ceil(rate /
per replica), monthly cost = average GPUs x hours x price; more traffic never fewer
replicas; a tighter TPOT never a larger batch), impossible SLOs in words, the
Months serving rows, the workbook against the reference (pycel; LibreOffice once),
and the published-throughput check against docs/DESIGN.md.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import build_matrix, calc, is_error, libreoffice_values, mismatches
from hypothesis import given, settings
from hypothesis import strategies as st
from test_tp_heads import PHI3_SHORT, QWEN_LONG

from sheetgen.checking.recalc import recalc_pycel
from sheetgen.cli.commands import main
from sheetgen.scenarios.run_fields import MONTH_SLOTS, SERVE_TP_SLOTS

ISSUE = {
    "model": "llama3-70b",
    "serve_requests_per_s": 40,
    "prompt_len": 2000,
    "output_len": 300,
    "slo_ttft_s": 2,
    "slo_tpot_s": 0.05,
}
ISSUE_FLAGS = [
    "--model", "llama3-70b", "--hardware", "h100-sxm", "--serve-requests-per-s", "40",
    "--prompt-len", "2000", "--output-len", "300", "--slo-ttft-s", "2", "--slo-tpot-s", "0.05",
]  # fmt: skip
HEADLINE = (
    "serve_batch_max_slo",
    "serve_req_per_s_per_replica",
    "serve_replicas_peak",
    "serve_replicas_avg",
    "serve_gpus_peak",
    "serve_gpus_avg",
    "serve_cost_month_usd",
    "serve_cost_per_1k_requests",
)


def _keys(output: str) -> dict[str, Any]:
    """``compute --format json``'s records of one scenario as {key: value}."""
    return {row["key"]: row["value"] for row in json.loads(output)}


def test_issue_example_from_the_command_line() -> None:
    result = CliRunner().invoke(main, ["compute", *ISSUE_FLAGS, "--format", "json"])
    assert result.exit_code == 0, result.output
    r = _keys(result.output)
    for key in HEADLINE:
        assert isinstance(r[key], (int, float)), f"issue example: {key}={r[key]!r}"
    tp = r["serve_tp_used"]
    assert r["serve_gpus_peak"] == r["serve_replicas_peak"] * tp
    assert r["serve_replicas_peak"] == math.ceil(40 / r["serve_req_per_s_per_replica"])
    price = r["serve_price_used"]
    assert price == r["gpu_price_used"], "serving price 0 means the training price"
    cost = r["serve_gpus_avg"] * r["serve_hours_per_month"] * price
    assert r["serve_cost_month_usd"] == pytest.approx(cost, rel=0.01)
    assert r["serve_verdict"].startswith("OK"), r["serve_verdict"]
    # The SLO batch meets both SLOs and one more request would miss one (or not fit).
    assert r["serve_tpot_s"] <= 0.05 and r["serve_ttft_s"] <= 2
    # The calibration's error gives the replicas and the cost a range, in words (issue 39).
    assert r["serve_replicas_avg_low"] <= r["serve_replicas_avg"] <= r["serve_replicas_avg_high"]
    low, high = r["serve_cost_month_low_usd"], r["serve_cost_month_high_usd"]
    assert low <= r["serve_cost_month_usd"] <= high and low < high
    text = r["serve_error_text"]
    assert text.startswith("throughput within ±14% on 9 in 10 published runs"), text
    assert f"{r['serve_replicas_avg_low']} to {r['serve_replicas_avg_high']} replicas" in text
    # Little's law: the requests in flight per replica are the SLO batch, plus the time
    # each spends waiting for its first token.
    slack = 1 + r["serve_ttft_s"] / (300 * r["serve_tpot_s"])
    assert r["serve_concurrency_per_replica"] <= r["serve_batch_max_slo"] * slack


def _plan(**settings: Any) -> dict[str, Any]:
    return calc("serving", **{**ISSUE, **settings})


def _step(r: dict[str, Any], b: int) -> float:
    """The step model (reference.step_model) from the sheet's terms."""
    gemm = r["serve_gemm_fixed_s"] + b * r["serve_compute_s_per_seq"]
    return max(r["serve_weight_read_s"], gemm) + b * r["serve_per_seq_s"] + r["serve_fixed_s"]


@pytest.mark.parametrize(
    "settings",
    [{}, {"model": "llama3-8b", "slo_tpot_s": 0.02}, {"hardware": "h200", "serve_tp": 4}],
    ids=["issue", "8b-tight", "h200-tp4"],
)
def test_slo_batch_is_the_largest_meeting_both(settings: dict[str, Any]) -> None:
    """The closed form against the definitions: B meets TPOT and TTFT, B + 1 does not
    (or the KV memory stops it)."""
    r = _plan(**settings)
    b, out = r["serve_batch_max_slo"], r["output_len"]

    def tpot(n: int) -> float:
        return _step(r, n) + n * r["serve_prefill_stall_s"] / out

    def ttft(n: int) -> float:
        return r["inf_ttft_overhead_s"] + r["serve_prefill_s"] + _step(r, n)

    assert tpot(b) <= r["slo_tpot_s"] and ttft(b) <= r["slo_ttft_s"], f"{settings}: B={b}"
    over = tpot(b + 1) > r["slo_tpot_s"] or ttft(b + 1) > r["slo_ttft_s"]
    capped = b + 1 > min(r["serve_batch_kv"], r["inf_engine_max_batch"])
    assert over or capped, f"{settings}: B={b} is not the largest"


@settings(max_examples=25, deadline=None)
@given(
    rate=st.floats(0.01, 5000),
    tpot=st.floats(0.005, 1),
    factor=st.floats(0.1, 1),
)
def test_more_traffic_never_fewer_replicas_tighter_tpot_never_larger_batch(
    rate: float, tpot: float, factor: float
) -> None:
    base = _plan(serve_requests_per_s=rate, slo_tpot_s=tpot, serve_tp=2)
    double = _plan(serve_requests_per_s=2 * rate, slo_tpot_s=tpot, serve_tp=2)
    tight = _plan(serve_requests_per_s=rate, slo_tpot_s=tpot * factor, serve_tp=2)
    assert tight["serve_batch_tpot"] <= base["serve_batch_tpot"]
    assert tight["serve_batch_used"] <= base["serve_batch_used"]
    if base["serve_slo_ok"]:
        assert double["serve_replicas_peak"] >= base["serve_replicas_peak"]
        assert double["serve_gpus_peak"] >= base["serve_gpus_peak"]


def test_tp_chosen_is_the_smallest_power_of_two_that_holds_a_slo_batch() -> None:
    r = _plan()
    tp = r["serve_tp_used"]
    n = int(math.log2(tp)) + 1
    assert r[f"serve_cand_fits_{n}"] == 1 and tp <= r["gpus_per_node"]
    assert all(r[f"serve_cand_fits_{k}"] == 0 for k in range(1, n)), "a smaller tp fits"
    assert r["serve_tp_note"].startswith(f"chosen: tp {tp}, the smallest")
    given_tp = _plan(serve_tp=8)
    assert given_tp["serve_tp_used"] == 8 and given_tp["serve_tp_note"] == "given on Inputs: tp 8"
    assert [r[f"serve_cand_tp_{k}"] for k in range(1, SERVE_TP_SLOTS + 1)] == [
        2**k for k in range(SERVE_TP_SLOTS)
    ]


@pytest.mark.parametrize(
    "settings, words",
    [
        ({"slo_ttft_s": 0.05}, "TTFT 0.05 s impossible: one 2000-token prompt prefills in"),
        ({"slo_tpot_s": 0.001}, "TPOT 0.001 s impossible: at batch 1 a decode step takes"),
        ({"model": "llama3-405b", "serve_tp": 1}, "KV memory: at tp 1 the weights (811.7 GB"),
        ({"serve_requests_per_s": 0}, "no serving plan"),
    ],
    ids=["ttft", "tpot", "kv", "no-plan"],
)
def test_impossible_slo_is_a_verdict_in_words(settings: dict[str, Any], words: str) -> None:
    r = _plan(**settings)
    assert r["serve_verdict"].startswith(words), f"{settings}: {r['serve_verdict']!r}"
    assert r["serve_summary_text"] == r["serve_verdict"]
    if settings.get("serve_requests_per_s") != 0:
        assert r["serve_slo_ok"] == 0
        for key in HEADLINE[:1] + HEADLINE[2:]:
            assert r[key] == "none", f"{settings}: {key}={r[key]!r}"


def test_impossible_ttft_from_the_command_line_exits_0_with_words() -> None:
    flags = [*ISSUE_FLAGS[:-4], "--slo-ttft-s", "0.05", "--slo-tpot-s", "0.05"]
    result = CliRunner().invoke(main, ["compute", *flags, "--format", "json"])
    assert result.exit_code == 0, result.output
    r = _keys(result.output)
    assert r["serve_verdict"].startswith("TTFT 0.05 s impossible"), r["serve_verdict"]


@pytest.mark.parametrize("flag", ["--slo-ttft-s", "--slo-tpot-s", "--serve-requests-per-s"])
def test_bad_traffic_input_is_one_line(flag: str) -> None:
    result = CliRunner().invoke(
        main, ["compute", "--model", "llama3-8b", "--hardware", "h100-sxm", flag, "-1"]
    )
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert lines[0].startswith(f"error: {flag}: ") and "-1" in lines[0], lines[0]


def test_months_serving_rows() -> None:
    """0 before the serving start, the monthly cost after (whole months from a 1st),
    a share of it in the month it starts mid-way; training + serving add up."""
    r = _plan(start_date="2027-01-01", serve_start_date="2027-04-01", month_horizon=12)
    monthly = r["serve_cost_month_usd"]
    costs = [r[f"serve_month_cost_usd_{n}"] for n in range(1, MONTH_SLOTS + 1)]
    assert costs[:3] == [0, 0, 0]
    assert costs[3:12] == pytest.approx([monthly] * 9)
    assert costs[12:] == [0] * (MONTH_SLOTS - 12), "after the horizon"
    assert r["serve_cost_in_table_usd"] == pytest.approx(9 * monthly)
    training = sum(r[f"month_cost_usd_{n}"] for n in range(1, MONTH_SLOTS + 1))
    assert r["months_total_usd"] == pytest.approx(training + 9 * monthly)
    for n in range(1, MONTH_SLOTS + 1):
        total = r[f"month_cost_usd_{n}"] + r[f"serve_month_cost_usd_{n}"]
        assert r[f"month_total_usd_{n}"] == pytest.approx(total)
    from sheetgen.scenarios.run_fields import FISCAL_YEAR_SLOTS, QUARTER_SLOTS

    quarters = sum(r[f"quarter_serve_cost_usd_{k}"] for k in range(1, QUARTER_SLOTS + 1))
    years = sum(r[f"fy_serve_cost_usd_{k}"] for k in range(1, FISCAL_YEAR_SLOTS + 1))
    assert quarters == pytest.approx(9 * monthly) and years == pytest.approx(9 * monthly)
    assert r["quarter_serve_cost_usd_1"] == 0 and r["quarter_serve_cost_usd_2"] == pytest.approx(
        3 * monthly
    )
    mid = _plan(start_date="2027-01-01", serve_start_date="2027-04-16")
    assert mid["serve_month_cost_usd_4"] == pytest.approx(monthly * 15 / 30)
    assert mid["serve_month_cost_usd_3"] == 0
    impossible = _plan(slo_ttft_s=0.05, serve_start_date="2027-01-01")
    assert impossible["serve_cost_in_table_usd"] == 0


def test_serving_cache_follows_the_window() -> None:
    """Mistral 7B's windowed layers cache at most 4,096 tokens: a 32,000-token request's
    cache is the issue's 536,870,912 bytes, and each step reads at most that much."""
    plan = _plan(model="mistral-7b", prompt_len=2000, output_len=30000, serve_tp=1)
    window_bytes = 2 * 32 * 8 * 128 * 2 * 4096
    assert plan["serve_kv_bytes_per_seq_gpu"] == window_bytes
    assert plan["serve_kv_read_bytes_per_seq"] == window_bytes
    unwindowed = _plan(model="llama3-8b", prompt_len=2000, output_len=30000, serve_tp=1)
    # The average sequence in flight holds P + O/2 = 17,000 tokens, 17,008 in whole blocks.
    assert unwindowed["serve_kv_bytes_per_seq_gpu"] == 2 * 32 * 8 * 128 * 2 * 17008
    assert plan["serve_batch_kv"] > 4 * unwindowed["serve_batch_kv"]  # 17,008 / 4,096


# The workbook against the reference: shipped scenarios and serving scenarios.
def matrix_items() -> list[dict[str, Any]]:
    return [
        {"name": "issue 23 example", **ISSUE, "serve_start_date": "2027-03-15"},
        {"name": "impossible TTFT", **ISSUE, "slo_ttft_s": 0.05},
        {"name": "impossible TPOT", "model": "llama3-8b", "serve_requests_per_s": 3,
         "slo_tpot_s": 0.001, "serve_tp": 1},
        {"name": "weights do not fit", "model": "llama3-405b", "serve_requests_per_s": 3,
         "serve_tp": 1},
        {"name": "MLA MoE tp 8, own price", "model": "deepseek-v3", "hardware": "h200",
         "serve_requests_per_s": 5, "serve_tp": 8, "kv_dtype": "fp8", "weight_dtype": "fp8",
         "serve_price_per_gpu_hour": 3.5, "price_basis": "reserved"},
        {"name": "nothing fits a node of 4", "model": "llama3-405b", "serve_requests_per_s": 1,
         "prompt_len": 30000, "output_len": 2000, "gpus_per_node": 4},
        {"name": "8B tp 2 given, fp8 peak", "model": "llama3-8b", "serve_tp": 2,
         "serve_requests_per_s": 250, "serve_avg_to_peak": 0.3, "peak_dtype": "fp8",
         "serve_hours_per_month": 500, "start_date": "2026-11-20",
         "serve_start_date": "2026-12-31"},
        {"name": "no serving plan", "model": "llama3-8b", "hardware": "a100-80gb"},
        {"name": "Mistral window, long answers", "model": "mistral-7b", "serve_requests_per_s": 4,
         "prompt_len": 2000, "output_len": 30000},
        {"name": "Gemma 2 local and global", "model": "gemma2-27b", "serve_requests_per_s": 2,
         "prompt_len": 8000, "output_len": 8000},
        # tp 8 would hold the batch but splits neither Qwen's 28 query heads nor
        # Phi-3-medium's 10 KV heads: the largest power of two that splits them is used.
        {"name": "Qwen 7B tp chosen: 8 does not split the heads", **QWEN_LONG},
        {"name": "Phi-3-medium shape tp chosen", **PHI3_SHORT},
    ]  # fmt: skip


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory):
    items = matrix_items()
    for item in items:
        item.setdefault("hardware", "h100-sxm")
    return build_matrix(tmp_path_factory.mktemp("serving"), items, "serving")


@pytest.fixture(scope="module")
def pycel_values(matrix):
    return recalc_pycel(matrix[0])


def names() -> list[str]:
    return [item["name"] for item in matrix_items()]


@pytest.mark.parametrize("scenario", names())
def test_pycel_equals_reference(matrix, pycel_values, scenario: str) -> None:
    _, _, reference = matrix
    bad = mismatches(pycel_values, reference, [scenario])
    assert not bad, f"{len(bad)} keys differ in pycel:\n" + "\n".join(bad[:40])


def test_no_error_cells_and_words_where_impossible(pycel_values) -> None:
    bad = {k: v for k, v in pycel_values.items() if v is None or is_error(v)}
    assert not bad, f"error cells: {list(bad.items())[:10]}"
    verdict = pycel_values[("Serving", "serve_verdict", "impossible TTFT")]
    assert verdict.startswith("TTFT 0.05 s impossible"), verdict
    assert pycel_values[("Serving", "serve_batch_max_slo", "impossible TTFT")] == "none"
    summary = pycel_values[("Summary", "serve_summary_text", "issue 23 example")]
    assert summary.startswith("40 req/s peak: 35 replicas x 2 GPUs = 70 GPUs, 36 on average"), (
        summary
    )


def test_serve_keys_are_live_formulas(matrix) -> None:
    import openpyxl

    from sheetgen.workbook.grid import FIRST_SCENARIO_COL

    ws = openpyxl.load_workbook(matrix[0])["Serving"]
    rows = {row[0].value: row for row in ws.iter_rows() if row[0].value}
    for key in ("serve_tp_used", *HEADLINE, "serve_verdict"):
        cell = rows[key][FIRST_SCENARIO_COL - 1]
        assert isinstance(cell.value, str) and cell.value.startswith("="), f"{key}: {cell.value}"


def test_shipped_scenarios_pycel_equals_reference(tmp_path) -> None:
    from sheetgen.reference import compute
    from sheetgen.scenarios.files import default_scenario_path, load_scenarios
    from sheetgen.workbook import write_workbook

    scenarios = load_scenarios(default_scenario_path())
    path = write_workbook(scenarios, tmp_path / "defaults.xlsx", cache_values=False)
    values = recalc_pycel(path)
    reference = {s.name: compute(s) for s in scenarios}
    bad = mismatches(values, reference)
    assert not bad, f"{len(bad)} keys differ in pycel:\n" + "\n".join(bad[:40])


@pytest.mark.libreoffice
def test_libreoffice_equals_reference(matrix) -> None:
    values = libreoffice_values(matrix[0])
    _, _, reference = matrix
    bad = mismatches(values, reference)
    assert not bad, f"{len(bad)} keys differ in LibreOffice:\n" + "\n".join(bad[:40])
    errors = {k: v for k, v in values.items() if v is None or is_error(v)}
    assert not errors, f"LibreOffice error cells: {list(errors.items())[:10]}"


@pytest.mark.gnumeric
def test_gnumeric_equals_reference(matrix) -> None:
    from helpers import gnumeric_values

    values = gnumeric_values(matrix[0])
    _, _, reference = matrix
    bad = mismatches(values, reference)
    assert not bad, f"{len(bad)} keys differ in Gnumeric:\n" + "\n".join(bad[:40])


# Published serving throughput (sheetgen serving-check) and docs/DESIGN.md.
def test_design_doc_holds_the_serving_check_table() -> None:
    from pathlib import Path

    from sheetgen.calibration import serving_check

    results = [serving_check.evaluate(r) for r in serving_check.load()]
    text = (Path(__file__).resolve().parents[1] / "docs" / "DESIGN.md").read_text()
    block = text.split("<!-- serving-check:start -->\n", 1)[1].split("<!-- serving-check:end -->")[
        0
    ]
    assert block.strip() == serving_check.markdown(results).strip(), (
        "docs/DESIGN.md's serving-check block differs from `sheetgen serving-check --format "
        "markdown`"
    )


def test_serving_check_rows_name_their_source() -> None:
    from sheetgen.calibration import serving_check

    runs = serving_check.load()
    assert len(runs) >= 30
    assert len({r.id for r in runs}) == len(runs)
    for r in runs:
        assert r.row.startswith(("table ", "build ")) and r.published > 0, r.id
        assert r.role in ("fit", "check") and r.figure in serving_check.FIGURES, r.id
        assert {"model", "hardware", "serve_tp", "prompt_len", "output_len"} <= set(r.scenario)


def test_serving_check_command_prints_error_summary() -> None:
    result = CliRunner().invoke(main, ["serving-check"])
    assert result.exit_code == 0, result.output
    assert "median |error|" in result.output and "worst" in result.output
    for figure in ("output tok/s", "time per output token", "time to first token"):
        assert f"{figure}, fit rows:" in result.output, figure
