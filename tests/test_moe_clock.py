"""Mixture-of-Experts on the clock (issue 40): the grouped expert GEMMs, the all-to-all
split by node, the token permutation and the load imbalance; the MoE calibration rows of
presets/benchmarks/mbridge_moe.yaml; the DeepSeek-V3 scenario against its report.
(LibreOffice and the in-process engine against the reference on these keys:
tests/test_throughput.py, the clock matrix, whose DeepSeek-V3 and Mixtral cases set
every new input.)"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from sheetgen.calibration import benchmarks
from sheetgen.catalog import presets
from sheetgen.reference.moe_step import cross_node_copies, ep_ranks_per_node, ep_split
from sheetgen.reference.parallelism import predicted
from sheetgen.scenarios.files import load_scenarios, scenario_from_dict
from sheetgen.scenarios.run_fields import EP_COMM_OVERLAP_MEGATRON, RUN_DEFAULTS

ROOT = Path(__file__).resolve().parents[1]
MOE_KEYS = (
    "moe_routed_flops_hw_per_token",
    "moe_tokens_per_expert",
    "moe_gemm_narrow_dim",
    "moe_grouped_gemm_efficiency",
    "step_moe_gemm_seconds",
    "moe_permute_bytes_per_step_gpu",
    "step_moe_permute_seconds",
    "comm_ep_intra_bytes",
    "comm_ep_inter_bytes",
    "comm_ep_seconds",
)
MOE_ROWS = [b for b in benchmarks.load() if b.source == "mbridge-moe"]
# The DeepSeek-V3 report (arXiv:2412.19437), Table 1: 2,664K H800 GPU-hours for 14.8T
# tokens of pre-training.
DEEPSEEK_V3_TOKENS_PER_S_PER_GPU = 14.8e12 / (2.664e6 * 3600)


def mixtral(**run) -> dict:
    base = {"name": "m", "model": "mixtral-8x7b", "hardware": "h100-sxm", "n_gpus": 64,
            "tp": 2, "ep": 8, "zero_stage": 1, "sequence_parallel": 1, "seq_len": 4096,
            "global_batch_tokens": "4Mi", "train_tokens": "1T", "mfu_source": "layout"}  # fmt: skip
    return predicted(scenario_from_dict({**base, **run}))


@pytest.mark.parametrize("model", ["llama3-8b", "llama3-70b", "gpt3-175b"])
def test_every_moe_term_is_zero_for_a_dense_model(model) -> None:
    s = scenario_from_dict(
        {"name": "d", "model": model, "hardware": "h100-sxm", "n_gpus": 64, "tp": 4,
         "pp": 2, "train_tokens": "1T", "ep_dispatch_dedup": 1, "moe_load_imbalance": 3}
    )  # fmt: skip
    lay = predicted(s)
    for key in MOE_KEYS:
        assert lay[key] == 0, f"{model}: {key} = {lay[key]}, not 0"
    parts = lay["step_gemm_seconds"] + lay["step_attn_seconds"] + lay["step_elementwise_seconds"]
    assert lay["step_compute_seconds"] == pytest.approx(parts, rel=1e-12)


@pytest.mark.parametrize(
    ("etp", "ep", "node", "want"),
    [(1, 8, 8, 8), (1, 16, 8, 8), (2, 8, 8, 4), (8, 4, 8, 1), (1, 64, 8, 8), (2, 4, 8, 4)],
)
def test_an_ep_group_is_etp_apart_and_the_node_holds_what_fits(etp, ep, node, want) -> None:
    assert ep_ranks_per_node(etp, ep, node) == want


def test_cross_node_copies_plain_and_once_per_node() -> None:
    # Plain all-to-all: the k copies bound for the other nodes' peers.
    assert cross_node_copies(8, 8, 16, 0) == pytest.approx(8 * 8 / 16)
    # Once per node, two nodes: the other node unless all 8 experts are local.
    assert cross_node_copies(8, 8, 16, 1) == pytest.approx(1 - 0.5**8)
    for ep in (16, 32, 64, 256):
        assert cross_node_copies(8, 8, ep, 1) < cross_node_copies(8, 8, ep, 0), ep
    assert cross_node_copies(8, 8, 8, 0) == cross_node_copies(8, 8, 8, 1) == 0
    # What leaves a GPU splits into its node's peers and the rest (plain all-to-all).
    intra, inter = ep_split(1000.0, 8, 32, 8, 0)
    assert intra + inter == pytest.approx(1000.0)
    assert intra / inter == pytest.approx(7 / 24)


def test_the_all_to_all_waits_for_the_slower_link_and_the_most_loaded_rank() -> None:
    inside = mixtral(tp=1, expert_tp=1, ep=8)
    across = mixtral(tp=1, expert_tp=1, ep=16, n_gpus=64)
    assert inside["comm_ep_inter_bytes"] == 0
    assert across["comm_ep_inter_bytes"] > 0
    assert across["comm_ep_seconds"] > inside["comm_ep_seconds"]
    once = mixtral(tp=1, expert_tp=1, ep=16, ep_dispatch_dedup=1)
    assert once["comm_ep_inter_bytes"] < across["comm_ep_inter_bytes"]
    heavy = mixtral(tp=1, expert_tp=1, ep=16, moe_load_imbalance=1.5)
    assert heavy["comm_ep_seconds"] == pytest.approx(1.5 * across["comm_ep_seconds"])
    assert heavy["step_moe_gemm_seconds"] == pytest.approx(1.5 * across["step_moe_gemm_seconds"])
    slow = mixtral(tp=1, expert_tp=1, ep=16, ep_a2a_efficiency=0.5)
    assert slow["comm_ep_seconds"] == pytest.approx(2 * across["comm_ep_seconds"])


def test_the_grouped_gemm_rises_with_the_square_of_its_narrowest_side() -> None:
    lay = mixtral(tp=1, expert_tp=1, ep=8, micro_batch=1, seq_len=1024)
    # b s ep k / (cp E) = 1 x 1024 x 8 x 2 / 8 tokens per expert; the weights' sides are
    # 4096 and 14336: the tokens are the narrowest side.
    assert lay["moe_tokens_per_expert"] == 2048
    assert lay["moe_gemm_narrow_dim"] == 2048
    e_max = presets.hardware()["h100-sxm"].gemm_eff_bf16  # a BF16 run
    got = lay["moe_grouped_gemm_efficiency"]
    want = e_max * 2048**2 / (2048**2 + RUN_DEFAULTS["moe_gemm_dim_half"] ** 2)
    assert got == pytest.approx(want, rel=1e-12)
    fewer = mixtral(tp=1, expert_tp=1, ep=4, micro_batch=1, seq_len=1024)
    assert fewer["moe_grouped_gemm_efficiency"] < got
    # Expert tensor parallelism splits the weights and gathers the tokens of its ranks.
    split = mixtral(tp=2, expert_tp=2, ep=8, micro_batch=1, seq_len=1024)
    assert split["moe_tokens_per_expert"] == 2048
    whole = mixtral(tp=2, expert_tp=1, ep=8, micro_batch=1, seq_len=1024)
    assert whole["moe_tokens_per_expert"] == 1024


def test_the_permutation_reads_and_writes_the_routed_copies() -> None:
    base = mixtral(moe_permute_passes=16)
    assert mixtral(moe_permute_passes=0)["step_moe_permute_seconds"] == 0
    double = mixtral(moe_permute_passes=32)
    assert double["moe_permute_bytes_per_step_gpu"] == pytest.approx(
        2 * base["moe_permute_bytes_per_step_gpu"]
    )
    assert double["step_compute_seconds"] - base["step_compute_seconds"] == pytest.approx(
        base["step_moe_permute_seconds"]
    )


def test_the_moe_rows_are_what_their_transcription_writes() -> None:
    cmd = [sys.executable, str(ROOT / "tools" / "transcribe_mbridge_moe.py")]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout == (ROOT / "presets" / "benchmarks" / "mbridge_moe.yaml").read_text()


def test_moe_rows_fit_and_check_are_named_in_the_design() -> None:
    design = (ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    section = design[design.index("### Mixture-of-Experts on the clock") :]
    fit = [b.id for b in MOE_ROWS if b.role == "fit"]
    check = [b.id for b in MOE_ROWS if b.role == "check"]
    assert fit and len(fit) < len(MOE_ROWS) / 2
    for rid in fit + check:
        assert rid in section, f"{rid}: not named in DESIGN.md's MoE section"
    assert all(b.moe for b in MOE_ROWS)
    assert not any(b.moe for b in benchmarks.load() if b.source != "mbridge-moe")


def test_rows_whose_recipe_overlaps_the_all_to_all_carry_the_fitted_share() -> None:
    for b in MOE_ROWS:
        share = b.scenario["ep_comm_overlap"]
        assert share in (0, EP_COMM_OVERLAP_MEGATRON), b.id
        assert (share > 0) == ("235b" in b.id), b.id
        assert b.scenario["moe_load_imbalance"] == 1, b.id  # the tables force balance


def test_the_deepseek_v3_scenario_runs_at_its_reported_rate() -> None:
    """The shipped scenario, with the report's communication (dispatch once per node,
    DualPipe's overlap) and DeepGEMM's grouped-GEMM rate, on the layout clock: within
    10% of the 1,543 tokens/s per H800 the report's GPU-hours imply."""
    s = load_scenarios(str(ROOT / "presets" / "scenarios" / "deepseek-v3-phases.yaml"))[0]
    s = replace(s, run=replace(s.run, mfu_source="layout"))
    got = predicted(s)["tokens_per_s_per_gpu_predicted"]
    assert DEEPSEEK_V3_TOKENS_PER_S_PER_GPU == pytest.approx(1543.2, abs=0.05)
    assert got == pytest.approx(DEEPSEEK_V3_TOKENS_PER_S_PER_GPU, rel=0.10), (
        f"DeepSeek-V3 scenario: {got:,.0f} tokens/s per GPU, published 1,543"
    )


