"""The LoRA sheet: LoRA and QLoRA adapters, frozen weights, their bytes and FLOPs.

A recipe ``lora`` or ``qlora`` fine-tunes a frozen base model through low-rank
adapters (Hu et al. 2021, LoRA, arXiv:2106.09685, section 4.1): each targeted
linear layer W (d_in -> d_out) gains A (d_in -> r) and B (r -> d_out), so it
adds r x (d_in + d_out) trainable parameters.  Hugging Face PEFT counts exactly
these (``print_trainable_parameters``; LoRA without bias); the targets are

  qv          q_proj, v_proj (PEFT's default for Llama models)
  qkvo        q_proj, k_proj, v_proj, o_proj
  all-linear  the four projections and the MLP's matrices (gate, up, down), every
              linear layer but the output layer, as PEFT's ``all-linear`` does.

q is h -> a x d_h, k and v are h -> n_kv x d_h (grouped-query attention keeps v
narrow: Llama 3 8B's v_proj is 4096 -> 1024), o is a x d_h -> h, each MLP matrix
joins h and F.  Llama 2 7B, r 8, q and v: 32 x 8 x (8192 + 8192) = 4,194,304.

Memory.  The base weights are frozen: no gradient, no master copy, no optimizer
state.  LoRA keeps them at the recipe's weight bytes (BF16, 2).  QLoRA stores the
layers' linear weights in 4-bit NormalFloat with double quantisation (Dettmers
et al. 2023, arXiv:2305.14314, sections 2-3): 4 bits per weight, an FP32 absmax
per 64 weights quantised to 8 bits, and an FP32 constant per 256 of those:
4 + 8/64 + 32/(64 x 256) = 4.127 bits = 0.5159 bytes (the ``qlora`` recipe's
weight bytes).  Everything else (embeddings, the output layer, norms) stays BF16:
bitsandbytes replaces ``nn.Linear`` modules only, and transformers keeps the
output layer unquantised (``get_keys_to_not_convert``, ``llm_int8_skip_modules``).
The adapters are FP32 (PEFT's ``autocast_adapter_dtype=True`` default casts them
to float32 over a BF16 or FP16 base): FP32 weight and gradient, Adam's m and v
in FP32, 16 bytes per trainable parameter.  The Memory sheet's bytes per
parameter become averages over all N, so every sheet that multiplies them by a
parameter count (sharding, fits, fewest GPUs) follows unchanged.

FLOPs (``lora_flops``).  A full training step costs forward 2N, the activations'
gradient 2N and the weights' gradient 2N per token (3 x forward).  A frozen
weight needs no weight gradient, so its matmuls cost 4N instead of 6N; the
activation gradient is still needed to reach the adapters below.  The attention
core has no weights: its 3 x forward stands.  The adapters are trained matmuls:
6 x trainable.  Hu et al. 2021 (section 4.2) state the same savings: no
optimizer states for the frozen parameters, no gradients for most of them (25%
faster than full fine-tuning of GPT-3 175B).
"""

from __future__ import annotations

from sheetgen.reference.params import mlp_matrices, params
from sheetgen.scenarios.scenario import Scenario

FINETUNE_RECIPES = ("lora", "qlora")
# The targets each lora_targets choice adapts.
TARGETS = {
    "qv": ("q", "v"),
    "qkvo": ("q", "k", "v", "o"),
    "all-linear": ("q", "k", "v", "o", "mlp"),
}


def finetune(s: Scenario) -> dict[str, float]:
    m, run = s.model, s.run
    p = params(m)
    h, a, kv, d, f = m.hidden_size, m.n_heads, m.n_kv_heads, m.head_dim, m.ffn_size
    on = int(run.recipe in FINETUNE_RECIPES)
    qlora = int(run.recipe == "qlora")
    widths = {
        "q": h + a * d,
        "k": h + kv * d,
        "v": h + kv * d,
        "o": a * d + h,
        "mlp": mlp_matrices(m) * (h + f),
    }
    width_layer = sum(widths[t] for t in TARGETS[run.lora_targets])
    trainable = on * run.lora_rank * m.n_layers * width_layer
    n = p["params_total"]
    base_bytes = s.tables.recipe(run.recipe).weight_bytes
    bf16 = s.tables.dtype("bf16")
    fp32 = s.tables.dtype("fp32")
    linear = m.n_layers * (h * a * d + 2 * h * kv * d + a * d * h + mlp_matrices(m) * h * f)
    in_format = linear if qlora else n
    frozen = in_format * base_bytes + (n - in_format) * bf16
    adapter_w, adapter_g, adapter_o = fp32, fp32, 2 * fp32
    return {
        "lora_on": on,
        "qlora_on": qlora,
        "lora_width_q": widths["q"],
        "lora_width_k": widths["k"],
        "lora_width_v": widths["v"],
        "lora_width_o": widths["o"],
        "lora_width_mlp": widths["mlp"],
        "lora_width_layer": width_layer,
        "lora_params_trainable": trainable,
        "lora_trainable_share": trainable / n,
        "lora_base_weight_bytes": base_bytes,
        "lora_bf16_bytes": bf16,
        "lora_params_linear": linear,
        "lora_params_in_format": in_format,
        "lora_mem_frozen": frozen,
        "lora_base_weight_bits": 8 * base_bytes,
        "lora_adapter_weight_bytes": adapter_w,
        "lora_adapter_grad_bytes": adapter_g,
        "lora_adapter_optimizer_bytes": adapter_o,
        "lora_mem_adapters": trainable * (adapter_w + adapter_g + adapter_o),
        "lora_weight_bytes_avg": (frozen + trainable * adapter_w) / n,
        "lora_grad_bytes_avg": trainable * adapter_g / n,
        "lora_optimizer_bytes_avg": trainable * adapter_o / n,
    }


def lora_flops(on: int, trainable: float, fwd: float, fwd_core_all_layers: float) -> dict:
    """The FLOPs a LoRA step does not spend, and what its adapters add, per token.

    ``fwd``: the forward FLOPs per token; ``fwd_core_all_layers``: the attention
    core's share of it (no weights, so its backward is unchanged)."""
    skipped = on * (fwd - fwd_core_all_layers)
    adapters = 6 * trainable
    return {
        "lora_flops_wgrad_skipped": skipped,
        "lora_flops_adapters": adapters,
    }
