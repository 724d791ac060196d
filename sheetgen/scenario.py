"""Scenarios: model + hardware + run settings, as validated frozen dataclasses.

A scenario file is YAML::

    scenarios:
      - name: Llama 3 8B, 8 x H100
        model: llama3-8b            # a preset id, or a mapping of model fields
        hardware: h100-sxm          # a preset id, or a mapping of hardware fields
        n_gpus: 8
        train_tokens: 15T           # K/M/B/T (decimal) or Ki/Mi/Gi/Ti (binary) suffixes
        ...

A model or hardware mapping may start from a preset with ``base: <id>`` and
override some fields.  Run settings left out take the defaults in
``RUN_DEFAULTS``; each default is documented in ``RUN_FIELDS``.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, fields, replace
from dataclasses import field as dataclass_field
from typing import Any

from sheetgen.errors import SheetgenError, short
from sheetgen.limits import (
    HARDWARE_LIMITS,
    MAX_TEXT_CHARS,
    MODEL_LIMITS,
    check_id,
    check_range,
    check_run_limit,
    check_text,
)

# ---------------------------------------------------------------------------
# Model and hardware

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
)
MODEL_FLAG_FIELDS = (
    "tied_embeddings",
    "qkv_bias",
    "out_bias",
    "mlp_bias",
    "dropout",
    "router_bias",
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
)
# Hardware fields that may be 0 (meaning "none" or "not published").
HARDWARE_ZERO_OK = ("peak_fp8_tflops", "tdp_w", "host_gb_per_s")


@dataclass(frozen=True)
class Hardware:
    """One accelerator: dense peaks in TFLOP/s, memory in GB, bandwidth in TB/s.

    Link bandwidths are GB/s per GPU in one direction: ``intra_node_gb_per_s``
    inside a node (NVLink, Infinity Fabric, PCIe, TPU ICI), ``inter_node_gb_per_s``
    between nodes (the GPU's share of the node's network adapters, TPU DCN);
    ``host_gb_per_s`` between the GPU and host memory (its PCIe link; 0 = not published).
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
    sources: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Recipe:
    """Bytes per parameter for each training state, and per activation value."""

    id: str
    name: str
    weight_bytes: float
    grad_bytes: float
    grad_accum_bytes: float
    master_bytes: float
    optimizer_bytes: float
    act_bytes: float
    frameworks: str = ""
    # Not a Presets-table column (the row's source cell holds it): not compared.
    source: str = dataclass_field(default="", compare=False)


# ---------------------------------------------------------------------------
# Run settings

CHOICES: dict[str, tuple[str, ...]] = {
    "recipe": (
        "bf16-adam",
        "fp32-adam",
        "bf16-adam-fp32-grads",
        "fp32-sgd-momentum",
        "bf16-inference",
        "megatron-bf16",
        "fsdp-bf16",
        "bf16-adam-8bit",
        "fp8-te",
    ),
    "act_profile": ("formula", "hf-eager", "megatron-te"),
    "attention": ("flash", "naive"),
    "recompute": ("none", "selective", "full"),
    "peak_dtype": ("bf16", "fp8"),
    "weight_dtype": ("bf16", "fp16", "fp32", "fp8", "int8", "int4"),
    "kv_dtype": ("bf16", "fp16", "fp32", "fp8", "int8", "int4"),
    "price_basis": ("on-demand", "reserved"),
}

# Excel's 1900 date system: serial 1 = 1900-01-01, and serials count from
# 1899-12-30 for every date from 1900-03-01 on (Excel's phantom 1900-02-29).
EXCEL_EPOCH = dt.date(1899, 12, 30)
DATE_MIN = dt.date(1901, 1, 1)
# The spend-by-month table reaches 36 months and up to 4 fiscal years past the start;
# every date it shows must stay before the spreadsheets' last date, 9999-12-31.
DATE_MAX = dt.date(9994, 12, 31)


def excel_serial(day: dt.date) -> int:
    """The spreadsheet serial number of a date (2025-01-01 -> 45658)."""
    return (day - EXCEL_EPOCH).days


def date_from_serial(serial: float) -> dt.date:
    return EXCEL_EPOCH + dt.timedelta(days=int(serial))


# Months (rows) of the spend-by-month table (issue 11).
MONTH_SLOTS = 36

