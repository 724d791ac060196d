"""How each Hugging Face ``model_type``'s ``config.json`` maps onto sheetgen's model
fields: one reader per type, the field checks they share (``_Fields``), and
``architecture``, which picks the reader.  Conventions the readers rely on, per family:

- Llama / Mistral / Mixtral / Qwen2: ``attention_bias`` puts biases on Q, K, V
  (and, for Llama, on the output projection); Qwen2 always biases Q, K, V and
  never O; ``mlp_bias`` (Llama) biases the three MLP matrices.
- Phi-3 fuses Q/K/V and gate/up into single matrices: the same weight count.
- Gemma / Gemma 2: GeGLU MLP, tied head, 2 (Gemma) or 4 (Gemma 2) RMSNorms per block.
- DeepSeek-V2/V3: MLA; ``first_k_dense_replace`` dense layers, then MoE layers with
  ``n_shared_experts`` always-on experts.  transformers keeps V3's
  ``e_score_correction_bias`` as a buffer (not a parameter), so ``router_bias`` is 0.
  Multi-token-prediction modules (``num_nextn_predict_layers``) are not part of
  the model transformers builds and are excluded (the source says so).
- Qwen 3, Qwen3-MoE, gpt-oss, Llama 4, Gemma 3, OLMo 2: sheetgen.catalog.hf_families.
- Windowed attention (``sliding_window``, Gemma 2's alternating layers, Qwen2's
  ``use_sliding_window``): sheetgen.catalog.hf_window.
- GPT-2 / GPT-NeoX: LayerNorm, GeLU MLP, biases everywhere (NeoX: attention
  biases follow ``attention_bias``); GPT-2 ties its head and learns positions.
- The context the model supports (``context_limit``): ``max_position_embeddings``
  (GPT-2: ``n_positions``); absent or null gives 0, unknown, and nothing is checked
  (transformers' per-type default is a class default, not what the model was trained
  for).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from sheetgen.catalog.hf_families import READERS as FAMILIES_2025
from sheetgen.catalog.hf_families import text_config
from sheetgen.catalog.hf_window import window_fields
from sheetgen.errors import SheetgenError, short

Reader = Callable[[dict[str, Any], "_Fields"], dict[str, Any]]

# No field a reader takes is larger than this in any model (vocabularies are ~10^6,
# widths ~10^5); a larger number is a damaged or hostile file.  make_model's own
# ranges (sheetgen.scenarios.limits.MODEL_LIMITS) then apply to what is kept.
MAX_FIELD = 10**12
# Fields that divide or count heads and layers: 0 would divide by zero or mean no model.
POSITIVE = frozenset(
    {
        "num_attention_heads",
        "n_head",
        "hidden_size",
        "n_embd",
        "num_hidden_layers",
        "n_layer",
        "num_key_value_heads",
        "head_dim",
        "vocab_size",
        "intermediate_size",
    }
)


_ABSENT = object()  # a key the config does not give (null is given, as None)


class _Fields:
    """Typed access to config fields: each one read is checked (type and range), and
    a missing or wrong one is an error naming it."""

    def __init__(self, doc: dict[str, Any], where: str) -> None:
        self.doc, self.where = doc, where

    def int(self, key: str, default: int | None = None, null: int | None = None) -> int:
        """The whole number at ``key``: ``default`` when the key is absent (transformers'
        own default for this model type), ``null`` when it is given as null (where
        transformers reads None as a value); otherwise an absent key is "missing" and a
        null one "is null"."""
        v = self.doc.get(key, _ABSENT)
        if v is _ABSENT:
            v = default
            if v is None:
                raise SheetgenError(
                    f"{self.where}: {key}",
                    f"missing; model_type {short(self.doc.get('model_type'))} needs it "
                    f"(supported model types: {SHOWN})",
                )
        elif v is None:
            v = null
            if v is None:
                raise SheetgenError(
                    f"{self.where}: {key}",
                    f"is null; model_type {short(self.doc.get('model_type'))} needs a whole "
                    "number here (transformers does not default a null one)",
                )
        low = 1 if key in POSITIVE else 0
        if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= MAX_FIELD:
            raise SheetgenError(
                f"{self.where}: {key}",
                f"expected a whole number from {low} to 10^12, got {short(v)}",
            )
        return v

    def flag(self, key: str, default: bool) -> builtins.int:  # int: the method above
        v = self.doc.get(key, default)
        if v is None:
            v = default
        if not isinstance(v, bool):
            raise SheetgenError(f"{self.where}: {key}", f"expected true or false, got {short(v)}")
        return int(v)

    def rate(self, key: str, default: float) -> float:
        """A dropout probability: a number from 0 to 1 (null: the default)."""
        v = self.doc.get(key, default)
        if v is None:
            v = default
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
            raise SheetgenError(
                f"{self.where}: {key}", f"expected a probability from 0 to 1, got {short(v)}"
            )
        return float(v)

    def head_dim(self) -> builtins.int:
        if self.doc.get("head_dim") is not None:
            return self.int("head_dim")
        h, a = self.int("hidden_size"), self.int("num_attention_heads")
        if h % a:
            raise SheetgenError(
                f"{self.where}: head_dim", f"missing and hidden_size {h} is not a multiple of {a}"
            )
        return h // a


# num_key_value_heads, absent and null, as each model type's transformers config reads
# it (huggingface/transformers, src/transformers/models/<type>/configuration_<type>.py,
# main at 008e5743): Llama, Phi-3 and DeepSeek-V2 default it to None, and these and
# Mistral, Mixtral, Qwen2 and DeepSeek-V3 turn None into num_attention_heads ("if
# num_key_value_heads is None: num_key_value_heads = num_attention_heads", "for backward
# compatibility"); Mistral and Mixtral default it to 8, Qwen2 to 32.  Gemma (16) and
# Gemma 2 (4) declare it a plain int: null is refused.  KV_HEADS_ABSENT: the default
# when the key is absent (None: num_attention_heads); KV_NULL_IS_HEADS: null means
# num_attention_heads.
KV_HEADS_ABSENT: dict[str, int | None] = {
    "llama": None, "phi3": None, "deepseek_v2": None, "deepseek_v3": 128,
    "mistral": 8, "mixtral": 8, "qwen2": 32, "gemma": 16, "gemma2": 4,
}  # fmt: skip
KV_NULL_IS_HEADS = frozenset(
    {"llama", "mistral", "mixtral", "qwen2", "phi3", "deepseek_v2", "deepseek_v3"}
)


def _decoder(f: _Fields, tied_default: bool) -> dict[str, Any]:
    """Fields every Llama-style decoder shares (RMSNorm, gated MLP, RoPE)."""
    a = f.int("num_attention_heads")
    model_type = f.doc["model_type"]
    absent = KV_HEADS_ABSENT[model_type]
    null = a if model_type in KV_NULL_IS_HEADS else None
    return {
        "n_layers": f.int("num_hidden_layers"),
        "hidden_size": f.int("hidden_size"),
        "n_heads": a,
        "n_kv_heads": f.int("num_key_value_heads", a if absent is None else absent, null),
        "head_dim": f.head_dim(),
        "ffn_size": f.int("intermediate_size"),
        "vocab_size": f.int("vocab_size"),
        "tied_embeddings": f.flag("tie_word_embeddings", tied_default),
        "norm": "rmsnorm",
        "norms_per_layer": 2,
        "mlp": "gated",
    }


def _llama(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    out = _decoder(f, False)
    bias = f.flag("attention_bias", False)
    out.update(qkv_bias=bias, out_bias=bias, mlp_bias=f.flag("mlp_bias", False))
    return out


def _mistral(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    return _decoder(f, False)


def _mixtral(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    out = _decoder(f, False)
    out.update(
        n_experts=f.int("num_local_experts"),
        experts_per_token=f.int("num_experts_per_tok"),
        moe_ffn_size=f.int("intermediate_size"),
    )
    return out


def _qwen2(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    out = _decoder(f, False)
    out["qkv_bias"] = 1
    return out


def _phi3(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    return _decoder(f, False)


def _gemma(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    out = _decoder(f, True)
    out["qkv_bias"] = out["out_bias"] = f.flag("attention_bias", False)
    return out


def _gemma2(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    out = _gemma(doc, f)
    out["norms_per_layer"] = 4
    return out


def _deepseek(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    if f.int("moe_layer_freq", 1) != 1:
        raise SheetgenError(
            f"{f.where}: moe_layer_freq",
            f"{doc['moe_layer_freq']} (MoE every few layers) is not supported; accepted: 1",
        )
    a = f.int("num_attention_heads")
    nope, rope = f.int("qk_nope_head_dim"), f.int("qk_rope_head_dim")
    out = _decoder(f, False)
    out.update(
        n_kv_heads=a,  # MLA: every head has its own key and value (by convention)
        head_dim=nope + rope,
        qkv_bias=f.flag("attention_bias", False),
        out_bias=f.flag("attention_bias", False),
        n_experts=f.int("n_routed_experts"),
        experts_per_token=f.int("num_experts_per_tok"),
        n_shared_experts=f.int("n_shared_experts", 0),
        moe_ffn_size=f.int("moe_intermediate_size"),
        n_dense_layers=f.int("first_k_dense_replace", 0),
        q_lora_rank=f.int("q_lora_rank", 0) if doc.get("q_lora_rank") is not None else 0,
        kv_lora_rank=f.int("kv_lora_rank"),
        qk_nope_head_dim=nope,
        qk_rope_head_dim=rope,
        v_head_dim=f.int("v_head_dim"),
    )
    return out


def _gpt2(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    h = f.int("n_embd")
    inner = doc.get("n_inner")
    drop = any(f.rate(k, 0.1) > 0 for k in ("resid_pdrop", "embd_pdrop", "attn_pdrop"))
    return {
        "n_layers": f.int("n_layer"),
        "hidden_size": h,
        "n_heads": f.int("n_head"),
        "ffn_size": f.int("n_inner") if inner is not None else 4 * h,
        "vocab_size": f.int("vocab_size"),
        "tied_embeddings": 1,
        "pos_embeddings": f.int("n_positions"),
        "qkv_bias": 1,
        "out_bias": 1,
        "mlp_bias": 1,
        "norm": "layernorm",
        "norms_per_layer": 2,
        "mlp": "gelu",
        "dropout": int(drop),
    }


def _gpt_neox(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    bias = f.flag("attention_bias", True)
    drop = any(f.rate(k, 0) > 0 for k in ("hidden_dropout", "attention_dropout"))
    return {
        "n_layers": f.int("num_hidden_layers"),
        "hidden_size": f.int("hidden_size"),
        "n_heads": f.int("num_attention_heads"),
        "ffn_size": f.int("intermediate_size"),
        "vocab_size": f.int("vocab_size"),
        "tied_embeddings": f.flag("tie_word_embeddings", False),
        "qkv_bias": bias,
        "out_bias": bias,
        "mlp_bias": 1,
        "norm": "layernorm",
        "norms_per_layer": 2,
        "mlp": "gelu",
        "dropout": int(drop),
    }


READERS: dict[str, Reader] = {
    "llama": _llama,
    "mistral": _mistral,
    "mixtral": _mixtral,
    "qwen2": _qwen2,
    "phi3": _phi3,
    "gemma": _gemma,
    "gemma2": _gemma2,
    "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek,
    "gpt2": _gpt2,
    "gpt_neox": _gpt_neox,
    **FAMILIES_2025,
}
# The types an error lists: llama4_text is read too, but comes inside a llama4 config.
SHOWN = ", ".join(k for k in READERS if k != "llama4_text")
# Types that look supported but whose parameters sheetgen's model fields cannot express.
NOT_EXPRESSIBLE = {
    "qwen2_moe": "its shared expert has its own width and a sigmoid gate",
}


def architecture(doc: dict[str, Any], where: str = "config.json") -> dict[str, Any]:
    """sheetgen model fields for a config.json document."""
    model_type = doc.get("model_type")
    supported = SHOWN
    if model_type is not None and not isinstance(model_type, str):
        raise SheetgenError(
            f"{where}: model_type", f"must be text, got {short(model_type)}; one of: {supported}"
        )
    if model_type in NOT_EXPRESSIBLE:
        raise SheetgenError(
            f"{where}: model_type",
            f"{model_type!r} is not supported: {NOT_EXPRESSIBLE[model_type]}; one of: {supported}",
        )
    if model_type not in READERS:
        shown = "missing" if model_type is None else f"{short(model_type, 40)} is not supported"
        raise SheetgenError(f"{where}: model_type", f"{shown}; one of: {supported}")
    doc, where = text_config(doc, where)  # Llama 4, Gemma 3: the language model
    f = _Fields(doc, where)
    arch = READERS[model_type](doc, f)
    return {**arch, **window_fields(doc, f, arch["n_layers"]), **context_fields(doc, f)}


def context_fields(doc: dict[str, Any], f: _Fields) -> dict[str, int]:
    """``context_limit``: the config's ``max_position_embeddings`` (GPT-2:
    ``n_positions``), 0 when absent or null."""
    key = "n_positions" if doc.get("model_type") == "gpt2" else "max_position_embeddings"
    return {"context_limit": f.int(key, 0, 0)}
