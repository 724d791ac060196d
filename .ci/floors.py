"""Print the oldest dependency versions pyproject.toml allows, as pip pins.

``name>=X`` (with or without an upper bound) becomes ``name==X``; the CI's second
virtual environment installs these so that the tests run against the floors as
well as the newest versions.  Standard library only, no tomllib (Python 3.10).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# pandas before 2.2.2 is built against NumPy 1 and does not import with NumPy 2; pip
# does not know that from pandas 2.0's metadata, so the floor environment says it.
EXTRA = ["numpy<2"]


def floors(pyproject: str) -> list[str]:
    block = re.search(r"^dependencies\s*=\s*\[(.*?)^\]", pyproject, re.S | re.M)
    if block is None:
        raise SystemExit("pyproject.toml: no [project] dependencies list")
    pins = []
    for spec in re.findall(r'"([^"]+)"', block.group(1)):
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9.]*)(\s*,.*)?", spec)
        if m is None:
            raise SystemExit(f"pyproject.toml: dependency {spec!r} has no >= floor")
        pins.append(f"{m.group(1)}=={m.group(2)}")
    return pins


def _release(version: str) -> tuple[int, ...]:
    parts = [int(p) for p in re.findall(r"\d+", version.split("+")[0])[:3]]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def check(pins: list[str]) -> int:
    """Exit status 1 unless the running Python has exactly the pinned versions."""
    from importlib.metadata import PackageNotFoundError, version

    bad = 0
    for pin in pins:
        name, wanted = pin.split("==")
        try:
            found = version(name)
        except PackageNotFoundError:
            found = "missing"
        ok = found != "missing" and _release(found) == _release(wanted)
        print(f"floor {name}: wanted {wanted}, installed {found}{'' if ok else '  <- WRONG'}")
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    pins = floors((root / "pyproject.toml").read_text(encoding="utf-8"))
    if "--check" in sys.argv:
        raise SystemExit(check(pins))
    print(" ".join(pins + (EXTRA if "--pip" in sys.argv else [])))
