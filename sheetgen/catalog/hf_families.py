"""The 2025 model families' ``config.json`` readers: Qwen 3 (dense and MoE), gpt-oss,
Llama 4 (its ``text_config``), Gemma 3 (``gemma3`` with a ``text_config``, or
``gemma3_text``) and OLMo 2.  Each returns sheetgen's model fields, windows included,
so that ``params_total`` equals what transformers builds (main at 5.25,
src/transformers/models/<type>/modeling_<type>.py is the reference):

- Qwen 3 / Qwen3-MoE: no biases unless ``attention_bias``; ``q_norm`` and ``k_norm``
  are RMSNorms of ``head_dim`` shared by the heads (``qk_norm`` 1).  Qwen 3 declares
  ``head_dim`` 128 (absent: 128, not hidden / heads); Qwen3-MoE reads it with
  ``getattr(config, "head_dim", hidden // heads)``.  A Qwen3-MoE layer i is MoE when
  ``i`` is not in ``mlp_only_layers``, ``num_experts`` > 0 and ``(i + 1) %
  decoder_sparse_step == 0``; the others have a dense MLP of ``intermediate_size``
  (counted in ``n_dense_layers``, wherever they sit); experts of
  ``moe_intermediate_size``, a bias-free router, no shared expert.
- gpt-oss: biases on Q, K, V and O (``attention_bias``, default true), one sink
  logit per head (``attn_sinks``), every layer MoE with ``num_local_experts``
  experts of ``intermediate_size`` whose gate/up and down projections carry biases,
  and a router with a bias; layers alternate sliding (128 tokens) and full
  attention, sliding first (GptOssConfig ``layer_types``).
- Llama 4: the language model is ``text_config``; MoE layers are ``moe_layers``
  (default every ``interleave_moe_layer_step``-th, from step - 1), each with 16
  routed experts and one shared expert of ``intermediate_size`` and a bias-free
  router; the other layers a dense MLP of ``intermediate_size_mlp``.  Its QK norm is
  weightless (no parameters).  Layers whose ``no_rope_layers`` entry is 1 (default:
  three of every four) attend within chunks of ``attention_chunk_size`` tokens
  (``chunked_attention``): sheetgen counts them as local layers whose window is the
  chunk (``attn_chunked`` 1): each caches at most one chunk, and a query attends to
  the keys of its own chunk only (the attention FLOPs count those pairs).
- Gemma 3: Gemma 2's block (4 RMSNorms, GeGLU, tied head) plus per-head ``q_norm`` and
  ``k_norm``; of every ``sliding_window_pattern`` (6) layers the last is global, the
  others local with ``sliding_window`` (default 4096).
- OLMo 2: norms after attention and after the MLP (2 per layer, as before), and
  ``q_norm`` / ``k_norm`` over the whole Q and K projections (``qk_norm`` 2).

For ``gemma3`` and ``llama4`` only the language model is counted: the vision encoder
and projector (``vision_config``) are not part of what sheetgen plans; the import's
source says so, and tools/count_hf_params.py counts transformers' text model for them.
"""

from __future__ import annotations

from typing import Any

from sheetgen.catalog.hf_fields import FieldReader as _Fields
from sheetgen.errors import SheetgenError, short

# Multimodal configs whose language model is their text_config, and its model_type.
WRAPPED = {"llama4": "llama4_text", "gemma3": "gemma3_text"}
# num_key_value_heads as each config class reads it: (absent, null means heads?).
# Qwen 3 32 and None -> heads; Qwen3-MoE 4, a plain int; gpt-oss 8 and None -> heads;
# Llama 4 text 8 and None -> heads; Gemma 3 text 4, a plain int; OLMo 2 None -> heads.
SLIDING = "sliding_attention"
KV_HEADS: dict[str, tuple[int | None, bool]] = {
    "qwen3": (32, True), "qwen3_moe": (4, False), "gpt_oss": (8, True),
    "llama4_text": (8, True), "gemma3_text": (4, False), "olmo2": (None, True),
}  # fmt: skip


def text_config(doc: dict[str, Any], where: str) -> tuple[dict[str, Any], str]:
    """The document a reader reads and where it is: a multimodal config's
    ``text_config`` (its model_type set to the text type), else the document itself."""
    inner_type = WRAPPED.get(doc.get("model_type"))  # type: ignore[arg-type]
    if inner_type is None:
        return doc, where
    inner = doc.get("text_config")
    if inner is None:
        raise SheetgenError(
            f"{where}: text_config",
            f"is null; model_type {doc['model_type']!r} needs its language model here",
        )
    if not isinstance(inner, dict):
        raise SheetgenError(
            f"{where}: text_config",
            f"model_type {doc['model_type']!r} needs a text_config object (its language "
            f"model), got {short(inner)}",
        )
    # The type names it: a text_config without one is not a language model's config.
    given = inner.get("model_type")
    if given != inner_type:
        raise SheetgenError(
            f"{where}: text_config.model_type",
            f"expected {inner_type!r}, got {'nothing' if given is None else short(given)}",
        )
    return {**inner, "model_type": inner_type}, f"{where}: text_config"


