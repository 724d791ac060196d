"""Issue 41, items 2 and 3: the accelerators of 2026 (GB200 NVL72, B300, MI355X, MI325X,
TPU v6e, Trainium2) with a source for every figure, the fast-interconnect domain that
`gpus_per_node` defaults to, FP4 weight formats (MXFP4, NVFP4) with their scale bytes and
the FP4 peak; the new keys equal the reference in LibreOffice and the in-process engine;
the Hardware sheet computes the same in IronCalc and Formualizer."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from helpers import build_matrix, calc, expect, gnumeric_values, libreoffice_values, mismatches

from sheetgen.catalog import presets
from sheetgen.catalog.parse import make_hardware
from sheetgen.checking.recalc import recalc_pycel
from sheetgen.cli import main
from sheetgen.errors import SheetgenError
from sheetgen.reference.weight_formats import weight_format_peak_tflops
from sheetgen.scenarios.files import scenario_from_dict
from sheetgen.scenarios.run_fields import HARDWARE_SLOTS
from sheetgen.scenarios.scenario import HARDWARE_FIELDS

ROOT = Path(__file__).resolve().parents[1]
HARDWARE_DIR = ROOT / "presets" / "hardware"
NEW = ("gb200", "b300", "mi355x", "mi325x", "tpu-v6e", "trainium2")
# The domain each preset carries: HGX/DGX and AMD platforms 8, the NVL72 rack 72, a
# trn2.48xlarge 16, the v6e pod 256; TPU v5e/v5p keep the 8 they planned with before.
DOMAIN = {
    "gb200": 72, "b300": 8, "b200": 8, "h100-sxm": 8, "h100-pcie": 8, "h200": 8, "h800": 8,
    "a100-40gb": 8, "a100-80gb": 8, "l40s": 8, "rtx-4090": 8, "mi300x": 8, "mi325x": 8,
    "mi355x": 8, "tpu-v5e": 8, "tpu-v5p": 8, "tpu-v6e": 256, "trainium2": 16,
}  # fmt: skip
# Dense FP4 peaks (TFLOP/s) where the chip has FP4 tensor cores; 0 elsewhere.
FP4 = {"b200": 9000, "gb200": 10000, "b300": 13500, "mi355x": 10066.3}


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_presets_hardware_lists_the_new_accelerators_with_sources() -> None:
    out = run("presets", "hardware", "--format", "json")
    assert out.exit_code == 0, out.output
    rows = {r["id"]: r for r in json.loads(out.output)}
    for hw_id in NEW:
        assert hw_id in rows, f"{hw_id} missing from `presets hardware`"
        assert rows[hw_id]["source"], f"{hw_id}: no source"
        assert rows[hw_id]["as_of"], f"{hw_id}: no date"
    assert rows["gb200"]["fast_domain"] == 72
    assert rows["mi355x"]["fp4_tflops"] == pytest.approx(10066.3)


@pytest.mark.parametrize("hw_id", sorted(DOMAIN))
def test_every_figure_has_its_source(hw_id: str) -> None:
    """Every number a preset file gives (fast_domain_gpus and peak_fp4_tflops included)
    has a source naming where it comes from; new presets say 'not calibrated' for the
    kernel efficiencies they borrow."""
    spec = yaml.safe_load((HARDWARE_DIR / f"{hw_id}.yaml").read_text())
    sources = spec["sources"]
    given = [k for k in HARDWARE_FIELDS if k in spec]
    missing = [k for k in given if not sources.get(k)]
    assert not missing, f"{hw_id}: no source for {missing}"
    assert "fast_domain_gpus" in given, f"{hw_id}: no fast_domain_gpus"
    if hw_id in NEW:
        assert "not calibrated" in sources["gemm_eff_bf16"], f"{hw_id}: {sources['gemm_eff_bf16']}"
        assert str(spec["as_of"])[:2] == "20", f"{hw_id}: as_of {spec['as_of']!r}"


@pytest.mark.parametrize("hw_id", sorted(DOMAIN))
def test_domain_and_fp4_peak(hw_id: str) -> None:
    hw = presets.hardware()[hw_id]
    assert hw.fast_domain_gpus == DOMAIN[hw_id], f"{hw_id}: domain {hw.fast_domain_gpus}"
    assert hw.peak_fp4_tflops == pytest.approx(FP4.get(hw_id, 0)), f"{hw_id}: FP4 peak"


def test_slots_hold_every_preset_and_eight_custom_rows() -> None:
    assert HARDWARE_SLOTS == len(presets.hardware()) + 8


@pytest.mark.parametrize(
    ("hardware", "given", "expected"),
    [
        ("gb200", None, 72),
        ("gb200", 0, 72),
        ("gb200", 4, 4),
        ("h100-sxm", None, 8),
        ("tpu-v5e", None, 8),  # unchanged: what it planned with before issue 41
        ("tpu-v6e", None, 256),
        ("trainium2", None, 16),
    ],
)
def test_gpus_per_node_defaults_to_the_domain(hardware: str, given, expected: int) -> None:
    settings = {} if given is None else {"gpus_per_node": given}
    r = calc(f"{hardware} node {given}", hardware=hardware, model="llama3-8b", **settings)
    assert r["gpus_per_node"] == expected, f"{hardware}, given {given}: {r['gpus_per_node']}"
    assert r["fast_domain_gpus"] == DOMAIN[hardware]


def test_nvl72_keeps_expert_traffic_on_nvlink() -> None:
    """tp 8 x ep 8 = 64 GPUs: inside one NVL72 domain every expert all-to-all peer shares
    the domain (no byte crosses the network); with 8-GPU nodes (gpus_per_node 8 on the
    same GB200) an ep group's ranks are expert-tp = 8 apart, one per node, so every byte that
    leaves a GPU crosses the network (the MoE clock's in-node / cross-node split)."""
    layout = {"model": "mixtral-8x7b", "n_gpus": 128, "tp": 8, "ep": 8, "expert_tp": 8, "zero_stage": 1}  # fmt: skip
    rack = calc("gb200 rack", hardware="gb200", **layout)
    node = calc("gb200 8-node", hardware="gb200", gpus_per_node=8, **layout)
    expect(rack, "moe_ep_ranks_per_node", 8, rel=1e-12)
    expect(node, "moe_ep_ranks_per_node", 1, rel=1e-12)
    expect(rack, "comm_ep_inter_bytes", 0, abs=1e-6)
    expect(node, "comm_ep_intra_bytes", 0, abs=1e-6)
    assert rack["comm_ep_intra_bytes"] > 0 and node["comm_ep_inter_bytes"] > 0
    assert rack["comm_ep_exposed_seconds"] < node["comm_ep_exposed_seconds"]


def test_a_moved_scenario_keeps_the_node_it_was_given() -> None:
    """Resolution happens once, when the scenario is made: moving a resolved scenario to
    another accelerator (as the Hardware sheet's reference does) keeps its node."""
    s = scenario_from_dict({"name": "h", "model": "llama3-8b", "hardware": "h100-sxm"})
    moved = replace(s, hardware=presets.hardware()["gb200"])
    assert s.run.gpus_per_node == moved.run.gpus_per_node == 8


@pytest.mark.parametrize(
    ("spec", "field", "says"),
    [
        ({"fast_domain_gpus": 2.5}, "fast_domain_gpus", "whole number"),
        ({"fast_domain_gpus": 0}, "fast_domain_gpus", "> 0"),
        ({"peak_fp4_tflops": -1}, "peak_fp4_tflops", ">= 0"),
    ],
)
def test_bad_new_hardware_fields_name_the_field(spec: dict, field: str, says: str) -> None:
    base = {"id": "x", "peak_bf16_tflops": 1, "peak_fp8_tflops": 0, "mem_gb": 8,
            "hbm_tbps": 1, "tdp_w": 1, "intra_node_gb_per_s": 1, "inter_node_gb_per_s": 1}  # fmt: skip
    with pytest.raises(SheetgenError) as e:
        make_hardware({**base, **spec})
    assert e.value.field == f"hardware.{field}" and says in e.value.message, str(e.value)


def test_a_team_preset_without_the_new_fields_gets_an_hgx_node_and_no_fp4() -> None:
    hw = make_hardware(
        {
            "id": "x",
            "peak_bf16_tflops": 1,
            "peak_fp8_tflops": 0,
            "mem_gb": 8,
            "hbm_tbps": 1,
            "tdp_w": 1,
            "intra_node_gb_per_s": 1,
            "inter_node_gb_per_s": 1,
        }  # fmt: skip
    )
    assert hw.fast_domain_gpus == 8 and hw.peak_fp4_tflops == 0


# Bytes per weight, block scales included: MXFP4 = 4-bit element + one 8-bit scale per
# 32 values (4.25 bits); NVFP4 = 4-bit element + one 8-bit (FP8) scale per 16 (4.5 bits).
FP4_BYTES = {"mxfp4": (4 + 8 / 32) / 8, "nvfp4": (4 + 8 / 16) / 8}


@pytest.mark.parametrize("fmt", sorted(FP4_BYTES))
def test_fp4_weights_carry_their_scale_bytes(fmt: str) -> None:
    assert FP4_BYTES == {"mxfp4": 0.53125, "nvfp4": 0.5625}
    r = calc(f"70B {fmt}", model="llama3-70b", weight_dtype=fmt)
    expect(r, "weight_dtype_bytes", FP4_BYTES[fmt], rel=1e-15)
    expect(r, "inf_weight_bytes", r["params_total"] * FP4_BYTES[fmt], rel=1e-12)


@pytest.mark.parametrize(
    ("hw_id", "fmt", "peak"),
    [
        ("b200", "mxfp4", "fp4"),
        ("gb200", "nvfp4", "fp4"),
        ("mi355x", "mxfp4", "fp4"),
        ("h100-sxm", "mxfp4", "fp8"),  # no FP4 tensor cores: the FP8 peak
        ("a100-80gb", "nvfp4", "bf16"),  # neither FP4 nor FP8: BF16
        ("h100-sxm", "fp8", "fp8"),
        ("tpu-v6e", "fp8", "bf16"),
        ("b200", "int4", "bf16"),  # weight-only: dequantized to BF16
        ("b300", "bf16", "bf16"),
    ],
)
def test_peak_for_a_weight_format(hw_id: str, fmt: str, peak: str) -> None:
    hw = presets.hardware()[hw_id]
    want = getattr(hw, f"peak_{peak}_tflops")
    assert weight_format_peak_tflops(hw, fmt) == want, f"{hw_id} {fmt}: expected {peak}"
    r = calc(f"{hw_id} {fmt}", hardware=hw_id, model="llama3-8b", weight_dtype=fmt)
    expect(r, "weight_format_peak_flops", want * 1e12, rel=1e-12)


# Every new accelerator and both FP4 formats, in a workbook compared key by key.
MATRIX = [
    {"name": "405B on NVL72", "model": "llama3-405b", "hardware": "gb200", "n_gpus": 1024,
     "tp": 8, "pp": 4, "zero_stage": 1, "recompute": "full", "global_batch_tokens": 16777216,
     "seq_len": 8192, "weight_dtype": "nvfp4"},
    {"name": "70B on B300 fp8", "model": "llama3-70b", "hardware": "b300", "n_gpus": 64,
     "tp": 8, "zero_stage": 1, "peak_dtype": "fp8", "recipe": "fp8-te", "weight_dtype": "mxfp4"},
    {"name": "Mixtral on MI355X", "model": "mixtral-8x7b", "hardware": "mi355x", "n_gpus": 64,
     "tp": 2, "ep": 4, "zero_stage": 1, "weight_dtype": "mxfp4", "kv_dtype": "fp8"},
    {"name": "8B on MI325X, 16 per node", "model": "llama3-8b", "hardware": "mi325x",
     "n_gpus": 16, "tp": 2, "gpus_per_node": 16},
    {"name": "8B on a v6e pod", "model": "llama3-8b", "hardware": "tpu-v6e", "n_gpus": 256,
     "tp": 4, "zero_stage": 3},
    {"name": "8B on Trainium2", "model": "llama3-8b", "hardware": "trainium2", "n_gpus": 32,
     "tp": 4, "gpus_per_node": 0, "peak_dtype": "fp8", "recipe": "fp8-te"},
]  # fmt: skip
NEW_KEYS = (
    "peak_fp4_flops", "weight_format_peak_flops", "fast_domain_gpus", "gpus_per_node",
    "chk_node_within_domain", "hw_node_1",
)  # fmt: skip


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    return build_matrix(tmp_path_factory.mktemp("accel"), MATRIX, "accelerators")


def test_matrix_reaches_every_new_accelerator_and_format(matrix) -> None:
    _, scenarios, ref = matrix
    assert {s.hardware.id for s in scenarios} == set(NEW)
    assert {s.run.weight_dtype for s in scenarios} >= {"mxfp4", "nvfp4"}
    assert ref["405B on NVL72"]["gpus_per_node"] == 72
    assert ref["8B on Trainium2"]["gpus_per_node"] == 16
    # 16 GPUs per node on an 8-GPU Infinity Fabric platform: warned, on every engine.
    assert ref["8B on MI325X, 16 per node"]["chk_node_within_domain"] == 0
    assert ref["405B on NVL72"]["chk_node_within_domain"] == 1


def test_libreoffice_equals_reference(matrix) -> None:
    path, _, ref = matrix
    values = libreoffice_values(path)
    bad = mismatches(values, ref)
    assert not bad, "LibreOffice differs:\n" + "\n".join(bad[:20])
    seen = {k for (_sheet, k, _s) in values}
    assert set(NEW_KEYS) <= seen


def test_gnumeric_equals_reference(matrix) -> None:
    path, _, ref = matrix
    bad = mismatches(gnumeric_values(path), ref)
    assert not bad, "Gnumeric differs:\n" + "\n".join(bad[:20])


def test_inprocess_engine_equals_reference(matrix) -> None:
    path, _, ref = matrix
    bad = mismatches(recalc_pycel(path), ref)
    assert not bad, "pycel differs:\n" + "\n".join(bad[:20])


@pytest.mark.parametrize("engine", ["ironcalc", "formualizer"])
def test_default_workbook_is_the_same_in_other_engines(engine: str, tmp_path: Path) -> None:
    """IronCalc (and Apache POI) read an empty Presets cell through INDEX as 0: the
    Hardware sheet's unused slots must not depend on it (99 IronCalc cells before)."""
    pytest.importorskip(engine)
    from helpers import benchmark_script

    bench = benchmark_script("other_engines")
    from sheetgen.engines.common import read_values
    from sheetgen.reference import compute
    from sheetgen.scenarios.files import default_scenario_path, load_scenarios
    from sheetgen.workbook import write_workbook

    scenarios = load_scenarios(default_scenario_path())
    src = write_workbook(scenarios, tmp_path / "default.xlsx", cache_values=False)
    out = tmp_path / f"{engine}.xlsx"
    getattr(bench, f"_{engine}")(src, out)
    values = read_values(out)
    wrong = bench.wrong_cells(values, {s.name: compute(s) for s in scenarios})
    assert not wrong, f"{engine}: {len(wrong)} cells differ, e.g. {wrong[:5]}"
    assert len({k for (sheet, k, _s) in values if sheet == "Hardware"}) > HARDWARE_SLOTS * 10


def test_hardware_sheet_moves_a_plan_into_each_accelerators_domain() -> None:
    """The Hardware sheet compares another accelerator in its own fast domain: an
    H100 plan whose expert-tp·ep = 64 crosses 8-GPU nodes keeps its expert all-to-all
    on NVLink in the GB200 slot (72), while the scenario's own slot keeps its node."""
    from sheetgen.reference.hardware_compare import hardware_compare

    s = scenario_from_dict(
        {
            "name": "moe",
            "model": "mixtral-8x7b",
            "hardware": "h100-sxm",
            "n_gpus": 128,
            "tp": 8,
            "ep": 8,
            "expert_tp": 8,
            "zero_stage": 1,
        }  # fmt: skip
    )
    r = hardware_compare(s)
    slot = {r[f"hw_id_{n}"]: n for n in range(1, HARDWARE_SLOTS + 1)}
    assert r[f"hw_node_{slot['h100-sxm']}"] == 8
    assert r[f"hw_node_{slot['gb200']}"] == 72
    assert r[f"hw_node_{slot['tpu-v6e']}"] == 256
    # B200 shares GB200's NVLink and network figures but not its 72-GPU domain.
    b200, gb200 = slot["b200"], slot["gb200"]
    assert r[f"hw_ep_peers_{gb200}"] == 8 and r[f"hw_ep_inter_bytes_{gb200}"] == 0
    assert r[f"hw_ep_peers_{b200}"] == 1 and r[f"hw_ep_intra_bytes_{b200}"] == 0
    assert r[f"hw_comm_mp_seconds_{gb200}"] < r[f"hw_comm_mp_seconds_{b200}"]


# gpt-oss-120b's shape (openai/gpt-oss-120b config.json: num_hidden_layers 36,
# hidden_size 2880, num_attention_heads 64, num_key_value_heads 8, head_dim 64,
# intermediate_size 2880, num_local_experts 128, num_experts_per_tok 4, vocab_size
# 201088, attention_bias true); its sinks and windows are the model importer's (issue
# 41, item 1), left out here: they change neither the weights' bytes nor the fit.
GPT_OSS_120B = {
    "id": "gpt-oss-120b-shape", "name": "gpt-oss-120b shape", "n_layers": 36,
    "hidden_size": 2880, "n_heads": 64, "n_kv_heads": 8, "head_dim": 64, "ffn_size": 2880,
    "vocab_size": 201088, "n_experts": 128, "experts_per_token": 4, "moe_ffn_size": 2880,
    "qkv_bias": 1, "out_bias": 1, "mlp_bias": 1,
}  # fmt: skip


def test_gpt_oss_120b_in_mxfp4_fits_one_h100() -> None:
    """The model card's claim (runs on a single 80 GB GPU): 116.8B weights at 0.53125 B
    are 62 GB, inside an H100's 77 GB usable. Even with the attention and embeddings
    kept in BF16 (as the checkpoint ships them; only the experts are MXFP4) the weights
    are 65 GB and fit beside the cache and the overhead."""
    r = calc("gpt-oss-120b mxfp4", model=GPT_OSS_120B, hardware="h100-sxm",
             weight_dtype="mxfp4", inf_tp=1)  # fmt: skip
    assert r["params_total"] == pytest.approx(116.83e9, rel=1e-3)
    expect(r, "inf_weight_bytes", r["params_total"] * 0.53125, rel=1e-12)
    assert r["inf_fits"] == 1, f"does not fit: {r['inf_weight_bytes'] / 1e9:.1f} GB of weights"
    experts = 36 * 128 * 3 * 2880 * 2880  # routed experts' matrices, MXFP4 in the checkpoint
    mixed = experts * 0.53125 + (r["params_total"] - experts) * 2
    cache = r["kv_bytes_per_sequence"] * r["inf_batch"]
    assert mixed + cache + r["inf_overhead_bytes"] < r["mem_usable_per_gpu"]
    bf16 = calc("gpt-oss-120b bf16", model=GPT_OSS_120B, hardware="h100-sxm", inf_tp=1)
    assert bf16["inf_fits"] == 0  # 234 GB in BF16: the format is what makes it fit
