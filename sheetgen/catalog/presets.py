"""Load presets/ (models, hardware, recipes, dtypes) into frozen dataclasses.

Nothing is read at import time; each loader caches its result.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

from sheetgen.catalog.parse import make_hardware, make_model
from sheetgen.errors import SheetgenError, did_you_mean, short
from sheetgen.paths import presets_dir
from sheetgen.scenarios.scenario import Hardware, Model, Recipe, Tables


def _read_yaml(path: Path) -> Any:
    from sheetgen.scenarios.yaml_load import load_yaml_file

    return load_yaml_file(path, dates=True)


# ---------------------------------------------------------------------------
# Layers: the shipped presets, then team directories (--presets DIR or
# SHEETGEN_PRESETS), each scanned on its own; a later layer overrides an earlier
# one id by id, and every preset records the layer it came from.

SHIPPED = "shipped"
ENV_VAR = "SHEETGEN_PRESETS"
PRICE_FIELDS = ("price_per_gpu_hour", "price_per_gpu_hour_reserved")
_team_override: tuple[str, ...] | None = None


def use_team_dirs(dirs: tuple[str, ...] | list[str] | None) -> None:
    """Layer these directories over the shipped presets (None: read SHEETGEN_PRESETS)."""
    global _team_override
    _team_override = None if dirs is None else tuple(str(d) for d in dirs)


def team_dirs() -> tuple[str, ...]:
    """Team preset directories, lowest priority first: --presets, else SHEETGEN_PRESETS
    (several separated by the platform's path separator)."""
    if _team_override is not None:
        return _team_override
    env = os.environ.get(ENV_VAR, "")
    return tuple(d for d in env.split(os.pathsep) if d.strip())


def layers() -> tuple[tuple[Path, str], ...]:
    """(directory, origin) from lowest to highest priority."""
    from sheetgen.scenarios.input_files import is_dir

    out = [(presets_dir(), SHIPPED)]
    field = "--presets" if _team_override is not None else ENV_VAR
    for d in team_dirs():
        path = Path(d).expanduser()
        if not is_dir(path, field):
            raise SheetgenError(
                field,
                f"{d[:80]!r} is not a directory; give a folder holding "
                "models/, hardware/ or scenarios/",
            )
        if not any(is_dir(path / sub, field) for sub in ("models", "hardware", "scenarios")):
            raise SheetgenError(field, f"{d[:80]!r} holds none of models/, hardware/, scenarios/")
        out.append((path, str(path)))
    return tuple(out)


def scan_directory(directory: Path, kind: str) -> dict[str, tuple[dict[str, Any], Path]]:
    """The preset documents of one layer's ``kind`` folder by id, in file-name order."""
    out: dict[str, tuple[dict[str, Any], Path]] = {}
    for path in sorted((directory / kind).glob("*.yaml")):
        doc = _read_yaml(path)
        if not isinstance(doc, dict):
            raise SheetgenError(str(path), f"a {kind} preset must be a mapping")
        raw_id = doc.get("id", path.stem)
        if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int, float)):
            raise SheetgenError(f"{path}.id", f"must be text, got {short(raw_id)}")
        pid = str(raw_id)
        if pid in out:
            # Within one folder one file would silently replace the other; across
            # folders (layers) replacing is the point.
            raise SheetgenError(
                str(path),
                f"id {pid!r} is already defined by {out[pid][1]}; give one of them another id",
            )
        out[pid] = (doc, path)
    return out


