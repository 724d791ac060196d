"""Model presets from a Hugging Face ``config.json`` (read locally, no network).

One reader per ``model_type`` maps the config's fields onto sheetgen's model
fields (presets/README.md) so that the preset's ``params_total`` equals the
number of parameters transformers creates for that config (its modelling code
is the reference: which projections carry biases, how many norms a block has,
whether the head is tied).  The readers and the conventions they rely on, per
family, are in sheetgen.catalog.hf_architectures; this module reads the file and writes the
preset.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sheetgen.catalog.hf_architectures import MAX_FIELD, POSITIVE, READERS, architecture
from sheetgen.catalog.hf_families import WRAPPED
from sheetgen.errors import SheetgenError, short

__all__ = ["POSITIVE", "READERS", "architecture", "import_config", "preset_document", "read_config"]


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, refusing a key given twice (at any depth)."""
    doc: dict[str, Any] = {}
    for key, value in pairs:
        if key in doc:
            raise _DuplicateKey(key)
        doc[key] = value
    return doc


def read_config(path: str | Path) -> dict[str, Any]:
    from sheetgen.errors import quote_path
    from sheetgen.scenarios.input_files import read_text

    text = read_text(path, "config.json")
    where = quote_path(path)
    try:
        doc = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey as e:
        # As a duplicate YAML key is reported (sheetgen.scenarios.yaml_load); json.loads would
        # keep the last value silently and a later error would name the wrong field.
        raise SheetgenError(where, f"duplicate key {short(e.key)}; give each key once") from None
    except json.JSONDecodeError as e:
        raise SheetgenError(where, f"not JSON: {e.msg} at line {e.lineno}") from None
    except RecursionError:
        raise SheetgenError(where, "not a config.json: nested too deeply to read") from None
    except ValueError as e:  # Python refuses integers of more than 4,300 digits
        why = "a number of more than 4,300 digits" if "digits" in str(e) else short(str(e))
        raise SheetgenError(where, f"not a config.json: {why}") from None
    if not isinstance(doc, dict):
        raise SheetgenError(where, "expected a JSON object (a Hugging Face config.json)")
    return doc


def preset_document(
    doc: dict[str, Any], preset_id: str, source_path: str, where: str = "config.json"
) -> dict[str, Any]:
    """A model preset document (as presets/models/*.yaml) for a config.json document."""
    from sheetgen.catalog.parse import make_model
    from sheetgen.reference.params import params
    from sheetgen.scenarios.scenario import MODEL_INT_FIELDS

    arch = architecture(doc, where)
    model = make_model({**arch, "id": preset_id}, where=where)
    total = int(params(model)["params_total"])
    names = doc.get("architectures") or [doc["model_type"]]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise SheetgenError(
            f"{where}: architectures", f"must be a list of names, got {short(names)}"
        )
    mtp = doc.get("num_nextn_predict_layers") or 0
    if isinstance(mtp, bool) or not isinstance(mtp, int) or not 0 <= mtp <= MAX_FIELD:
        raise SheetgenError(
            f"{where}: num_nextn_predict_layers", f"expected a whole number >= 0, got {short(mtp)}"
        )
    notes = [
        f"Imported by `sheetgen presets import` from {source_path} "
        f"(model_type {doc['model_type']}, {preset_name(names[0], 'architecture')}); "
        f"sheetgen counts {total:,} parameters, as transformers builds the model."
    ]
    if mtp:
        notes.append(f"The {mtp} multi-token-prediction module(s) are excluded.")
    if doc["model_type"] in WRAPPED:
        notes.append(
            "Only the language model (text_config) is counted: the vision encoder and "
            "projector (vision_config) are not part of the plan."
        )
    if doc["model_type"] == "deepseek_v3":
        notes.append("e_score_correction_bias is a buffer in transformers, not counted.")
    ordered: dict[str, Any] = {k: getattr(model, k) for k in MODEL_INT_FIELDS}
    ordered["norm"], ordered["mlp"] = model.norm, model.mlp
    return {
        "id": preset_id,
        "name": preset_name(doc.get("_name_or_path"), preset_id),
        "source": " ".join(notes),
        "architecture": ordered,
    }


def preset_name(value: Any, fallback: str) -> str:
    """The preset's name from ``_name_or_path``, sanitised by one stated rule: text
    only; characters a name may not hold (limits.NAME_REFUSED_CATEGORIES) and those
    XML cannot hold are dropped, runs of white space become one space, and it is cut
    to MAX_NAME_CHARS (ending in '…'); nothing left (or not text) gives ``fallback``.
    So the preset always loads."""
    import unicodedata

    from sheetgen.scenarios.limits import MAX_NAME_CHARS, NAME_REFUSED_CATEGORIES, XML_ILLEGAL

    if not isinstance(value, str):
        return fallback
    kept = "".join(
        ch
        for ch in value[: 4 * MAX_NAME_CHARS]
        if unicodedata.category(ch) not in NAME_REFUSED_CATEGORIES and ch not in XML_ILLEGAL
    )
    text = " ".join(kept.split())
    if len(text) > MAX_NAME_CHARS:
        text = text[: MAX_NAME_CHARS - 1] + "…"
    return text or fallback


def check_preset_id(value: str, field: str) -> str:
    """An imported preset's id: a preset id (sheetgen.scenarios.limits.check_id) that is also a
    plain file name, since ``-o DIR`` writes ``DIR/<id>.yaml``: no '/' or '\\', not
    '.' or '..', not starting with '.'.  Ids are names, never paths."""
    from sheetgen.scenarios.limits import check_id

    text = check_id(value, field)
    if "/" in text or "\\" in text or text.startswith("."):
        raise SheetgenError(
            field,
            f"must be a name, not a path (no '/', '\\' or leading '.'), got {short(text)}",
        )
    return text


def import_config(path: str | Path, preset_id: str | None = None) -> tuple[str, str]:
    """(preset id, YAML text) of the model preset for the config.json at ``path``."""
    import yaml

    from sheetgen.errors import quote_path

    path = Path(path)
    doc = read_config(path)
    if preset_id is None:
        stem = path.parent.name if path.name == "config.json" else path.stem
        preset_id = check_preset_id(
            stem.lower().replace("_", "-") or "imported", f"{quote_path(path)}: id from the name"
        )
    else:
        preset_id = check_preset_id(preset_id, "--id")
    text = yaml.safe_dump(
        preset_document(doc, preset_id, quote_path(path), where=quote_path(path)),
        sort_keys=False,
        allow_unicode=True,
        width=100,
    )
    return preset_id, text
