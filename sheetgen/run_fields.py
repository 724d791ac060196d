"""The run-settings table: every setting a scenario's run may give, with its kind,
default and source (``RUN_FIELDS``), the values each accepts, and the fixed slots
of the workbook's per-scenario tables (months, fiscal quarters and years, phases,
sweep points).

Run settings left out of a scenario take the defaults in ``RUN_DEFAULTS``; each
default is documented in ``RUN_FIELDS``.  The ``Run`` dataclass
(``sheetgen.scenario``) takes its defaults from here, and ``sheetgen.scenario_parse``
checks given values against these kinds and ranges.  Only the standard library
is imported: ``sheetgen --help`` builds its run flags from this table.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

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
    "mfu_source": ("layout", "typed", "measured"),
    "weight_dtype": ("bf16", "fp16", "fp32", "fp8", "int8", "int4"),
    "kv_dtype": ("bf16", "fp16", "fp32", "fp8", "int8", "int4"),
    "price_basis": ("on-demand", "reserved"),
}

# The step-time model's calibrated run inputs and the MFU range's width: fitted and
# measured by `sheetgen benchmark-check` on presets/benchmarks/ (docs/DESIGN.md).
ELEMENTWISE_PASSES = 11.0
TP_COMM_OVERLAP = 0.935
MFU_RANGE = 0.22

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
    # The step-time model (issue 21): calibrated on presets/benchmarks/ (fit rows).
    "mfu_source": (
        "choice",
        "layout",
        "which MFU drives days and cost: layout (predicted from the layout by the "
        "Parallelism sheet's step-time model), typed (the mfu input) or measured (a pilot "
        "run's tokens/s or step time); a scenario that sets mfu, or a measurement, "
        "without mfu_source uses it",
    ),
    "elementwise_passes": (
        "float",
        ELEMENTWISE_PASSES,
        "HBM passes over each layer's saved activations per forward + backward (norms, "
        "activation functions, dropout, residual adds, the loss); fitted on the published "
        "runs of presets/benchmarks/ (sheetgen benchmark-check)",
    ),
    "tp_comm_overlap": (
        "share",
        TP_COMM_OVERLAP,
        "share of tensor-parallel communication hidden behind compute; fitted on the "
        "published runs of presets/benchmarks/ (sheetgen benchmark-check)",
    ),
    "ep_comm_overlap": (
        "share",
        0,
        "share of expert-parallel all-to-all hidden behind compute; 0: none assumed "
        "(no published run in presets/benchmarks/ measures it)",
    ),
    "dp_bucket_params": (
        "int",
        40_000_000,
        "parameters per data-parallel gradient bucket: the last bucket's reduction is not "
        "hidden behind the backward (Megatron-LM's DDP bucket of 40M parameters; PyTorch "
        "DDP's bucket_cap_mb 25 MB is 12.5M BF16 values)",
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
    "mfu_range": (
        "fraction",
        MFU_RANGE,
        "relative width of the MFU range around the MFU used (pessimistic x (1 - w), "
        "optimistic x (1 + w), at most 1); default: the 90th-percentile |error| of the "
        "step-time model on the published runs of presets/benchmarks/",
    ),
    "goodput_range": (
        "share",
        0.05,
        "goodput range: goodput - w (at least half of it) to goodput + w (at most 1); "
        "illustrative: Llama 3 pre-training had 466 job interruptions in 54 days and about "
        "90% effective training time (Dubey et al. 2024, section 3.3.4)",
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
        "elementwise_passes",
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

__all__ = [
    "CHOICES",
    "INT_RANGES",
    "RUN_DEFAULTS",
    "RUN_FIELDS",
]
