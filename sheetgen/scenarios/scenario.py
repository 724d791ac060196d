"""Scenarios: model + hardware + run settings, as frozen dataclasses.

``Model``, ``Hardware`` and ``Recipe`` (with the model and hardware field lists),
``Phase`` and ``Run`` (their fields, types and defaults are generated from the
registry ``sheetgen.scenarios.run_fields.FIELDS``; constructing a Run derives dp and the MFU /
goodput ranges and checks that they agree), the shared
``Tables`` and the ``Scenario`` that ties them together (spreadsheet date
serials: ``sheetgen.scenarios.dates``).  Reading and validating user input into these is
``sheetgen.scenarios.parse``; scenario files are read by ``sheetgen.scenarios.files``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, replace
from dataclasses import field as dataclass_field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from sheetgen.errors import SheetgenError, short
from sheetgen.scenarios.limits import check_run_limit
from sheetgen.scenarios.run_fields import FIELD, FIELDS, KIND_TYPES, PHASE_OF

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
# Run settings (the table of settings: sheetgen.scenarios.run_fields)


class _FromRegistry:
    """Base of the classes whose fields the registry declares (``Phase``, ``Run``):
    type checkers see keyword construction and attributes of any type."""

    if TYPE_CHECKING:
        # A dataclass to type checkers too (dataclasses.fields, replace).
        __dataclass_fields__: ClassVar[dict[str, Any]]

        def __init__(self, **values: Any) -> None: ...

        def __getattr__(self, name: str) -> Any: ...


_T = TypeVar("_T")


def _registry_dataclass(spec: list[tuple[str, str, Any]]) -> Callable[[type[_T]], type[_T]]:
    """A frozen dataclass with the fields ``(name, annotation, default)`` in ``spec``
    (default ``MISSING``: none), in that order."""

    def make(cls: type[_T]) -> type[_T]:
        cls.__annotations__ = {name: annotation for name, annotation, _ in spec}
        for name, _annotation, default in spec:
            if default is not MISSING:
                setattr(cls, name, default)
        return dataclass(frozen=True)(cls)

    return make


@_registry_dataclass(
    [(phase, KIND_TYPES[FIELD[key].kind], MISSING) for phase, key in PHASE_OF.items()]
)
class Phase(_FromRegistry):
    """One training phase: tokens at its own sequence length, batch and MFU (the
    registry fields with ``phase=``, under those names)."""


@_registry_dataclass([(f.key, KIND_TYPES[f.kind], f.default) for f in FIELDS])
class Run(_FromRegistry):
    """A scenario's run settings: one field per registry entry (sheetgen.scenarios.run_fields
    FIELDS), with its default; dp (default None) is derived here."""

    def __post_init__(self) -> None:
        _resolve_ranges(self)
        _resolve_tokens(self)
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


# Training tokens when a scenario gives neither train_tokens nor dataset_tokens.
DEFAULT_TRAIN_TOKENS = 10**12


def _tokens_text(n: float) -> str:
    return f"{n:,.15g}"


def _resolve_tokens(run: Run) -> None:
    """train_tokens = dataset_tokens x epochs (issue 22): derive the one not given, and
    require the three to agree when all are given (as dp with n_gpus)."""
    data, epochs, train = run.dataset_tokens, run.epochs, run.train_tokens
    if data is None:
        if train is None:
            if epochs != 1:
                raise SheetgenError(
                    "epochs",
                    f"{epochs:g} epochs need dataset_tokens (the plan trains on "
                    "dataset_tokens x epochs) or train_tokens beside them",
                )
            train = DEFAULT_TRAIN_TOKENS
        data = round(train / epochs)
        if data < 1 or round(data * epochs) != train:
            raise SheetgenError(
                "epochs",
                f"train_tokens {_tokens_text(train)} / epochs {epochs:g} is not a whole number "
                "of tokens >= 1; give dataset_tokens instead of train_tokens",
            )
        check_run_limit(
            "dataset_tokens", data, f"train_tokens / epochs = {_tokens_text(train)} / {epochs:g}"
        )
    else:
        product = round(data * epochs)
        if train is None:
            check_run_limit(
                "train_tokens",
                product,
                f"dataset_tokens x epochs = {_tokens_text(data)} x {epochs:g}",
            )
            train = product
        elif train != product:
            raise SheetgenError(
                "train_tokens",
                f"{_tokens_text(train)} disagrees with dataset_tokens x epochs = "
                f"{_tokens_text(data)} x {epochs:g} = {_tokens_text(product)}; give "
                "train_tokens alone, or dataset_tokens and epochs",
            )
    object.__setattr__(run, "train_tokens", train)
    object.__setattr__(run, "dataset_tokens", data)


def _resolve_ranges(run: Run) -> None:
    if run.sensitivity_step >= 1:
        raise SheetgenError(
            "sensitivity_step", f"must be a fraction in (0, 1), got {run.sensitivity_step!r}"
        )


@dataclass(frozen=True)
class Tables:
    """Lookup tables every scenario shares: recipes and bytes per dtype.

    ``hardware``: the Presets hardware table the Hardware sheet compares, as
    ``(Hardware, on-demand price, reserved price)`` (0: the preset carries no price);
    empty means the presets loaded when computing (``reference.hardware_compare``).
    Not compared: a scenario is the same plan whichever accelerators sit beside it."""

    recipes: tuple[Recipe, ...]
    dtype_bytes: tuple[tuple[str, float], ...]
    hardware: tuple[tuple[Hardware, float, float], ...] = dataclass_field(default=(), compare=False)

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

    def __post_init__(self) -> None:
        # gpus_per_node not given (0): the accelerator's fast-interconnect domain
        # (issue 41), resolved once here so every model reads one run setting.
        if not self.run.gpus_per_node:
            node = int(self.hardware.fast_domain_gpus)
            object.__setattr__(self, "run", replace(self.run, gpus_per_node=node))

    @property
    def recipe(self) -> Recipe:
        return self.tables.recipe(self.run.recipe)


__all__ = [
    "Hardware",
    "Model",
    "Phase",
    "Recipe",
    "Run",
    "Scenario",
    "Tables",
]
