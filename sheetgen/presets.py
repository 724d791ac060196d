"""Load presets/ (models, hardware, recipes, dtypes) into frozen dataclasses.

Nothing is read at import time; each loader caches its result.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from sheetgen.errors import SheetgenError
from sheetgen.paths import presets_dir
from sheetgen.scenario import Hardware, Model, Recipe, Tables, make_hardware, make_model


def _read_yaml(path: Path) -> Any:
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise SheetgenError(str(path), f"invalid YAML{where}: {getattr(e, 'problem', e)}") from None


@cache
def models() -> dict[str, Model]:
    """All model presets by id, in file-name order."""
    out: dict[str, Model] = {}
    for path in sorted((presets_dir() / "models").glob("*.yaml")):
        doc = _read_yaml(path)
        if not isinstance(doc, dict) or not isinstance(doc.get("architecture"), dict):
            raise SheetgenError(str(path), "a model preset needs an 'architecture' mapping")
        spec = dict(doc["architecture"])
        spec["id"] = doc.get("id", path.stem)
        spec["name"] = doc.get("name", path.stem)
        spec["source"] = doc.get("source", "")
        spec["params_published"] = doc.get("params_published")
        out[spec["id"]] = make_model(spec, where=f"{path.name}")
    return out


@cache
def hardware() -> dict[str, Hardware]:
    """All accelerator presets by id, in file-name order."""
    out: dict[str, Hardware] = {}
    for path in sorted((presets_dir() / "hardware").glob("*.yaml")):
        doc = _read_yaml(path)
        if not isinstance(doc, dict):
            raise SheetgenError(str(path), "a hardware preset must be a mapping")
        doc = dict(doc)
        doc.setdefault("id", path.stem)
        doc.pop("as_of", None)
        out[doc["id"]] = make_hardware(doc, where=path.name)
    return out


@cache
def model_docs() -> dict[str, dict[str, Any]]:
    """The raw preset documents (with sources and dates) by id."""
    return {p.stem: _read_yaml(p) for p in sorted((presets_dir() / "models").glob("*.yaml"))}


@cache
def hardware_docs() -> dict[str, dict[str, Any]]:
    return {p.stem: _read_yaml(p) for p in sorted((presets_dir() / "hardware").glob("*.yaml"))}


@cache
def tables() -> Tables:
    """Recipes and dtype sizes (presets/tables/)."""
    rdoc = _read_yaml(presets_dir() / "tables" / "recipes.yaml")
    ddoc = _read_yaml(presets_dir() / "tables" / "dtypes.yaml")
    recipes = tuple(Recipe(**r) for r in rdoc["recipes"])
    dtypes = tuple((d["id"], float(d["bytes"])) for d in ddoc["dtypes"])
    return Tables(recipes=recipes, dtype_bytes=dtypes)


def table_sources() -> dict[str, str]:
    rdoc = _read_yaml(presets_dir() / "tables" / "recipes.yaml")
    ddoc = _read_yaml(presets_dir() / "tables" / "dtypes.yaml")
    return {"recipes": rdoc.get("source", ""), "dtypes": ddoc.get("source", "")}


def get_model(model_id: str, field: str = "model") -> Model:
    table = models()
    if model_id not in table:
        raise SheetgenError(
            field, f"unknown model preset {model_id!r}; accepted: {', '.join(table)}"
        )
    return table[model_id]


def get_hardware(hw_id: str, field: str = "hardware") -> Hardware:
    table = hardware()
    if hw_id not in table:
        raise SheetgenError(
            field, f"unknown hardware preset {hw_id!r}; accepted: {', '.join(table)}"
        )
    return table[hw_id]