def test_the_inputs_sheet_states_the_fitted_overlap_share() -> None:
    """The Inputs row of ep_comm_overlap names the share fitted for Megatron-Core's
    overlap switch: a refit that changes it fails here until the row says the new one."""
    text = (ROOT / "templates" / "20_inputs.yaml").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if "{key: ep_comm_overlap," in line)
    assert f"{EP_COMM_OVERLAP_MEGATRON}" in row, row[:200]


def test_a_layout_typed_as_the_tables_print_it_runs_near_its_rate() -> None:
    """The defaults (expert_tp 1, a plain all-to-all, the fitted overlap) are what a
    layout typed with only the tables' printed columns needs: DESIGN.md states median
    |error| 5.3% on the MoE rows so typed."""
    import statistics

    recipe_facts = ("expert_tp", "ep_dispatch_dedup", "ep_comm_overlap")
    recipe_facts += ("pp_split_embedding_loss",)
    errors = []
    for b in MOE_ROWS:
        printed = {k: v for k, v in b.scenario.items() if k not in recipe_facts}
        errors.append(abs(benchmarks.evaluate(replace(b, scenario=printed)).error))
    assert statistics.median(errors) == pytest.approx(0.053, abs=0.0005)
    assert sum(e <= 0.20 for e in errors) == 10