# key: (kind, default, description with source).
# kind: int (whole, >= 1 unless INT_RANGES says otherwise) | float | fraction (0, 1]
#       | share [0, 1) | choice.  A default of None is derived from other fields (Run).
RUN_FIELDS: dict[str, tuple[str, Any, str]] = {
    "n_gpus": ("int", 8, "GPUs training together (= dp x tp x pp x cp)"),
    "train_tokens": ("int", 1_000_000_000_000, "tokens seen in training (D)"),
    "seq_len": ("int", 4096, "training sequence length (s)"),
    "micro_batch": ("int", 1, "sequences per forward pass on one GPU (b)"),
    "global_batch_tokens": (
        "int",
        4_194_304,
        "tokens per optimizer step (4M = 1,024 x 4,096, Llama 3's first-stage batch)",
    ),
    "recipe": ("choice", "bf16-adam", "precision / optimizer recipe (Presets: Recipes)"),
    "attention": ("choice", "flash", "attention kernel: flash stores no s x s matrix; naive does"),
    "recompute": ("choice", "none", "activation recomputation: none | selective | full"),
    "peak_dtype": ("choice", "bf16", "which dense peak MFU refers to: bf16 or fp8"),
    "causal_factor": (
        "fraction",
        0.5,
        "share of attention-core FLOPs a causal kernel performs (0.5: masked half skipped)",
    ),
    "mfu": ("fraction", 0.4, "model FLOPs utilization (Llama 3 405B reached 0.38-0.43)"),
    "goodput": ("fraction", 0.9, "share of wall-clock time spent training (Llama 3: about 90%)"),
    "price_per_gpu_hour": (
        "float",
        2.0,
        "USD per GPU-hour: an illustrative rate, replace with your quote",
    ),
    "price_per_gpu_hour_reserved": (
        "float",
        1.5,
        "USD per GPU-hour under a reserved / committed contract: illustrative, "
        "replace with your quote",
    ),
    "price_basis": (
        "choice",
        "on-demand",
        "which GPU-hour price the budget total uses: on-demand or reserved",
    ),
    "pue": (
        "float",
        1.2,
        "power usage effectiveness, facility power / IT power (>= 1); illustrative: "
        "hyperscale sites reach 1.1-1.2, the Uptime Institute 2023 survey average is 1.58",
    ),
    "electricity_price_per_kwh": (
        "float",
        0.08,
        "USD per kWh, billed on top of the GPU price only when price_includes_power is 0 "
        "(owned or colocated GPUs); illustrative: US industrial average 2023 8.06 cents "
        "(EIA Electric Power Annual)",
    ),
    "contingency": (
        "float",
        0.1,
        "reserve added to GPU + energy cost for work outside the plan (reruns beyond "
        "goodput, ablations, price changes); illustrative 10%, set your own",
    ),
    "start_date": (
        "date",
        dt.date(2027, 1, 1),
        "first day of training, ISO date (YYYY-MM-DD); illustrative",
    ),
    "measured_tokens_per_s_per_gpu": (
        "float",
        0,
        "pilot run: measured training tokens/s per GPU at this scenario's settings "
        "(0 = not measured)",
    ),
    "measured_step_seconds": (
        "float",
        0,
        "pilot run: measured seconds per optimizer step with this scenario's GPUs and "
        "global batch (0 = not measured; used when tokens/s is not given)",
    ),
    "measured_peak_mem": (
        "float",
        0,
        "pilot run: measured peak memory per GPU in bytes, e.g. "
        "torch.cuda.max_memory_reserved() (0 = not measured)",
    ),
    "weight_dtype": ("choice", "bf16", "inference weight format"),
    "kv_dtype": ("choice", "bf16", "inference KV-cache format"),
    "inf_batch": ("int", 1, "inference: concurrent sequences"),
    "inf_context": (
        "int",
        4096,
        "inference: context length per sequence for KV-cache sizing (KV cache sheet), tokens",
    ),
    "prompt_len": (
        "int",
        4000,
        "inference request: prompt tokens (an illustrative prefill-heavy request: 4,000 + 100)",
    ),
    "output_len": ("int", 100, "inference request: generated tokens per sequence"),
    "inf_tp": ("int", 1, "inference: GPUs serving one model replica (tensor parallel)"),
    "quant_scale_bytes": (
        "float",
        0,
        "inference: bytes per weight added by quantization scales (one FP16 scale per "
        "group of 128 weights: 2/128 = 0.015625; GPTQ/AWQ group size 128); 0 = none",
    ),
    "inf_compute_eff": (
        "fraction",
        0.5,
        "inference: share of the dense peak reached in prefill and decode matmuls "
        "(illustrative default, replace with a measurement)",
    ),
    "inf_bw_eff": (
        "fraction",
        0.8,
        "inference: share of HBM bandwidth reached when decode streams weights and KV cache "
        "(illustrative default, replace with a measurement)",
    ),
    "inf_overhead_bytes": (
        "float",
        1_500_000_000,
        "inference: runtime memory per GPU besides weights and KV cache: CUDA context, "
        "kernels, activation workspace (Tazi et al. 2025, The Ultra-Scale Playbook, "
        "'Profiling the memory usage': 1-2 GB for the CUDA context and kernels)",
    ),
    "overhead_bytes": (
        "float",
        1_500_000_000,
        "fixed per-GPU overhead: CUDA context, kernels (Tazi et al. 2025, The Ultra-"
        "Scale Playbook, 'Profiling the memory usage': 1-2 GB)",
    ),
    "logits_bytes": (
        "float",
        4,
        "bytes per logit value: FP32 cross-entropy (Tazi et al. 2025, The Ultra-Scale"
        " Playbook, 'Memory for activations')",
    ),
    "dropout_mask_bytes": ("float", 1, "bytes per dropout-mask value (Korthikanti et al. 2022)"),
    # Multi-GPU layout (Parallelism sheet).  The defaults keep every single-GPU key
    # unchanged: no model sharding, all GPUs data parallel.
    "dp": (
        "int",
        None,
        "data-parallel degree, derived: n_gpus / (tp x pp x cp) (Megatron-LM's layout "
        "n = dp x tp x pp x cp); a scenario may state it only when it agrees",
    ),
    "tp": ("int", 1, "tensor-parallel degree (Megatron-LM, Shoeybi et al. 2019)"),
    "pp": ("int", 1, "pipeline-parallel stages (1F1B schedule, Narayanan et al. 2021)"),
    "cp": ("int", 1, "context-parallel degree: the sequence split over cp GPUs (ring attention)"),
    "ep": ("int", 1, "expert-parallel degree: routed experts split over ep GPUs (MoE only)"),
    "zero_stage": (
        "int",
        0,
        "ZeRO stage 0-3 (Rajbhandari et al. 2020): 1 shards optimizer states and master "
        "weights over data parallel, 2 also gradients, 3 also weights (= FSDP full sharding)",
    ),
    "sequence_parallel": (
        "int",
        0,
        "1: sequence parallelism splits the activations tensor parallelism leaves whole "
        "(Korthikanti et al. 2022)",
    ),
    "pp_microbatches": (
        "int",
        0,
        "micro-batches per optimizer step per pipeline, m; 0 (default) derives it from the "
        "batch: global batch / (micro-batch x dp x sequence length), i.e. the "
        "gradient-accumulation steps, at least 1",
    ),
    "pp_virtual_stages": (
        "int",
        1,
        "model chunks per pipeline GPU, v (interleaved 1F1B, Narayanan et al. 2021; 1 = plain)",
    ),
    "gpus_per_node": (
        "int",
        8,
        "GPUs sharing the intra-node link (8 in DGX/HGX H100 and MI300X platforms; "
        "for TPUs the chips of one ICI slice)",
    ),
    "mem_headroom": (
        "share",
        0.1,
        "share of GPU memory kept free for fragmentation, temporary and communication "
        "buffers the model does not count (Tazi et al. 2025, The Ultra-Scale "
        "Playbook, 'Memory usage in transformers', leaves them out); a planning "
        "margin, not a measured value",
    ),
    "compute_efficiency": (
        "fraction",
        0.6,
        "share of the dense peak busy compute kernels sustain, before pipeline bubbles and "
        "exposed communication; a planning assumption (large BF16 GEMMs reach roughly "
        "0.6-0.8 of dense peak), replace with your kernel benchmarks",
    ),
    # Framework memory (issue 12): activation profiles, offload, ZeRO-3 buffers,
    # inference prefill peak, paged KV cache and tensor-parallel all-reduces.
    "act_profile": (
        "choice",
        "formula",
        "which tensors a layer keeps for backward: formula (Korthikanti et al. 2022),"
        " hf-eager (Hugging Face transformers Llama, eager PyTorch: FP32 norm inputs, "
        "attention log-sum-exp, FP32 final norm), megatron-te (Megatron-LM with Transformer "
        "Engine: fused norms keep FP32 statistics, fused SwiGLU keeps its input only)",
    ),
    "offload_optimizer": (
        "int",
        0,
        "1: gradients, FP32 master weights and optimizer states live in host memory and the "
        "optimizer steps on the CPU (ZeRO-Offload, Ren et al. 2021; FSDP CPUOffload)",
    ),
    "offload_params": (
        "int",
        0,
        "1: the (sharded) weights live in host memory and are fetched over PCIe for each "
        "forward and backward (ZeRO-Infinity, Rajbhandari et al. 2021; FSDP CPUOffload)",
    ),
    "host_buffer_factor": (
        "float",
        1.5,
        "host memory per offloaded byte, pinned staging buffers included (DeepSpeed's "
        "estimators: additional_buffer_factor = 1.5)",
    ),
    "kv_block_tokens": (
        "int",
        16,
        "inference: tokens per paged KV-cache block; each sequence's cache is rounded up to "
        "whole blocks (vLLM's default block size 16, Kwon et al. 2023)",
    ),
    "inf_collective_latency_s": (
        "float",
        0.00001,
        "inference: fixed latency of one tensor-parallel all-reduce, seconds (illustrative "
        "10 us, the order of NCCL small-message all-reduce latency inside an NVLink node; "
        "replace with nccl-tests all_reduce_perf on your system)",
    ),
    # Budget proposal (issue 11): energy counted once, a confidence range, a
    # sensitivity step, spend by month and fiscal year.
    "price_includes_power": (
        "int",
        1,
        "1: the GPU-hour price already includes power (on-demand cloud rates do), so energy "
        "is shown in kWh but not billed; 0: owned or colocated GPUs, energy billed on top",
    ),
    "mfu_low": (
        "fraction",
        None,
        "pessimistic MFU for the cost range (default: mfu - 0.05, at least half the MFU); "
        "illustrative: Llama 3 405B ran at 38-43% BF16 MFU across its three pre-training "
        "configurations (Dubey et al. 2024, The Llama 3 Herd of Models, section 3.3.2, Table 4)",
    ),
    "mfu_high": (
        "fraction",
        None,
        "optimistic MFU for the cost range (default: mfu + 0.05, at most 1); illustrative, "
        "same source as mfu_low",
    ),
    "goodput_low": (
        "fraction",
        None,
        "pessimistic goodput for the range (default: goodput - 0.05, at least half of it); "
        "illustrative: Llama 3 pre-training had 466 job interruptions in 54 days and about 90% "
        "effective training time (Dubey et al. 2024, section 3.3.4)",
    ),
    "goodput_high": (
        "fraction",
        None,
        "optimistic goodput for the range (default: goodput + 0.05, at most 1); illustrative",
    ),
    "sensitivity_step": (
        "fraction",
        0.1,
        "relative change of each driver (MFU, goodput, GPU-hour price, tokens) in the "
        "sensitivity table, below 1; illustrative 10%",
    ),
    "month_horizon": (
        "int",
        MONTH_SLOTS,
        "months the spend-by-month table covers from the start date (1 to 36; default 36); "
        "spend after it is shown as one remainder",
    ),
    "fiscal_year_start_month": (
        "int",
        1,
        "calendar month (1-12) the fiscal year starts in: 1 = calendar year, 10 = US federal, "
        "4 = UK and Japan",
    ),
}
# Spend by month (issue 11): fiscal quarters and years the month rows can touch, and
# the spread the default cost range takes around the MFU and goodput inputs.
QUARTER_SLOTS = 13  # 36 months touch at most 13 fiscal quarters
FISCAL_YEAR_SLOTS = 4  # ... and at most 4 fiscal years
RANGE_SPREAD = 0.05
# Whole-number settings whose accepted range is not ">= 1".
INT_RANGES: dict[str, tuple[int, int | None]] = {
    "zero_stage": (0, 3),
    "sequence_parallel": (0, 1),
    "pp_microbatches": (0, None),
    "offload_optimizer": (0, 1),
    "offload_params": (0, 1),
    "price_includes_power": (0, 1),
    "month_horizon": (1, MONTH_SLOTS),
    "fiscal_year_start_month": (1, 12),
}
# 0/1 settings: YAML true/false (and the words true/false, yes/no) are accepted too.
FLAG_FIELDS = frozenset({"sequence_parallel", "offload_optimizer", "offload_params"})
_FLAG_WORDS = {"true": 1, "false": 0, "yes": 1, "no": 0, "on": 1, "off": 0}
RUN_DEFAULTS = {k: v[1] for k, v in RUN_FIELDS.items()}
# Run settings that may be 0 (meaning "free" or "not given"); other numbers must be > 0.
NONNEGATIVE_FIELDS = frozenset(
    {
        "price_per_gpu_hour",
        "price_per_gpu_hour_reserved",
        "electricity_price_per_kwh",
        "contingency",
        "measured_tokens_per_s_per_gpu",
        "measured_step_seconds",
        "measured_peak_mem",
        "quant_scale_bytes",
        "inf_overhead_bytes",
        "inf_collective_latency_s",
    }
)

