"""Issue 26.5: `presets import` reads config.json as untrusted input.  Every field a
reader takes (found by recording what the readers read from each real config) is
tried with wrong types and ranges; every preset name and id follows the name rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hostile_helpers import one_line

from sheetgen.catalog.hf_import import POSITIVE, architecture, import_config, preset_document
from sheetgen.errors import SheetgenError

FIXTURES = Path(__file__).parent / "fixtures" / "hf_configs"
CONFIGS = {
    p.stem: json.loads(p.read_text())
    for p in sorted(FIXTURES.glob("*.json"))
    if p.stem not in ("counts", "mamba-130m")
}


class Recording(dict):
    """A config that remembers which keys the reader asked for."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.read: set[str] = set()

    def get(self, key: Any, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self.read.add(key)
        return super().__getitem__(key)


def fields_read(doc: dict) -> list[str]:
    rec = Recording(doc)
    preset_document(rec, "x", "config.json")
    return sorted(k for k in rec.read if k not in ("model_type", "_name_or_path"))


FIELD_CASES = [(name, key) for name, doc in CONFIGS.items() for key in fields_read(doc)]
WRONG = {
    "text": "abc",
    "mapping": {"a": 1},
    "list": [1, 2],
    "fraction": 1.5,
    "negative": -3,
    "huge": 10**40,
}

# Fields whose value is a list of layer numbers (Qwen3-MoE): a list is not wrong there.
LIST_FIELDS = {"mlp_only_layers"}


def test_every_real_config_has_fields_to_try() -> None:
    assert len(CONFIGS) >= 9 and len(FIELD_CASES) > 100


# A list is a valid value of a list field (CI allows no skip, so the case is not made).
WRONG_CASES = [
    (config, key, kind)
    for config, key in FIELD_CASES
    for kind in WRONG
    if not (kind == "list" and key in LIST_FIELDS)
]


@pytest.mark.parametrize(
    ("config", "key", "kind"), WRONG_CASES, ids=[f"{c}.{k}-{w}" for c, k, w in WRONG_CASES]
)
def test_each_field_with_a_wrong_value_is_one_line(config: str, key: str, kind: str) -> None:
    doc = {**CONFIGS[config], key: WRONG[kind]}
    try:
        preset = preset_document(doc, "x", "config.json")
    except SheetgenError as e:
        text = f"error: {e}"
        assert "\n" not in text and len(text) <= 300, text
        return
    # None of the wrong values above is valid for any field a reader takes.
    pytest.fail(f"{config}: {key}={WRONG[kind]!r} accepted: {preset['architecture']}")


@pytest.mark.parametrize(("config", "key"), FIELD_CASES, ids=[f"{c}.{k}" for c, k in FIELD_CASES])
def test_each_field_given_as_null_is_read_or_said_to_be_null(config: str, key: str) -> None:
    """A field given as null is read as transformers reads None (a flag's default,
    num_key_value_heads as num_attention_heads, ...) or refused in one line saying it
    "is null", never "missing" (the key is there)."""
    doc = {**CONFIGS[config], key: None}
    try:
        preset_document(doc, "x", "config.json")
    except SheetgenError as e:
        text = f"error: {e}"
        assert "\n" not in text and "missing" not in text and len(text) <= 300, text
        assert f"{key}: is null; model_type" in text, text


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_zero_heads_and_layers_are_refused(config: str) -> None:
    for key in sorted(POSITIVE & set(fields_read(CONFIGS[config]))):
        with pytest.raises(SheetgenError, match=key):
            preset_document({**CONFIGS[config], key: 0}, "x", "config.json")


TOP_LEVEL = {
    "architectures a number": ({"architectures": 5}, "architectures"),
    "architectures of mappings": ({"architectures": [{"a": 1}]}, "architectures"),
    "model_type a mapping": ({"model_type": {"a": 1}}, "model_type"),
    "model_type a list": ({"model_type": ["llama"]}, "model_type"),
    "model_type a number": ({"model_type": 7}, "model_type"),
}


@pytest.mark.parametrize("case", TOP_LEVEL)
def test_top_level_fields_with_wrong_types(case: str, tmp_path: Path) -> None:
    change, key = TOP_LEVEL[case]
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**CONFIGS["llama3-8b"], **change}))
    one_line(["presets", "import", str(path)], expect=key)


