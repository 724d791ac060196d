"""Issue 10: a workbook edited in a spreadsheet stays right, and says when a plan cannot run.

dp is derived from n_gpus on Inputs, micro-batches from the batch; scenario names live
on Inputs; plan_ok / plan_verdict; the fewest GPUs for the scenario's own ZeRO stage and
for ZeRO-3; the batch limit.  The spreadsheet tests edit a generated workbook the way a
person would (openpyxl stands in for Excel), recalculate it in LibreOffice and compare
every key with ``sheetgen compute`` on the edited inputs.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
import yaml
from helpers import build_matrix, calc, expect, gnumeric_values, libreoffice_values, mismatches

from sheetgen.checking.recalc import recalc_pycel
from sheetgen.reference import compute
from sheetgen.scenarios.files import default_scenario_path, load_scenarios, scenario_from_dict
from sheetgen.workbook.templates import check_keys, load_templates

DEFAULT_ITEMS = yaml.safe_load(default_scenario_path().read_text())["scenarios"]
GB = 10**9


@pytest.mark.parametrize("item", DEFAULT_ITEMS, ids=[i["name"] for i in DEFAULT_ITEMS])
def test_default_plans_fit_and_are_ok(item: dict) -> None:
    r = compute(scenario_from_dict(item))
    assert (r["plan_ok"], r["fits_per_gpu"], r["plan_verdict"]) == (1, 1, "OK"), (
        f"{item['name']}: plan_ok={r['plan_ok']} fits={r['fits_per_gpu']}: {r['plan_verdict']}"
    )
    failing = [k for k in check_keys("error") if r[k] != 1]
    assert not failing, f"{item['name']}: error checks fail: {failing}"
    assert r["mfu_source"] == "layout", f"{item['name']}: not on the layout clock"
    assert r["plan_days_wall"] <= 120, f"{item['name']}: {r['plan_days_wall']:.1f} days"
    assert isinstance(r["n_gpus_min"], int) and r["n_gpus_min"] <= r["n_gpus"], (
        f"{item['name']}: n_gpus_min={r['n_gpus_min']!r} for a plan that fits {r['n_gpus']}"
    )


def test_70b_on_8_h100_at_zero0_does_not_fit() -> None:
    r = calc("70B 8 H100 ZeRO-0", model="llama3-70b", n_gpus=8, zero_stage=0, seq_len=8192)
    expect(r, "plan_ok", 0, abs=0)
    need = f"{round(r['mem_total_calibrated'] / GB, 1):g}"
    # The whole 85.5 GB an H100 reports (issue 40: no flat headroom).
    assert r["plan_verdict"] == f"does not fit: {need} GB needed per GPU, 85.5 GB usable", r
    # No dp helps at ZeRO-0: no count, days left out, and the note says why.
    assert r["n_gpus_min"] == "none" and r["train_days_wall_at_min"] == "–"
    assert r["n_gpus_min_note"].startswith("no count fits: "), r["n_gpus_min_note"]
    assert "ZeRO-0" in r["n_gpus_min_note"]


def test_8b_on_16384_gpus_with_a_4mi_batch_cannot_split_it() -> None:
    r = calc("8B 16k", model="llama3-8b", n_gpus=16384, seq_len=8192, global_batch_tokens="4Mi")
    expect(r, "dp_max_batch", 512, abs=0)  # 4Mi tokens = 512 sequences of 8k
    expect(r, "chk_dp_batch", 0, abs=0)
    expect(r, "batch_splits", 0, abs=0)
    expect(r, "plan_ok", 0, abs=0)
    assert r["plan_verdict"].startswith("batch cannot be split: 0.031 micro-batches"), r
    # The days-vs-GPUs sweep stops at the 512 GPUs the batch keeps busy.
    expect(r, "n_gpus_max_batch", 512, abs=0)
    expect(r, "sweep_gpus_used_6", 512, abs=0)
    assert r["sweep_gpus_used_5"] == r["sweep_gpus_used_6"] == 512
    assert r["sweep_days_5"] == r["sweep_days_6"] > 0


@pytest.mark.parametrize("stage", [1, 2, 3])
def test_n_gpus_min_is_the_fewest_that_fit_at_the_own_zero_stage(stage: int) -> None:
    """At dp_min the plan fits; one replica fewer it does not (70B, tp 8, full recompute)."""
    base = {"model": "llama3-70b", "tp": 8, "recompute": "full", "zero_stage": stage}
    base.update(seq_len=4096, global_batch_tokens="16Mi", sequence_parallel=1)
    r = calc(f"70B ZeRO-{stage}", **base, n_gpus=512)
    d = r["dp_min"]
    assert isinstance(d, int) and d > 1, r["n_gpus_min_note"]
    expect(r, "n_gpus_min", d * 8, abs=0)
    split = "" if 4096 % d == 0 else f"; memory only: the batch does not split evenly over dp {d}"
    assert r["n_gpus_min_note"] == f"ZeRO-{stage}, dp {d} × tp·pp·cp 8{split}"  # 4,096 sequences
    at = calc("at min", **base, n_gpus=d * 8)
    below = calc("below min", **base, n_gpus=(d - 1) * 8)
    expect(at, "fits_per_gpu", 1, abs=0)
    expect(below, "fits_per_gpu", 0, abs=0)
    # ZeRO-3 never needs more GPUs than a lower stage.
    assert r["n_gpus_min_zero3"] <= r["n_gpus_min"]


FEWEST_CASES = [
    (model, stage, oo, op)
    for model, tp, ep in [("llama3-8b", 1, 1), ("llama3-70b", 8, 1), ("mixtral-8x7b", 2, 8)]
    for stage in (0, 1, 2, 3)
    for oo, op in [(0, 0), (1, 0), (1, 1)]
    if not (op and stage < 3)
]


@pytest.mark.parametrize(("model", "stage", "oo", "op"), FEWEST_CASES)
def test_the_fewest_gpu_counts_fit_and_one_replica_fewer_does_not(
    model: str, stage: int, oo: int, op: int
) -> None:
    """n_gpus_min at the scenario's ZeRO stage, and n_gpus_min_zero3, are exact: with
    dp at the count the peak (ZeRO-3 buffer and offload included) fits; one replica
    fewer it does not.  pp 1, so the micro-batches in flight do not change with dp."""
    tp, ep = {"llama3-8b": (1, 1), "llama3-70b": (8, 1), "mixtral-8x7b": (2, 8)}[model]
    base = {"model": model, "tp": tp, "ep": ep, "seq_len": 4096, "recompute": "full"}
    base.update(global_batch_tokens="64Mi", offload_optimizer=oo, offload_params=op)
    for key, zero in (("dp_min", stage), ("dp_min_zero3", 3)):
        r = calc("plan", **base, zero_stage=stage, n_gpus=tp * 4096)
        d = r[key]
        if d == "none":
            continue
        at = calc("at min", **base, zero_stage=zero, n_gpus=d * tp)
        assert at["fits_per_gpu"] == 1, (
            f"{model} ZeRO-{zero} offload {oo}/{op}: {key} {d} does not fit "
            f"({at['mem_total_calibrated'] / GB:.2f} GB > {at['mem_usable_per_gpu'] / GB:.2f})"
        )
        if d - 1 >= max(1, ep):  # dp is at least ep / cp
            below = calc("below min", **base, zero_stage=zero, n_gpus=(d - 1) * tp)
            assert below["fits_per_gpu"] == 0, (
                f"{model} ZeRO-{zero} offload {oo}/{op}: dp {d - 1} fits, below {key} {d}"
            )
    if stage == 3:  # the two counts agree when the scenario is at ZeRO-3 already
        assert r["dp_min"] == r["dp_min_zero3"]


def test_the_fewest_gpu_count_fits_the_calibrated_peak() -> None:
    """A measured peak 20% above the model scales every dp's peak by the same factor."""
    base = {"model": "llama3-70b", "tp": 8, "seq_len": 4096, "recompute": "full"}
    base.update(global_batch_tokens="64Mi", zero_stage=1)
    plain = calc("model", **base, n_gpus=512)
    measured = 1.2 * plain["mem_reserved_per_gpu"]  # measured_peak_counter: reserved
    r = calc("measured", **base, n_gpus=512, measured_peak_mem=measured)
    expect(r, "mem_overhead_factor", 1.2, rel=1e-12)
    d = r["dp_min"]
    assert d > plain["dp_min"]
    for dp, fits in ((d, True), (d - 1, False)):
        peak = calc("dp", **base, n_gpus=dp * 8)["mem_device_per_gpu"] * 1.2
        assert (peak <= r["mem_usable_per_gpu"]) is fits, (dp, peak / GB)