# Training phases: a fixed number of slots per scenario (0 tokens = unused slot).
PHASE_SLOTS = 4
PHASE_FIELDS = ("tokens", "seq_len", "global_batch_tokens", "mfu")

# Chart sweeps: the sequence lengths and GPU counts the Sweeps sheet evaluates.
SWEEP_POINTS = 6
SWEEP_SEQ_DEFAULT = (2048, 4096, 8192, 16384, 32768, 65536)
SWEEP_GPUS_DEFAULT = (8, 64, 512, 2048, 8192, 16384)
LIST_FIELDS = ("phases", "sweep_seq_lens", "sweep_gpus")


@dataclass(frozen=True)
class Phase:
    """One training phase: tokens at its own sequence length, batch and MFU."""

    tokens: int
    seq_len: int
    global_batch_tokens: int
    mfu: float


@dataclass(frozen=True)
class Run:
    n_gpus: int = RUN_DEFAULTS["n_gpus"]
    train_tokens: int = RUN_DEFAULTS["train_tokens"]
    seq_len: int = RUN_DEFAULTS["seq_len"]
    micro_batch: int = RUN_DEFAULTS["micro_batch"]
    global_batch_tokens: int = RUN_DEFAULTS["global_batch_tokens"]
    recipe: str = RUN_DEFAULTS["recipe"]
    attention: str = RUN_DEFAULTS["attention"]
    recompute: str = RUN_DEFAULTS["recompute"]
    peak_dtype: str = RUN_DEFAULTS["peak_dtype"]
    causal_factor: float = RUN_DEFAULTS["causal_factor"]
    mfu: float = RUN_DEFAULTS["mfu"]
    goodput: float = RUN_DEFAULTS["goodput"]
    price_per_gpu_hour: float = RUN_DEFAULTS["price_per_gpu_hour"]
    weight_dtype: str = RUN_DEFAULTS["weight_dtype"]
    kv_dtype: str = RUN_DEFAULTS["kv_dtype"]
    inf_batch: int = RUN_DEFAULTS["inf_batch"]
    inf_context: int = RUN_DEFAULTS["inf_context"]
    prompt_len: int = RUN_DEFAULTS["prompt_len"]
    output_len: int = RUN_DEFAULTS["output_len"]
    inf_tp: int = RUN_DEFAULTS["inf_tp"]
    quant_scale_bytes: float = RUN_DEFAULTS["quant_scale_bytes"]
    inf_compute_eff: float = RUN_DEFAULTS["inf_compute_eff"]
    inf_bw_eff: float = RUN_DEFAULTS["inf_bw_eff"]
    inf_overhead_bytes: float = RUN_DEFAULTS["inf_overhead_bytes"]
    overhead_bytes: float = RUN_DEFAULTS["overhead_bytes"]
    logits_bytes: float = RUN_DEFAULTS["logits_bytes"]
    dropout_mask_bytes: float = RUN_DEFAULTS["dropout_mask_bytes"]
    dp: int = RUN_DEFAULTS["dp"]  # None: derived in __post_init__
    tp: int = RUN_DEFAULTS["tp"]
    pp: int = RUN_DEFAULTS["pp"]
    cp: int = RUN_DEFAULTS["cp"]
    ep: int = RUN_DEFAULTS["ep"]
    zero_stage: int = RUN_DEFAULTS["zero_stage"]
    sequence_parallel: int = RUN_DEFAULTS["sequence_parallel"]
    pp_microbatches: int = RUN_DEFAULTS["pp_microbatches"]  # 0: derived from the batch
    pp_virtual_stages: int = RUN_DEFAULTS["pp_virtual_stages"]
    gpus_per_node: int = RUN_DEFAULTS["gpus_per_node"]
    mem_headroom: float = RUN_DEFAULTS["mem_headroom"]
    compute_efficiency: float = RUN_DEFAULTS["compute_efficiency"]
    act_profile: str = RUN_DEFAULTS["act_profile"]
    offload_optimizer: int = RUN_DEFAULTS["offload_optimizer"]
    offload_params: int = RUN_DEFAULTS["offload_params"]
    host_buffer_factor: float = RUN_DEFAULTS["host_buffer_factor"]
    kv_block_tokens: int = RUN_DEFAULTS["kv_block_tokens"]
    inf_collective_latency_s: float = RUN_DEFAULTS["inf_collective_latency_s"]

    price_per_gpu_hour_reserved: float = RUN_DEFAULTS["price_per_gpu_hour_reserved"]
    price_basis: str = RUN_DEFAULTS["price_basis"]
    pue: float = RUN_DEFAULTS["pue"]
    electricity_price_per_kwh: float = RUN_DEFAULTS["electricity_price_per_kwh"]
    contingency: float = RUN_DEFAULTS["contingency"]
    start_date: dt.date = RUN_DEFAULTS["start_date"]
    measured_tokens_per_s_per_gpu: float = RUN_DEFAULTS["measured_tokens_per_s_per_gpu"]
    measured_step_seconds: float = RUN_DEFAULTS["measured_step_seconds"]
    measured_peak_mem: float = RUN_DEFAULTS["measured_peak_mem"]
    phases: tuple[Phase, ...] = ()
    sweep_seq_lens: tuple[int, ...] = SWEEP_SEQ_DEFAULT
    sweep_gpus: tuple[int, ...] = SWEEP_GPUS_DEFAULT
    # Budget proposal (issue 11).
    price_includes_power: int = RUN_DEFAULTS["price_includes_power"]
    mfu_low: float = RUN_DEFAULTS["mfu_low"]  # None: derived from mfu
    mfu_high: float = RUN_DEFAULTS["mfu_high"]
    goodput_low: float = RUN_DEFAULTS["goodput_low"]
    goodput_high: float = RUN_DEFAULTS["goodput_high"]
    sensitivity_step: float = RUN_DEFAULTS["sensitivity_step"]
    month_horizon: int = RUN_DEFAULTS["month_horizon"]
    fiscal_year_start_month: int = RUN_DEFAULTS["fiscal_year_start_month"]

    def __post_init__(self) -> None:
        _resolve_ranges(self)
        # dp is n_gpus / (tp x pp x cp); a scenario may state it, but then it must agree.
        model_parallel = self.tp * self.pp * self.cp
        if self.n_gpus % model_parallel:
            raise SheetgenError(
                "n_gpus",
                f"{self.n_gpus} is not a multiple of tp x pp x cp = {self.tp} x {self.pp} x "
                f"{self.cp} = {model_parallel}, so dp = n_gpus / (tp x pp x cp) is not whole; "
                "change n_gpus, tp, pp or cp",
            )
        derived = self.n_gpus // model_parallel
        if self.dp is not None and self.dp != derived:
            raise SheetgenError(
                "dp",
                f"dp {self.dp} disagrees with n_gpus {self.n_gpus}: n_gpus / (tp x pp x cp) = "
                f"{self.n_gpus} / {model_parallel} = {derived}; leave dp out or set n_gpus "
                f"to {self.dp * model_parallel}",
            )
        object.__setattr__(self, "dp", derived)


