"""Read templates/: one YAML file per sheet, each a list of rows.

A row is either a section heading (``section: Title``) or a quantity::

    - key: params_total            # stable snake_case key (also the row id)
      label: Total parameters      # the quantity column
      unit: ""                     # unit column ("B", "FLOP", "d", ...)
      formula: "{params_layers} + {params_embedding}"   # Excel formula, keys in braces
      explanation: "..."           # formula in words (printed beside the numbers)
      source: "..."                # where the math comes from
      format: count                # number format class (see workbook.styles)
      constants: [3]               # numeric literals beyond 0, 1, 2 the formula may use
      name: true                   # also a workbook-scoped defined name per scenario

Input rows have ``input: <kind>`` (int: whole >= 1, or the range
``scenario.INT_RANGES`` gives; fraction: (0, 1]; share: [0, 1); number; choice)
instead of a formula; choice inputs name their list with ``choices:`` (a preset table column
such as ``[models.id]`` or a literal list).  Summary rows have ``mirror: true``:
they show a key whose home is another sheet.

Placeholders in formulas:
  {key}            the same scenario's cell holding ``key`` (any sheet)
  [table.column]   an absolute range of a Presets lookup-table column
  {sheet:Name}     the scenario's whole value column on sheet Name
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from sheetgen.paths import templates_dir

KEY_RE = re.compile(r"\{([a-z][a-z0-9_]*)\}")
TABLE_RE = re.compile(r"\[([a-z]+)\.([a-z0-9_]+)\]")
SHEET_RE = re.compile(r"\{sheet:([A-Za-z ]+)\}")
# {all_sheets}: every derived sheet's value column (Summary and Checks excluded);
# {checks:error} / {checks:warning}: the refs of the Checks rows of that kind;
# {failed:warning}: (1-flag)+(1-flag)+... over the warnings, i.e. how many fail.
GROUP_RE = re.compile(r"\{(all_sheets|checks:error|checks:warning|failed:warning)\}")


@dataclass(frozen=True)
class Row:
    key: str | None
    label: str
    unit: str = ""
    formula: str | None = None
    explanation: str = ""
    source: str = ""
    fmt: str = "number"
    constants: tuple[float, ...] = ()
    name: bool = False
    input: str | None = None
    choices: str | tuple[str, ...] | None = None
    mirror: bool = False
    section: bool = False
    check: str | None = None  # "error" or "warning" for rows on the Checks sheet

    def keys_used(self) -> list[str]:
        return KEY_RE.findall(self.formula or "")


@dataclass(frozen=True)
class SheetTemplate:
    sheet: str
    title: str
    description: str
    rows: tuple[Row, ...] = field(default_factory=tuple)

    @property
    def keyed_rows(self) -> list[Row]:
        return [r for r in self.rows if r.key]


def _row(doc: dict[str, Any], where: str) -> Row:
    if "section" in doc:
        return Row(key=None, label=str(doc["section"]), section=True)
    known = {
        "key",
        "label",
        "unit",
        "formula",
        "explanation",
        "source",
        "format",
        "constants",
        "name",
        "input",
        "choices",
        "mirror",
        "lookup",
        "check",
    }
    unknown = set(doc) - known
    if unknown:
        raise ValueError(f"{where}: unknown row field(s) {sorted(unknown)}")
    if "lookup" in doc:
        # Shorthand for a field of the chosen model / hardware preset.
        table = doc["lookup"]
        chooser = {"models": "model", "hardware": "hardware"}[table]
        doc = {
            "formula": f"INDEX([{table}.{doc['key']}],MATCH({{{chooser}}},[{table}.id],0))",
            "explanation": f"Field {doc['key']} of the chosen {chooser} preset.",
            "source": f"Presets sheet, {table} table",
            "format": "count",
            **{k: v for k, v in doc.items() if k != "lookup"},
        }
    choices = doc.get("choices")
    if isinstance(choices, list):
        choices = tuple(str(c) for c in choices)
    return Row(
        key=doc["key"],
        label=doc.get("label", doc["key"]),
        unit=str(doc.get("unit", "")),
        formula=doc.get("formula"),
        explanation=doc.get("explanation", ""),
        source=doc.get("source", ""),
        fmt=doc.get("format", "number"),
        constants=tuple(doc.get("constants", ())),
        name=bool(doc.get("name", False)),
        input=doc.get("input"),
        choices=choices,
        mirror=bool(doc.get("mirror", False)),
        check=doc.get("check"),
    )


@cache
def load_templates() -> tuple[SheetTemplate, ...]:
    """All sheet templates in workbook order (file names sort in that order)."""
    import yaml

    # The templates ship with sheetgen (trusted): libyaml's C loader when PyYAML has it.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out = []
    for path in sorted(templates_dir().glob("*.yaml")):
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506
        rows = tuple(_row(r, f"{path.name} row {i + 1}") for i, r in enumerate(doc["rows"]))
        out.append(
            SheetTemplate(
                sheet=doc["sheet"],
                title=doc.get("title", doc["sheet"]),
                description=doc.get("description", ""),
                rows=rows,
            )
        )
    return tuple(out)


@cache
def key_index() -> dict[str, tuple[str, Row]]:
    """key -> (home sheet, row) for every key that is not a Summary mirror."""
    index: dict[str, tuple[str, Row]] = {}
    for t in load_templates():
        for r in t.keyed_rows:
            if r.mirror:
                continue
            if r.key in index:
                raise ValueError(f"key {r.key!r} defined on {index[r.key][0]} and {t.sheet}")
            index[r.key] = (t.sheet, r)
    return index


def check_keys(kind: str) -> list[str]:
    """Keys of the Checks rows marked ``check: <kind>`` (error or warning)."""
    return [
        r.key
        for t in load_templates()
        for r in t.keyed_rows
        if r.check == kind and not r.mirror and r.key
    ]


def units() -> dict[str, str]:
    return {k: row.unit for k, (_s, row) in key_index().items()}


def labels() -> dict[str, str]:
    return {k: row.label for k, (_s, row) in key_index().items()}