def test_the_fewest_gpu_note_says_when_the_batch_does_not_split() -> None:
    base = {"model": "llama3-8b", "seq_len": 8192, "global_batch_tokens": "4Mi"}
    r = calc("8B ZeRO-3", **base, zero_stage=3, n_gpus=8)
    d = r["dp_min"]
    assert 512 % d, f"the case needs a dp_min that does not divide 512 sequences, got {d}"
    assert r["n_gpus_min_note"] == (
        f"ZeRO-3, dp {d} × tp·pp·cp 1; memory only: the batch does not split evenly over dp {d}"
    )
    item = {"model": "llama3-70b", "n_gpus": 64, "tp": 8, "sequence_parallel": 1,
            "zero_stage": 3, "seq_len": 8192, "global_batch_tokens": "4Mi",
            "recompute": "full"}  # fmt: skip
    r = calc("70B on 64", **item)  # its dp_min splits its batch
    accum = r["global_batch_seqs"] / (r["micro_batch"] * r["dp_min"])
    assert accum >= 1 and accum == int(accum), accum
    assert r["n_gpus_min_note"] == f"ZeRO-{r['zero_stage']}, dp {r['dp_min']} × tp·pp·cp 8"


def test_micro_batches_follow_the_batch_unless_set() -> None:
    base = {"model": "llama3-405b", "n_gpus": 16384, "tp": 8, "pp": 16, "seq_len": 8192}
    r = calc("derived", **base, global_batch_tokens="16Mi")
    expect(r, "pp_microbatches", 0, abs=0)
    expect(r, "pp_microbatches_used", 16, abs=0)  # 2,048 sequences / dp 128
    r = calc("derived, 8Mi", **base, global_batch_tokens="8Mi")
    expect(r, "pp_microbatches_used", 8, abs=0)
    r = calc("set", **base, global_batch_tokens="16Mi", pp_microbatches=4)
    expect(r, "pp_microbatches_used", 4, abs=0)
    expect(r, "chk_pp_microbatches_match", 0, abs=0)


