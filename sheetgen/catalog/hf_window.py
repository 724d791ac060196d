"""Windowed attention from a Hugging Face ``config.json``: which layers attend to a
sliding window (``local_layers``) and how wide it is (``sliding_window``).

transformers' modelling code is the reference, per family:

- Mistral, Mixtral, Phi-3: every layer passes ``config.sliding_window`` to its
  attention (modeling_mistral.py: ``sliding_window=getattr(self.config,
  "sliding_window", None)``); null means full attention everywhere (Mistral 7B
  v0.1 has 4096, later versions null; Mixtral null).
- Gemma 2: local and global layers alternate, local first: Gemma2Config sets
  ``layer_types`` to ``"sliding_attention" if bool((i + 1) % 2) else
  "full_attention"`` for layer i (configuration_gemma2.py), so ceil(L / 2) of L
  layers are local; the window defaults to 4096.
- Qwen2: only with ``use_sliding_window`` true, and then the layers from
  ``max_window_layers`` on (configuration_qwen2.py: ``i >= max_window_layers``).

A config that lists ``layer_types`` (transformers >= 4.53 writes it) is followed
instead: its length must equal ``num_hidden_layers`` and every entry be
``sliding_attention`` or ``full_attention``.  The 2025 families (Qwen 3, gpt-oss, Llama 4,
Gemma 3) read theirs in sheetgen.catalog.hf_families; other families have no window.
"""

from __future__ import annotations

from typing import Any

from sheetgen.catalog.hf_fields import FieldReader as _Fields
from sheetgen.errors import SheetgenError, short

# How many of L layers each family windows when the config lists no layer_types.
ALL_LAYERS = ("mistral", "mixtral", "phi3")
LAYER_TYPES = ("sliding_attention", "full_attention")
GEMMA2_WINDOW = 4096  # Gemma2Config's default sliding_window


def window_fields(doc: dict[str, Any], f: _Fields, n_layers: int) -> dict[str, int]:
    """``sliding_window`` and ``local_layers`` for a config (both 0 without a window)."""
    model_type = doc.get("model_type")
    if model_type not in (*ALL_LAYERS, "gemma2", "qwen2"):
        return {}
    default = GEMMA2_WINDOW if model_type == "gemma2" else None
    if model_type == "qwen2" and not f.flag("use_sliding_window", False):
        return {"sliding_window": 0, "local_layers": 0}
    if doc.get("sliding_window", default) is None:
        window = 0
    else:
        window = f.int("sliding_window", default)
    types = doc.get("layer_types")
    if types is not None:
        local = _count_sliding(types, n_layers, f.where)
    elif model_type == "gemma2":
        local = (n_layers + 1) // 2  # layers 0, 2, 4, ...: (i + 1) odd
    elif model_type == "qwen2":
        local = max(0, n_layers - f.int("max_window_layers", 28))
    else:
        local = n_layers
    if window == 0 and local > 0 and types is not None:
        raise SheetgenError(
            f"{f.where}: sliding_window",
            f"layer_types lists {local} sliding_attention layer(s) but sliding_window is "
            f"{short(doc.get('sliding_window'))}; expected a whole number >= 1",
        )
    if window == 0 or local == 0:
        return {"sliding_window": 0, "local_layers": 0}
    return {"sliding_window": window, "local_layers": local}


def _count_sliding(types: Any, n_layers: int, where: str) -> int:
    if not isinstance(types, list) or not all(t in LAYER_TYPES for t in types):
        raise SheetgenError(
            f"{where}: layer_types",
            f"expected a list of {' / '.join(LAYER_TYPES)}, got {short(types)}",
        )
    if len(types) != n_layers:
        raise SheetgenError(
            f"{where}: layer_types",
            f"has {len(types)} entries; expected one per layer (num_hidden_layers {n_layers})",
        )
    return sum(t == "sliding_attention" for t in types)
