"""Load presets/ (models, hardware, recipes, dtypes) into frozen dataclasses.

Nothing is read at import time; each loader caches its result.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from sheetgen.errors import SheetgenError, short
from sheetgen.paths import presets_dir
from sheetgen.scenario import Hardware, Model, Recipe, Tables, make_hardware, make_model


def _read_yaml(path: Path) -> Any:
    from sheetgen.yaml_load import load_yaml_file

    return load_yaml_file(path, dates=True)


def _model_spec(doc: Any, path: Path) -> Model:
    if not isinstance(doc, dict) or not isinstance(doc.get("architecture"), dict):
        raise SheetgenError(str(path), "a model preset needs an 'architecture' mapping")
    spec = dict(doc["architecture"])
    spec["id"] = doc.get("id", path.stem)
    spec["name"] = doc.get("name", path.stem)
    spec["source"] = doc.get("source", "")
    spec["params_published"] = doc.get("params_published")
    return make_model(spec, where=f"{path.name}")


def _hardware_spec(doc: Any, path: Path) -> Hardware:
    if not isinstance(doc, dict):
        raise SheetgenError(str(path), "a hardware preset must be a mapping")
    doc = dict(doc)
    doc.setdefault("id", path.stem)
    doc.pop("as_of", None)
    return make_hardware(doc, where=path.name)


def scan_dir(folder: Path, make: Any) -> dict[str, Any]:
    """The presets of one directory by id, in file-name order.  Two files with one
    id are an error naming both: one would silently replace the other."""
    out: dict[str, Any] = {}
    files: dict[str, Path] = {}
    for path in sorted(folder.glob("*.yaml")):
        item = make(_read_yaml(path), path)
        if item.id in files:
            raise SheetgenError(
                str(path),
                f"id {item.id!r} is already defined by {files[item.id]}; "
                "give one of them another id",
            )
        files[item.id] = path
        out[item.id] = item
    return out


@cache
def models() -> dict[str, Model]:
    """All model presets by id, in file-name order."""
    return scan_dir(presets_dir() / "models", _model_spec)


@cache
def hardware() -> dict[str, Hardware]:
    """All accelerator presets by id, in file-name order."""
    return scan_dir(presets_dir() / "hardware", _hardware_spec)


def _docs(folder: Path) -> dict[str, Any]:
    """Raw documents by id (the file name where a document gives none)."""
    out = {}
    for path in sorted(folder.glob("*.yaml")):
        doc = _read_yaml(path)
        out[str(doc.get("id", path.stem)) if isinstance(doc, dict) else path.stem] = doc
    return out


@cache
def model_docs() -> dict[str, dict[str, Any]]:
    """The raw preset documents (with sources and dates) by id."""
    return _docs(presets_dir() / "models")


@cache
def hardware_docs() -> dict[str, dict[str, Any]]:
    return _docs(presets_dir() / "hardware")


def _table(name: str, column: str) -> tuple[list[dict[str, Any]], str]:
    """A table file's rows (mappings) and source, or a one-line error."""
    path = presets_dir() / "tables" / f"{name}.yaml"
    doc = _read_yaml(path)
    if not isinstance(doc, dict) or not isinstance(doc.get(name), list) or not doc[name]:
        raise SheetgenError(str(path), f"expected a mapping with a non-empty '{name}:' list")
    for i, row in enumerate(doc[name], start=1):
        if not isinstance(row, dict) or "id" not in row:
            raise SheetgenError(
                f"{path}: {name}[{i}]", f"must be a mapping with an id and {column}"
            )
    source = doc.get("source", "")
    return doc[name], source if isinstance(source, str) else str(source)


def _recipe(row: dict[str, Any], where: str) -> Recipe:
    from dataclasses import fields

    from sheetgen.scenario import parse_number

    names = [f.name for f in fields(Recipe)]
    unknown = [k for k in row if k not in names]
    missing = [k for k in names if k not in row]
    if unknown or missing:
        what = (
            f"unknown field {short(unknown[0])}"
            if unknown
            else f"missing field {short(missing[0])}"
        )
        raise SheetgenError(where, f"{what}; a recipe has {', '.join(names)}")
    values: dict[str, Any] = {"id": str(row["id"]), "name": str(row["name"])}
    for key in names[2:]:
        v = parse_number(row[key], f"{where}.{key}")
        if not 0 <= v <= 64:
            raise SheetgenError(f"{where}.{key}", f"must be 0 to 64 bytes, got {v!r}")
        values[key] = int(v) if v == int(v) else v
    return Recipe(**values)


@cache
def tables() -> Tables:
    """Recipes and dtype sizes (presets/tables/)."""
    from sheetgen.scenario import parse_number

    rrows, _ = _table("recipes", "bytes per state")
    drows, _ = _table("dtypes", "bytes")
    where = str(presets_dir() / "tables")
    recipes = tuple(_recipe(r, f"{where}/recipes.yaml: {r['id']}") for r in rrows)
    dtypes = []
    for d in drows:
        at = f"{where}/dtypes.yaml: {d['id']}"
        nbytes = parse_number(d.get("bytes"), f"{at}.bytes")
        if not 0 < nbytes <= 64:
            raise SheetgenError(
                f"{at}.bytes", f"must be more than 0 and at most 64, got {nbytes!r}"
            )
        dtypes.append((str(d["id"]), nbytes))
    return Tables(recipes=recipes, dtype_bytes=tuple(dtypes))


def table_sources() -> dict[str, str]:
    return {"recipes": _table("recipes", "")[1], "dtypes": _table("dtypes", "")[1]}


def get_model(model_id: str, field: str = "model") -> Model:
    table = models()
    if model_id not in table:
        raise SheetgenError(
            field, f"unknown model preset {short(model_id)}; accepted: {', '.join(table)}"
        )
    return table[model_id]


def get_hardware(hw_id: str, field: str = "hardware") -> Hardware:
    table = hardware()
    if hw_id not in table:
        raise SheetgenError(
            field, f"unknown hardware preset {short(hw_id)}; accepted: {', '.join(table)}"
        )
    return table[hw_id]