FILES = {
    "100k-deep nesting": "[" * 100_000 + "]" * 100_000,
    "deep nesting in a field": '{"model_type": "llama", "x": '
    + "[" * 100_000
    + "]" * 100_000
    + "}",
    "5,000-digit vocabulary": '{"model_type": "llama", "vocab_size": ' + "9" * 5000 + "}",
    "not an object": "[1, 2]",
    "empty": "",
}


@pytest.mark.parametrize("case", FILES)
def test_hostile_config_files(case: str, tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(FILES[case])
    one_line(["presets", "import", str(path)])


DUPLICATES = {
    "model_type twice": ('{"model_type": "llama", "model_type": "gpt2"}', "model_type"),
    "a field twice, both valid": (
        json.dumps(CONFIGS["llama3-8b"])[:-1] + ', "num_hidden_layers": 2}',
        "num_hidden_layers",
    ),
    "a nested key twice": (
        '{"model_type": "llama", "rope_scaling": {"factor": 8, "factor": 32}}',
        "factor",
    ),
    "a 300-character key twice": ('{"' + "k" * 300 + '": 1, "' + "k" * 300 + '": 2}', "kkk"),
}


@pytest.mark.parametrize("case", DUPLICATES)
def test_duplicate_keys_are_named(case: str, tmp_path: Path) -> None:
    """json.loads keeps the last of two equal keys silently (then a misleading error such
    as "n_embd: missing", or a preset built from a value the user did not mean); a
    duplicate is one line naming the key, worded as a duplicate YAML key is."""
    text, key = DUPLICATES[case]
    path = tmp_path / "config.json"
    path.write_text(text)
    line = one_line(["presets", "import", str(path)], expect=f"duplicate key '{key}")
    assert line.endswith("; give each key once"), line


NAMES = {
    "300 characters": "n" * 300,
    "control characters": "meta\x1b[31m/llama\x00\n",
    "U+FFFF": "a\uffffb",
    "only controls": "\x01\x02",
    "format characters": "meta\u202e/llama\ufeff\u2028",
    "a number": 12,
}


@pytest.mark.parametrize("case", NAMES)
def test_name_or_path_becomes_a_name_that_loads(case: str, tmp_path: Path) -> None:
    """The imported preset is written and every later command accepts it."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**CONFIGS["llama3.2-1b"], "_name_or_path": NAMES[case]}))
    team = tmp_path / "team"
    (team / "models").mkdir(parents=True)
    one_line(["presets", "import", str(path), "--id", "m", "-o", str(team / "models")], code=0)
    doc = yaml.safe_load((team / "models" / "m.yaml").read_text())
    assert len(doc["name"]) <= 100 and doc["name"].isprintable() and "\uffff" not in doc["name"]
    one_line(["compute", "--presets", str(team), "--model", "m", "--hardware", "h100-sxm"], code=0)


BAD_IDS = ["../x", "/tmp/x", "a/b", "a\\b", ".hidden", "..", "x" * 101, "a\nb", "a*", " "]


@pytest.mark.parametrize("preset_id", BAD_IDS)
def test_ids_are_names_never_paths(preset_id: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CONFIGS["llama3.2-1b"]))
    one_line(["presets", "import", str(path), "--id", preset_id, "-o", str(out)], expect="--id")
    assert list(tmp_path.rglob("*.yaml")) == []


def test_default_id_from_a_hostile_folder_name(tmp_path: Path) -> None:
    folder = tmp_path / "m*x"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(CONFIGS["llama3.2-1b"]))
    with pytest.raises(SheetgenError, match="id from the name"):
        import_config(folder / "config.json")


def test_readers_only_read_what_they_check() -> None:
    """architecture() on a Recording reads the same fields preset_document does."""
    for doc in CONFIGS.values():
        rec = Recording(doc)
        architecture(rec)
        assert rec.read - {"model_type"} <= set(fields_read(doc))