# Every key this work added, in the workbook, against the reference: LibreOffice and the
# in-process engine, on MoE layouts that exercise each branch (a group inside a node and
# across nodes, once per node or plain, experts split over tp or whole, imbalanced,
# recomputed) and a dense one where each is 0.
NEW_KEYS = (
    *MOE_KEYS,
    "moe_ep_ranks_per_node",
    "moe_ep_cross_node_copies",
    "link_ep_bytes_per_s",
    "hwc_moe_flops_gpu_step",
    "expert_tp",
    "ep_a2a_efficiency",
    "ep_dispatch_dedup",
    "moe_gemm_dim_half",
    "moe_permute_passes",
    "moe_load_imbalance",
)
NEW_KEY_MATRIX = [
    {"name": "Mixtral ep16 across nodes, experts over tp, imbalanced", "model": "mixtral-8x7b",
     "hardware": "h100-sxm", "n_gpus": 64, "tp": 2, "ep": 16, "expert_tp": 0,
     "sequence_parallel": 1, "zero_stage": 1, "peak_dtype": "fp8", "seq_len": 4096,
     "global_batch_tokens": "2Mi", "moe_load_imbalance": 1.3, "ep_a2a_efficiency": 0.8},
    {"name": "DeepSeek-V3 once per node, 2 layers recomputed", "model": "deepseek-v3",
     "hardware": "h800", "n_gpus": 1024, "pp": 16, "ep": 64, "zero_stage": 1,
     "peak_dtype": "fp8", "seq_len": 4096, "global_batch_tokens": "32Mi",
     "ep_dispatch_dedup": 1, "recompute": "full", "recompute_layers": 2,
     "moe_gemm_dim_half": 679, "moe_permute_passes": 8, "mem_headroom": 0},
    {"name": "Llama 3 8B dense", "model": "llama3-8b", "hardware": "a100-80gb", "n_gpus": 16,
     "tp": 2, "zero_stage": 1, "ep_dispatch_dedup": 1, "moe_load_imbalance": 2},
]  # fmt: skip


