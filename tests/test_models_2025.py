"""Issue 41, part 1: the 2025 model families (Qwen 3, Qwen3-MoE, gpt-oss, Llama 4,
Gemma 3, OLMo 2) as presets and imports: per-head and whole-projection query/key norms
and attention sinks counted, the KV cache with local layers at their window (Gemma 3's
five local to one global, gpt-oss's alternating 128-token windows, Llama 4's chunked
layers at the chunk), and the workbook equal to the reference in every engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import build_matrix, calc, gnumeric_values, libreoffice_values, mismatches

from sheetgen.catalog.hf_import import architecture, read_config
from sheetgen.checking.recalc import recalc_pycel

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "hf_configs"
CTX = 32_768
BF16 = 2
NEW_PRESETS = (
    "qwen3-8b",
    "qwen3-235b-a22b",
    "gpt-oss-20b",
    "gpt-oss-120b",
    "llama4-scout",
    "gemma3-27b",
    "olmo2-13b",
)

# Bytes per sequence at 32,768 tokens in BF16, by hand from each model's config:
# (global layers x context + local layers x min(context, window)) x 2 x n_kv x d_h x 2 B.
KV_32K = {
    # 36 layers, none windowed, 8 KV heads of 128
    "qwen3-8b": 36 * CTX * 2 * 8 * 128 * BF16,
    # 18 full + 18 sliding (128 tokens), 8 KV heads of 64
    "gpt-oss-120b": (18 * CTX + 18 * 128) * 2 * 8 * 64 * BF16,
    # 12 global + 36 chunked (8,192-token chunks), 8 KV heads of 128
    "llama4-scout": (12 * CTX + 36 * 8_192) * 2 * 8 * 128 * BF16,
    # 10 global + 52 local (1,024 tokens), 16 KV heads of 128
    "gemma3-27b": (10 * CTX + 52 * 1_024) * 2 * 16 * 128 * BF16,
}
# Parameters one layer's query/key norms and sinks add (RMSNorm: 1 weight per element).
NORMS_AND_SINKS = {
    "qwen3-8b": (2 * 128, 0),  # q_norm and k_norm of head_dim 128
    "gemma3-27b": (2 * 128, 0),
    "olmo2-13b": ((40 + 40) * 128, 0),  # over the whole Q and K projections
    "gpt-oss-120b": (0, 64),  # one sink per query head
    "llama4-scout": (0, 0),  # its QK norm has no weights
}


def check(r: dict[str, Any], key: str, expected: float) -> None:
    got = r[key]
    assert got == pytest.approx(expected, rel=1e-12), (
        f"{key} [{r['_scenario']}]: {got!r}, expected {expected!r} (diff {got - expected:+})"
    )


def imported(name: str) -> dict[str, Any]:
    return {**architecture(read_config(FIXTURES / f"{name}.json")), "id": f"{name}-imported"}


@pytest.mark.parametrize("source", ["preset", "imported"])
@pytest.mark.parametrize("model", sorted(KV_32K))
def test_kv_bytes_per_sequence_at_32k(model: str, source: str) -> None:
    spec = model if source == "preset" else imported(model)
    r = calc(f"{model} {source}", model=spec, inf_context=CTX, kv_dtype="bf16")
    check(r, "kv_bytes_per_sequence", KV_32K[model])


@pytest.mark.parametrize("model", sorted(NORMS_AND_SINKS))
def test_query_key_norms_and_sinks_per_layer(model: str) -> None:
    norms, sinks = NORMS_AND_SINKS[model]
    r = calc(model, model=model)
    check(r, "params_qk_norm", norms)
    check(r, "params_attn_sinks", sinks)
    assert r["params_attn_layer"] == (
        r["params_attn_q"] + r["params_attn_kv"] + r["params_attn_o"] + norms + sinks
    )


def test_gpt_oss_expert_matrices_are_what_mxfp4_stores() -> None:
    """gpt-oss-120b: 36 MoE layers x 128 experts x 3 x 2880 x 2880 weights in MXFP4,
    over 90% of the parameters (the model card, section 2)."""
    r = calc("gpt-oss-120b", model="gpt-oss-120b")
    check(r, "params_expert_matrices", 36 * 128 * 3 * 2880 * 2880)
    assert r["params_expert_matrices"] / r["params_total"] > 0.9
    assert calc("dense", model="qwen3-8b")["params_expert_matrices"] == 0


@pytest.mark.parametrize("model", NEW_PRESETS)
def test_presets_equal_their_import(model: str) -> None:
    """Each shipped preset is its fixture's import, field for field."""
    fixture = {"llama4-scout": "llama4-scout"}.get(model, model)
    r_preset = calc(model, model=model)
    r_import = calc(model, model=imported(fixture))
    for key in ("params_total", "params_active", "kv_bytes_per_token", "flops_per_token"):
        assert r_preset[key] == r_import[key], key


