"""The checked field reader the per-family readers are given, as a protocol.

``hf_architectures._Fields`` implements it; ``hf_window`` and ``hf_families`` read
config fields only through it, so neither imports ``hf_architectures`` (which imports
both): the imports stay one-directional.
"""

from __future__ import annotations

import builtins
from typing import Any, Protocol


class FieldReader(Protocol):
    """Typed, checked access to one config's fields (a wrong one is an error naming it)."""

    doc: dict[str, Any]
    where: str

    def int(self, key: str, default: int | None = None, null: int | None = None) -> int: ...

    def flag(self, key: str, default: bool) -> builtins.int: ...  # int: the method above

    def head_dim(self) -> builtins.int: ...
