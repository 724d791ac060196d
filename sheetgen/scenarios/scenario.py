"""Scenarios: model + hardware + run settings, as frozen dataclasses.

``Model`` and ``Hardware`` (with their field lists; defined in
``sheetgen.scenarios.model_hardware`` and re-exported here), ``Recipe``,
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
from sheetgen.scenarios.model_hardware import (
    DEFAULT_FAST_DOMAIN_GPUS,
    HARDWARE_FIELDS,
    HARDWARE_ZERO_OK,
    HOPPER_KERNELS,
    KERNEL_FIELDS,
    MLPS,
    MODEL_FLAG_FIELDS,
    MODEL_INT_FIELDS,
    MODEL_POSITIVE_FIELDS,
    NORMS,
    Hardware,
    Model,
)
from sheetgen.scenarios.run_fields import FIELD, FIELDS, KIND_TYPES, PHASE_OF

# Model and Hardware live in model_hardware; every module imports them from here.
__all__ = [
    "MODEL_INT_FIELDS",
    "MODEL_FLAG_FIELDS",
    "MODEL_POSITIVE_FIELDS",
    "NORMS",
    "MLPS",
    "Model",
    "HARDWARE_FIELDS",
    "DEFAULT_FAST_DOMAIN_GPUS",
    "KERNEL_FIELDS",
    "HOPPER_KERNELS",
    "HARDWARE_ZERO_OK",
    "Hardware",
    "Recipe",
    "Phase",
    "Run",
    "Tables",
    "Scenario",
]


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