def _kv_heads(f: _Fields, heads: int) -> int:
    absent, null_is_heads = KV_HEADS[f.doc["model_type"]]
    return f.int(
        "num_key_value_heads", heads if absent is None else absent, heads if null_is_heads else None
    )


def _head_dim(f: _Fields, declared: int | None) -> int:
    """``head_dim``: the config's; absent, the class's declared default (``declared``)
    or hidden / heads where the class declares none; null, hidden / heads."""
    if declared is not None and "head_dim" not in f.doc:
        return declared
    return f.head_dim()


# A multimodal config's text_config lists only what differs from its class's defaults
# (Gemma 3 27B's gives no vocab_size), so for these types an absent field is the
# default of Gemma3TextConfig / Llama4TextConfig; other types must give them.
TEXT_DEFAULTS: dict[str, dict[str, int]] = {
    "gemma3_text": {
        "num_hidden_layers": 26, "hidden_size": 2304, "num_attention_heads": 8,
        "intermediate_size": 9216, "vocab_size": 262_208,
    },
    "llama4_text": {
        "num_hidden_layers": 48, "hidden_size": 5120, "num_attention_heads": 40,
        "intermediate_size": 8192, "vocab_size": 202_048,
    },
}  # fmt: skip


def _base(f: _Fields, tied: bool, head_dim: int | None, bias_default: bool) -> dict[str, Any]:
    d = TEXT_DEFAULTS.get(f.doc["model_type"], {})
    heads = f.int("num_attention_heads", d.get("num_attention_heads"))
    bias = f.flag("attention_bias", bias_default)
    return {
        "n_layers": f.int("num_hidden_layers", d.get("num_hidden_layers")),
        "hidden_size": f.int("hidden_size", d.get("hidden_size")),
        "n_heads": heads,
        "n_kv_heads": _kv_heads(f, heads),
        "head_dim": _head_dim(f, head_dim),
        "ffn_size": f.int("intermediate_size", d.get("intermediate_size")),
        "vocab_size": f.int("vocab_size", d.get("vocab_size")),
        "tied_embeddings": f.flag("tie_word_embeddings", tied),
        "qkv_bias": bias,
        "out_bias": bias,
        "norm": "rmsnorm",
        "norms_per_layer": 2,
        "mlp": "gated",
    }


def _index_list(f: _Fields, key: str, n_layers: int) -> set[int]:
    """A list of layer indices (``mlp_only_layers``, ``moe_layers``): those in range."""
    v = f.doc.get(key)
    if v is None:
        return set()
    if not isinstance(v, list) or not all(type(i) is int for i in v):
        raise SheetgenError(
            f"{f.where}: {key}", f"expected a list of layer numbers, got {short(v)}"
        )
    return {i for i in v if 0 <= i < n_layers}


def _window(
    f: _Fields, n_layers: int, types_default: list[str], window: int | None, local_kind: str
) -> dict:
    """``sliding_window`` / ``local_layers`` from ``layer_types`` (or the family's
    default list); ``window`` the width a windowed layer uses (None or 0: none);
    ``local_kind`` the family's local layer type (chunked_attention: Llama 4)."""
    types = f.doc.get("layer_types")
    kinds = (local_kind, "full_attention")
    if types is None:
        types = types_default
    elif not isinstance(types, list) or not all(t in kinds for t in types):
        raise SheetgenError(
            f"{f.where}: layer_types", f"expected a list of {' / '.join(kinds)}, got {short(types)}"
        )
    elif len(types) != n_layers:
        raise SheetgenError(
            f"{f.where}: layer_types",
            f"has {len(types)} entries; expected one per layer (num_hidden_layers {n_layers})",
        )
    local = sum(t != "full_attention" for t in types)
    if not window or local == 0:
        return {"sliding_window": 0, "local_layers": 0}
    chunked = {"attn_chunked": 1} if local_kind == "chunked_attention" else {}
    return {"sliding_window": window, "local_layers": local, **chunked}


def _optional_window(f: _Fields, key: str, default: int | None) -> int | None:
    if f.doc.get(key, default) is None:
        return None
    return f.int(key, default)