def test_attention_flops_fall_with_the_local_layers() -> None:
    """At 32k training tokens Gemma 3's 52 local layers compute 1,024-token windows: the
    attention core is 10/62 of a causal one plus the local layers' pair share."""
    r = calc("gemma3 32k", model="gemma3-27b", seq_len=CTX)
    w = 1_024
    pairs = (CTX * w - w * (w - 1) / 2) / (CTX * (CTX + 1) / 2)
    check(r, "flops_attn_layer_share", 1 - 52 / 62 * (1 - pairs))


@pytest.mark.parametrize("seq", [8_192, 20_000, 32_768])
def test_chunked_layers_attend_within_their_chunk(seq: int) -> None:
    """Llama 4 Scout's 36 chunked layers: a query sees the keys of its own chunk of
    8,192 only, so q whole chunks of 8,192 x 8,193 / 2 pairs and r tokens of r (r + 1) / 2,
    against S (S + 1) / 2 causal (1 while the sequence fits one chunk)."""
    c = 8_192
    q, r = divmod(seq, c)
    pairs = (q * c * (c + 1) / 2 + r * (r + 1) / 2) / (seq * (seq + 1) / 2)
    out = calc(f"scout {seq}", model="llama4-scout", seq_len=seq)
    check(out, "flops_window_pair_share", pairs)
    check(out, "flops_attn_layer_share", 1 - 36 / 48 * (1 - pairs))
    sliding = calc(f"sliding {seq}", model={"base": "llama4-scout", "attn_chunked": 0},
                   seq_len=seq)  # fmt: skip
    assert out["flops_window_pair_share"] <= sliding["flops_window_pair_share"]


def test_a_chunk_flag_without_a_chunk_is_one_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from sheetgen.cli import main

    spec = tmp_path / "s.yaml"
    spec.write_text(
        "scenarios:\n  - name: x\n    model: {base: qwen3-8b, attn_chunked: 1}\n"
        "    hardware: h100-sxm\n"
    )
    result = CliRunner().invoke(main, ["generate", str(spec), "-o", str(tmp_path / "x.xlsx")])
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert "\n" not in line and "attn_chunked" in line and "sliding_window" in line, line


def matrix_items() -> list[dict]:
    """Training and serving of each new family, imported and preset, windows that
    cover the context and ones that do not."""
    return [
        {"name": "qwen3-8b", "model": "qwen3-8b", "hardware": "h100-sxm",
         "seq_len": 4096, "inf_context": 8192, "prompt_len": 6000, "output_len": 1000},
        {"name": "qwen3-235b", "model": "qwen3-235b-a22b", "hardware": "h200",
         "seq_len": 4096, "inf_context": CTX, "inf_tp": 8, "inf_batch": 8},
        {"name": "gpt-oss-120b", "model": "gpt-oss-120b", "hardware": "h100-sxm",
         "seq_len": 8192, "inf_context": CTX, "prompt_len": 30_000, "output_len": 2_000,
         "inf_batch": 1},
        {"name": "gpt-oss-20b imported", "model": imported("gpt-oss-20b"),
         "hardware": "h100-sxm", "seq_len": 100, "inf_context": 100, "prompt_len": 80,
         "output_len": 20},
        {"name": "llama4-scout", "model": "llama4-scout", "hardware": "h100-sxm",
         "seq_len": 16_384, "inf_context": 131_072, "prompt_len": 120_000,
         "output_len": 4_000, "inf_tp": 8, "inf_batch": 2},
        {"name": "gemma3-27b", "model": "gemma3-27b", "hardware": "h200",
         "seq_len": CTX, "inf_context": CTX, "inf_tp": 2, "inf_batch": 16},
        {"name": "olmo2-13b imported", "model": imported("olmo2-13b"), "hardware": "a100-80gb",
         "seq_len": 4096, "inf_context": 4096, "prompt_len": 3000, "output_len": 500},
    ]  # fmt: skip


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory):
    return build_matrix(tmp_path_factory.mktemp("models2025"), matrix_items(), "models2025")


