"""The generated workbook, recalculated by real spreadsheet engines, equals the reference.

One workbook holds a matrix of scenarios: every model preset, a dozen
accelerators, and every recipe, recomputation mode, attention kernel, peak
dtype and KV / weight dtype somewhere.  It is written *without* cached values,
so every number read back was computed by the engine from the formulas.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from helpers import build_matrix, gnumeric_values, is_error, libreoffice_values, mismatches

from sheetgen.catalog import presets
from sheetgen.checking.recalc import read_values, recalc_pycel, values_libreoffice
from sheetgen.reference import compute
from sheetgen.scenarios.files import load_scenarios, scenario_from_dict
from sheetgen.scenarios.run_fields import CHOICES
from sheetgen.workbook import write_workbook
from sheetgen.workbook.templates import key_index, load_templates

HARDWARE_CYCLE = [
    "h100-sxm",
    "h200",
    "a100-80gb",
    "mi300x",
    "b200",
    "h800",
    "l40s",
    "rtx-4090",
    "tpu-v5p",
    "tpu-v5e",
    "h100-pcie",
    "a100-40gb",
]


def budget_settings(i: int) -> dict:
    """Budget, calendar, calibration, phase and sweep inputs that vary with i."""
    out: dict = {
        "price_per_gpu_hour_reserved": 1.0 + 0.25 * i,
        "price_basis": "reserved" if i % 2 else "on-demand",
        "pue": 1.1 + 0.05 * i,
        "electricity_price_per_kwh": [0, 0.05, 0.123][i % 3],
        "contingency": [0, 0.1, 0.25][i % 3],
        "start_date": f"{2025 + i % 3}-{1 + i % 12:02d}-{1 + (2 * i) % 28:02d}",
    }
    if i % 4 == 1:
        out["measured_tokens_per_s_per_gpu"] = 150 + 10 * i
    elif i % 4 == 2:
        out["measured_step_seconds"] = 30 + i
    elif i % 4 == 3:
        out["measured_peak_mem"] = 7.5e10 + 1e9 * i
    total = round((i + 1) * 0.3 * 10**12)
    if i % 3 == 0:
        # Phases that add up to the training tokens, the last at a longer context.
        out["phases"] = [
            {"tokens": "100B", "seq_len": 2048, "global_batch_tokens": "2Mi", "mfu": 0.35},
            {"tokens": total - 2 * 10**11 - i * 10**9, "global_batch_tokens": "8Mi"},
            {"tokens": 10**11, "mfu": 0.33},
            {"tokens": i * 10**9 or "1B", "seq_len": 32768, "mfu": 0.3},
        ][: 4 - (i % 2)]
    elif i % 3 == 1:
        # Phases that do not add up (the Checks warning) and fewer than the slots.
        out["phases"] = [{"tokens": "50B", "seq_len": 1024, "mfu": 0.45}]
    if i == 2:
        out["sweep_seq_lens"] = [512, 1024, 3000, 10000, "128Ki", "1Mi"]
        out["sweep_gpus"] = [1, 2, 3, 1000, 10000, 100000]
    return out


def matrix_items() -> list[dict]:
    """Scenario mappings covering every model preset and every option value."""
    recipes = itertools.cycle(CHOICES["recipe"])
    recomputes = itertools.cycle(CHOICES["recompute"])
    attentions = itertools.cycle(CHOICES["attention"])
    dtypes = CHOICES["kv_dtype"]
    hardware = itertools.cycle(HARDWARE_CYCLE)
    items = []
    for i, model_id in enumerate(presets.models()):
        hw = next(hardware)
        fp8 = presets.get_hardware(hw).peak_fp8_tflops > 0 and i % 3 == 0
        items.append(
            {
                "name": f"{model_id} on {hw}",
                "model": model_id,
                "hardware": hw,
                "n_gpus": [1, 8, 64, 512, 16384][i % 5],
                "train_tokens": f"{(i + 1) * 0.3:.1f}T",
                "seq_len": [2048, 4096, 8192][i % 3],
                "micro_batch": 1 + i % 2,
                "global_batch_tokens": "4Mi",
                "recipe": next(recipes),
                "recompute": next(recomputes),
                "attention": next(attentions),
                "peak_dtype": "fp8" if fp8 else "bf16",
                "causal_factor": 0.5 if i % 4 else 1,
                "mfu": 0.3 + 0.01 * i,
                "goodput": 0.9,
                "price_per_gpu_hour": 1.5 + i,
                "weight_dtype": dtypes[i % len(dtypes)],
                "kv_dtype": dtypes[(i + 3) % len(dtypes)],
                "inf_batch": 1 + i,
                "inf_context": 1024 * (1 + i),
                **budget_settings(i),
                # Framework memory (issue 12)
                "act_profile": CHOICES["act_profile"][i % 3],
                "kv_block_tokens": [16, 1, 32][i % 3],
                # Fine-tuning (issue 22): read under recipe lora / qlora.
                "lora_rank": [8, 16, 64][i % 3],
                "lora_targets": CHOICES["lora_targets"][i % 3],
                # Memory as measured (issue 40).
                "optimizer_state_dtype": CHOICES["optimizer_state_dtype"][i % 4],
                "measured_peak_counter": CHOICES["measured_peak_counter"][i % 3],
            }
        )
    # Custom architectures defined in the scenario file land in the Presets tables.
    items.append(
        {
            "name": "custom GQA model",
            "model": {"base": "llama3-8b", "n_layers": 20, "n_kv_heads": 4, "vocab_size": 64000},
            "hardware": {"base": "h100-sxm", "mem_gb": 96, "peak_bf16_tflops": 900},
            "n_gpus": 16,
            "recompute": "full",
            "attention": "naive",
        }
    )
    items.append(
        {
            "name": "custom GPT with dropout",
            "model": {
                "name": "tiny GPT",
                "n_layers": 6,
                "hidden_size": 512,
                "n_heads": 8,
                "ffn_size": 2048,
                "vocab_size": 32000,
                "norm": "layernorm",
                "mlp": "gelu",
                "qkv_bias": 1,
                "out_bias": 1,
                "mlp_bias": 1,
                "dropout": 1,
                "tied_embeddings": 1,
                "pos_embeddings": 1024,
            },
            "hardware": "rtx-4090",
            "n_gpus": 1,
            "attention": "naive",
            "recompute": "none",
        }
    )
    return items


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory):
    return build_matrix(tmp_path_factory.mktemp("matrix"), matrix_items(), "matrix")


@pytest.fixture(scope="module")
def lo_values(matrix):
    return libreoffice_values(matrix[0])


@pytest.fixture(scope="module")
def gn_values(matrix):
    return gnumeric_values(matrix[0])


@pytest.fixture(scope="module")
def inprocess_values(matrix):
    """The in-process engine the suite uses: pycel (formulas is tested in test_recalc)."""
    return recalc_pycel(matrix[0])


def scenario_ids() -> list[str]:
    return [item["name"] for item in matrix_items()]


def test_matrix_covers_every_option(matrix) -> None:
    _, scenarios, _ = matrix
    used = {
        "model": {s.model.id for s in scenarios},
        "hardware": {s.hardware.id for s in scenarios},
        **{k: {getattr(s.run, k) for s in scenarios} for k in CHOICES},
    }
    assert set(presets.models()) <= used["model"]
    assert len(used["hardware"] & set(presets.hardware())) >= 3
    for key, accepted in CHOICES.items():
        assert set(accepted) <= used[key], f"{key}: {set(accepted) - used[key]} never exercised"


def test_template_keys_equal_reference_keys() -> None:
    """A template row with no reference value, or a reference key with no row, fails."""
    s = scenario_from_dict({"name": "x", "model": "llama3-8b", "hardware": "h100-sxm"})
    ref = set(compute(s))
    rows = set(key_index())
    assert not rows - ref, f"template rows without reference values: {sorted(rows - ref)}"
    assert not ref - rows, f"reference keys without template rows: {sorted(ref - rows)}"


def test_check_kinds_match_reference() -> None:
    """The workbook's master flag, the verdict's tests and the warning count cover the
    reference's flags; every Checks flag is one kind, and a warning never decides the
    verdict (plan_ok reads the master flag and the verdict's tests only)."""
    from sheetgen.reference.checks import ERROR_FLAGS, VERDICT_TESTS, WARNING_FLAGS
    from sheetgen.workbook.templates import check_keys, load_templates

    assert set(check_keys("error")) == set(ERROR_FLAGS)
    assert set(check_keys("verdict_test")) == set(VERDICT_TESTS)
    assert set(check_keys("warning")) == set(WARNING_FLAGS)
    assert not {*ERROR_FLAGS} & {*VERDICT_TESTS} and not {*VERDICT_TESTS} & {*WARNING_FLAGS}
    checks = next(t for t in load_templates() if t.sheet == "Checks")
    plan_ok = next(r for r in checks.keyed_rows if r.key == "plan_ok")
    assert set(plan_ok.keys_used()) == {"checks_ok", "fits_per_gpu", "batch_splits"}


@pytest.mark.libreoffice
@pytest.mark.parametrize("scenario", scenario_ids())
def test_libreoffice_equals_reference(matrix, lo_values, scenario: str) -> None:
    _, _, reference = matrix
    bad = mismatches(lo_values, reference, [scenario])
    assert not bad, f"{len(bad)} keys differ in LibreOffice:\n" + "\n".join(bad[:40])


@pytest.mark.gnumeric
@pytest.mark.parametrize("scenario", scenario_ids())
def test_gnumeric_equals_reference(matrix, gn_values, scenario: str) -> None:
    _, _, reference = matrix
    bad = [b for b in mismatches(gn_values, reference, [scenario]) if not within_date_rounding(b)]
    assert not bad, f"{len(bad)} keys differ in Gnumeric:\n" + "\n".join(bad[:40])


def within_date_rounding(line: str) -> bool:
    """A month's GPU-hours are days recovered from date serials (finish - start, both
    near 46,000): for a plan of minutes (gpt-oss-20b on 16,384 GPUs: 75 s) the rounding
    of start + days to a double is ~1e-8 of the days, and Gnumeric, which rounds
    differently from Python and LibreOffice, lands as far from the reference. Such a
    line is accepted up to 1e-7 relative: two ulps of such a serial (7.3e-12 days each)
    over a plan of 13 seconds or more."""
    import re

    m = re.match(r"Months month_gpu_hours_\d+ \[.*\]: .*\(rel diff ([-+.e\d]+)\)$", line)
    return bool(m) and abs(float(m.group(1))) < 1e-7


@pytest.mark.parametrize("scenario", scenario_ids())
def test_inprocess_engine_equals_reference(matrix, inprocess_values, scenario: str) -> None:
    _, _, reference = matrix
    bad = mismatches(inprocess_values, reference, [scenario])
    assert not bad, f"{len(bad)} keys differ in pycel:\n" + "\n".join(bad[:40])


@pytest.mark.libreoffice
@pytest.mark.gnumeric
@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_no_blank_or_error_cells(matrix, engine, request) -> None:
    _, scenarios, _ = matrix
    values = request.getfixturevalue({"libreoffice": "lo_values", "gnumeric": "gn_values"}[engine])
    expected = {
        (t.sheet, r.key, s.name) for t in load_templates() for r in t.keyed_rows for s in scenarios
    }
    missing = sorted(expected - set(values))
    assert not missing, f"{engine}: cells not read back: {missing[:20]}"
    bad = {k: v for k, v in values.items() if v is None or v == "" or is_error(v)}
    assert not bad, f"{engine}: blank or error cells: {list(bad.items())[:20]}"


def test_cached_values_visible_without_recalculation(tmp_path: Path) -> None:
    """openpyxl data_only and pandas see the numbers in the file the generator wrote."""
    import pandas as pd

    scenarios = load_scenarios(Path(__file__).parent.parent / "presets/scenarios/default.yaml")
    path = write_workbook(scenarios, tmp_path / "cached.xlsx")
    values = read_values(path)
    reference = {s.name: compute(s) for s in scenarios}
    bad = mismatches(values, reference)
    assert not bad, "cached values differ from the reference:\n" + "\n".join(bad[:20])
    frame = pd.read_excel(path, sheet_name="Summary", header=3)
    row = frame[frame["key"] == "train_days"].iloc[0]
    first = scenarios[0].name
    assert row[first] == pytest.approx(reference[first]["train_days"], rel=1e-12)


@pytest.mark.libreoffice
def test_edited_inputs_follow_in_libreoffice(lo, tmp_path: Path) -> None:
    """Change GPUs, sequence length and the model drop-down; every key follows."""
    import openpyxl

    scenarios = load_scenarios(Path(__file__).parent.parent / "presets/scenarios/default.yaml")
    path = write_workbook(scenarios, tmp_path / "live.xlsx")
    wb = openpyxl.load_workbook(path)
    ws = wb["Inputs"]
    rows = {ws.cell(row=r, column=1).value: r for r in range(1, ws.max_row + 1)}
    ws.cell(row=rows["n_gpus"], column=4).value = 32
    ws.cell(row=rows["seq_len"], column=4).value = 2048
    ws.cell(row=rows["model"], column=5).value = "mixtral-8x7b"
    ws.cell(row=rows["hardware"], column=6).value = "b200"
    wb.save(path)
    values = values_libreoffice(path)

    def edited(s, **changes):
        item = {
            "name": s.name,
            "model": changes.pop("model", s.model.id),
            "hardware": changes.pop("hardware", s.hardware.id),
        }
        run = {k: getattr(s.run, k) for k in s.run.__dataclass_fields__ if k != "dp"}
        run.update(changes)  # dp is a formula on Inputs: it follows n_gpus
        return scenario_from_dict({**item, **run})

    expected = [
        edited(scenarios[0], n_gpus=32, seq_len=2048),
        edited(scenarios[1], model="mixtral-8x7b"),
        edited(scenarios[2], hardware="b200"),
    ]
    reference = {s.name: compute(s) for s in expected}
    bad = mismatches(values, reference)
    assert not bad, "after editing inputs:\n" + "\n".join(bad[:40])
    assert reference[scenarios[1].name]["params_total"] == 46_702_792_704


def test_defined_names_point_at_headline_keys(matrix) -> None:
    import openpyxl

    path, scenarios, _ = matrix
    wb = openpyxl.load_workbook(path)
    headline = {r.key for t in load_templates() for r in t.keyed_rows if r.name and not r.mirror}
    for key in ("params_total", "mem_total", "flops_train", "train_days", "gpu_hours", "cost_usd"):
        assert key in headline
    for key in headline:
        for i in range(len(scenarios)):
            name = f"{key}_{i + 1}"
            assert name in wb.defined_names, f"defined name {name} missing"
            (sheet, cell), *_ = wb.defined_names[name].destinations
            assert wb[sheet][cell.replace("$", "")].value.startswith("=")
            row = wb[sheet][cell.replace("$", "")].row
            assert wb[sheet].cell(row=row, column=1).value == key


def test_presets_tables_read_back_where_the_lookups_look_and_print_a_page_down() -> None:
    """The Presets tables end where the lookups' ranges end, their empty custom rows
    included (readers take a table's rows up to a blank row), each with a sources block
    below; no row is taller than a page, and each table with its title (the first, the
    sheet's title too) fits one page down, so its heading row prints above every row."""
    from sheetgen.readback.reading import table_blocks, used_cells
    from sheetgen.scenarios.files import default_scenario_path
    from sheetgen.workbook.builder import build
    from sheetgen.workbook.layout import plan_layout
    from sheetgen.workbook.presets_sheet import (
        PAGE_HEIGHT_PT,
        preset_rows,
        rows_height,
        source_rows,
    )

    scenarios = load_scenarios(default_scenario_path())
    ws = build(scenarios)[0]["Presets"]
    rows = preset_rows(scenarios)
    n_rows = {t: len(r) for t, r in rows.items()}
    n_sources = {t: len(b) for t, b in source_rows(rows).items()}
    layout = plan_layout(load_templates(), len(scenarios), n_rows, n_sources)
    read = {b.name: (b.header_row + 1, b.last_row) for b in table_blocks(used_cells(ws))}
    assert read == layout.tables
    assert set(layout.sources) == set(layout.tables)
    tallest = max(d.height or 0 for d in ws.row_dimensions.values())
    assert tallest <= PAGE_HEIGHT_PT
    for k, (first, last) in enumerate(layout.tables.values()):
        assert rows_height(ws, 1 if k == 0 else first - 2, last) <= PAGE_HEIGHT_PT
