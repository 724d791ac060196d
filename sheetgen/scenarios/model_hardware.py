"""The model and the accelerator of a scenario, as frozen dataclasses.

``Model`` (the architecture fields, with the lists of whole-number, flag and positive
fields) and ``Hardware`` (an accelerator preset's datasheet and calibrated kernel
fields, with the fields that may be 0 and the Hopper kernel defaults).  Split out of
``sheetgen.scenarios.scenario``, which re-exports every name here; nothing here
imports it.
"""

from __future__ import annotations

from dataclasses import dataclass

MODEL_INT_FIELDS = (
    "n_layers",
    "hidden_size",
    "n_heads",
    "n_kv_heads",
    "head_dim",
    "ffn_size",
    "vocab_size",
    "tied_embeddings",
    "pos_embeddings",
    "qkv_bias",
    "out_bias",
    "mlp_bias",
    "norms_per_layer",
    "dropout",
    "n_experts",
    "experts_per_token",
    "n_shared_experts",
    "moe_ffn_size",
    "n_dense_layers",
    "router_bias",
    "q_lora_rank",
    "kv_lora_rank",
    "qk_nope_head_dim",
    "qk_rope_head_dim",
    "v_head_dim",
    "sliding_window",
    "local_layers",
    "context_limit",
    "qk_norm",
    "attn_sinks",
    "attn_chunked",
)
MODEL_FLAG_FIELDS = (
    "tied_embeddings",
    "qkv_bias",
    "out_bias",
    "mlp_bias",
    "dropout",
    "router_bias",
    "attn_sinks",
    "attn_chunked",
)
# Fields that must be >= 1; the rest of the integer fields must be >= 0.
MODEL_POSITIVE_FIELDS = (
    "n_layers",
    "hidden_size",
    "n_heads",
    "n_kv_heads",
    "head_dim",
    "ffn_size",
    "vocab_size",
    "norms_per_layer",
)
NORMS = ("rmsnorm", "layernorm")
MLPS = ("gated", "gelu")


@dataclass(frozen=True)
class Model:
    """A transformer's shape. Field meanings: presets/README.md."""

    id: str
    name: str
    n_layers: int
    hidden_size: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    ffn_size: int
    vocab_size: int
    tied_embeddings: int = 0
    pos_embeddings: int = 0
    qkv_bias: int = 0
    out_bias: int = 0
    mlp_bias: int = 0
    norm: str = "rmsnorm"
    norms_per_layer: int = 2
    mlp: str = "gated"
    dropout: int = 0
    n_experts: int = 0
    experts_per_token: int = 0
    n_shared_experts: int = 0
    moe_ffn_size: int = 0
    n_dense_layers: int = 0
    router_bias: int = 0
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    # Windowed attention: local_layers of the n_layers attend to the last sliding_window
    # tokens only (0 and 0: every layer attends to the whole context).
    sliding_window: int = 0
    local_layers: int = 0
    # The longest sequence the model was trained for, in tokens (config.json
    # max_position_embeddings; GPT-2: n_positions); 0 = unknown, nothing is checked.
    context_limit: int = 0
    # Query/key norms (RMSNorm weights on Q and K before attention): 0 none, 1 one norm
    # of head_dim shared by the heads for Q and one for K (Qwen 3, Gemma 3), 2 one over
    # the whole projection (OLMo 2: n_heads x head_dim for Q, n_kv_heads x head_dim for K).
    qk_norm: int = 0
    # One learned attention-sink logit per query head and layer (gpt-oss): 1, else 0.
    attn_sinks: int = 0
    # 1: the local layers attend within fixed chunks of sliding_window tokens (Llama 4's
    # chunked attention) instead of a sliding window; each caches at most one chunk.
    attn_chunked: int = 0
    source: str = ""
    params_published: int | None = None

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0


HARDWARE_FIELDS = (
    "peak_bf16_tflops",
    "peak_fp8_tflops",
    "mem_gb",
    "hbm_tbps",
    "tdp_w",
    "intra_node_gb_per_s",
    "inter_node_gb_per_s",
    "host_gb_per_s",
    "gemm_eff_bf16",
    "gemm_eff_fp8",
    "gemm_dim_half",
    "attn_eff",
    "attn_seq_half",
    # Issue 41: the FP4 tensor peak (0 = none) and the fast-interconnect domain.
    "peak_fp4_tflops",
    "fast_domain_gpus",
)
# Accelerators in one fast-interconnect domain (NVLink / Infinity Fabric / ICI) when a
# preset leaves ``fast_domain_gpus`` out: an 8-GPU HGX / DGX node (NVIDIA DGX H100 and
# DGX B200 datasheets: 8 GPUs on one NVSwitch fabric), the run default before issue 41.
DEFAULT_FAST_DOMAIN_GPUS = 8
# The step-time model's kernel fields (sheetgen.reference.throughput): optional in a
# preset; one that leaves them out takes these, the H100 SXM calibration
# (presets/hardware/h100-sxm.yaml, fitted by `sheetgen benchmark-check`).
KERNEL_FIELDS = ("gemm_eff_bf16", "gemm_eff_fp8", "gemm_dim_half", "attn_eff", "attn_seq_half")
HOPPER_KERNELS = {
    "gemm_eff_bf16": 0.6549,
    "gemm_eff_fp8": 0.5813,
    "gemm_dim_half": 308.8,
    "attn_eff": 0.55,
    "attn_seq_half": 512.0,
}
# Hardware fields that may be 0 (meaning "none" or "not published").
HARDWARE_ZERO_OK = ("peak_fp8_tflops", "tdp_w", "host_gb_per_s", "gemm_eff_fp8", "peak_fp4_tflops")


@dataclass(frozen=True)
class Hardware:
    """One accelerator: dense peaks in TFLOP/s, memory in GB, bandwidth in TB/s.

    Link bandwidths are GB/s per GPU in one direction: ``intra_node_gb_per_s``
    inside a node (NVLink, Infinity Fabric, PCIe, TPU ICI), ``inter_node_gb_per_s``
    between nodes (the GPU's share of the node's network adapters, TPU DCN);
    ``host_gb_per_s`` between the GPU and host memory (its PCIe link; 0 = not published).
    ``fast_domain_gpus``: accelerators that reach each other over ``intra_node_gb_per_s``
    (8 on an HGX node, 72 in a GB200 NVL72 rack, the ICI slice of a TPU): the default
    of the run's ``gpus_per_node``.  ``peak_fp4_tflops``: the dense FP4 tensor peak
    (0 = no FP4 tensor cores).
    """

    id: str
    name: str
    peak_bf16_tflops: float
    peak_fp8_tflops: float
    mem_gb: float
    hbm_tbps: float
    tdp_w: float
    intra_node_gb_per_s: float
    inter_node_gb_per_s: float
    host_gb_per_s: float = 0.0
    # The step-time model's kernel efficiencies (sheetgen.reference.throughput);
    # a preset that leaves them out takes HOPPER_KERNELS, said on its Presets row.
    gemm_eff_bf16: float = 0.0
    gemm_eff_fp8: float = 0.0
    gemm_dim_half: float = 0.0
    attn_eff: float = 0.0
    attn_seq_half: float = 0.0
    peak_fp4_tflops: float = 0.0
    fast_domain_gpus: float = DEFAULT_FAST_DOMAIN_GPUS
    sources: tuple[tuple[str, str], ...] = ()
