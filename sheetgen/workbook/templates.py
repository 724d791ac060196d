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
``run_fields.INT_RANGES`` gives; fraction: (0, 1]; share: [0, 1); number; choice)
instead of a formula; choice inputs name their list with ``choices:`` (a preset table column
such as ``[models.id]`` or a literal list).  Summary rows have ``mirror: true``:
they show a key whose home is another sheet.

A row with ``repeat: N`` (or ``repeat: [first, last]``) stands for one row per
number n in 1..N (first..last); ``<n>`` and ``<n-1>`` in its key, label,
formula and explanation become n and n - 1, and ``<MONTH_SLOTS>`` (any name in
``REPEAT_COUNTS``) the count it names.  N may be such a name too.

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
    # Checks rows: "error" (feeds the master flag), "verdict_test" (fits_per_gpu and
    # batch_splits: a 0 makes the plan not OK), "warning" (something to look at),
    # "master" (checks_ok) and "verdict" (plan_ok).
    check: str | None = None
    # The longest text the formula can produce (a worst case written out), for text
    # rows whose length follows edits: the row is sized for it as well.
    longest: str = ""

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
        "longest",
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
        longest=str(doc.get("longest", "")),
        mirror=bool(doc.get("mirror", False)),
        check=doc.get("check"),
    )


@cache
def _repeat_counts() -> dict[str, int]:
    from sheetgen.scenarios.run_fields import (
        FISCAL_YEAR_SLOTS,
        HARDWARE_SLOTS,
        MONTH_SLOTS,
        QUARTER_SLOTS,
        SERVE_TP_SLOTS,
    )

    return {
        "HARDWARE_SLOTS": HARDWARE_SLOTS,
        "SERVE_TP_SLOTS": SERVE_TP_SLOTS,
        "MONTH_SLOTS": MONTH_SLOTS,
        "QUARTER_SLOTS": QUARTER_SLOTS,
        "FISCAL_YEAR_SLOTS": FISCAL_YEAR_SLOTS,
    }


def _expand(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per n of a ``repeat:`` row (see the module docstring)."""
    counts = _repeat_counts()
    if "repeat" not in doc:
        named = {f"<{k}>": str(v) for k, v in counts.items()}
        return [{k: _subst(v, named) for k, v in doc.items()}]
    spec = doc["repeat"]
    first, last = (1, spec) if not isinstance(spec, list) else spec
    first, last = (counts.get(v, v) if isinstance(v, str) else v for v in (first, last))
    out = []
    for n in range(int(first), int(last) + 1):
        subs = {"<n>": str(n), "<n-1>": str(n - 1), **{f"<{k}>": str(v) for k, v in counts.items()}}
        out.append({k: _subst(v, subs) for k, v in doc.items() if k != "repeat"})
    return out


# A placeholder of a repeated row (<n>, <n-1>, <MONTH_SLOTS>, ...): one pass over the
# text replaces each; formulas' own < (<>, <=) are left as they are.
PLACEHOLDER_RE = re.compile(r"<[A-Za-z0-9_-]+>")


def _subst(value: Any, subs: dict[str, str]) -> Any:
    if isinstance(value, str) and "<" in value:
        return PLACEHOLDER_RE.sub(lambda m: subs.get(m.group(0), m.group(0)), value)
    return value


def read_template_yaml(text: str) -> Any:
    """A template file as Python data, as ``yaml.safe_load`` reads it, faster.

    The templates ship with sheetgen (trusted): libyaml's C loader composes the
    node tree and resolves each scalar's tag; mappings, sequences and strings are
    then turned into Python data here, without PyYAML's general constructor, and
    every other scalar through that constructor's own method for its tag.
    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        root = loader.get_single_node()
        scalars = {
            "tag:yaml.org,2002:int": loader.construct_yaml_int,
            "tag:yaml.org,2002:float": loader.construct_yaml_float,
            "tag:yaml.org,2002:bool": loader.construct_yaml_bool,
            "tag:yaml.org,2002:null": loader.construct_yaml_null,
        }

        def data(node: Any) -> Any:
            if isinstance(node, yaml.MappingNode):
                return {data(k): data(v) for k, v in node.value}
            if isinstance(node, yaml.SequenceNode):
                return [data(v) for v in node.value]
            if node.tag == "tag:yaml.org,2002:str":
                return node.value
            if node.tag not in scalars:
                raise ValueError(f"template scalar {node.value!r} has tag {node.tag}")
            return scalars[node.tag](node)

        return None if root is None else data(root)
    finally:
        loader.dispose()


@cache
def load_templates() -> tuple[SheetTemplate, ...]:
    """All sheet templates in workbook order (file names sort in that order)."""
    out = []
    for path in sorted(templates_dir().glob("*.yaml")):
        doc = read_template_yaml(path.read_text(encoding="utf-8"))
        rows = tuple(
            _row(r, f"{path.name} row {i + 1}")
            for i, item in enumerate(doc["rows"])
            for r in _expand(item)
        )
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
            if r.mirror or r.key is None:  # keyed_rows have keys: None is for the type
                continue
            if r.key in index:
                raise ValueError(f"key {r.key!r} defined on {index[r.key][0]} and {t.sheet}")
            index[r.key] = (t.sheet, r)
    return index


def check_keys(kind: str) -> list[str]:
    """Keys of the Checks rows marked ``check: <kind>`` (error, verdict_test or warning)."""
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