def _resolve_ranges(run: Run) -> None:
    """Default the MFU and goodput ranges around their inputs; low must not exceed high."""
    for name in ("mfu", "goodput"):
        center = getattr(run, name)
        low, high = f"{name}_low", f"{name}_high"
        if getattr(run, low) is None:
            value = max(center - RANGE_SPREAD, center / 2)
            object.__setattr__(run, low, round(value, 12))
        if getattr(run, high) is None:
            object.__setattr__(run, high, round(min(1.0, center + RANGE_SPREAD), 12))
        lo, hi = getattr(run, low), getattr(run, high)
        if lo > hi:
            raise SheetgenError(low, f"must be <= {high} ({hi:g}), got {lo:g}")
        # A range that leaves out the input itself is allowed (a workbook whose MFU was
        # edited without its range still checks); the Range sheet then shows it.
    if run.sensitivity_step >= 1:
        raise SheetgenError(
            "sensitivity_step", f"must be a fraction in (0, 1), got {run.sensitivity_step!r}"
        )


@dataclass(frozen=True)
class Tables:
    """Lookup tables every scenario shares: recipes and bytes per dtype."""

    recipes: tuple[Recipe, ...]
    dtype_bytes: tuple[tuple[str, float], ...]

    def recipe(self, recipe_id: str) -> Recipe:
        for r in self.recipes:
            if r.id == recipe_id:
                return r
        raise SheetgenError("recipe", f"unknown recipe {short(recipe_id)}")

    def dtype(self, dtype_id: str) -> float:
        for name, nbytes in self.dtype_bytes:
            if name == dtype_id:
                return nbytes
        raise SheetgenError("dtype", f"unknown dtype {short(dtype_id)}")


