"""`sheetgen presets import`: real Hugging Face config.json files give the parameter
counts transformers creates for them (recorded in tests/fixtures/hf_configs/counts.json,
and recounted live where transformers is importable)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from sheetgen.catalog.hf_import import architecture, read_config
from sheetgen.catalog.parse import make_model
from sheetgen.cli.commands import main
from sheetgen.errors import SheetgenError
from sheetgen.reference.params import params

FIXTURES = Path(__file__).parent / "fixtures" / "hf_configs"
RECORDED = json.loads((FIXTURES / "counts.json").read_text())
REFUSED = {"mamba-130m"}
SUPPORTED = sorted(set(RECORDED["counts"]) - REFUSED)

# Small configs constructed for this test (not real models): each exercises a
# branch the real fixtures do not (biases, tied or untied heads, head_dim != h/a,
# MLA without a query latent, GPT-NeoX, n_inner).  Compared live with transformers only.
VARIANTS = {
    "llama-biases": {
        "model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
        "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2,
        "head_dim": 48, "vocab_size": 1000, "attention_bias": True, "mlp_bias": True,
    },
    "qwen2-untied": {
        "model_type": "qwen2", "hidden_size": 256, "intermediate_size": 512,
        "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 4,
        "vocab_size": 1000, "tie_word_embeddings": False,
    },
    "gemma": {
        "model_type": "gemma", "hidden_size": 256, "intermediate_size": 512,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 1,
        "head_dim": 96, "vocab_size": 1000,
    },
    "gpt-neox": {
        "model_type": "gpt_neox", "hidden_size": 256, "intermediate_size": 1024,
        "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 1000,
    },
    "gpt-neox-tied-no-bias": {
        "model_type": "gpt_neox", "hidden_size": 256, "intermediate_size": 1024,
        "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 1000,
        "attention_bias": False, "tie_word_embeddings": True,
    },
    "deepseek-v2-no-q-latent": {
        "model_type": "deepseek_v2", "hidden_size": 256, "intermediate_size": 512,
        "moe_intermediate_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
        "num_key_value_heads": 4, "vocab_size": 1000, "q_lora_rank": None,
        "kv_lora_rank": 64, "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32,
        "n_routed_experts": 8, "n_shared_experts": 2, "num_experts_per_tok": 2,
        "first_k_dense_replace": 1, "topk_method": "greedy", "n_group": 1, "topk_group": 1,
    },
    "mistral-head-dim": {
        "model_type": "mistral", "hidden_size": 256, "intermediate_size": 512,
        "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2,
        "head_dim": 64, "vocab_size": 1000,
    },
    # num_key_value_heads null (transformers: num_attention_heads) or absent (the model
    # type's own default: 8 for Mistral, 32 for Qwen2).
    "llama-kv-null": {
        "model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
        "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": None,
        "vocab_size": 1000,
    },
    "mistral-kv-absent": {
        "model_type": "mistral", "hidden_size": 256, "intermediate_size": 512,
        "num_hidden_layers": 2, "num_attention_heads": 16, "vocab_size": 1000,
    },
    "qwen2-kv-absent": {
        "model_type": "qwen2", "hidden_size": 256, "intermediate_size": 512,
        "num_hidden_layers": 2, "num_attention_heads": 32, "vocab_size": 1000,
    },
    # The 2025 families (sheetgen.catalog.hf_families): branches the real fixtures do not take.
    "qwen3-head-dim-absent-tied-bias": {
        "model_type": "qwen3", "hidden_size": 256, "intermediate_size": 512,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "vocab_size": 1000, "tie_word_embeddings": True, "attention_bias": True,
    },
    "qwen3-moe-sparse-step": {
        "model_type": "qwen3_moe", "hidden_size": 256, "intermediate_size": 512,
        "moe_intermediate_size": 64, "num_hidden_layers": 6, "num_attention_heads": 8,
        "num_key_value_heads": 2, "vocab_size": 1000, "num_experts": 8,
        "num_experts_per_tok": 2, "decoder_sparse_step": 2, "mlp_only_layers": [3],
    },
    "gpt-oss-default-layers": {
        "model_type": "gpt_oss", "hidden_size": 256, "intermediate_size": 128,
        "num_hidden_layers": 3, "num_attention_heads": 8, "num_key_value_heads": 2,
        "head_dim": 32, "vocab_size": 1000, "num_local_experts": 4, "num_experts_per_tok": 2,
    },
    "llama4-maverick-like": {
        "model_type": "llama4_text", "hidden_size": 256, "intermediate_size": 128,
        "intermediate_size_mlp": 512, "num_hidden_layers": 4, "num_attention_heads": 8,
        "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 1000,
        "num_local_experts": 4, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2,
        "attention_bias": True,
    },
    "llama4-wrapped-defaults": {
        "model_type": "llama4",
        "text_config": {"model_type": "llama4_text", "num_hidden_layers": 2, "vocab_size": 1000,
                        "moe_layers": [1]},
    },
    "gemma3-wrapped-defaults": {
        "model_type": "gemma3",
        "text_config": {"model_type": "gemma3_text", "num_hidden_layers": 7, "hidden_size": 256, "intermediate_size": 512,
                        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
                        "vocab_size": 1000},
    },
    "olmo2-gqa-bias": {
        "model_type": "olmo2", "hidden_size": 256, "intermediate_size": 512,
        "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2,
        "vocab_size": 1000, "attention_bias": True,
    },
    "gpt2-n-inner": {
        "model_type": "gpt2", "n_embd": 128, "n_inner": 300, "n_layer": 2, "n_head": 4,
        "n_positions": 64, "vocab_size": 1000, "bos_token_id": 0, "eos_token_id": 0,
    },
}  # fmt: skip


def imported_total(doc: dict) -> int:
    return int(params(make_model(architecture(doc), "imported"))["params_total"])


@pytest.mark.parametrize("name", SUPPORTED)
def test_import_gives_the_recorded_transformers_count(name: str) -> None:
    expected = RECORDED["counts"][name]
    got = imported_total(read_config(FIXTURES / f"{name}.json"))
    assert got == expected, (
        f"{name}: sheetgen {got:,} vs transformers {RECORDED['transformers']} {expected:,} "
        f"(off by {got - expected:+,})"
    )


def test_fixtures_cover_the_issue_list() -> None:
    need = {"llama3-8b", "llama3.2-1b", "qwen2.5-0.5b", "phi3-mini-4k", "mixtral-8x7b",
            "gemma2-27b", "deepseek-v3", "gpt2", "mamba-130m"}  # fmt: skip
    assert need <= set(RECORDED["counts"]), sorted(need - set(RECORDED["counts"]))
    assert RECORDED["counts"]["llama3-8b"] == 8_030_261_248  # the safetensors index


def test_fixtures_cover_the_2025_families() -> None:
    """Issue 41: a real config of each family the import now reads."""
    need = {"qwen3-8b", "qwen3-235b-a22b", "qwen3-30b-a3b", "gpt-oss-20b", "gpt-oss-120b",
            "llama4-scout", "gemma3-1b", "gemma3-27b", "olmo2-13b"}  # fmt: skip
    assert need <= set(RECORDED["counts"]), sorted(need - set(RECORDED["counts"]))


@pytest.mark.parametrize("name", sorted(RECORDED["active"]))
def test_import_gives_the_active_count_within_one_percent(name: str) -> None:
    """Active parameters per token of each MoE fixture against transformers' model less
    the routed experts a token skips (tools/count_hf_params.py, ``active``)."""
    expected = RECORDED["active"][name]
    got = params(make_model(architecture(read_config(FIXTURES / f"{name}.json")), name))
    assert got["params_active"] == pytest.approx(expected, rel=0.01), (
        f"{name}: sheetgen {got['params_active']:,.0f} active vs {expected:,} "
        f"({got['params_active'] / expected - 1:+.3%})"
    )


# The model cards' published sizes (billions, as rounded there), against the count.
CARDS = {
    "qwen3-8b": (8.2, None),  # Qwen/Qwen3-8B model card: 8.2B parameters
    "qwen3-235b-a22b": (235, 22),  # Qwen/Qwen3-235B-A22B: 235B total, 22B activated
    "qwen3-30b-a3b": (30.5, 3.3),  # Qwen/Qwen3-30B-A3B: 30.5B total, 3.3B activated
    "gpt-oss-120b": (116.8, None),  # OpenAI gpt-oss model card, Table 1: 116.83B total
    "gpt-oss-20b": (20.9, None),  # same table: 20.91B total
    "llama4-scout": (108, 17),  # Llama 4 card: 17B active, 109B total (with vision)
    "olmo2-13b": (13.7, None),  # allenai/OLMo-2-1124-13B: 13.7B (Table 1 of 2501.00656)
}


@pytest.mark.parametrize("name", sorted(CARDS))
def test_counts_round_to_the_model_cards(name: str) -> None:
    total, active = CARDS[name]
    p = params(make_model(architecture(read_config(FIXTURES / f"{name}.json")), name))
    assert p["params_total"] / 1e9 == pytest.approx(total, rel=0.01), name
    if active is not None:
        assert p["params_active"] / 1e9 == pytest.approx(active, rel=0.03), name


def _transformers_count(doc: dict) -> int:
    torch = pytest.importorskip("torch", reason="torch not installed (optional, not a test dep)")
    transformers = pytest.importorskip(
        "transformers", reason="transformers not installed (optional, not a test dependency)"
    )
    doc = {k: v for k, v in doc.items() if k not in ("auto_map", "quantization_config")}
    cfg = transformers.AutoConfig.for_model(doc.pop("model_type"), **doc)
    if "text_config" in doc:  # Llama 4, Gemma 3: the language model, as sheetgen counts it
        cfg = cfg.get_text_config()
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(cfg)
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("name", [*SUPPORTED, *VARIANTS])
def test_import_equals_live_transformers_count(name: str) -> None:
    doc = VARIANTS.get(name) or read_config(FIXTURES / f"{name}.json")
    expected = _transformers_count(dict(doc))
    got = imported_total(doc)
    assert got == expected, f"{name}: sheetgen {got:,} vs transformers {expected:,}"


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_mamba_is_refused_in_one_line() -> None:
    result = run("presets", "import", str(FIXTURES / "mamba-130m.json"))
    assert result.exit_code == 2
    line = result.output.strip()
    assert "\n" not in line
    assert "model_type" in line and "'mamba'" in line and "llama" in line and "gpt_neox" in line


@pytest.mark.parametrize(
    ("doc", "expect"),
    [
        ({"model_type": "llama", "hidden_size": 64}, "num_attention_heads: missing"),
        ({"hidden_size": 64}, "model_type: missing; one of: llama"),
        ({"model_type": "qwen2_moe"}, "shared expert"),
        ({"model_type": "llama4", "text_config": [1]}, "text_config: model_type 'llama4' needs"),
        (
            {"model_type": "gemma3", "text_config": {"model_type": "llama"}},
            "text_config.model_type: expected 'gemma3_text', got 'llama'",
        ),
        (
            {**VARIANTS["qwen3-moe-sparse-step"], "mlp_only_layers": "0"},
            "mlp_only_layers: expected",
        ),
        ({**VARIANTS["llama4-maverick-like"], "no_rope_layers": [2]}, "no_rope_layers: expected"),
        ({**VARIANTS["gpt-oss-default-layers"], "layer_types": ["local"]}, "layer_types: expected"),
        (
            {**VARIANTS["qwen2-untied"], "num_hidden_layers": "2"},
            "num_hidden_layers: expected a whole number from 1 to 10^12, got '2'",
        ),
        ({**VARIANTS["qwen2-untied"], "tie_word_embeddings": "no"}, "expected true or false"),
    ],
)
def test_bad_configs_end_in_one_line(tmp_path: Path, doc: dict, expect: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc))
    result = run("presets", "import", str(path))
    assert result.exit_code == 2
    assert "\n" not in result.output.strip() and expect in result.output, result.output


def test_not_json_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    assert "not JSON" in run("presets", "import", str(bad)).output
    missing = run("presets", "import", str(tmp_path / "nope.json"))
    assert missing.exit_code == 2 and "not found" in missing.output


def test_import_writes_a_preset_that_loads(tmp_path: Path) -> None:
    team = tmp_path / "team"
    (team / "models").mkdir(parents=True)
    cfg = FIXTURES / "deepseek-v3.json"
    result = run("presets", "import", str(cfg), "--id", "dsv3", "-o", str(team / "models"))
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load((team / "models" / "dsv3.yaml").read_text())
    assert doc["id"] == "dsv3" and "multi-token-prediction" in doc["source"]
    again = run("presets", "import", str(cfg), "--id", "dsv3", "-o", str(team / "models"))
    assert again.exit_code == 0 and "replaced" in again.output  # a rerun
    listing = run("presets", "models", "--presets", str(team), "--format", "json")
    rows = {r["id"]: r for r in json.loads(listing.output)}
    assert rows["dsv3"]["params_total"] == RECORDED["counts"]["deepseek-v3"]
    assert rows["dsv3"]["origin"] == str(team)
    assert rows["llama3-8b"]["origin"] == "shipped"


# num_key_value_heads as each model type's transformers config reads it (main at 008e5743,
# src/transformers/models/<type>/configuration_<type>.py): (absent, null).  None for null:
# refused ("is null"); Gemma and Gemma 2 declare it a plain int.
KV_HEADS = {
    "llama": (32, 32), "phi3": (32, 32), "mistral": (8, 32), "mixtral": (8, 32),
    "qwen2": (32, 32), "gemma": (16, None), "gemma2": (4, None),
}  # fmt: skip
SMALL = {
    "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
    "num_attention_heads": 32, "vocab_size": 1000,
}  # fmt: skip


@pytest.mark.parametrize("model_type", KV_HEADS)
def test_num_key_value_heads_absent_or_null_as_transformers_reads_it(model_type: str) -> None:
    """A null num_key_value_heads is num_attention_heads where transformers makes it so
    (Llama, Mistral, Mixtral, Qwen2, Phi-3, DeepSeek); absent, it is the model type's
    default (Mistral 8, not num_attention_heads); where null has no meaning (Gemma) the
    error says "is null", not "missing"."""
    doc = {"model_type": model_type, **SMALL}
    if model_type == "mixtral":
        doc.update(num_local_experts=4, num_experts_per_tok=2)
    absent, null = KV_HEADS[model_type]
    assert architecture(doc)["n_kv_heads"] == absent
    doc["num_key_value_heads"] = None
    if null is not None:
        assert architecture(doc)["n_kv_heads"] == null
        return
    with pytest.raises(SheetgenError) as e:
        architecture(doc)
    assert "num_key_value_heads: is null;" in str(e.value) and "missing" not in str(e.value)


def test_import_of_a_null_num_key_value_heads(tmp_path: Path) -> None:
    """The reviewer's config.json: Llama with "num_key_value_heads": null imports as the
    same model as without the key (multi-head attention, 6.74B)."""
    path = tmp_path / "llama-nullkv" / "config.json"
    path.parent.mkdir()
    doc = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
           "num_attention_heads": 32, "num_key_value_heads": None, "num_hidden_layers": 32,
           "vocab_size": 32000}  # fmt: skip
    path.write_text(json.dumps(doc))
    result = run("presets", "import", str(path))
    assert result.exit_code == 0, result.output
    arch = yaml.safe_load(result.output)["architecture"]
    assert arch["n_kv_heads"] == 32
    del doc["num_key_value_heads"]
    assert imported_total(doc) == 6_738_415_616


def test_a_required_field_given_as_null_says_null(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**VARIANTS["llama-biases"], "intermediate_size": None}))
    result = run("presets", "import", str(path))
    assert result.exit_code == 2
    assert "intermediate_size: is null; model_type 'llama' needs a whole number" in result.output