def _merge(kind: str, base: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` on top of its ``base`` document (nested mappings merged one level deep)."""
    merged = {k: v for k, v in base.items() if k not in ("id", "name", "as_of")}
    if kind == "models" and isinstance(doc.get("architecture"), dict):
        merged.pop("params_published", None)
        merged.pop("params_source", None)
    for key, value in doc.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    merged.pop("base", None)
    if "source" not in doc and base.get("source"):
        merged["source"] = f"starts from {doc['base']}: {base['source']}"
    return merged


# A ``base:`` chain within one folder may be this long: far more than any team needs
# (a preset on a preset on a shipped one), short enough that the merged source text
# stays readable.  Resolution is a loop, so a longer chain is this one line, never
# Python's RecursionError.
MAX_BASE_CHAIN = 64


def _resolve(kind: str, pid: str, layer: dict, below: dict, done: dict) -> dict:
    """The document of ``pid`` in ``layer`` with its ``base:`` chain merged in; a base is
    another preset of the same layer, else one of the layers below.  ``done`` maps
    each resolved id to (document, length of its chain in this layer)."""
    chain: list[str] = []  # presets whose base is still to merge, ``pid`` first
    cur = pid
    while cur not in done:
        doc, path = layer[cur]
        base = doc.get("base")
        if base is None:
            done[cur] = (doc, 0)
            break
        base = str(base)
        if base in chain or base == cur and cur not in below:
            raise SheetgenError(f"{path}: base", f"{short(base)} leads back to itself")
        if base in layer and base != cur:
            chain.append(cur)
            cur = base
            continue
        if base in below:
            done[cur] = (_merge(kind, below[base][0], doc), 1)
            break
        known = sorted({*below, *layer} - {cur})
        raise SheetgenError(
            f"{path}: base", f"unknown preset {short(base)}; {did_you_mean(base, known)}"
        )
    for cid in reversed(chain):
        doc, path = layer[cid]
        base_doc, depth = done[str(doc["base"])]
        if depth >= MAX_BASE_CHAIN:
            raise SheetgenError(
                f"{path}: base",
                f"a chain of more than {MAX_BASE_CHAIN} presets each starting from the next; "
                "start from the preset at its end instead",
            )
        done[cid] = (_merge(kind, base_doc, doc), depth + 1)
    return done[pid][0]


@cache
def _documents(kind: str, stack: tuple[tuple[Path, str], ...]) -> dict[str, tuple[dict, str, Path]]:
    """Every preset document of ``kind`` by id: (document with ``base:`` resolved, origin, file)."""
    out: dict[str, tuple[dict, str, Path]] = {}
    for directory, origin in stack:
        layer = scan_directory(directory, kind)
        _same_but_case(layer, out)
        below = dict(out)
        done: dict[str, tuple[dict, int]] = {}
        for pid, (_, path) in layer.items():
            out[pid] = (_resolve(kind, pid, layer, below, done), origin, path)
    return out


def _same_but_case(layer: dict, below: dict) -> None:
    """Refuse an id that differs from another only in case (``LLAMA3-8B`` beside the
    shipped ``llama3-8b``): the workbook's MATCH ignores case and would pick one
    while the cached values used the other."""
    from sheetgen.errors import quote_path

    known = {pid.casefold(): (pid, quote_path(entry[1])) for pid, entry in below.items()}
    for pid, (_, path) in layer.items():
        other = known.get(pid.casefold())
        if other is not None and other[0] != pid:
            raise SheetgenError(
                f"{quote_path(path)}: id",
                f"{short(pid)} differs from {short(other[0])} ({other[1]}) only in case, "
                "which lookups ignore; spell it the same to replace it, or rename it",
            )
        known.setdefault(pid.casefold(), (pid, path.name))


def origins(kind: str) -> dict[str, str]:
    """Where each preset of ``kind`` ("models" or "hardware") came from: "shipped" or a folder."""
    return {pid: origin for pid, (_, origin, _) in _documents(kind, layers()).items()}


def models() -> dict[str, Model]:
    """All model presets by id (shipped first, then team layers)."""
    return _models(layers())


@cache
def _models(stack: tuple[tuple[Path, str], ...]) -> dict[str, Model]:
    out: dict[str, Model] = {}
    for pid, (doc, _, path) in _documents("models", stack).items():
        if not isinstance(doc.get("architecture"), dict):
            raise SheetgenError(str(path), "a model preset needs an 'architecture' mapping")
        spec = dict(doc["architecture"])
        spec["id"] = pid
        spec["name"] = doc.get("name", pid)
        spec["source"] = doc.get("source", "")
        spec["params_published"] = doc.get("params_published")
        out[pid] = make_model(spec, where=str(path))
    return out


def hardware() -> dict[str, Hardware]:
    """All accelerator presets by id (shipped first, then team layers)."""
    return _hardware(layers())[0]


def hardware_prices() -> dict[str, dict[str, float]]:
    """GPU-hour prices hardware presets carry (team presets: ``price_per_gpu_hour``,
    ``price_per_gpu_hour_reserved``); scenarios on that hardware use them by default."""
    return _hardware(layers())[1]


@cache
def _hardware(stack: tuple[tuple[Path, str], ...]) -> tuple[dict, dict]:
    from sheetgen.scenarios.parse import parse_number

    out: dict[str, Hardware] = {}
    prices: dict[str, dict[str, float]] = {}
    for pid, (doc, _, path) in _documents("hardware", stack).items():
        doc = dict(doc)
        doc["id"] = pid
        doc.pop("as_of", None)
        for key in PRICE_FIELDS:
            if key in doc:
                value = parse_number(doc.pop(key), f"{path}: {key}")
                if value < 0:
                    raise SheetgenError(f"{path}: {key}", f"must be >= 0 USD, got {value}")
                prices.setdefault(pid, {})[key] = value
        out[pid] = make_hardware(doc, where=str(path))
    return out, prices


def model_docs() -> dict[str, dict[str, Any]]:
    """The preset documents (with sources and dates) by id."""
    return {pid: doc for pid, (doc, _, _) in _documents("models", layers()).items()}


def hardware_docs() -> dict[str, dict[str, Any]]:
    return {pid: doc for pid, (doc, _, _) in _documents("hardware", layers()).items()}


def find_scenario(name: str) -> Path | None:
    """A scenario file by name (``x`` or ``x.yaml``) in the layers' ``scenarios/``
    folders, the last layer first; None when none holds it."""
    for directory, _ in reversed(layers()):
        for candidate in (name, f"{name}.yaml"):
            path = directory / "scenarios" / candidate
            try:
                if path.is_file():
                    return path
            except (OSError, ValueError):
                continue  # a name the system refuses (over 255 bytes): not a preset
    return None


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

    from sheetgen.scenarios.parse import parse_number

    names = [f.name for f in fields(Recipe)]
    numeric = [n for n in names if n.endswith("_bytes")]
    required = ["id", "name", *numeric]  # the other fields (texts) have defaults
    unknown = [k for k in row if k not in names]
    missing = [k for k in required if k not in row]
    if unknown or missing:
        what = (
            f"unknown field {short(unknown[0])}"
            if unknown
            else f"missing field {short(missing[0])}"
        )
        raise SheetgenError(where, f"{what}; a recipe has {', '.join(names)}")
    values: dict[str, Any] = {k: row[k] for k in row if k not in numeric}
    values["id"], values["name"] = str(row["id"]), str(row["name"])
    for key in numeric:
        v = parse_number(row[key], f"{where}.{key}")
        if not 0 <= v <= 64:
            raise SheetgenError(f"{where}.{key}", f"must be 0 to 64 bytes, got {v!r}")
        values[key] = int(v) if v == int(v) else v
    return Recipe(**values)


@cache
def tables() -> Tables:
    """Recipes and dtype sizes (presets/tables/)."""
    from sheetgen.scenarios.parse import parse_number

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
            field,
            f"unknown model preset {short(model_id)}; "
            f"{did_you_mean(model_id, table, 'sheetgen presets models')}",
        )
    return table[model_id]


def get_hardware(hw_id: str, field: str = "hardware") -> Hardware:
    table = hardware()
    if hw_id not in table:
        raise SheetgenError(
            field,
            f"unknown hardware preset {short(hw_id)}; "
            f"{did_you_mean(hw_id, table, 'sheetgen presets hardware')}",
        )
    return table[hw_id]


def clear_caches() -> None:
    """Forget every loaded preset (the layers are re-read on the next call)."""
    for cached in (_documents, _models, _hardware, tables):
        cached.cache_clear()


# The loaders keep the ``cache_clear`` their earlier ``@cache`` versions offered.
for _loader in (models, hardware, model_docs, hardware_docs, hardware_prices):
    _loader.cache_clear = clear_caches  # type: ignore[union-attr]  # functions take attributes
