"""The run-settings registry (sheetgen/scenarios/run_fields.py FIELDS) and everything derived
from it or written beside it must agree: the tables, the Run and Phase dataclasses,
the sane ranges, the CLI flags, the Inputs sheet's rows and docs/run-settings.md.

Each test names the field that disagrees."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import MISSING, fields
from pathlib import Path

import pytest

from sheetgen.scenarios import run_fields
from sheetgen.scenarios.run_fields import FIELD, FIELDS, KIND_TYPES, SCALAR_KINDS

ROOT = Path(__file__).resolve().parents[1]
SCALARS = [f for f in FIELDS if f.kind in SCALAR_KINDS]
NUMERIC = [f for f in SCALARS if f.kind not in ("choice", "date")]
# Inputs-sheet input rows that are not run settings: the scenario's name and presets.
NOT_RUN_INPUTS = {"scenario_name", "model", "hardware"}
# The Inputs sheet's ``input:`` kind for each registry kind.
SHEET_KIND = {
    "int": "int",
    "float": "number",
    "fraction": "fraction",
    "share": "share",
    "choice": "choice",
    "date": "date",
}


def test_keys_are_unique_snake_case_and_kinds_known():
    keys = [f.key for f in FIELDS]
    assert len(keys) == len(set(keys)), [k for k in keys if keys.count(k) > 1]
    for f in FIELDS:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", f.key), f.key
        assert f.kind in KIND_TYPES, f"{f.key}: unknown kind {f.kind!r}"
        assert f.doc.strip(), f"{f.key}: no help text"


@pytest.mark.parametrize("f", FIELDS, ids=lambda f: f.key)
def test_field_declaration_is_complete(f):
    """Numbers have a range with its reason; choices their values; switches fit the kind."""
    if f.kind in ("int", "float", "fraction", "share"):
        assert f.limit is not None, f"{f.key}: numeric field without a limit"
        low, high, why = f.limit
        assert low <= high and why.strip(), f"{f.key}: limit {f.limit}"
    else:
        assert f.limit is None, f"{f.key}: a {f.kind} field takes no limit"
    assert bool(f.choices) == (f.kind == "choice"), f"{f.key}: choices vs kind {f.kind}"
    if f.choices:
        assert f.default in f.choices, f"{f.key}: default {f.default!r} not a choice"
    if f.zero_ok or f.at_least:
        assert f.kind == "float", f"{f.key}: zero_ok / at_least are for kind float"
    if f.nonzero_at_least:
        assert f.zero_ok or f.kind == "share", f"{f.key}: nonzero_at_least needs 0 accepted"
        assert f.limit[0] < f.nonzero_at_least[0] <= f.limit[1], f"{f.key}: nonzero_at_least"
    if f.flag or f.whole_range:
        assert f.kind == "int", f"{f.key}: flag / whole_range are for kind int"
    if f.flag:
        assert f.limit[:2] == (0, 1), f"{f.key}: a flag ranges 0..1"
    assert (f.items_like is not None) == (f.kind == "counts"), f.key
    if f.items_like:
        assert FIELD[f.items_like].kind == "int", f"{f.key}: items_like {f.items_like}"
    assert (f.slot is not None) == (f.kind not in SCALAR_KINDS), f"{f.key}: slot"
    if f.phase:
        assert f.kind in SCALAR_KINDS and f.kind != "choice", f"{f.key}: phase-able kind"


@pytest.mark.parametrize("f", [f for f in SCALARS if f.default is not None], ids=lambda f: f.key)
def test_default_is_accepted_by_its_own_checks(f):
    """make_run with the default given explicitly keeps it (kind, range, switches)."""
    from sheetgen.scenarios.parse import make_run

    value = f.default.isoformat() if isinstance(f.default, dt.date) else f.default
    run = make_run({f.key: value})
    assert getattr(run, f.key) == f.default, f.key


def test_derived_tables_agree_with_the_registry():
    assert run_fields.RUN_FIELDS == {f.key: (f.kind, f.default, f.doc) for f in SCALARS}
    assert list(run_fields.RUN_FIELDS) == [f.key for f in SCALARS]
    assert run_fields.RUN_DEFAULTS == {f.key: f.default for f in SCALARS}
    assert run_fields.CHOICES == {f.key: f.choices for f in FIELDS if f.kind == "choice"}
    ints = [f for f in FIELDS if f.kind == "int"]
    expected = {
        f.key: (f.limit[0], f.limit[1] if f.whole_range else None)
        for f in ints
        if (f.limit[0], f.whole_range) != (1, False)
    }
    assert run_fields.INT_RANGES == expected
    assert run_fields.FLAG_FIELDS == {f.key for f in FIELDS if f.flag}
    assert run_fields.NONNEGATIVE_FIELDS == {f.key for f in FIELDS if f.zero_ok}
    assert run_fields.PHASE_FIELDS == tuple(f.phase for f in FIELDS if f.phase)
    assert run_fields.LIST_FIELDS == tuple(f.key for f in FIELDS if f.kind not in SCALAR_KINDS)


def test_limits_table_is_the_registry():
    from sheetgen.scenarios.limits import RUN_LIMITS

    assert RUN_LIMITS == {f.key: f.limit for f in FIELDS if f.limit is not None}
    for key in RUN_LIMITS:
        assert key in FIELD, f"RUN_LIMITS has {key}, which is no registry field"


def test_run_and_phase_dataclasses_are_the_registry():
    from sheetgen.scenarios.scenario import Phase, Run

    run_fields_ = fields(Run)
    assert [x.name for x in run_fields_] == [f.key for f in FIELDS]
    for x in run_fields_:
        f = FIELD[x.name]
        assert x.type == KIND_TYPES[f.kind], f"Run.{x.name}: {x.type} vs kind {f.kind}"
        assert x.default == f.default, f"Run.{x.name}: default {x.default!r} vs {f.default!r}"
    assert Run().dp is not None  # derived defaults are filled in
    phase = fields(Phase)
    assert [x.name for x in phase] == list(run_fields.PHASE_OF)
    for x in phase:
        run_key = run_fields.PHASE_OF[x.name]
        assert FIELD[run_key].phase == x.name
        assert x.type == KIND_TYPES[FIELD[run_key].kind], f"Phase.{x.name}"
        assert x.default is MISSING, f"Phase.{x.name} defaults in the parser, not here"


def _run_options() -> dict[str, tuple[str, ...]]:
    """key -> option names of the compute command's run-setting options."""
    from sheetgen.cli.commands import main

    cmd = main.commands["compute"]
    return {p.name: tuple(p.opts) for p in cmd.params if p.name in FIELD}


