"""The run-settings registry: every setting a scenario's run may give, declared once.

Each ``Field`` in ``FIELDS`` names one input: its key, kind, default, unit, the
range it accepts and why, its switches (0 allowed, a 0/1 flag, a training-phase
setting), its CLI flag and its help text with the source.  Everything else is
derived from it here or by its readers, and ``tests/test_registry.py`` fails
when any of them disagrees:

* ``RUN_FIELDS`` (key: kind, default, doc), ``RUN_DEFAULTS``, ``CHOICES``,
  ``INT_RANGES``, ``FLAG_FIELDS``, ``NONNEGATIVE_FIELDS``, ``PHASE_FIELDS`` and
  ``LIST_FIELDS`` below;
* the ``Run`` and ``Phase`` dataclasses (``sheetgen.scenarios.scenario``), in ``FIELDS`` order
  (the order of ``sheetgen compute``'s keys and of ``sheetgen inputs``' export);
* the sane ranges ``sheetgen.scenarios.limits.RUN_LIMITS``;
* the validation in ``sheetgen.scenarios.parse`` and the Inputs sheet's data validation;
* the CLI's run flags and their help (``sheetgen.cli.support``);
* docs/run-settings.md (``markdown()``; regenerate with
  ``python -m sheetgen.scenarios.run_fields > docs/run-settings.md``).

The Inputs sheet's rows (templates/20_inputs.yaml) carry labels, formats and
explanations written for the sheet; the test checks that every field has its
row there with the same kind, unit and choices, and that every input row is a field.

Only the standard library is imported: ``sheetgen --help`` builds its run flags
from this table.  Adding an input: docs/DESIGN.md, "Adding a run input".
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

# Months (rows) of the spend-by-month table (issue 11).
MONTH_SLOTS = 36
# Spend by month (issue 11): fiscal quarters and years the month rows can touch.
QUARTER_SLOTS = 13  # 36 months touch at most 13 fiscal quarters
FISCAL_YEAR_SLOTS = 4  # ... and at most 4 fiscal years
# Accelerators the Hardware sheet compares (issue 22): one slot per row of the Presets
# hardware table, which has this many rows (presets first, the rest empty custom rows).
HARDWARE_SLOTS = 26  # the 18 shipped presets and 8 rows for a team's or your own
# The step-time model's calibrated run inputs and the MFU range's width: fitted and
# measured by `sheetgen benchmark-check` on presets/benchmarks/ (docs/DESIGN.md).
ELEMENTWISE_PASSES = 12.0
TP_COMM_OVERLAP = 0.95
# Fitted on the MoE fit rows of presets/benchmarks/mbridge_moe.yaml (fit_throughput.py).
MOE_GEMM_DIM_HALF = 1500.0
EP_A2A_EFFICIENCY = 1.0
# The share of the all-to-all hidden with Megatron-Core's expert-parallel overlap on
# (overlap_moe_expert_parallel_comm / moe_a2a_overlap): the rows of
# presets/benchmarks/mbridge_moe.yaml whose recipe turns it on carry it.
EP_COMM_OVERLAP_MEGATRON = 0.4707
MFU_RANGE = 0.085
# Memory as measured (issue 40): the allocator's reserve, fitted by `sheetgen memory-check`
# on presets/benchmarks/memory/ (fit rows), and NCCL's buffers per GPU (its field's doc).
MEM_RESERVED_SHARE = 0.017
MEM_COMM_BUFFER_BYTES = 2 * 32 * 2 * 4 * 2**20
# Training phases: a fixed number of slots per scenario (0 tokens = unused slot).
PHASE_SLOTS = 4
# Chart sweeps: the sequence lengths and GPU counts the Sweeps sheet evaluates.
SWEEP_POINTS = 6
SWEEP_SEQ_DEFAULT = (2048, 4096, 8192, 16384, 32768, 65536)
SWEEP_GPUS_DEFAULT = (8, 64, 512, 2048, 8192, 16384)
# Serving (issue 23): the tensor-parallel sizes tried when none is given: 1, 2, 4, ... 64.
SERVE_TP_SLOTS = 7

# The Python type each kind holds (the Run dataclass's annotations).
KIND_TYPES = {
    "int": "int",  # a whole number, >= the limit's low (1 unless it says otherwise)
    "float": "float",  # a number > 0 (>= 0 with zero_ok)
    "fraction": "float",  # (0, 1]
    "share": "float",  # [0, 1)
    "choice": "str",  # one of choices
    "date": "dt.date",  # an ISO date
    "phases": "tuple[Phase, ...]",  # up to PHASE_SLOTS training phases
    "counts": "tuple[int, ...]",  # exactly SWEEP_POINTS whole numbers >= 1
}
SCALAR_KINDS = ("int", "float", "fraction", "share", "choice", "date")


@dataclass(frozen=True)
class Field:
    """One run setting.

    key: the scenario-file key, Run attribute and Inputs-sheet row key.
    kind: one of KIND_TYPES.  default: the value a scenario that leaves it out gets
    (None: derived from other fields, in ``Run.__post_init__``; the doc says how).
    doc: what it means and where the default comes from (CLI help, docs).
    unit: the Inputs sheet's unit column ("" = none).
    limit: (lowest, highest, why) a sane range every number must fall in
    (``sheetgen.scenarios.limits.RUN_LIMITS``); for whole numbers the lowest is also the
    accepted minimum ("must be a whole number >= lowest").
    whole_range: whole numbers only: the highest is a rule too, not just sanity
    (the message and the Inputs sheet's validation say "from lowest to highest").
    zero_ok: kind float: 0 is accepted (meaning "free" or "not given"); else > 0.
    at_least: kind float: (minimum, what) a physical minimum checked first.
    nonzero_at_least: kinds float and share that accept 0: (lowest, why) the smallest
    value other than 0 (below it a value divides by nearly zero, is a typo or cannot be
    shown: a price of 1e-300 makes a workbook that fails its own check).
    flag: a 0/1 switch that also takes YAML true/false and true/false, yes/no, on/off.
    phase: the name of this setting inside a training phase (``Phase``), if phase-able.
    items_like: kind counts: the field whose limit each item obeys.
    slot: list kinds: the Inputs-sheet key of item n (phases: of setting name in phase n).
    choices: kind choice: the accepted values.
    cli: the CLI flag, when not ``--`` + key with dashes; cli_aliases: more names.
    """

    key: str
    kind: str
    default: Any
    doc: str
    unit: str = ""
    limit: tuple[float, float, str] | None = None
    whole_range: bool = False
    zero_ok: bool = False
    at_least: tuple[float, str] | None = None
    nonzero_at_least: tuple[float, str] | None = None
    flag: bool = False
    phase: str | None = None
    items_like: str | None = None
    slot: str | None = None
    choices: tuple[str, ...] = ()
    cli: str | None = None
    cli_aliases: tuple[str, ...] = ()

    @property
    def flag_name(self) -> str:
        return self.cli or "--" + self.key.replace("_", "-")

    @property
    def sheet_keys(self) -> tuple[str, ...]:
        """The Inputs-sheet keys that hold this field (a list field: one per slot)."""
        if self.kind == "phases":
            names = [f.phase for f in FIELDS if f.phase]
            return tuple(
                (self.slot or "").format(n=n, name=name)
                for n in range(1, PHASE_SLOTS + 1)
                for name in names
            )
        if self.kind == "counts":
            return tuple((self.slot or "").format(n=n) for n in range(1, SWEEP_POINTS + 1))
        return (self.key,)

    @property
    def int_range(self) -> tuple[int, int | None]:
        """Whole numbers: the accepted (lowest, highest or None)."""
        assert self.kind == "int" and self.limit is not None, self.key
        low, high, _why = self.limit
        return int(low), int(high) if self.whole_range else None


_COUNT = "beyond any cluster planned; the largest today are ~10^5 GPUs"
# Chinchilla's fit (Hoffmann et al. 2022: A 406.4, B 410.7, alpha 0.34, beta 0.28;
# Kaplan et al. 2020's exponents 0.076 and 0.095; Besiroglu et al. 2024's refit A 482,
# B 2085, alpha 0.35, beta 0.37) is well inside these.  They also keep every scaling
# formula finite: the optimum's G = (alpha A / (beta B))^(1 / (alpha + beta)) is at most
# (2 x 10^6 / (0.05 x 10^-3))^10 ~ 10^106 and at least its inverse, so N_opt, D_opt,
# their ratio and A / N^alpha stay far below 10^308 (an exponent of 10^-300 divided by
# zero; one of 0.01 would raise G to the 50th power).
# A price other than 0 (free) below a hundredth of a cent is a typo, and one such as
# 1e-320 cannot be written to a cell and read back at the workbook's precision.
_PRICE_LOWEST = (1e-4, "USD per GPU-hour, a hundredth of a cent; rented GPUs cost from ~$0.10")
_CHINCHILLA_SCALE = "a loss-term scale; the published fits are 400-2,100"
_CHINCHILLA_EXPONENT = (
    "a scaling exponent; published fits are 0.076-0.37, and below 0.05 the optimum overflows"
)

FIELDS: tuple[Field, ...] = (
    # Training run, efficiency and price (Inputs: Training run, Efficiency).
    Field(
        key="n_gpus",
        kind="int",
        default=8,
        doc="GPUs training together (= dp x tp x pp x cp)",
        limit=(1, 10**7, _COUNT),
        cli_aliases=("--gpus",),
    ),
    Field(
        key="train_tokens",
        kind="int",
        default=None,
        doc=(
            "tokens seen in training (D), derived: dataset_tokens x epochs; give it alone "
            "(then dataset_tokens = train_tokens / epochs; 1T when neither is given), or "
            "dataset_tokens and epochs, or all three when they agree"
        ),
        limit=(1, 10**17, "100,000x Llama 3's 15.6T tokens"),
        cli="--tokens",
        cli_aliases=("--train-tokens",),
        phase="tokens",
    ),
    # Data and epochs (issue 22): the plan trains on dataset_tokens x epochs.
    Field(
        key="dataset_tokens",
        kind="int",
        default=None,
        doc=(
            "unique tokens in the training data; derived when not given: train_tokens / "
            "epochs (train_tokens 1T when neither is given)"
        ),
        unit="tokens",
        limit=(1, 10**17, "100,000x Llama 3's 15.6T tokens"),
    ),
    Field(
        key="epochs",
        kind="float",
        default=1,
        doc=(
            "passes over the dataset: train_tokens = dataset_tokens x epochs (fractions "
            "allowed); above 4 Checks warns: returns diminish quickly after about 4 epochs "
            "(Muennighoff et al. 2023, arXiv:2305.16264)"
        ),
        limit=(0, 10**4, "passes over the dataset"),
    ),
    Field(
        key="seq_len",
        kind="int",
        default=4096,
        doc="training sequence length (s)",
        limit=(1, 10**8, "100M tokens, 10x the longest context published"),
        phase="seq_len",
    ),
    Field(
        key="micro_batch",
        kind="int",
        default=1,
        doc="sequences per forward pass on one GPU (b)",
        limit=(1, 10**6, "sequences per GPU per pass"),
    ),
    Field(
        key="global_batch_tokens",
        kind="int",
        default=4_194_304,
        doc="tokens per optimizer step (4M = 1,024 x 4,096, Llama 3's first-stage batch)",
        unit="tokens",
        limit=(1, 10**12, "tokens per optimizer step"),
        phase="global_batch_tokens",
    ),
    Field(
        key="recipe",
        kind="choice",
        default="bf16-adam",
        doc="precision / optimizer recipe (Presets: Recipes)",
        choices=(
            "bf16-adam",
            "fp32-adam",
            "bf16-adam-fp32-grads",
            "fp32-sgd-momentum",
            "bf16-inference",
            "megatron-bf16",
            "fsdp-bf16",
            "bf16-adam-8bit",
            "fp8-te",
            "lora",
            "qlora",
            "nemo-distadam-bf16",
        ),
    ),
    # LoRA / QLoRA fine-tuning (issue 22, part 5): read only under recipe lora or qlora.
    Field(
        key="lora_rank",
        kind="int",
        default=8,
        doc=(
            "LoRA adapter rank r, read under recipe lora or qlora: each targeted linear layer "
            "gains r x (d_in + d_out) trainable parameters (Hu et al. 2021, LoRA, "
            "arXiv:2106.09685, section 4.1; 8 is Hugging Face PEFT's LoraConfig default)"
        ),
        limit=(1, 65_536, "adapter rank (at most a layer's width in practice)"),
    ),
    Field(
        key="lora_targets",
        kind="choice",
        default="qv",
        doc=(
            "linear layers LoRA adapts: qv (q_proj, v_proj: PEFT's default for Llama), qkvo "
            "(the four attention projections) or all-linear (those and the MLP's matrices, "
            "every linear layer but the output layer, as PEFT's target_modules='all-linear'; "
            "the QLoRA paper's choice, Dettmers et al. 2023, section 4)"
        ),
        choices=("qv", "qkvo", "all-linear"),
    ),
    Field(
        key="attention",
        kind="choice",
        default="flash",
        doc="attention kernel: flash stores no s x s matrix; naive does",
        choices=("flash", "naive"),
    ),
    Field(
        key="recompute",
        kind="choice",
        default="none",
        doc="activation recomputation: none | selective | full",
        choices=("none", "selective", "full"),
    ),
    Field(
        key="recompute_layers",
        kind="int",
        default=0,
        doc=(
            "with full recomputation, the transformer layers per pipeline stage whose "
            "activations are recomputed (Megatron-LM --recompute-method block "
            "--recompute-num-layers); the others keep all their activations; 0 (default) = "
            "every layer"
        ),
        limit=(0, 10**6, "layers per pipeline stage; 0 = every layer"),
    ),
    Field(
        key="peak_dtype",
        kind="choice",
        default="bf16",
        doc="which dense peak MFU refers to: bf16 or fp8",
        choices=("bf16", "fp8"),
    ),
    Field(
        key="causal_factor",
        kind="fraction",
        default=0.5,
        doc=("share of attention-core FLOPs a causal kernel performs (0.5: masked half skipped)"),
        limit=(0.0001, 1, "share of attention FLOPs performed"),
    ),
    Field(
        key="mfu",
        kind="fraction",
        default=0.4,
        doc="model FLOPs utilization (Llama 3 405B reached 0.38-0.43)",
        limit=(0.0001, 1, "a share of the peak; below 0.01% the plan would take millennia"),
        phase="mfu",
    ),
    Field(
        key="goodput",
        kind="fraction",
        default=0.9,
        doc="share of wall-clock time spent training (Llama 3: about 90%)",
        limit=(0.0001, 1, "share of time spent training"),
    ),
    Field(
        key="price_per_gpu_hour",
        kind="float",
        default=2.0,
        doc="USD per GPU-hour: an illustrative rate, replace with your quote",
        unit="USD/GPU·h",
        limit=(0, 10000, "USD per GPU-hour"),
        nonzero_at_least=_PRICE_LOWEST,
        zero_ok=True,
    ),
    # Inference (Inference and KV cache sheets) and memory constants.
    Field(
        key="weight_dtype",
        kind="choice",
        default="bf16",
        doc=(
            "inference weight format; mxfp4 (0.53125 B: one 8-bit scale per 32 values) and "
            "nvfp4 (0.5625 B: one FP8 scale per 16) include their block scales"
        ),
        choices=("bf16", "fp16", "fp32", "fp8", "int8", "int4", "mxfp4", "nvfp4"),
    ),
    Field(
        key="kv_dtype",
        kind="choice",
        default="bf16",
        doc="inference KV-cache format (the Presets dtype table's, block scales included)",
        choices=("bf16", "fp16", "fp32", "fp8", "int8", "int4", "mxfp4", "nvfp4"),
    ),
    Field(
        key="inf_batch",
        kind="int",
        default=1,
        doc="inference: concurrent sequences",
        limit=(1, 10**7, "concurrent sequences"),
    ),
    Field(
        key="inf_context",
        kind="int",
        default=4096,
        doc=("inference: context length per sequence for KV-cache sizing (KV cache sheet), tokens"),
        unit="tokens",
        limit=(1, 10**8, "tokens per sequence"),
    ),
    Field(
        key="prompt_len",
        kind="int",
        default=4000,
        doc=(
            "inference request: prompt tokens (an illustrative prefill-heavy request: 4,000 + 100)"
        ),
        unit="tokens",
        limit=(1, 10**8, "tokens per prompt"),
    ),
    Field(
        key="output_len",
        kind="int",
        default=100,
        doc="inference request: generated tokens per sequence",
        unit="tokens",
        limit=(1, 10**8, "tokens per answer"),
    ),
    Field(
        key="inf_tp",
        kind="int",
        default=0,
        doc=(
            "inference: GPUs serving one model replica (tensor parallel); 0 = the smallest "
            "power of two up to the node that splits the heads (divides the query heads, and "
            "divides the KV heads or is a multiple of them) and on which the batch fits "
            "(decode and prefill peaks)"
        ),
        unit="GPUs",
        limit=(0, 10**5, "GPUs serving one replica"),
    ),
    Field(
        key="quant_scale_bytes",
        kind="float",
        default=0,
        doc=(
            "inference: bytes per weight added by quantization scales (one FP16 scale per "
            "group of 128 weights: 2/128 = 0.015625; GPTQ/AWQ group size 128); 0 = none"
        ),
        unit="B",
        limit=(0, 8, "bytes per weight added by scales"),
        nonzero_at_least=(
            1e-9,
            "bytes per weight: one byte per billion weights, below one scale per tensor",
        ),
        zero_ok=True,
    ),
    Field(
        key="inf_compute_eff",
        kind="fraction",
        default=0.5,
        doc=(
            "inference: not read since issue 39 (the serving step model takes its GEMM "
            "rate from the hardware's gemm_eff fields); kept so that scenario files load"
        ),
        limit=(0.0001, 1, "share of the dense peak"),
    ),
    Field(
        key="inf_bw_eff",
        kind="fraction",
        default=0.9,
        doc=(
            "inference: share of HBM bandwidth reached when a forward pass streams the "
            "weights (engine profile, fitted: presets/tables/serving_engines.yaml)"
        ),
        limit=(0.0001, 1, "share of HBM bandwidth"),
    ),
    Field(
        key="inf_overhead_bytes",
        kind="float",
        default=1_500_000_000,
        doc=(
            "inference: runtime memory per GPU besides weights and KV cache: CUDA context, "
            "kernels, activation workspace (Tazi et al. 2025, The Ultra-Scale Playbook, "
            "'Profiling the memory usage': 1-2 GB for the CUDA context and kernels)"
        ),
        unit="B",
        limit=(0, 10**15, "bytes per GPU (1 PB)"),
        nonzero_at_least=(1, "a byte"),
        zero_ok=True,
    ),
    Field(
        key="overhead_bytes",
        kind="float",
        default=1_500_000_000,
        doc=(
            "fixed per-GPU overhead: CUDA context, kernels (Tazi et al. 2025, The Ultra-Scale"
            " Playbook, 'Profiling the memory usage': 1-2 GB)"
        ),
        unit="B",
        limit=(1, 10**15, "bytes per GPU, from a byte to 1 PB"),
    ),
    Field(
        key="logits_bytes",
        kind="float",
        default=4,
        doc=(
            "bytes per logit value: FP32 cross-entropy (Tazi et al. 2025, The Ultra-Scale "
            "Playbook, 'Memory for activations')"
        ),
        unit="B",
        limit=(0.125, 16, "bytes per value, from one bit"),
    ),
    Field(
        key="dropout_mask_bytes",
        kind="float",
        default=1,
        doc="bytes per dropout-mask value (Korthikanti et al. 2022)",
        unit="B",
        limit=(0.125, 16, "bytes per value, from one bit"),
    ),
    # Multi-GPU layout (Parallelism sheet).  The defaults keep every single-GPU key
    # unchanged: no model sharding, all GPUs data parallel.
    Field(
        key="dp",
        kind="int",
        default=None,
        doc=(
            "data-parallel degree, derived: n_gpus / (tp x pp x cp) (Megatron-LM's layout n ="
            " dp x tp x pp x cp); a scenario may state it only when it agrees"
        ),
        limit=(1, 10**7, _COUNT),
    ),
    Field(
        key="tp",
        kind="int",
        default=1,
        doc="tensor-parallel degree (Megatron-LM, Shoeybi et al. 2019)",
        limit=(1, 10**5, "GPUs splitting one layer"),
    ),
    Field(
        key="pp",
        kind="int",
        default=1,
        doc="pipeline-parallel stages (1F1B schedule, Narayanan et al. 2021)",
        limit=(1, 10**5, "pipeline stages"),
    ),
    Field(
        key="cp",
        kind="int",
        default=1,
        doc="context-parallel degree: the sequence split over cp GPUs (ring attention)",
        limit=(1, 10**5, "GPUs splitting one sequence"),
    ),
    Field(
        key="ep",
        kind="int",
        default=1,
        doc="expert-parallel degree: routed experts split over ep GPUs (MoE only)",
        limit=(1, 10**5, "GPUs splitting the experts"),
    ),
    Field(
        key="zero_stage",
        kind="int",
        default=0,
        doc=(
            "ZeRO stage 0-3 (Rajbhandari et al. 2020): 1 shards optimizer states and master "
            "weights over data parallel, 2 also gradients, 3 also weights (= FSDP full "
            "sharding)"
        ),
        limit=(0, 3, "ZeRO stages"),
        whole_range=True,
    ),
    Field(
        key="sequence_parallel",
        kind="int",
        default=0,
        doc=(
            "1: sequence parallelism splits the activations tensor parallelism leaves whole "
            "(Korthikanti et al. 2022)"
        ),
        limit=(0, 1, "a 1/0 switch"),
        whole_range=True,
        flag=True,
    ),
    Field(
        key="pp_microbatches",
        kind="int",
        default=0,
        doc=(
            "micro-batches per optimizer step per pipeline, m; 0 (default) derives it from "
            "the batch: global batch / (micro-batch x dp x sequence length), i.e. the "
            "gradient-accumulation steps, at least 1"
        ),
        limit=(0, 10**9, "micro-batches per step; 0 = derived from the batch"),
    ),
    Field(
        key="pp_virtual_stages",
        kind="int",
        default=1,
        doc=(
            "model chunks per pipeline GPU, v (interleaved 1F1B, Narayanan et al. 2021; 1 = plain)"
        ),
        limit=(1, 10**5, "model chunks per GPU"),
    ),
    Field(
        key="pp_split_embedding_loss",
        kind="int",
        default=0,
        doc=(
            "1: the input embedding and the loss each count as one layer when the layers "
            "are split over the pipeline, so the first and last stages hold one "
            "transformer layer fewer and, with v chunks, the first chunk of the first "
            "stage holds (n_layers + 2) / (pp x v) - 1 (Megatron-LM "
            "--account-for-embedding-in-pipeline-split and "
            "--account-for-loss-in-pipeline-split; The Llama 3 Herd of Models, "
            "section 3.3.2); 0 (default): n_layers / pp on every stage"
        ),
        limit=(0, 1, "a 1/0 switch"),
        whole_range=True,
        flag=True,
    ),
    Field(
        key="gpus_per_node",
        kind="int",
        default=0,
        doc=(
            "GPUs sharing the fast intra-node link (NVLink, Infinity Fabric, TPU ICI); 0 = the "
            "accelerator preset's fast_domain_gpus (8 on HGX/DGX and MI300X platforms, 72 in "
            "a GB200 NVL72 rack, 256 in a TPU v6e pod)"
        ),
        limit=(0, 10**5, "GPUs per node; 0 = the accelerator's fast-interconnect domain"),
    ),
    Field(
        key="mem_headroom",
        kind="share",
        default=0,
        doc=(
            "share of GPU memory kept free as a planning margin, beyond the allocator's "
            "reserve, the CUDA context and the communication buffers the memory model now "
            "counts from measurements (mem_reserved_share, overhead_bytes, "
            "mem_comm_buffer_bytes); 0 (default) = none"
        ),
        limit=(0, 0.99, "share of memory kept free"),
        nonzero_at_least=(1e-4, "0.01% of memory"),
    ),
    # The step-time model (issue 21): calibrated on presets/benchmarks/ (fit rows).
    Field(
        key="mfu_source",
        kind="choice",
        default="layout",
        doc=(
            "which MFU drives days and cost: layout (predicted from the layout by the "
            "Parallelism sheet's step-time model), typed (the mfu input) or measured (a pilot "
            "run's tokens/s or step time); a scenario that sets mfu, or a measurement, "
            "without mfu_source uses it"
        ),
        choices=("layout", "typed", "measured"),
    ),
    Field(
        key="elementwise_passes",
        kind="float",
        default=ELEMENTWISE_PASSES,
        doc=(
            "HBM passes over each layer's saved activations per forward + backward (norms, "
            "activation functions, dropout, residual adds, the loss); fitted on the 'fit' "
            "rows of presets/benchmarks/ by benchmarks/fit_throughput.py (sheetgen "
            "benchmark-check prints the error)"
        ),
        limit=(0, 1000, "HBM passes over the activations"),
        nonzero_at_least=(0.01, "HBM passes"),
        zero_ok=True,
    ),
    Field(
        key="tp_comm_overlap",
        kind="share",
        default=TP_COMM_OVERLAP,
        doc=(
            "share of tensor-parallel communication hidden behind compute; fitted on the "
            "'fit' rows of presets/benchmarks/ by benchmarks/fit_throughput.py before the "
            "step model charged the loss, not refitted since (sheetgen benchmark-check "
            "prints the error)"
        ),
        limit=(0, 1, "a share"),
        nonzero_at_least=(1e-4, "0.01% hidden"),
    ),
    Field(
        key="ep_comm_overlap",
        kind="share",
        default=EP_COMM_OVERLAP_MEGATRON,
        doc=(
            "share of the expert-parallel all-to-all hidden behind compute: "
            f"{EP_COMM_OVERLAP_MEGATRON}, fitted by benchmarks/fit_throughput.py on the "
            "NVIDIA NeMo / Megatron-Bridge MoE pretraining rows (role fit) of "
            "presets/benchmarks/mbridge_moe.yaml whose recipe overlaps it "
            "(overlap_moe_expert_parallel_comm); 0 for a schedule that does not, as "
            "Megatron-Core's default and those rows' other recipes"
        ),
        limit=(0, 1, "a share"),
        nonzero_at_least=(1e-4, "0.01% hidden"),
    ),
    # Mixture-of-Experts on the clock (issue 40): fitted on the MoE rows of
    # presets/benchmarks/mbridge_moe.yaml (role fit) by benchmarks/fit_throughput.py.
    Field(
        key="moe_gemm_dim_half",
        kind="float",
        default=MOE_GEMM_DIM_HALF,
        doc=(
            "the grouped expert GEMMs' half point: they run at the large-GEMM efficiency x "
            "d^2 / (d^2 + this^2), d the narrowest of the tokens per expert and the expert "
            "weights' sides; fitted on the NeMo / Megatron-Bridge MoE pretraining rows "
            "(role fit) of presets/benchmarks/mbridge_moe.yaml by "
            "benchmarks/fit_throughput.py (no effect on dense models)"
        ),
        unit="values",
        limit=(0, 1_000_000, "values"),
        zero_ok=True,
    ),
    Field(
        key="moe_permute_passes",
        kind="float",
        default=16.0,
        doc=(
            "HBM passes over each token's k routed copies per forward + backward of a MoE "
            "layer: Megatron-Core's all-to-all token dispatcher permutes by destination, "
            "sorts by local expert, unsorts and unpermutes (4 kernels each reading and "
            "writing the copies: 8 passes), and the backward does the same (16)"
        ),
        limit=(0, 1000, "HBM passes over the routed copies"),
        zero_ok=True,
    ),
    Field(
        key="expert_tp",
        kind="int",
        default=1,
        doc=(
            "expert tensor parallelism: the ranks each routed expert's matrices are split "
            "over (Megatron-Core's expert_tensor_parallel_size); 1: whole experts, as every "
            "NVIDIA NeMo / Megatron-Bridge MoE recipe sets it (DeepSeek-V3 trains without "
            "tensor parallelism); 0: the same as tp, Megatron-Core's own default (clock "
            "only: the Parallelism sheet's memory splits experts over tp)"
        ),
        limit=(0, 1024, "ranks (0: tp)"),
    ),
    Field(
        key="ep_a2a_efficiency",
        kind="fraction",
        default=EP_A2A_EFFICIENCY,
        doc=(
            "share of the link rates (NVLink inside a node, the GPU's NIC across nodes) an "
            "expert-parallel all-to-all achieves: it moves many messages of a few tokens "
            "each; fitted on the NeMo / Megatron-Bridge MoE pretraining rows (role fit) of "
            "presets/benchmarks/mbridge_moe.yaml by benchmarks/fit_throughput.py"
        ),
        limit=(1e-3, 1, "a share of the link rate"),
    ),
    Field(
        key="ep_dispatch_dedup",
        kind="int",
        default=0,
        doc=(
            "1: the token dispatcher sends each token once to every other node that hosts "
            "one of its experts and forwards it inside that node over NVLink (DeepSeek-V3 "
            "technical report, section 3.2.2; DeepEP, Megatron-Core's flex dispatcher with "
            "HybridEP); 0: a plain all-to-all sends all k copies (Megatron-Core's default "
            "alltoall dispatcher)"
        ),
        limit=(0, 1, "a 1/0 switch"),
        whole_range=True,
        flag=True,
    ),
    Field(
        key="moe_load_imbalance",
        kind="float",
        default=1.0,
        doc=(
            "tokens of the most loaded expert / the mean (1: balanced routing, as the NeMo / "
            "Megatron-Bridge MoE benchmarks force it, their tables' footnote: 'we "
            "force-balance the token distribution among experts'); the expert GEMMs and the "
            "all-to-all wait for the most loaded rank"
        ),
        limit=(1, 100, "max / mean tokens per expert"),
        at_least=(1.0, "the most loaded expert gets at least the mean"),
    ),
    Field(
        key="attn_kernel_speed",
        kind="float",
        default=1.0,
        doc=(
            "speed of your attention kernel relative to the one the accelerator's attn_eff "
            "describes (its Presets source names it: FlashAttention-3 on the Hopper presets, "
            "FlashAttention-2 on the A100s): FlashAttention-2 on Hopper 0.467 (Shah et al. "
            "2024, FlashAttention-3, abstract: 35% of the H100 peak against 75%), a Triton "
            "FlashAttention 1/1.80 of FlashAttention-2 and FlashAttention (v1) 1/2.26 of it "
            "(Dao 2023, FlashAttention-2, sec. 4: 1.3-2.5x and 1.7-3.0x faster, the ranges' "
            "geometric middles); 1: that kernel"
        ),
        limit=(1e-3, 4, "times the preset kernel's rate"),
    ),
    Field(
        key="dp_bucket_params",
        kind="int",
        default=40_000_000,
        doc=(
            "parameters per data-parallel gradient bucket: the last bucket's reduction is "
            "not hidden behind the backward (Megatron-LM's DDP bucket of 40M parameters; "
            "PyTorch DDP's bucket_cap_mb 25 MB is 12.5M BF16 values)"
        ),
        unit="params",
        limit=(1, 10**13, "parameters per bucket"),
    ),
    # Framework memory (issue 12): activation profiles, offload, ZeRO-3 buffers,
    # inference prefill peak, paged KV cache and tensor-parallel all-reduces.
    Field(
        key="act_profile",
        kind="choice",
        default="formula",
        doc=(
            "which tensors a layer keeps for backward: formula (Korthikanti et al. 2022), "
            "hf-eager (Hugging Face transformers Llama, eager PyTorch: FP32 norm inputs, "
            "attention log-sum-exp, FP32 final norm), megatron-te (Megatron-LM with "
            "Transformer Engine: fused norms keep FP32 statistics, fused SwiGLU keeps its "
            "input only)"
        ),
        choices=("formula", "hf-eager", "megatron-te"),
    ),
    Field(
        key="offload_optimizer",
        kind="int",
        default=0,
        doc=(
            "1: gradients, FP32 master weights and optimizer states live in host memory and "
            "the optimizer steps on the CPU (ZeRO-Offload, Ren et al. 2021; FSDP CPUOffload)"
        ),
        limit=(0, 1, "a 1/0 switch"),
        whole_range=True,
        flag=True,
    ),
    Field(
        key="offload_params",
        kind="int",
        default=0,
        doc=(
            "1: the (sharded) weights live in host memory and are fetched over PCIe for each "
            "forward and backward (ZeRO-Infinity, Rajbhandari et al. 2021; FSDP CPUOffload)"
        ),
        limit=(0, 1, "a 1/0 switch"),
        whole_range=True,
        flag=True,
    ),
    Field(
        key="host_buffer_factor",
        kind="float",
        default=1.5,
        doc=(
            "host memory per offloaded byte, pinned staging buffers included (DeepSpeed's "
            "estimators: additional_buffer_factor = 1.5)"
        ),
        limit=(0.001, 100, "host bytes per offloaded byte"),
        at_least=(1, "host bytes per offloaded byte"),
    ),
    # Memory as measured (issue 40): the framework choices real runs make (optimizer
    # state and master-copy precision, FP8 activation caching, recomputed modules, the
    # interleaved pipeline's micro-batch group, activation offload, chunked loss) and
    # the memory outside PyTorch's tensors (allocator reserve, communication buffers).
    Field(
        key="optimizer_state_dtype",
        kind="choice",
        default="recipe",
        doc=(
            "precision of Adam's two moments: recipe (the recipe's optimizer bytes), fp32 "
            "(8 bytes a parameter), bf16 (4: DeepSeek-V3 technical report, arXiv:2412.19437, "
            "section 3.3.3, 'Low-Precision Optimizer States') or 8bit (2: Dettmers et al. "
            "2022, 8-bit Optimizers via Block-wise Quantization); LoRA keeps its adapters' own"
        ),
        choices=("recipe", "fp32", "bf16", "8bit"),
    ),
    Field(
        key="master_weights",
        kind="int",
        default=1,
        doc=(
            "1 (default): the recipe's FP32 master copy of the weights; 0: pure BF16 training, "
            "the optimizer updates the BF16 weights themselves (Zamirai et al. 2020, "
            "Revisiting BFloat16 Training, arXiv:2010.06192)"
        ),
        limit=(0, 1, "a 1/0 switch"),
        whole_range=True,
        flag=True,
    ),
    Field(
        key="act_fp8_cache",
        kind="int",
        default=0,
        doc=(
            "1: with FP8 GEMMs (peak_dtype fp8) the linear layers' inputs are cached for the "
            "backward pass in FP8, 1 byte a value, whatever the activation profile (DeepSeek-V3 "
            "technical report, section 3.3.3, 'Low-Precision Storage and Communication'); "
            "megatron-te does so already"
        ),
        limit=(0, 1, "a 1/0 switch"),
        whole_range=True,
        flag=True,
    ),
    Field(
        key="recompute_norms",
        kind="int",
        default=0,
        doc=(
            "1: the norms' outputs (and their statistics) are not kept but recomputed in the "
            "backward pass from their inputs (DeepSeek-V3 technical report, section 3.2.3: "
            "'Recomputation of RMSNorm'; Megatron-Core --recompute-modules layernorm)"
        ),
        limit=(0, 1, "a 1/0 switch"),
        whole_range=True,
        flag=True,
    ),
    Field(
        key="recompute_up_proj",
        kind="int",
        default=0,
        doc=(
            "1: multi-head latent attention's up-projections (Q, K, V from the latents) are "
            "recomputed in the backward pass, only the latents kept (DeepSeek-V3 technical "
            "report, section 3.2.3; Megatron-Core --recompute-modules mla_up_proj); no effect "
            "without MLA"
        ),
        limit=(0, 1, "a 1/0 switch"),
        whole_range=True,
        flag=True,
    ),
    Field(
        key="recompute_mlp_act",
        kind="int",
        default=0,
        doc=(
            "1: the MLP's activation function is recomputed in the backward pass: a gated MLP "
            "keeps its gate and up outputs (2 F-wide tensors), a GeLU MLP its input (1) "
            "(Megatron-Core --recompute-modules moe_act; torch.compile's min-cut "
            "rematerialisation recomputes such pointwise ops)"
        ),
        limit=(0, 1, "a 1/0 switch"),
        whole_range=True,
        flag=True,
    ),
    Field(
        key="pp_microbatch_group",
        kind="int",
        default=0,
        doc=(
            "interleaved pipeline (v > 1): micro-batches that run through one model chunk "
            "before the next (N in The Llama 3 Herd of Models, section 3.3.2; Megatron-Core "
            "--microbatch-group-size-per-virtual-pipeline-stage); the first stage's warm-up "
            "is 2(pp - 1) + (v - 1) N + 1 chunk passes; 0 (default) = pp"
        ),
        limit=(0, 10**6, "micro-batches; 0 = pp"),
    ),
    Field(
        key="act_offload_share",
        kind="share",
        default=0,
        doc=(
            "share of the activations kept for the backward pass that live in host memory "
            "until it needs them (activation offload: Rajbhandari et al. 2020, ZeRO, "
            "section 6.1, 'CPU offload' of activation checkpoints); 0 = none"
        ),
        limit=(0, 0.99, "share of activations offloaded"),
        nonzero_at_least=(1e-4, "0.01% offloaded"),
    ),
    Field(
        key="logits_chunks",
        kind="int",
        default=1,
        doc=(
            "chunked cross-entropy: the logits are computed and reduced this many sequence "
            "chunks at a time, so only one chunk's logits are ever whole (Hsu et al. 2024, "
            "Liger Kernel, arXiv:2410.10989, fused linear cross-entropy; Wijmans et al. "
            "2024, Cut Your Losses, arXiv:2411.09009); 1 (default) = the whole logits"
        ),
        limit=(1, 10**6, "chunks"),
    ),
    Field(
        key="mem_reserved_share",
        kind="share",
        default=MEM_RESERVED_SHARE,
        doc=(
            "what PyTorch's caching allocator reserves beyond what it has allocated at the "
            "peak, as a share of the allocated bytes (torch.cuda.max_memory_reserved() / "
            "max_memory_allocated() - 1: block rounding and fragmentation); fitted on the "
            "fit rows of presets/benchmarks/memory/ (sheetgen memory-check)"
        ),
        limit=(0, 0.99, "share of the allocated bytes"),
        nonzero_at_least=(1e-4, "0.01% of the allocated bytes"),
    ),
    Field(
        key="mem_comm_buffer_bytes",
        kind="float",
        default=MEM_COMM_BUFFER_BYTES,
        doc=(
            "per GPU of a multi-GPU run: NCCL's communication buffers, outside PyTorch's "
            "allocator (NCCL documentation, NCCL_BUFFSIZE: 4 MiB per channel and peer for "
            "the Simple protocol; up to 32 channels, a ring's 2 peers: 268 MB per "
            "communicator; two communicators, data- and model-parallel: 0.54 GB); 0 on one GPU"
        ),
        unit="B",
        limit=(0, 10**15, "bytes per GPU (1 PB)"),
        nonzero_at_least=(1, "a byte"),
        zero_ok=True,
    ),
    Field(
        key="measured_peak_counter",
        kind="choice",
        default="reserved",
        doc=(
            "which counter measured_peak_mem is: reserved (torch.cuda.max_memory_reserved, "
            "default), allocated (torch.cuda.max_memory_allocated) or device (nvidia-smi's "
            "used memory: reserved + CUDA context + communication buffers); the calibration "
            "divides it by the same counter predicted"
        ),
        choices=("reserved", "allocated", "device"),
    ),
    Field(
        key="kv_block_tokens",
        kind="int",
        default=16,
        doc=(
            "inference: tokens per paged KV-cache block; each sequence's cache is rounded up "
            "to whole blocks (vLLM's default block size 16, Kwon et al. 2023)"
        ),
        unit="tokens",
        limit=(1, 10**6, "tokens per KV-cache block"),
    ),
    Field(
        key="inf_collective_latency_s",
        kind="float",
        default=1.39e-05,
        doc=(
            "inference: fixed latency of one tensor-parallel all-reduce, seconds (engine "
            "profile, fitted: presets/tables/serving_engines.yaml; vLLM 13.9 us)"
        ),
        unit="s",
        limit=(0, 10, "seconds per all-reduce"),
        nonzero_at_least=(1e-7, "seconds: 100 ns, below one NVLink hop"),
        zero_ok=True,
    ),
    # The serving step model's engine profile (issue 39): fitted once per engine family
    # on published serving runs (presets/tables/serving_engines.yaml holds each
    # profile with its source; the defaults are the vLLM profile).
    Field(
        key="inf_kv_eff",
        kind="fraction",
        default=0.95,
        doc=(
            "inference: share of HBM bandwidth the paged-attention kernel reaches reading "
            "the KV cache at long contexts (engine profile, fitted: serving_engines.yaml)"
        ),
        limit=(0.0001, 1, "share of HBM bandwidth"),
    ),
    Field(
        key="inf_kv_ctx_half",
        kind="float",
        default=0,
        doc=(
            "inference: context (tokens) at which the KV-cache read runs at half its "
            "long-context rate (engine profile, fitted: serving_engines.yaml)"
        ),
        unit="tokens",
        limit=(0, 10**7, "tokens"),
        zero_ok=True,
    ),
    Field(
        key="inf_gemm_half_ridge",
        kind="float",
        default=1,
        doc=(
            "inference: the rows (tokens in the step) at which a GEMM runs at half its "
            "large-GEMM rate, as a share of the ridge rows (where its FLOPs take as long as "
            "streaming its weights); fitted 1.03 on the shipped serving rows, set at 1"
        ),
        limit=(0, 100, "shares of the ridge rows"),
        zero_ok=True,
    ),
    Field(
        key="inf_layer_latency_s",
        kind="float",
        default=3.05e-05,
        doc=(
            "inference: fixed time per layer per forward pass (kernel launches and "
            "synchronisation), at any tp (engine profile, fitted: serving_engines.yaml)"
        ),
        unit="s",
        limit=(0, 1, "seconds per layer"),
        zero_ok=True,
    ),
    Field(
        key="inf_step_overhead_s",
        kind="float",
        default=0.00073,
        doc=(
            "inference: fixed time per engine step (scheduling, sampling, the host's "
            "share) (engine profile, fitted: serving_engines.yaml)"
        ),
        unit="s",
        limit=(0, 10, "seconds per step"),
        zero_ok=True,
    ),
    Field(
        key="inf_seq_overhead_s",
        kind="float",
        default=0,
        doc=(
            "inference: host time per sequence per decode step (engine profile, fitted: "
            "serving_engines.yaml)"
        ),
        unit="s",
        limit=(0, 1, "seconds per sequence per step"),
        zero_ok=True,
    ),
    Field(
        key="inf_ttft_overhead_s",
        kind="float",
        default=0.02,
        doc=(
            "inference: fixed time before a request's first forward pass (request "
            "handling, tokenisation, scheduling) (engine profile: serving_engines.yaml)"
        ),
        unit="s",
        limit=(0, 100, "seconds per request"),
        zero_ok=True,
    ),
    Field(
        key="inf_kv_mem_fraction",
        kind="fraction",
        default=0.9,
        doc=(
            "inference: share of the memory left after weights and overhead that the "
            "engine gives its KV cache (vLLM gpu_memory_utilization 0.9; TensorRT-LLM "
            "free_gpu_memory_fraction 0.9)"
        ),
        limit=(0.0001, 1, "share of the free memory"),
    ),
    Field(
        key="serve_calibration_error",
        kind="fraction",
        default=0.14,
        doc=(
            "serving: the step model's error quoted beside replicas and cost: the 90th "
            "percentile |error| of the shipped output tok/s rows (sheetgen serving-check)"
        ),
        limit=(0, 0.99, "share of throughput"),
    ),
    Field(
        key="inf_engine_max_batch",
        kind="int",
        default=256,
        doc=(
            "inference: the most sequences the engine schedules at once (vLLM "
            "max_num_seqs, default 256; TensorRT-LLM max_batch_size, default 2048)"
        ),
        unit="seqs",
        limit=(1, 10**7, "sequences"),
    ),
    # Prices, energy, dates and pilot-run calibration.
    Field(
        key="price_per_gpu_hour_reserved",
        kind="float",
        default=1.5,
        doc=(
            "USD per GPU-hour under a reserved / committed contract: illustrative, replace "
            "with your quote"
        ),
        unit="USD/GPU·h",
        limit=(0, 10000, "USD per GPU-hour"),
        nonzero_at_least=_PRICE_LOWEST,
        zero_ok=True,
    ),
    Field(
        key="price_basis",
        kind="choice",
        default="on-demand",
        doc="which GPU-hour price the budget total uses: on-demand or reserved",
        choices=("on-demand", "reserved"),
    ),
    Field(
        key="pue",
        kind="float",
        default=1.2,
        doc=(
            "power usage effectiveness, facility power / IT power (>= 1); illustrative: "
            "hyperscale sites reach 1.1-1.2, the Uptime Institute 2023 survey average is 1.58"
        ),
        limit=(1, 10, "facility power / IT power"),
        at_least=(1, "facility power / IT power"),
    ),
    Field(
        key="electricity_price_per_kwh",
        kind="float",
        default=0.08,
        doc=(
            "USD per kWh, billed on top of the GPU price only when price_includes_power is 0 "
            "(owned or colocated GPUs); illustrative: US industrial average 2023 8.06 cents "
            "(EIA Electric Power Annual)"
        ),
        unit="USD/kWh",
        limit=(0, 100, "USD per kWh"),
        nonzero_at_least=(1e-4, "USD per kWh: a hundredth of a cent; grid power costs ~$0.05-0.30"),
        zero_ok=True,
    ),
    Field(
        key="contingency",
        kind="float",
        default=0.1,
        doc=(
            "reserve added to GPU + energy cost for work outside the plan (reruns beyond "
            "goodput, ablations, price changes); illustrative 10%, set your own"
        ),
        limit=(0, 1, "at most 100% on top of the cost"),
        nonzero_at_least=(1e-4, "0.01% on top of the cost"),
        zero_ok=True,
    ),
    Field(
        key="start_date",
        kind="date",
        default=dt.date(2027, 1, 1),
        doc="first day of training, ISO date (YYYY-MM-DD); illustrative",
    ),
    Field(
        key="measured_tokens_per_s_per_gpu",
        kind="float",
        default=0,
        doc=(
            "pilot run: measured training tokens/s per GPU at this scenario's settings (0 = "
            "not measured)"
        ),
        unit="tok/s",
        limit=(0, 10**9, "tokens/s per GPU"),
        nonzero_at_least=(1e-3, "one token per 1,000 s per GPU"),
        zero_ok=True,
    ),
    Field(
        key="measured_step_seconds",
        kind="float",
        default=0,
        doc=(
            "pilot run: measured seconds per optimizer step with this scenario's GPUs and "
            "global batch (0 = not measured; used when tokens/s is not given)"
        ),
        unit="s",
        limit=(0, 10**7, "seconds per step (about 4 months)"),
        nonzero_at_least=(1e-3, "a step takes at least a millisecond"),
        zero_ok=True,
    ),
    Field(
        key="measured_peak_mem",
        kind="float",
        default=0,
        doc=(
            "pilot run: measured peak memory per GPU in bytes, e.g. "
            "torch.cuda.max_memory_reserved() (0 = not measured)"
        ),
        unit="B",
        limit=(0, 10**15, "bytes per GPU (1 PB)"),
        nonzero_at_least=(10**6, "bytes: 1 MB per GPU"),
        zero_ok=True,
    ),
    # Lists, given in a scenario file: training phases and chart sweeps.
    Field(
        key="phases",
        kind="phases",
        default=(),
        doc=(
            "training phases, at most 4 (PHASE_SLOTS): each trains its own tokens at its own "
            "sequence length, global batch and MFU (these default to the run's); Phases sheet"
        ),
        slot="phase_{n}_{name}",
    ),
    Field(
        key="sweep_seq_lens",
        kind="counts",
        default=SWEEP_SEQ_DEFAULT,
        doc=(
            "the 6 (SWEEP_POINTS) sequence lengths the activation-memory chart evaluates "
            "(Sweeps sheet)"
        ),
        items_like="seq_len",
        slot="sweep_seq_{n}",
    ),
    Field(
        key="sweep_gpus",
        kind="counts",
        default=SWEEP_GPUS_DEFAULT,
        doc="the 6 (SWEEP_POINTS) GPU counts the training-days chart evaluates (Sweeps sheet)",
        items_like="n_gpus",
        slot="sweep_gpus_{n}",
    ),
    # Budget proposal (issue 11): energy counted once, a confidence range, a
    # sensitivity step, spend by month and fiscal year.
    Field(
        key="price_includes_power",
        kind="int",
        default=1,
        doc=(
            "1: the GPU-hour price already includes power (on-demand cloud rates do), so "
            "energy is shown in kWh but not billed; 0: owned or colocated GPUs, energy billed"
            " on top"
        ),
        limit=(0, 1, "a 1/0 switch"),
        whole_range=True,
    ),
    Field(
        key="mfu_range",
        kind="fraction",
        default=MFU_RANGE,
        doc=(
            "relative width of the MFU range around the MFU used (pessimistic x (1 - w), "
            "optimistic x (1 + w), at most 1); default: the 90th-percentile |error| of the "
            "step-time model on its calibration runs (the fit and check rows of "
            "presets/benchmarks/); on other organisations' held-out runs it is wider "
            "(docs/benchmarks-holdout.md)"
        ),
        limit=(0.0001, 0.99, "a relative width below 100%"),
    ),
    Field(
        key="goodput_range",
        kind="share",
        default=0.05,
        doc=(
            "goodput range: goodput - w (at least half of it) to goodput + w (at most 1); "
            "illustrative: Llama 3 pre-training had 466 job interruptions in 54 days and "
            "about 90% effective training time (Dubey et al. 2024, section 3.3.4)"
        ),
        limit=(0, 0.99, "a width below 100 points"),
        nonzero_at_least=(1e-4, "a width of 0.01 points"),
    ),
    Field(
        key="sensitivity_step",
        kind="fraction",
        default=0.1,
        doc=(
            "relative change of each driver (MFU, goodput, GPU-hour price, tokens) in the "
            "sensitivity table, below 1; illustrative 10%"
        ),
        limit=(0.0001, 0.99, "a relative change below 100%"),
    ),
    Field(
        key="month_horizon",
        kind="int",
        default=MONTH_SLOTS,
        doc=(
            "months the spend-by-month table covers from the start date (1 to 36; default "
            "36); spend after it is shown as one remainder"
        ),
        unit="months",
        limit=(1, 36, "months the spend table holds"),
        whole_range=True,
    ),
    Field(
        key="fiscal_year_start_month",
        kind="int",
        default=1,
        doc=(
            "calendar month (1-12) the fiscal year starts in: 1 = calendar year, 10 = US "
            "federal, 4 = UK and Japan"
        ),
        limit=(1, 12, "a calendar month"),
        whole_range=True,
    ),
    # Scaling (issue 22): Chinchilla's parametric loss, approach 3 (Hoffmann et al. 2022,
    # arXiv:2203.15556, section 3.3, eq. 2; the fitted constants below it).
    Field(
        key="chinchilla_e",
        kind="float",
        default=1.69,
        doc=(
            "Chinchilla loss fit, E: the irreducible loss in nats per token (Hoffmann et al."
            " 2022, arXiv:2203.15556, section 3.3, approach 3: E = 1.69)"
        ),
        unit="nats",
        limit=(0, 100, "nats per token"),
        nonzero_at_least=(1e-3, "nats per token"),
        zero_ok=True,
    ),
    Field(
        key="chinchilla_a",
        kind="float",
        default=406.4,
        doc=(
            "Chinchilla loss fit, A: the parameter term's scale, A / N^alpha (Hoffmann et al."
            " 2022, section 3.3, approach 3: A = 406.4)"
        ),
        limit=(1e-3, 10**6, _CHINCHILLA_SCALE),
    ),
    Field(
        key="chinchilla_b",
        kind="float",
        default=410.7,
        doc=(
            "Chinchilla loss fit, B: the data term's scale, B / D^beta (Hoffmann et al. "
            "2022, section 3.3, approach 3: B = 410.7)"
        ),
        limit=(1e-3, 10**6, _CHINCHILLA_SCALE),
    ),
    Field(
        key="chinchilla_alpha",
        kind="float",
        default=0.34,
        doc=(
            "Chinchilla loss fit, alpha: the parameter exponent (Hoffmann et al. 2022, "
            "section 3.3, approach 3: alpha = 0.34)"
        ),
        limit=(0.05, 2, _CHINCHILLA_EXPONENT),
    ),
    Field(
        key="chinchilla_beta",
        kind="float",
        default=0.28,
        doc=(
            "Chinchilla loss fit, beta: the data exponent (Hoffmann et al. 2022, section "
            "3.3, approach 3: beta = 0.28)"
        ),
        limit=(0.05, 2, _CHINCHILLA_EXPONENT),
    ),
    # The batch as a decision (issue 41): DeepSeek LLM's compute-optimal batch size and
    # learning rate (Bi et al. 2024, DeepSeek LLM, arXiv:2401.02954, section 3.1), and the two
    # warnings' thresholds (Checks).
    Field(
        key="deepseek_batch_coef",
        kind="float",
        default=0.2920,
        doc=(
            "compute-optimal batch, B_opt = coef x C^exp tokens, C in FLOPs: the coefficient "
            "(Bi et al. 2024 (DeepSeek-AI), DeepSeek LLM, arXiv:2401.02954, section 3.1: 0.2920)"
        ),
        limit=(1e-6, 10**6, "a power law's coefficient; the published fit is 0.29"),
    ),
    Field(
        key="deepseek_batch_exp",
        kind="float",
        default=0.3271,
        doc=(
            "compute-optimal batch, B_opt = coef x C^exp: the exponent of the compute "
            "(DeepSeek LLM, section 3.1: 0.3271)"
        ),
        limit=(0.01, 1, "an exponent of the compute; the published fit is 0.33"),
    ),
    Field(
        key="deepseek_lr_coef",
        kind="float",
        default=0.3118,
        doc=(
            "compute-optimal learning rate, eta_opt = coef x C^-exp, C in FLOPs: the "
            "coefficient (DeepSeek LLM, section 3.1: 0.3118)"
        ),
        limit=(1e-6, 10**6, "a power law's coefficient; the published fit is 0.31"),
    ),
    Field(
        key="deepseek_lr_exp",
        kind="float",
        default=0.1250,
        doc=(
            "compute-optimal learning rate, eta_opt = coef x C^-exp: the exponent, entered "
            "positive (DeepSeek LLM, section 3.1: C^-0.1250)"
        ),
        limit=(0.01, 1, "an exponent of the compute; the published fit is 0.125"),
    ),
    Field(
        key="bubble_warn_share",
        kind="share",
        default=0.2,
        doc=(
            "Checks warns when the pipeline bubble, (pp-1)/(v x m + pp-1), exceeds this share "
            "of the step: 20% is GPipe's m >= 4 x pp, where it found the bubble negligible "
            "(Huang et al. 2019, GPipe, arXiv:1811.06965, section 2.3)"
        ),
        limit=(0, 1, "a share of the step"),
    ),
    Field(
        key="batch_warn_factor",
        kind="float",
        default=10,
        doc=(
            "Checks warns when the global batch is more than this factor above or below the "
            "compute-optimal batch (Scaling); 10: an order of magnitude, since the fit's "
            "near-optimal band is wide (DeepSeek LLM, section 3.1) and Llama 3 405B trained "
            "at 0.25x it (Dubey et al. 2024, section 3.4.1)"
        ),
        limit=(1, 10**6, "a factor of at least 1"),
    ),
    # Serving plan (issue 23; Serving sheet, Months' serving rows).
    Field(
        key="serve_requests_per_s",
        kind="float",
        default=0,
        doc=(
            "serving: requests per second at peak the fleet must carry (0 = no serving plan); "
            "each request is prompt_len + output_len tokens"
        ),
        unit="req/s",
        limit=(0, 10**7, "requests per second at peak"),
        nonzero_at_least=(1e-6, "requests per second: one request in 11.6 days"),
        zero_ok=True,
    ),
    Field(
        key="serve_avg_to_peak",
        kind="fraction",
        default=0.5,
        doc=(
            "serving: average request rate over the month / peak rate (sets the average "
            "replicas and the monthly cost); illustrative 50%, measure your traffic"
        ),
        limit=(0.0001, 1, "average / peak request rate"),
    ),
    Field(
        key="slo_ttft_s",
        kind="float",
        default=2.0,
        doc=(
            "serving SLO: time to first token, seconds (illustrative 2 s; MLPerf Inference's "
            "Llama 2 70B server scenario allows 2,000 ms: mlcommons/inference loadgen/mlperf.conf, "
            "llama2-70b.Server.ttft_latency)"
        ),
        unit="s",
        limit=(1e-3, 3600, "seconds to the first token: from a millisecond to an hour"),
    ),
    Field(
        key="slo_tpot_s",
        kind="float",
        default=0.05,
        doc=(
            "serving SLO: time per output token after the first, seconds (illustrative 50 ms; "
            "MLPerf Inference's Llama 2 70B server scenario allows 200 ms: loadgen/mlperf.conf, "
            "llama2-70b.Server.tpot_latency)"
        ),
        unit="s",
        limit=(
            1e-4,
            60,
            "seconds per output token: from 0.1 ms (10,000 tokens/s per stream) to a minute",
        ),
    ),
    Field(
        key="serve_tp",
        kind="int",
        default=0,
        doc=(
            "serving: GPUs per replica (tensor parallel); 0 = choose the smallest power of two "
            "up to the node that splits the heads (as inf_tp) and holds the weights and the KV "
            "cache of one SLO batch"
        ),
        unit="GPUs",
        limit=(0, 10**5, "GPUs serving one replica"),
    ),
    Field(
        key="serve_hours_per_month",
        kind="float",
        default=730,
        doc="serving: hours the fleet runs per month (730 = 8,760 hours a year / 12)",
        unit="h",
        limit=(0.01, 744, "hours in a month: from 36 seconds to 31 days"),
    ),
    Field(
        key="serve_price_per_gpu_hour",
        kind="float",
        default=0,
        doc=(
            "serving: USD per GPU-hour; 0 = the same price as training (the GPU-hour price "
            "the budget uses, on-demand or reserved)"
        ),
        unit="USD/GPU·h",
        limit=(0, 10000, "USD per GPU-hour"),
        nonzero_at_least=_PRICE_LOWEST,
        zero_ok=True,
    ),
    Field(
        key="serve_start_date",
        kind="date",
        default=dt.date(2027, 7, 1),
        doc=(
            "serving: first day the fleet runs and is billed, ISO date; the Months sheet "
            "carries its cost from then (illustrative: six months after the default start)"
        ),
    ),
)

FIELD: dict[str, Field] = {f.key: f for f in FIELDS}

# key: (kind, default, description with source), the scalar settings in FIELDS order.
RUN_FIELDS: dict[str, tuple[str, Any, str]] = {
    f.key: (f.kind, f.default, f.doc) for f in FIELDS if f.kind in SCALAR_KINDS
}
RUN_DEFAULTS = {k: v[1] for k, v in RUN_FIELDS.items()}
CHOICES: dict[str, tuple[str, ...]] = {f.key: f.choices for f in FIELDS if f.kind == "choice"}
# Whole-number settings whose accepted range is not ">= 1".
INT_RANGES: dict[str, tuple[int, int | None]] = {
    f.key: f.int_range for f in FIELDS if f.kind == "int" and f.int_range != (1, None)
}
# 0/1 settings: YAML true/false (and the words true/false, yes/no) are accepted too.
FLAG_FIELDS = frozenset(f.key for f in FIELDS if f.flag)
# Run settings that may be 0 (meaning "free" or "not given"); other numbers must be > 0.
NONNEGATIVE_FIELDS = frozenset(f.key for f in FIELDS if f.zero_ok)
# A training phase's settings, and the run setting each one defaults to.
PHASE_OF: dict[str, str] = {f.phase: f.key for f in FIELDS if f.phase}
PHASE_FIELDS = tuple(PHASE_OF)
# Settings given as lists (phases, sweeps), in FIELDS order.
LIST_FIELDS = tuple(f.key for f in FIELDS if f.kind not in SCALAR_KINDS)


def _shown(value: Any) -> str:
    if value is None:
        return "derived"
    if isinstance(value, tuple):
        return ", ".join(str(v) for v in value) if value else "none"
    if isinstance(value, (int, float)) and value == int(value) and abs(value) >= 10**4:
        return f"{int(value):,}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def markdown() -> str:
    """docs/run-settings.md: one table row per field, written from FIELDS."""
    lines = [
        "# Run settings",
        "",
        "Written by `python -m sheetgen.scenarios.run_fields > docs/run-settings.md` from the",
        "registry in `sheetgen/scenarios/run_fields.py`; edit the registry, not this file.",
        "`tests/test_registry.py` fails when the two differ.",
        "",
        "| key | kind | default | unit | accepted | CLI flag | meaning and source |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in FIELDS:
        if f.kind == "choice":
            accepted = " \\| ".join(f.choices)
        elif f.limit is not None:
            low, high, why = f.limit
            accepted = f"{_shown(low)} to {_shown(high)} ({why})"
            if f.zero_ok:
                accepted += "; 0 allowed"
            if f.at_least is not None:
                accepted += f"; at least {f.at_least[0]:g}"
            if f.nonzero_at_least is not None:
                accepted += f"; other than 0 at least {f.nonzero_at_least[0]:g}"
                accepted += f" ({f.nonzero_at_least[1]})"
            if f.flag:
                accepted += "; true/false too"
        else:
            accepted = {"date": "ISO date", "phases": f"up to {PHASE_SLOTS} phases"}.get(
                f.kind, f"{SWEEP_POINTS} values"
            )
        flags = ", ".join(f"`{n}`" for n in (f.flag_name, *f.cli_aliases))
        if f.kind not in SCALAR_KINDS:
            flags = "(scenario file)"
        phase = f"; per training phase as `{f.phase}`" if f.phase else ""
        doc = f.doc.replace("|", "\\|")
        lines.append(
            f"| `{f.key}` | {f.kind} | {_shown(f.default)} | {f.unit} | {accepted} | {flags} "
            f"| {doc}{phase} |"
        )
    return "\n".join(lines) + "\n"


__all__ = [
    "CHOICES",
    "FIELD",
    "FIELDS",
    "Field",
    "INT_RANGES",
    "RUN_DEFAULTS",
    "RUN_FIELDS",
]

if __name__ == "__main__":
    print(markdown(), end="")