@dataclass(frozen=True)
class Scenario:
    name: str
    model: Model
    hardware: Hardware
    run: Run
    tables: Tables

    @property
    def recipe(self) -> Recipe:
        return self.tables.recipe(self.run.recipe)


# ---------------------------------------------------------------------------
# Parsing helpers

_SUFFIX = {
    "": 1,
    "K": 10**3,
    "M": 10**6,
    "B": 10**9,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "KI": 2**10,
    "MI": 2**20,
    "GI": 2**30,
    "TI": 2**40,
}
_COUNT_RE = re.compile(
    r"^\s*([+-]?[0-9][0-9_,]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]{0,2})\s*$"
)


def parse_count(value: Any, field: str) -> int:
    """A whole count such as ``15.6T``, ``4Mi``, ``4_194_304`` or ``1e12``."""
    if isinstance(value, bool):
        raise SheetgenError(field, f"expected a whole number, got {short(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise SheetgenError(field, f"expected a whole number, got {short(value)}")
        return int(value)
    if isinstance(value, str) and len(value) <= 400:
        m = _COUNT_RE.match(value)
        if m and m.group(2).upper() in _SUFFIX:
            number = float(m.group(1).replace("_", "").replace(",", ""))
            total = number * _SUFFIX[m.group(2).upper()]
            if not math.isfinite(total):
                raise SheetgenError(field, f"{short(value)} is too large to be a count")
            if total == int(total):
                return int(total)
            raise SheetgenError(field, f"{short(value)} is not a whole number")
    raise SheetgenError(
        field,
        f"cannot read {short(value)} as a count; use a whole number, optionally with a suffix "
        "K, M, B, T (powers of 1000) or Ki, Mi, Gi, Ti (powers of 1024), e.g. 15.6T",
    )


def parse_number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise SheetgenError(field, f"expected a number, got {short(value)}")
    raw = value
    try:
        if isinstance(value, str):
            value = value.replace("_", "").replace(",", "")
        value = float(value)
    except (ValueError, OverflowError):
        raise SheetgenError(field, f"expected a number, got {short(raw)}") from None
    if not math.isfinite(value):
        raise SheetgenError(field, f"expected a finite number, got {short(raw)}")
    return value


def parse_date(value: Any, field: str) -> dt.date:
    """An ISO date (YYYY-MM-DD), as text or as the date YAML already parsed."""
    if isinstance(value, dt.datetime):
        value = value.date()
    if isinstance(value, str):
        try:
            value = dt.date.fromisoformat(value.strip())
        except ValueError:
            raise SheetgenError(
                field, f"expected an ISO date such as 2027-01-01, got {short(value)}"
            ) from None
    if not isinstance(value, dt.date):
        raise SheetgenError(field, f"expected an ISO date such as 2027-01-01, got {short(value)}")
    if value < DATE_MIN:
        raise SheetgenError(field, f"must be {DATE_MIN.isoformat()} or later, got {value}")
    if value > DATE_MAX:
        raise SheetgenError(
            field,
            f"must be {DATE_MAX.isoformat()} or earlier (the plan's months and fiscal years "
            f"must end by 9999-12-31), got {value}",
        )
    return value


def _run_value(key: str, value: Any) -> Any:
    kind, _default, _doc = RUN_FIELDS[key]
    if kind == "date":
        return parse_date(value, key)
    if kind == "int":
        if key in FLAG_FIELDS:
            if isinstance(value, bool):
                value = int(value)
            elif isinstance(value, str) and value.strip().lower() in _FLAG_WORDS:
                value = _FLAG_WORDS[value.strip().lower()]
        n = parse_count(value, key)
        low, high = INT_RANGES.get(key, (1, None))
        if n < low or (high is not None and n > high):
            accepted = f">= {low}" if high is None else f"from {low} to {high}"
            raise SheetgenError(key, f"must be a whole number {accepted}, got {short(value)}")
        check_run_limit(key, n, value)
        return n
    if kind == "choice":
        if not isinstance(value, str) or value.strip().lower() not in CHOICES[key]:
            raise SheetgenError(key, f"got {short(value)}; accepted: {', '.join(CHOICES[key])}")
        return value.strip().lower()
    number = parse_number(value, key)
    if kind == "fraction":
        if not 0 < number <= 1:
            raise SheetgenError(key, f"must be a fraction in (0, 1], got {short(value)}")
        check_run_limit(key, number, value)
        return number
    if kind == "share":
        if not 0 <= number < 1:
            raise SheetgenError(key, f"must be a share in [0, 1), got {short(value)}")
        check_run_limit(key, number, value)
        return number
    if key in ("pue", "host_buffer_factor") and number < 1:
        what = "facility power / IT power" if key == "pue" else "host bytes per offloaded byte"
        raise SheetgenError(key, f"must be >= 1 ({what}), got {value!r}")
    if key == "pue" and number < 1:
        raise SheetgenError(key, f"must be >= 1 (facility power / IT power), got {short(value)}")
    if key in NONNEGATIVE_FIELDS and number < 0:
        raise SheetgenError(key, f"must be >= 0, got {short(value)}")
    if key not in NONNEGATIVE_FIELDS and number <= 0:
        raise SheetgenError(key, f"must be > 0, got {short(value)}")
    check_run_limit(key, number, value)
    return int(number) if number == int(number) else number


def _phase(item: Any, run: Run, where: str) -> Phase:
    """One phase from a mapping; seq_len, global_batch_tokens and mfu default to the run's."""
    if isinstance(item, Phase):
        item = {f.name: getattr(item, f.name) for f in fields(Phase)}
    if not isinstance(item, dict):
        raise SheetgenError(
            where, f"each phase must be a mapping of {', '.join(PHASE_FIELDS)}, got {short(item)}"
        )
    for key in item:
        if key not in PHASE_FIELDS:
            raise SheetgenError(
                f"{where}.{key}", f"unknown phase field; accepted: {', '.join(PHASE_FIELDS)}"
            )
    if "tokens" not in item:
        raise SheetgenError(f"{where}.tokens", "missing; a phase needs its number of tokens")
    values: dict[str, Any] = {}
    for key in ("tokens", "seq_len", "global_batch_tokens"):
        raw = item.get(key, getattr(run, key) if key != "tokens" else None)
        n = parse_count(raw, f"{where}.{key}")
        if n < 1:
            raise SheetgenError(f"{where}.{key}", f"must be a whole number >= 1, got {short(raw)}")
        check_run_limit("train_tokens" if key == "tokens" else key, n, raw, f"{where}.{key}")
        values[key] = n
    raw = item.get("mfu", run.mfu)
    mfu = parse_number(raw, f"{where}.mfu")
    if not 0 < mfu <= 1:
        raise SheetgenError(f"{where}.mfu", f"must be a fraction in (0, 1], got {short(raw)}")
    check_run_limit("mfu", mfu, raw, f"{where}.mfu")
    values["mfu"] = mfu
    return Phase(**values)


def _phases(value: Any, run: Run, where: str) -> tuple[Phase, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise SheetgenError(
            where, f"must be a list of at most {PHASE_SLOTS} phases, got {short(value)}"
        )
    if len(value) > PHASE_SLOTS:
        raise SheetgenError(
            where, f"at most {PHASE_SLOTS} phases fit the workbook's slots, got {len(value)}"
        )
    return tuple(_phase(item, run, f"{where}[{i + 1}]") for i, item in enumerate(value))


def _sweep(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)) or len(value) != SWEEP_POINTS:
        raise SheetgenError(
            where, f"must list exactly {SWEEP_POINTS} whole numbers >= 1, got {short(value)}"
        )
    out = []
    for i, raw in enumerate(value):
        n = parse_count(raw, f"{where}[{i + 1}]")
        if n < 1:
            raise SheetgenError(
                f"{where}[{i + 1}]", f"must be a whole number >= 1, got {short(raw)}"
            )
        limit = "seq_len" if where.endswith("sweep_seq_lens") else "n_gpus"
        check_run_limit(limit, n, raw, f"{where}[{i + 1}]")
        out.append(n)
    return tuple(out)


def make_run(settings: dict[str, Any], where: str = "") -> Run:
    """Validated run settings; unknown keys are errors."""
    values: dict[str, Any] = {}
    for key, value in settings.items():
        if key in LIST_FIELDS:
            continue
        if key not in RUN_FIELDS:
            raise SheetgenError(
                f"{where}{key}",
                f"unknown setting; accepted: {', '.join((*RUN_FIELDS, *LIST_FIELDS))}",
            )
        try:
            values[key] = _run_value(key, value)
        except SheetgenError as e:
            raise SheetgenError(f"{where}{e.field}", e.message) from None
    try:
        run = Run(**values)
    except SheetgenError as e:
        raise SheetgenError(f"{where}{e.field}", e.message) from None
    lists: dict[str, Any] = {}
    if "phases" in settings:
        lists["phases"] = _phases(settings["phases"], run, f"{where}phases")
    for key in ("sweep_seq_lens", "sweep_gpus"):
        if key in settings:
            lists[key] = _sweep(settings[key], f"{where}{key}")
    return replace(run, **lists) if lists else run


def make_model(spec: dict[str, Any], where: str = "model") -> Model:
    """A validated Model from a mapping of fields (``id`` and ``name`` optional)."""
    known = {f.name for f in fields(Model)}
    for key in spec:
        if key not in known:
            raise SheetgenError(
                f"{where}.{key}",
                f"unknown model field; accepted: {', '.join(MODEL_INT_FIELDS + ('norm', 'mlp'))}",
            )
    values: dict[str, Any] = {}
    for key in MODEL_INT_FIELDS:
        if key not in spec:
            continue
        try:
            n = parse_count(spec[key], f"{where}.{key}")
        except SheetgenError:
            raise SheetgenError(
                f"{where}.{key}", f"expected a whole number, got {short(spec[key])}"
            ) from None
        low = 1 if key in MODEL_POSITIVE_FIELDS else 0
        if n < low:
            raise SheetgenError(f"{where}.{key}", f"must be a whole number >= {low}, got {n}")
        if key in MODEL_LIMITS:
            check_range(f"{where}.{key}", n, low, *MODEL_LIMITS[key], spec[key])
        if key in MODEL_FLAG_FIELDS and n not in (0, 1):
            raise SheetgenError(f"{where}.{key}", f"must be 0 or 1, got {n}")
        values[key] = n
    for key, accepted in (("norm", NORMS), ("mlp", MLPS)):
        if key in spec:
            v = spec[key]
            if not isinstance(v, str) or v.lower() not in accepted:
                raise SheetgenError(
                    f"{where}.{key}", f"got {short(v)}; accepted: {', '.join(accepted)}"
                )
            values[key] = v.lower()
    for key in ("n_layers", "hidden_size", "n_heads", "ffn_size", "vocab_size"):
        if key not in values:
            raise SheetgenError(f"{where}.{key}", "missing; a model needs it")
    values.setdefault("n_kv_heads", values["n_heads"])
    if "head_dim" not in values:
        if values["hidden_size"] % values["n_heads"]:
            raise SheetgenError(
                f"{where}.n_heads",
                f"{values['n_heads']} heads do not divide hidden_size {values['hidden_size']}; "
                "give head_dim explicitly or choose a divisor",
            )
        values["head_dim"] = values["hidden_size"] // values["n_heads"]
    if values["n_heads"] % values["n_kv_heads"]:
        raise SheetgenError(
            f"{where}.n_kv_heads",
            f"{values['n_kv_heads']} KV heads must divide n_heads {values['n_heads']}",
        )
    if values.get("n_experts", 0) > 0:
        k = values.get("experts_per_token", 0)
        if not 1 <= k <= values["n_experts"]:
            raise SheetgenError(
                f"{where}.experts_per_token",
                f"must be between 1 and n_experts ({values['n_experts']}), got {k}",
            )
        if values.get("moe_ffn_size", 0) < 1:
            raise SheetgenError(f"{where}.moe_ffn_size", "must be >= 1 for a MoE model")
        if values.get("n_dense_layers", 0) >= values["n_layers"]:
            raise SheetgenError(
                f"{where}.n_dense_layers",
                f"must be below n_layers ({values['n_layers']}), got {values['n_dense_layers']}",
            )
    if values.get("q_lora_rank", 0) > 0 and values.get("kv_lora_rank", 0) == 0:
        raise SheetgenError(
            f"{where}.q_lora_rank",
            "a query latent needs MLA: set kv_lora_rank > 0 or q_lora_rank 0",
        )
    if values.get("kv_lora_rank", 0) > 0:
        for key in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
            if values.get(key, 0) < 1:
                raise SheetgenError(f"{where}.{key}", "must be >= 1 for MLA (kv_lora_rank > 0)")
    values.update(_texts(spec, where))
    values["source"] = check_text(
        _as_text(spec.get("source") or ""), f"{where}.source", MAX_TEXT_CHARS, name=False
    )
    if spec.get("params_published") is not None:
        n = parse_count(spec["params_published"], f"{where}.params_published")
        check_range(f"{where}.params_published", n, 1, *MODEL_LIMITS["params_published"], n)
        values["params_published"] = n
    return Model(**values)


def make_hardware(spec: dict[str, Any], where: str = "hardware") -> Hardware:
    known = {"id", "name", "as_of", "sources", "source", *HARDWARE_FIELDS}
    for key in spec:
        if key not in known:
            raise SheetgenError(
                f"{where}.{key}", f"unknown hardware field; accepted: {', '.join(HARDWARE_FIELDS)}"
            )
    values: dict[str, Any] = {}
    for key in HARDWARE_FIELDS:
        if key not in spec and key == "host_gb_per_s":
            continue  # optional: 0 = not published (offload time then not estimated)
        if key not in spec:
            raise SheetgenError(f"{where}.{key}", "missing; hardware needs it")
        v = parse_number(spec[key], f"{where}.{key}")
        low_ok = v >= 0 if key in HARDWARE_ZERO_OK else v > 0
        if not low_ok:
            rule = ">= 0" if key in HARDWARE_ZERO_OK else "> 0"
            raise SheetgenError(f"{where}.{key}", f"must be {rule}, got {short(spec[key])}")
        check_range(f"{where}.{key}", v, 0, *HARDWARE_LIMITS[key], spec[key])
        values[key] = v
    values.update(_texts(spec, where))
    sources = spec.get("sources") or {}
    if not isinstance(sources, dict):
        raise SheetgenError(
            f"{where}.sources", f"must map a field to its source, got {short(sources)}"
        )
    values["sources"] = tuple(
        (
            check_text(_as_text(k), f"{where}.sources", MAX_TEXT_CHARS, name=False),
            check_text(_as_text(v), f"{where}.sources.{k}", MAX_TEXT_CHARS, name=False),
        )
        for k, v in sources.items()
    )
    return Hardware(**values)


def _as_text(value: Any) -> str:
    """Numbers and dates YAML parsed from an id or a source, as the text written."""
    if isinstance(value, (str, int, float, dt.date)) and not isinstance(value, bool):
        return str(value)
    return value  # check_text names the field and the value


def _texts(spec: dict[str, Any], where: str) -> dict[str, str]:
    """``id`` (default "custom") and ``name`` (default: the id), checked as names."""
    model_id = check_id(_as_text(spec.get("id") or "custom"), f"{where}.id")
    name = check_text(_as_text(spec.get("name") or model_id), f"{where}.name")
    return {"id": model_id, "name": name}


def with_overrides(model: Model, overrides: dict[str, Any], where: str = "model") -> Model:
    """A preset model with some fields replaced, validated as a whole."""
    base = {f.name: getattr(model, f.name) for f in fields(Model)}
    base.pop("params_published")
    if "id" not in overrides:
        base["id"] = f"{model.id}-custom"
        base["name"] = overrides.get("name", f"{model.name} (custom)")
    base.update(overrides)
    # An explicit null drops the field so that its default applies (e.g. head_dim = h / a).
    base = {k: v for k, v in base.items() if v is not None}
    if (
        "head_dim" not in overrides
        and ("hidden_size" in overrides or "n_heads" in overrides)
        and model.head_dim * model.n_heads == model.hidden_size
    ):
        # The base derives head_dim from h / a: keep deriving it.
        base.pop("head_dim")
    return make_model(base, where)


__all__ = [
    "CHOICES",
    "INT_RANGES",
    "Hardware",
    "Model",
    "Phase",
    "Recipe",
    "Run",
    "RUN_DEFAULTS",
    "RUN_FIELDS",
    "Scenario",
    "Tables",
    "make_hardware",
    "make_model",
    "make_run",
    "parse_count",
    "replace",
    "with_overrides",
]
