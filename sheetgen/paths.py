"""Where the data files (presets/, templates/) live.

In a source checkout they sit at the repository root; an installed wheel
carries them in the ``sheetgen.data`` package.
"""

from __future__ import annotations

from pathlib import Path


def data_root() -> Path:
    """The folder that holds ``presets/`` and ``templates/``."""
    here = Path(__file__).resolve().parent
    checkout = here.parent
    if (checkout / "templates").is_dir() and (checkout / "presets").is_dir():
        return checkout
    installed = here / "data"
    if (installed / "templates").is_dir():
        return installed
    raise FileNotFoundError(
        "sheetgen data files not found: expected templates/ and presets/ beside the package"
    )


def presets_dir() -> Path:
    return data_root() / "presets"


def templates_dir() -> Path:
    return data_root() / "templates"