@pytest.fixture(scope="module")
def new_key_matrix(tmp_path_factory):
    from helpers import build_matrix

    return build_matrix(tmp_path_factory.mktemp("moe"), NEW_KEY_MATRIX, "moe")


def test_every_new_key_is_in_the_reference(new_key_matrix) -> None:
    _path, _scenarios, expected = new_key_matrix
    for name, values in expected.items():
        missing = [k for k in NEW_KEYS if k not in values]
        assert not missing, f"{name}: {missing}"
    mixtral_values = expected[NEW_KEY_MATRIX[0]["name"]]
    assert mixtral_values["comm_ep_inter_bytes"] > 0 and mixtral_values["expert_tp"] == 0


def _has_every_new_key(values) -> None:
    """The recalculated workbook holds each new key (the comparison above covers every
    key the workbook and the reference share)."""
    keys = {key for _sheet, key, _scenario in values}
    missing = [k for k in NEW_KEYS if k not in keys]
    assert not missing, missing


@pytest.mark.libreoffice
def test_libreoffice_equals_reference_on_every_new_key(new_key_matrix) -> None:
    from helpers import libreoffice_values, mismatches

    path, _scenarios, expected = new_key_matrix
    values = libreoffice_values(path)
    assert not mismatches(values, expected), "\n".join(mismatches(values, expected)[:30])
    _has_every_new_key(values)


def test_inprocess_engine_equals_reference_on_every_new_key(new_key_matrix) -> None:
    from helpers import mismatches

    from sheetgen.checking.recalc import recalc_pycel

    path, _scenarios, expected = new_key_matrix
    values = recalc_pycel(path)
    assert not mismatches(values, expected), "\n".join(mismatches(values, expected)[:30])
    _has_every_new_key(values)


def test_an_moe_input_typed_out_of_range_fails_its_check(new_key_matrix, tmp_path) -> None:
    """Typed into the workbook past the validation, a load imbalance below 1 turns the
    MoE inputs' check (an error check: the verdict goes red) to 0."""
    import openpyxl

    from sheetgen.checking.check import check_workbook

    path, scenarios, _expected = new_key_matrix
    copy = tmp_path / "moe.xlsx"
    copy.write_bytes(path.read_bytes())
    wb = openpyxl.load_workbook(copy)
    ws = wb["Inputs"]
    rows = {ws.cell(row=r, column=1).value: r for r in range(1, ws.max_row + 1)}
    ws.cell(row=rows["moe_load_imbalance"], column=4).value = 0.5
    wb.save(copy)
    report = check_workbook(copy, engine="pycel")
    found = {(f.kind, f.key, f.scenario) for f in report.problems}
    assert ("check failed", "chk_moe_clock_inputs", scenarios[0].name) in found, found