def test_matrix_reaches_every_new_branch(matrix) -> None:
    _, scenarios, reference = matrix
    r = {s.name: reference[s.name] for s in scenarios}
    assert r["qwen3-8b"]["params_qk_norm"] == 256 and r["olmo2-13b imported"]["qk_norm"] == 2
    assert r["gpt-oss-120b"]["params_attn_sinks"] == 64
    assert r["gpt-oss-120b"]["kv_window_saving"] > 1.9  # 18 of 36 layers at 128 tokens
    assert r["gpt-oss-20b imported"]["kv_window_saving"] == 1  # the window covers 100 tokens
    assert r["llama4-scout"]["n_dense_mlp_layers"] == 0 < r["llama4-scout"]["n_moe_layers"]
    assert r["gemma3-27b"]["kv_local_tokens"] == 1_024


def test_inprocess_engine_equals_reference(matrix) -> None:
    path, _, reference = matrix
    bad = mismatches(recalc_pycel(path), reference)
    assert not bad, f"{len(bad)} keys differ in pycel:\n" + "\n".join(bad[:40])


@pytest.mark.libreoffice
def test_libreoffice_equals_reference(matrix) -> None:
    path, _, reference = matrix
    bad = mismatches(libreoffice_values(path), reference)
    assert not bad, f"{len(bad)} keys differ in LibreOffice:\n" + "\n".join(bad[:40])


def test_gnumeric_equals_reference(matrix) -> None:
    path, _, reference = matrix
    bad = mismatches(gnumeric_values(path), reference)
    assert not bad, f"{len(bad)} keys differ in Gnumeric:\n" + "\n".join(bad[:40])


# Untrusted input (issue 26.5) inside a multimodal config: every text_config field the
# reader takes, given a wrong type or range, ends in one line naming it.
WRAPPED_FIXTURES = {"llama4-scout": "llama4_text", "gemma3-27b": "gemma3_text"}
WRONG = {"text": "abc", "mapping": {"a": 1}, "fraction": 1.5, "negative": -3, "huge": 10**40}


class Recording(dict):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.read: set[str] = set()

    def get(self, key: Any, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self.read.add(key)
        return super().__getitem__(key)


def inner_fields() -> list[tuple[str, str]]:
    import json

    out = []
    for name, inner_type in WRAPPED_FIXTURES.items():
        doc = json.loads((FIXTURES / f"{name}.json").read_text())
        rec = Recording({**doc["text_config"], "model_type": inner_type})
        architecture(rec)
        out += [(name, k) for k in sorted(rec.read - {"model_type"})]
    return out


@pytest.mark.parametrize("kind", WRONG)
@pytest.mark.parametrize(
    ("config", "key"), inner_fields(), ids=[f"{c}.{k}" for c, k in inner_fields()]
)
def test_each_text_config_field_with_a_wrong_value_is_one_line(
    config: str, key: str, kind: str
) -> None:
    import json

    from sheetgen.catalog.hf_import import preset_document
    from sheetgen.errors import SheetgenError

    doc = json.loads((FIXTURES / f"{config}.json").read_text())
    doc["text_config"] = {**doc["text_config"], key: WRONG[kind]}
    with pytest.raises(SheetgenError) as e:
        preset_document(doc, "x", "config.json")
    text = f"error: {e.value}"
    assert "\n" not in text and len(text) <= 300 and "text_config" in text, text
