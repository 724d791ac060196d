"""Property-based tests over random valid scenarios (hypothesis).

Invariants of the reference hold for any valid input, and on a sample of random
scenarios the LibreOffice-recalculated workbook equals the reference.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import mismatches
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sheetgen.catalog import presets
from sheetgen.catalog.parse import make_model
from sheetgen.reference import compute
from sheetgen.scenarios.files import unique_custom_ids
from sheetgen.scenarios.parse import make_run
from sheetgen.scenarios.run_fields import CHOICES
from sheetgen.scenarios.scenario import Scenario

REL = 1e-9


@st.composite
def models(draw):
    """A preset, or a random but consistent custom architecture."""
    if draw(st.booleans()):
        return presets.get_model(draw(st.sampled_from(sorted(presets.models()))))
    n_kv = draw(st.sampled_from([1, 2, 4, 8]))
    group = draw(st.integers(1, 8))
    head_dim = draw(st.sampled_from([32, 64, 96, 128]))
    n_heads = n_kv * group
    spec = {
        "id": "random-model",
        "n_layers": draw(st.integers(1, 96)),
        "hidden_size": n_heads * head_dim,
        "n_heads": n_heads,
        "n_kv_heads": n_kv,
        "head_dim": head_dim,
        "ffn_size": draw(st.integers(64, 65536)),
        "vocab_size": draw(st.integers(256, 300_000)),
        "tied_embeddings": draw(st.integers(0, 1)),
        "pos_embeddings": draw(st.sampled_from([0, 1024, 2048])),
        "qkv_bias": draw(st.integers(0, 1)),
        "out_bias": draw(st.integers(0, 1)),
        "mlp_bias": draw(st.integers(0, 1)),
        "norm": draw(st.sampled_from(["rmsnorm", "layernorm"])),
        "norms_per_layer": draw(st.integers(1, 4)),
        "mlp": draw(st.sampled_from(["gated", "gelu"])),
        "dropout": draw(st.integers(0, 1)),
    }
    if draw(st.booleans()):
        experts = draw(st.integers(2, 64))
        spec.update(
            n_experts=experts,
            experts_per_token=draw(st.integers(1, min(experts, 8))),
            n_shared_experts=draw(st.integers(0, 2)),
            moe_ffn_size=draw(st.integers(64, 16384)),
            n_dense_layers=draw(st.integers(0, spec["n_layers"] - 1)),
            router_bias=draw(st.integers(0, 1)),
        )
    return make_model(spec)


@st.composite
def scenarios(draw, name: str = "random"):
    model = draw(models())
    hw = presets.get_hardware(draw(st.sampled_from(sorted(presets.hardware()))))
    peak = "fp8" if hw.peak_fp8_tflops > 0 and draw(st.booleans()) else "bf16"
    seq = draw(st.sampled_from([128, 512, 2048, 4096, 8192, 32768]))
    run = make_run(
        {
            "n_gpus": draw(st.integers(1, 20000)),
            "train_tokens": draw(st.integers(10**6, 2 * 10**13)),
            "seq_len": seq,
            "micro_batch": draw(st.integers(1, 16)),
            "global_batch_tokens": seq * draw(st.integers(1, 4096)),
            "recipe": draw(st.sampled_from(CHOICES["recipe"])),
            "attention": draw(st.sampled_from(CHOICES["attention"])),
            "recompute": draw(st.sampled_from(CHOICES["recompute"])),
            "peak_dtype": peak,
            "causal_factor": draw(st.sampled_from([0.5, 1.0])),
            "mfu": draw(st.floats(0.05, 0.8)),
            "goodput": draw(st.floats(0.5, 1.0)),
            # Free, or at least a cent: a price hypothesis shrinks towards 1e-315 makes
            # subnormal costs, which LibreOffice rounds to fewer digits than Python.
            "price_per_gpu_hour": draw(st.one_of(st.just(0.0), st.floats(0.01, 20))),
            "weight_dtype": draw(st.sampled_from(CHOICES["weight_dtype"])),
            "kv_dtype": draw(st.sampled_from(CHOICES["kv_dtype"])),
            "inf_batch": draw(st.integers(1, 256)),
            "inf_context": draw(st.integers(1, 131072)),
            # Framework memory (issue 12)
            "act_profile": draw(st.sampled_from(CHOICES["act_profile"])),
            "kv_block_tokens": draw(st.sampled_from([1, 16, 32])),
        }
    )
    return Scenario(name=name, model=model, hardware=hw, run=run, tables=presets.tables())


def with_run(s: Scenario, **changes) -> Scenario:
    changes.setdefault("dp", None)  # dp is derived from n_gpus / (tp x pp x cp)
    return replace(s, run=replace(s.run, **changes))


PROPERTY_SETTINGS = settings(max_examples=150, deadline=None)


@PROPERTY_SETTINGS
@given(scenarios())
def test_totals_are_sums_of_their_parts(s: Scenario) -> None:
    r = compute(s)
    parts = r["mem_weights"] + r["mem_grads"] + r["mem_master"] + r["mem_optimizer"]
    assert r["mem_static"] == pytest.approx(parts, rel=REL)
    total = r["mem_static"] + r["mem_activations"] + r["mem_logits_live"] + r["mem_overhead"]
    assert r["mem_total"] == pytest.approx(total, rel=REL)
    params = (
        r["params_layers"]
        + r["params_embedding"]
        + r["params_pos_embedding"]
        + r["params_output"]
        + r["params_final_norm"]
    )
    assert r["params_total"] == params
    assert r["params_active"] <= r["params_total"]
    assert r["flops_train_hardware"] >= r["flops_train"] > 0
    assert r["hfu"] >= s.run.mfu * (1 - REL)
    assert r["gpu_hours"] == pytest.approx(s.run.n_gpus * r["train_days_wall"] * 24, rel=REL)
    assert r["train_days_wall"] >= r["train_days"]
    full_cache = r["kv_bytes_per_token"] * s.run.inf_context * s.run.inf_batch
    if s.model.sliding_window == 0 or s.run.inf_context <= s.model.sliding_window:
        assert r["kv_bytes_batch"] == pytest.approx(full_cache, rel=REL)
    else:  # windowed layers cache only the last sliding_window tokens
        assert r["kv_bytes_batch"] < full_cache


@PROPERTY_SETTINGS
@given(scenarios(), st.integers(2, 8))
def test_memory_grows_with_sequence_and_batch(s: Scenario, factor: int) -> None:
    r = compute(s)
    longer = compute(with_run(s, seq_len=s.run.seq_len * factor))
    bigger = compute(with_run(s, micro_batch=s.run.micro_batch * factor))
    for grown in (longer, bigger):
        assert grown["mem_activations"] > r["mem_activations"]
        assert grown["mem_total"] > r["mem_total"]
        assert grown["mem_static"] == r["mem_static"]
    if s.run.recompute != "full":
        # Activations are linear in the micro-batch (full recomputation adds a fixed working set too).
        assert bigger["mem_activations"] == pytest.approx(factor * r["mem_activations"], rel=REL)


@PROPERTY_SETTINGS
@given(scenarios(), st.integers(2, 64))
def test_more_gpus_never_take_longer(s: Scenario, factor: int) -> None:
    r = compute(s)
    more = compute(with_run(s, n_gpus=s.run.n_gpus * factor))
    assert more["train_days"] <= r["train_days"]
    assert more["train_days"] == pytest.approx(r["train_days"] / factor, rel=REL)
    assert more["gpu_hours"] == pytest.approx(r["gpu_hours"], rel=REL)


@PROPERTY_SETTINGS
@given(scenarios())
def test_recomputation_trades_memory_for_flops(s: Scenario) -> None:
    none = compute(with_run(s, recompute="none"))
    selective = compute(with_run(s, recompute="selective"))
    full = compute(with_run(s, recompute="full"))
    assert none["mem_activations"] >= selective["mem_activations"]
    assert none["flops_train_hardware"] <= selective["flops_train_hardware"]
    assert selective["flops_train_hardware"] <= full["flops_train_hardware"]
    assert none["flops_train"] == selective["flops_train"] == full["flops_train"]
    if s.model.n_layers > 1:
        assert full["mem_activations"] < none["mem_activations"]
    flash = compute(with_run(s, attention="flash"))
    naive = compute(with_run(s, attention="naive"))
    assert naive["mem_activations"] >= flash["mem_activations"]
    assert math.isclose(naive["flops_train"], flash["flops_train"], rel_tol=REL)


@pytest.mark.libreoffice
@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(scenarios(), min_size=1, max_size=6))
def test_random_workbooks_agree_with_reference_in_libreoffice(lo, tmp_path: Path, items) -> None:
    from sheetgen.checking.recalc import values_libreoffice
    from sheetgen.workbook import write_workbook

    named = unique_custom_ids([replace(s, name=f"random {i + 1}") for i, s in enumerate(items)])
    path = write_workbook(named, tmp_path / "random.xlsx", force=True, cache_values=False)
    values = values_libreoffice(path)
    reference = {s.name: compute(s) for s in named}
    bad = mismatches(values, reference)
    assert not bad, "\n".join(bad[:30])