def qwen3(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    out = _base(f, False, 128, False)
    out["qk_norm"] = 1
    n = out["n_layers"]
    window = (
        _optional_window(f, "sliding_window", 4096) if f.flag("use_sliding_window", False) else None
    )
    start = f.int("max_window_layers", 28)
    default = ["sliding_attention" if window and i >= start else "full_attention" for i in range(n)]
    return {**out, **_window(f, n, default, window, SLIDING)}


def qwen3_moe(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    out = _base(f, False, None, False)
    out["qk_norm"] = 1
    n = out["n_layers"]
    experts = f.int("num_experts", 128)
    step = f.int("decoder_sparse_step", 1)
    if step == 0:
        raise SheetgenError(
            f"{f.where}: decoder_sparse_step", "expected a whole number >= 1, got 0"
        )
    dense_only = _index_list(f, "mlp_only_layers", n)
    moe = [i for i in range(n) if i not in dense_only and experts > 0 and (i + 1) % step == 0]
    if moe:
        out.update(
            n_experts=experts,
            experts_per_token=f.int("num_experts_per_tok", 8),
            moe_ffn_size=f.int("moe_intermediate_size", 768),
            n_dense_layers=n - len(moe),
        )
    window = (
        _optional_window(f, "sliding_window", 4096) if f.flag("use_sliding_window", False) else None
    )
    return {**out, **_window(f, n, ["sliding_attention"] * n, window, SLIDING)}


def gpt_oss(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    out = _base(f, False, 64, True)
    n = out["n_layers"]
    out.update(
        attn_sinks=1,
        mlp_bias=1,  # the experts' gate_up_proj_bias and down_proj_bias
        router_bias=1,
        n_experts=f.int("num_local_experts", 128),
        experts_per_token=f.int("num_experts_per_tok", 4),
        moe_ffn_size=out["ffn_size"],
    )
    default = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n)]
    return {**out, **_window(f, n, default, _optional_window(f, "sliding_window", 128), SLIDING)}


def llama4_text(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    out = _base(f, False, 128, False)
    n = out["n_layers"]
    step = f.int("interleave_moe_layer_step", 1)
    if doc.get("moe_layers") is not None:
        moe = _index_list(f, "moe_layers", n)
    elif step == 0:
        raise SheetgenError(
            f"{f.where}: interleave_moe_layer_step", "expected a whole number >= 1, got 0"
        )
    else:
        moe = set(range(step - 1, n, step))
    out["ffn_size"] = f.int("intermediate_size_mlp", 16384)
    if moe:
        out.update(
            n_experts=f.int("num_local_experts", 16),
            experts_per_token=f.int("num_experts_per_tok", 1),
            n_shared_experts=1,
            moe_ffn_size=f.int("intermediate_size", 8192),
            n_dense_layers=n - len(moe),
        )
    chunk = _optional_window(f, "attention_chunk_size", 8192)
    rope = doc.get("no_rope_layers")
    if rope and (
        not isinstance(rope, list) or len(rope) != n or any(r not in (0, 1) for r in rope)
    ):
        raise SheetgenError(
            f"{f.where}: no_rope_layers",
            f"expected one 0 or 1 per layer (num_hidden_layers {n}), got {short(rope)}",
        )
    interval = f.int("no_rope_layer_interval", 4) if not rope else 1
    if interval == 0:
        raise SheetgenError(
            f"{f.where}: no_rope_layer_interval", "expected a whole number >= 1, got 0"
        )
    uses_rope = rope or [int((i + 1) % interval != 0) for i in range(n)]
    default = ["chunked_attention" if r and chunk else "full_attention" for r in uses_rope]
    return {**out, **_window(f, n, default, chunk, "chunked_attention")}


def gemma3_text(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    if f.flag("use_bidirectional_attention", False):
        raise SheetgenError(
            f"{f.where}: use_bidirectional_attention",
            "true (an encoder such as EmbeddingGemma, not a causal language model) is not "
            "supported; accepted: false",
        )
    out = _base(f, True, 256, False)
    out.update(norms_per_layer=4, qk_norm=1)
    n = out["n_layers"]
    pattern = f.int("sliding_window_pattern", 6)
    if pattern == 0:
        raise SheetgenError(
            f"{f.where}: sliding_window_pattern", "expected a whole number >= 1, got 0"
        )
    default = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n)]
    return {**out, **_window(f, n, default, _optional_window(f, "sliding_window", 4096), SLIDING)}


def olmo2(doc: dict[str, Any], f: _Fields) -> dict[str, Any]:
    out = _base(f, False, None, False)
    out["qk_norm"] = 2
    return out


READERS = {
    "qwen3": qwen3,
    "qwen3_moe": qwen3_moe,
    "gpt_oss": gpt_oss,
    "llama4": llama4_text,
    "llama4_text": llama4_text,
    "gemma3": gemma3_text,
    "gemma3_text": gemma3_text,
    "olmo2": olmo2,
}