def test_cli_has_one_flag_per_scalar_field_with_its_help():
    from sheetgen.cli.support import RUN_FLAGS

    options = _run_options()
    assert set(options) == {f.key for f in SCALARS}, "run flags vs scalar registry fields"
    for f in SCALARS:
        assert options[f.key] == (f.flag_name, *f.cli_aliases), f.key
    helps = {key: text for _flag, key, text in RUN_FLAGS}
    for f in SCALARS:
        assert helps[f.key].startswith(f.doc), f.key
        for choice in f.choices:
            assert choice in helps[f.key], f"{f.key}: help does not list {choice}"
        if f.default is not None:
            assert helps[f.key].endswith(f"(default {f.default})"), f.key


@pytest.mark.parametrize("f", SCALARS, ids=lambda f: f.key)
def test_cli_flag_sets_the_field(f):
    """Each flag name (primary and aliases) sets its field's parameter."""
    from sheetgen.cli.commands import main

    cmd = main.commands["compute"]
    for name in (f.flag_name, *f.cli_aliases):
        ctx = cmd.make_context("compute", [name, "7"], resilient_parsing=True)
        assert ctx.params[f.key] == "7", f"{name} does not set {f.key}"


def _inputs_rows() -> dict[str, object]:
    from sheetgen.workbook.templates import load_templates

    (inputs,) = [t for t in load_templates() if t.sheet == "Inputs"]
    return {r.key: r for r in inputs.keyed_rows}


def test_every_field_has_its_inputs_row_with_the_same_kind_unit_and_choices():
    from sheetgen.catalog import presets

    rows = _inputs_rows()
    tables = presets.tables()
    table_ids = {
        "[recipes.id]": {r.id for r in tables.recipes},
        "[dtypes.id]": {d for d, _ in tables.dtype_bytes},
    }
    for f in SCALARS:
        assert f.key in rows, f"{f.key}: no row on templates/20_inputs.yaml"
        row = rows[f.key]
        if row.input is None:
            # A formula row: only a setting the sheet derives (default None) may have one.
            assert f.default is None and row.formula, f"{f.key}: Inputs row is no input"
        else:
            assert row.input == SHEET_KIND[f.kind], f"{f.key}: {row.input} vs {f.kind}"
        assert row.unit == f.unit, f"{f.key}: unit {row.unit!r} on Inputs, {f.unit!r} here"
        if f.kind == "choice":
            if isinstance(row.choices, tuple):
                assert row.choices == f.choices, f"{f.key}: {row.choices} vs {f.choices}"
            else:
                ids = table_ids[row.choices]
                assert ids == set(f.choices), f"{f.key}: {row.choices} {ids} vs {f.choices}"


def test_every_list_field_has_its_slot_rows():
    rows = _inputs_rows()
    for f in FIELDS:
        if f.kind in SCALAR_KINDS:
            continue
        for key in f.sheet_keys:
            assert key in rows and rows[key].input, f"{f.key}: no input row {key}"
    for n in range(1, run_fields.PHASE_SLOTS + 1):
        for name, run_key in run_fields.PHASE_OF.items():
            row = rows[f"phase_{n}_{name}"]
            # The tokens slot may be 0 (slot unused): a count, not an int >= 1.
            kind = "count" if name == "tokens" else SHEET_KIND[FIELD[run_key].kind]
            assert row.input == kind, f"phase_{n}_{name}: {row.input}"


def test_every_inputs_input_row_is_a_registry_field():
    """Vice versa: an input row on Inputs without a registry field would never be read."""
    slots = {k for f in FIELDS for k in f.sheet_keys}
    for key, row in _inputs_rows().items():
        if row.input is None:
            continue
        assert key in slots or key in NOT_RUN_INPUTS, f"Inputs input row {key}: no field"


def test_run_settings_doc_is_generated_from_the_registry():
    doc = ROOT / "docs" / "run-settings.md"
    assert doc.read_text(encoding="utf-8") == run_fields.markdown(), (
        "docs/run-settings.md is stale: python -m sheetgen.scenarios.run_fields > docs/run-settings.md"
    )
    for f in FIELDS:
        assert f"| `{f.key}` |" in doc.read_text(encoding="utf-8"), f.key