def test_scenario_file_dp_disagreeing_with_n_gpus_is_one_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from sheetgen.cli.commands import main

    spec = tmp_path / "s.yaml"
    item = {"name": "x", "model": "llama3-8b", "hardware": "h100-sxm", "n_gpus": 16, "dp": 4}
    spec.write_text(yaml.safe_dump({"scenarios": [item]}))
    res = CliRunner().invoke(main, ["generate", str(spec), "-o", str(tmp_path / "x.xlsx")])
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "dp 4" in lines[0] and "n_gpus 16" in lines[0], res.output
    assert not (tmp_path / "x.xlsx").exists()


def test_generate_summary_line_says_why_a_plan_is_not_ok(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from sheetgen.cli.commands import main

    out = tmp_path / "x.xlsx"
    args = ["generate", "--model", "llama3-70b", "--hardware", "h100-sxm", "--gpus", "8"]
    res = CliRunner().invoke(main, [*args, "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "NOT OK, does not fit: " in res.output, res.output
    args = ["generate", "--model", "llama3-8b", "--hardware", "h100-sxm", "--gpus", "16384"]
    res = CliRunner().invoke(main, [*args, "--seq-len", "8192", "-o", str(tmp_path / "y.xlsx")])
    assert res.exit_code == 0, res.output
    assert "NOT OK, batch cannot be split: " in res.output, res.output
    # A failing error check is named in the terminal, not only "see the Checks sheet":
    # a measured throughput 48x the chip's peak.
    args = ["generate", "--model", "llama3-8b", "--hardware", "h100-sxm", "--mfu-source",
            "measured", "--measured-tokens-per-s-per-gpu", "1e6"]  # fmt: skip
    res = CliRunner().invoke(main, [*args, "-o", str(tmp_path / "z.xlsx")])
    assert res.exit_code == 0, res.output
    assert "NOT OK, error check failed: MFU used in (0, 1]" in res.output, res.output


# ---------------------------------------------------------------------------
# Spreadsheet engines: the new keys in a matrix, and a default workbook edited by hand

MATRIX = [
    {"name": "fits, ZeRO-3", "model": "llama3-8b", "n_gpus": 8, "zero_stage": 3},
    {"name": "does not fit", "model": "llama3-70b", "n_gpus": 8, "seq_len": 8192},
    {  # 84 GB: within the H100's 85.5 GB, not within the 77 GB usable at 10% headroom
        "name": "fits capacity, not headroom",
        "model": "llama3-8b",
        "mem_headroom": 0.1,
        "n_gpus": 16,
        "zero_stage": 3,
        "recompute": "selective",
        "global_batch_tokens": "3Mi",
        "seq_len": 12288,
    },
    {"name": "batch too small", "model": "llama3-8b", "n_gpus": 16384, "seq_len": 8192},
    {
        "name": "uneven batch, m set",
        "model": "mixtral-8x7b",
        "n_gpus": 96,
        "tp": 2,
        "pp": 4,
        "ep": 4,
        "zero_stage": 2,
        "global_batch_tokens": 3_000_000,
        "pp_microbatches": 6,
        "train_tokens": "250B",
        "recompute": "full",
    },
]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory):
    items = [{"hardware": "h100-sxm", **i} for i in MATRIX]
    return build_matrix(tmp_path_factory.mktemp("edit_proof"), items, "edit_proof")


def test_the_memory_check_agrees_with_the_verdict() -> None:
    """Checks' memory row is the verdict's memory test: a peak that fits the capacity
    but not the headroom is a 0 there, never a green 1 beside a red "does not fit" (a
    budget reviewer reads both pages); it is not counted among the warnings."""
    for item in MATRIX:
        r = calc(
            item["name"], hardware="h100-sxm", **{k: v for k, v in item.items() if k != "name"}
        )
        assert r["chk_mem_fits"] == r["fits_per_gpu"], item["name"]
        if r["plan_verdict"].startswith("does not fit"):
            assert r["chk_mem_fits"] == 0 and r["plan_ok"] == 0, item["name"]
    tight = calc(
        "tight", hardware="h100-sxm", **{k: v for k, v in MATRIX[2].items() if k != "name"}
    )
    assert tight["mem_usable_per_gpu"] < tight["mem_total_per_gpu"] <= tight["gpu_mem_bytes"]


def test_matrix_exercises_every_verdict(matrix) -> None:
    _path, _scenarios, reference = matrix
    verdicts = {r["plan_verdict"].split(":")[0] for r in reference.values()}
    assert {"OK", "does not fit", "batch cannot be split"} <= verdicts, verdicts
    assert any(r["n_gpus_min"] == "none" for r in reference.values())


def test_new_keys_in_libreoffice(matrix) -> None:
    path, _scenarios, reference = matrix
    bad = mismatches(libreoffice_values(path), reference)
    assert not bad, "\n".join(bad[:30])


def test_new_keys_in_gnumeric(matrix) -> None:
    path, _scenarios, reference = matrix
    bad = mismatches(gnumeric_values(path), reference)
    assert not bad, "Gnumeric:\n" + "\n".join(bad[:30])


def test_new_keys_in_inprocess_engine(matrix) -> None:
    """pycel, the in-process engine the suite uses (formulas is tested in test_recalc)."""
    path, _scenarios, reference = matrix
    bad = mismatches(recalc_pycel(path), reference)
    assert not bad, "pycel:\n" + "\n".join(bad[:30])


def _inputs_rows(ws) -> dict[str, int]:
    return {ws.cell(row=r, column=1).value: r for r in range(1, ws.max_row + 1)}


def test_edit_gpus_tp_and_name_in_a_spreadsheet(tmp_path: Path) -> None:
    """Default workbook: 70B's GPUs x 4 and renamed, 8B's tp 1 -> 2, edited on Inputs only."""
    import openpyxl

    from sheetgen.checking.check import check_workbook
    from sheetgen.readback.access import read_inputs
    from sheetgen.workbook import write_workbook

    path = write_workbook(load_scenarios(default_scenario_path()), tmp_path / "plan.xlsx")
    wb = openpyxl.load_workbook(path)
    ws = wb["Inputs"]
    rows = _inputs_rows(ws)
    items = [dict(i) for i in DEFAULT_ITEMS]
    old_name = items[1]["name"]
    new_name = "70B on 4x the H100s (edited)"
    ws.cell(row=rows["n_gpus"], column=5).value = items[1]["n_gpus"] * 4
    ws.cell(row=rows["scenario_name"], column=5).value = new_name
    ws.cell(row=rows["tp"], column=4).value = 2
    wb.save(path)
    items[1].update(n_gpus=items[1]["n_gpus"] * 4, name=new_name)
    items[0]["tp"] = 2
    expected = {s.name: compute(s) for s in (scenario_from_dict(i) for i in items)}

    values = libreoffice_values(path)
    bad = mismatches(values, expected)
    assert not bad, "\n".join(bad[:30])
    e70 = expected[new_name]
    assert values[("Inputs", "dp", new_name)] == items[1]["n_gpus"] / 8 == e70["dp"]
    assert values[("Inputs", "dp", items[0]["name"])] == items[0]["n_gpus"] / 2
    for name in expected:
        failing = [
            k for k in [*check_keys("error"), "checks_ok"] if values[("Checks", k, name)] != 1
        ]
        assert not failing, f"{name}: error checks fail after the edit: {failing}"
    # The new name heads every templated sheet; the old one is gone everywhere.
    sheets = {t.sheet for t in load_templates()}
    named = {sheet for (sheet, _key, scen) in values if scen == new_name}
    assert named == sheets, f"sheets without the new name: {sorted(sheets - named)}"
    assert not [k for k in values if k[2] == old_name], "the old name is still a header"
    # inputs and check read the name (and no typed dp) from Inputs.
    assert read_inputs(path).names[1] == new_name
    report = check_workbook(path)
    problems = [f for f in report.findings if f.is_problem]
    assert not problems, "\n".join(str(f) for f in problems[:10])
    # Gnumeric computes the edited workbook the same way.
    bad = mismatches(gnumeric_values(path), expected)
    assert not bad, "Gnumeric:\n" + "\n".join(bad[:30])


def test_sheet_headers_and_chart_titles_refer_to_the_name(tmp_path: Path) -> None:
    import openpyxl

    from sheetgen.workbook import write_workbook

    path = write_workbook(load_scenarios(default_scenario_path()), tmp_path / "plan.xlsx")
    wb = openpyxl.load_workbook(path)
    row = _inputs_rows(wb["Inputs"])["scenario_name"]
    for t in load_templates():
        ws = wb[t.sheet]
        got = [ws.cell(row=4, column=4 + i).value for i in range(len(DEFAULT_ITEMS))]
        prefix = "=" if t.sheet == "Inputs" else "='Inputs'!"
        want = [f"{prefix}{col}{row}" for col in "DEF"]
        assert got == want, f"{t.sheet} headers: {got}"
    with zipfile.ZipFile(path) as z:
        charts = [n for n in z.namelist() if n.startswith("xl/charts/chart")]
        scatter = [z.read(n).decode() for n in charts]
        scatter = [x for x in scatter if re.search(r"<(c:)?scatterChart>", x)]
    assert len(scatter) == 2
    for xml in scatter:
        series = re.findall(r"<(?:c:)?ser>.*?</(?:c:)?ser>", xml, re.S)
        titles = [re.search(r"<(?:c:)?tx><(?:c:)?strRef><(?:c:)?f>([^<]*)<", x) for x in series]
        assert series and all(titles), f"a series title is not a cell reference: {xml[:400]}"
        assert all(t.group(1).startswith(("'Sweeps'!", "'Inputs'!")) for t in titles)


@pytest.mark.parametrize("item", DEFAULT_ITEMS, ids=[i["name"] for i in DEFAULT_ITEMS])
def test_default_summary_flags_all_pass(item: dict) -> None:
    """Every 1/0 row the Summary colours is 1 for the defaults (plan_uses_phases aside)."""
    summary = next(t for t in load_templates() if t.sheet == "Summary")
    r = compute(scenario_from_dict(item))
    flags = [row.key for row in summary.keyed_rows if row.fmt == "flag"]
    failing = [k for k in flags if k != "plan_uses_phases" and r[k] != 1]
    assert "plan_ok" in flags and not failing, f"{item['name']}: {failing}"


def test_summary_marks_figures_of_a_plan_that_is_not_ok(tmp_path: Path) -> None:
    """Conditional formats: verdict first, days / GPU-hours / cost and their ranges red and
    struck through when plan_ok is not 1, and "all error checks pass" green only beside an OK plan."""
    import openpyxl

    from sheetgen.workbook import write_workbook

    path = write_workbook(load_scenarios(default_scenario_path()), tmp_path / "plan.xlsx")
    ws = openpyxl.load_workbook(path)["Summary"]
    rows = _inputs_rows(ws)
    # First rows under the header, the verdict first (issue 11's executive block).
    assert rows["plan_verdict"] == 6 and rows["plan_ok"] == 7
    rules = {}
    for rng in ws.conditional_formatting:
        for rule in rng.rules:
            rules.setdefault(next(iter(rng.sqref.ranges)).min_row, []).append(rule)
    # Every figure of the plan, its range and per-token cost too: a reviewer must not
    # quote a struck-through plan's optimistic days or low cost as if it could run.
    figures = ("plan_days_wall", "train_days_wall_low", "train_days_wall_high", "finish_date",
               "finish_date_high", "plan_gpu_hours", "cost_total_usd", "cost_total_usd_low",
               "cost_total_usd_high", "cost_total_per_m_tokens", "energy_kwh",
               "energy_cost_usd")  # fmt: skip
    for key in figures:
        formulas = [f for rule in rules.get(rows[key], []) for f in rule.formula]
        assert f"D${rows['plan_ok']}<>1" in formulas, (key, formulas)
        assert any(rule.dxf.font.strike for rule in rules[rows[key]] if rule.dxf.font)
    green = [r.formula for r in rules[rows["checks_ok"]] if r.type == "expression"]
    assert [f"AND(D{rows['checks_ok']}=1,D${rows['plan_ok']}=1)"] in green, green


@pytest.mark.parametrize("sheet", ["Schedule", "Phases", "Budget", "Range", "Months"])
def test_money_sheets_show_the_verdict_and_mark_a_plan_that_is_not_ok(
    tmp_path: Path, sheet: str
) -> None:
    """A reviewer who prints only the Budget (or Schedule, Range, Months, Phases) sees the
    verdict at its top, and every day, GPU-hour and dollar of the training plan marked
    when the plan cannot run; the serving rows (their own verdict) are left alone."""
    import openpyxl

    from sheetgen.workbook import write_workbook
    from sheetgen.workbook.conditional import PLAN_UNITS

    path = write_workbook(load_scenarios(default_scenario_path()), tmp_path / "plan.xlsx")
    wb = openpyxl.load_workbook(path)
    ws, checks = wb[sheet], _inputs_rows(wb["Checks"])
    rows = {k: r for k, r in _inputs_rows(ws).items() if k}
    assert rows["plan_verdict"] == 6 and rows["plan_ok"] == 7, sheet
    for key in ("plan_verdict", "plan_ok"):  # the Checks sheet's cells, mirrored
        assert ws.cell(rows[key], 4).value == f"='Checks'!D{checks[key]}", (sheet, key)
    rules: dict[int, list] = {}
    for rng in ws.conditional_formatting:
        for rule in rng.rules:
            rules.setdefault(next(iter(rng.sqref.ranges)).min_row, []).append(rule)
    units = {r: ws.cell(r, 3).value for r in rows.values()}
    money = [k for k, r in rows.items() if units[r] in PLAN_UNITS and not k.startswith("serve_")]
    assert money, sheet
    for key in money:
        formulas = [f for rule in rules.get(rows[key], []) for f in rule.formula]
        assert f"D${rows['plan_ok']}<>1" in formulas, (sheet, key, formulas)
    for key in (k for k in rows if k.startswith("serve_")):
        formulas = [f for rule in rules.get(rows[key], []) for f in rule.formula]
        assert f"D${rows['plan_ok']}<>1" not in formulas, (sheet, key)


def test_check_reports_a_plan_that_is_not_ok_as_a_warning(tmp_path: Path) -> None:
    from sheetgen.checking.check import check_workbook
    from sheetgen.scenarios.files import load_scenarios_text
    from sheetgen.workbook import write_workbook

    item = {"name": "70B on 8", "model": "llama3-70b", "hardware": "h100-sxm", "n_gpus": 8}
    scenarios = load_scenarios_text(yaml.safe_dump({"scenarios": [item]}))
    path = write_workbook(scenarios, tmp_path / "x.xlsx")
    libreoffice_values(path)  # skips (or fails in CI) without LibreOffice
    report = check_workbook(path)
    assert not report.problems, report.problems
    warned = {(f.kind, f.key) for f in report.findings}
    assert ("warning", "plan_ok") in warned, sorted(warned)
    from sheetgen.checking.findings import finding_line

    plan = next(f for f in report.findings if f.key == "plan_ok")
    assert finding_line(plan).startswith("WARN plan not OK: plan_ok on Checks"), finding_line(plan)


# The order people edit in (issue 11, item 8): these first, in this order.
EDIT_ORDER = [
    "scenario_name",
    "model",
    "hardware",
    "n_gpus",
    "train_tokens",
    "seq_len",
    "global_batch_tokens",
    "tp",
    "pp",
    "dp",
    "mfu",
    "goodput",
    "price_per_gpu_hour",
    "start_date",
]
RARELY_EDITED = ["measured_tokens_per_s_per_gpu", "phase_1_tokens", "sweep_gpus_1"]


def test_inputs_in_the_order_people_edit_them() -> None:
    inputs = next(t for t in load_templates() if t.sheet == "Inputs")
    keys = [r.key for r in inputs.keyed_rows]
    at = {k: i for i, k in enumerate(keys)}
    assert [at[k] for k in EDIT_ORDER] == sorted(at[k] for k in EDIT_ORDER), EDIT_ORDER
    # Looked-up preset values stay formulas and sit below everything edited at the top.
    lookups = [r.key for r in inputs.keyed_rows if "[models." in (r.formula or "")]
    lookups += [r.key for r in inputs.keyed_rows if "[hardware." in (r.formula or "")]
    assert lookups and min(at[k] for k in lookups) > at["start_date"]
    assert all(not r.input for r in inputs.keyed_rows if r.key in lookups)
    assert min(at[k] for k in RARELY_EDITED) > max(at[k] for k in lookups)
    # dp sits right below the layout inputs it is derived from, and is not an input.
    dp = next(r for r in inputs.keyed_rows if r.key == "dp")
    assert dp.input is None and dp.formula == "{n_gpus}/({tp}*{pp}*{cp})"
    assert at["dp"] - at["ep"] == 1 and at["n_gpus"] < at["tp"]
