"""A workbook's inputs as scenarios, and scenarios as a scenario file.

The second of ``workbook_io``'s two jobs: the cells ``workbook_read`` reads become
Scenarios (models, hardware, recipes and dtypes from the workbook's own Presets
tables; a shipped preset kept when its row still holds its values), each column
validated as ``compute`` validates a scenario file, and ``sheetgen inputs`` writes
them back as a scenario file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sheetgen.errors import SheetgenError, quote_path, short
from sheetgen.readback.reading import read_inputs


def _table_preset(
    row: dict[str, Any], make: Any, shipped: dict[str, Any], table: str, where: str
) -> Any:
    """A Model or Hardware from a Presets row; the shipped preset itself when the row
    still holds its values (so sources and published counts carry over)."""
    from sheetgen.readback import tables as workbook_tables

    item = workbook_tables.preset(row, make, table, where)
    preset = shipped.get(item.id)
    return preset if preset is not None and _same_fields(preset, item) else item


def _same_fields(a: Any, b: Any) -> bool:
    from dataclasses import fields

    skip = {"source", "params_published", "sources"}
    return all(getattr(a, f.name) == getattr(b, f.name) for f in fields(a) if f.name not in skip)


def scenarios_from_workbook(path: str | Path) -> list:
    """Scenarios equivalent to the workbook's inputs (custom preset rows included).

    Raises SheetgenError on the first scenario whose inputs are invalid.
    """
    results = scenario_results(path)
    for r in results:
        if isinstance(r, SheetgenError):
            raise r
    return results


def scenario_results(
    path: str | Path, books: tuple[Any, Any] | None = None, names: list[str] | None = None
) -> list:
    """Per scenario column: the Scenario, or the SheetgenError its inputs raise
    (``books`` and ``names`` as for ``read_inputs``)."""
    from openpyxl.utils import get_column_letter

    from sheetgen.catalog import presets
    from sheetgen.readback import tables as workbook_tables
    from sheetgen.scenarios.scenario import Tables

    data = read_inputs(path, books, names)
    where = quote_path(path)
    models = workbook_tables.by_id(data.tables.get("models", []), "models", where)
    hardware = workbook_tables.by_id(data.tables.get("hardware", []), "hardware", where)
    tables = presets.tables()
    if data.tables.get("recipes"):
        recipes = workbook_tables.recipes(data.tables["recipes"], where)
        dtypes = workbook_tables.dtypes(data.tables.get("dtypes", []), where)
        tables = Tables(recipes=recipes, dtype_bytes=dtypes or tables.dtype_bytes)
    tables = _with_hardware_table(tables, hardware, where)
    scenarios: list = []
    first_col: dict[str, str] = {}
    for i, (name, item) in enumerate(zip(data.names, data.values, strict=True)):
        col = get_column_letter(4 + i)
        at = f"{where}: Inputs column {col} {short(name)}"
        if name and name in first_col:
            # compute refuses a scenario file with two scenarios of one name: so do these.
            scenarios.append(
                SheetgenError(
                    f"{at}: scenario_name",
                    f"{short(name)} is also the name in column {first_col[name]}; "
                    "give each scenario its own name",
                )
            )
            continue
        first_col.setdefault(name, col)
        e = data.problems[i]
        if e is not None:
            scenarios.append(SheetgenError(f"{where}: {e.field}", e.message))
            continue
        try:
            scenarios.append(
                _scenario(name or f"Scenario {i + 1}", dict(item), models, hardware, tables, at)
            )
        except SheetgenError as e:
            scenarios.append(e)
    return scenarios


def _with_hardware_table(tables: Any, hardware: dict, where: str) -> Any:
    """``tables`` with the workbook's hardware table (and prices) the Hardware sheet reads."""
    from dataclasses import replace

    from sheetgen.catalog import presets
    from sheetgen.catalog.parse import make_hardware
    from sheetgen.readback import tables as workbook_tables

    def make(row: dict) -> Any:
        return _table_preset(row, make_hardware, presets.hardware(), "hardware", where)

    return replace(tables, hardware=workbook_tables.hardware_offers(hardware, make))


def _scenario(name: str, item: dict, models: dict, hardware: dict, tables: Any, at: str):
    from sheetgen.scenarios.files import validate
    from sheetgen.scenarios.limits import check_text
    from sheetgen.scenarios.parse import make_run
    from sheetgen.scenarios.scenario import Scenario

    check_text(name, f"{at}: scenario name")
    # The workbook's MATCH ignores case: so does finding the row here.
    model_id = str(item.pop("model", ""))
    hw_id = str(item.pop("hardware", ""))
    model_id = next((k for k in models if k.casefold() == model_id.casefold()), model_id)
    hw_id = next((k for k in hardware if k.casefold() == hw_id.casefold()), hw_id)
    if model_id not in models:
        raise SheetgenError(
            f"{at}: model", f"{short(model_id)} is not an id in the Presets models table"
        )
    if hw_id not in hardware:
        raise SheetgenError(
            f"{at}: hardware", f"{short(hw_id)} is not an id in the Presets hardware table"
        )
    where = at.split(": Inputs")[0]
    from sheetgen.catalog import presets
    from sheetgen.catalog.parse import make_hardware, make_model

    model = _table_preset(models[model_id], make_model, presets.models(), "models", where)
    hw = _table_preset(hardware[hw_id], make_hardware, presets.hardware(), "hardware", where)
    try:
        run = make_run(item)
    except SheetgenError as e:
        raise SheetgenError(f"{at}: {e.field}", e.message) from None
    s = Scenario(name=name, model=model, hardware=hw, run=run, tables=tables)
    validate(s, at)
    return s


def _tables_expressible(s: Any, shipped: Any) -> None:
    """A scenario file names a recipe and dtypes by id, and ids mean the shipped rows:
    a scenario whose workbook rows differ (an edited or added recipe or dtype) cannot
    be exported without changing what it computes, so it is refused (``generate
    --from`` carries the workbook's tables)."""
    run = s.run
    used = {"recipe": run.recipe}
    mine = s.tables.recipe(run.recipe)
    try:
        theirs = shipped.recipe(run.recipe)
    except SheetgenError:
        theirs = None
    if mine != theirs:
        raise SheetgenError(
            f"scenario {short(s.name)}: recipe",
            f"the workbook's Presets row for {short(used['recipe'])} differs from the shipped "
            "recipe, which a scenario file cannot carry; use generate --from on the workbook",
        )
    for key in ("weight_dtype", "kv_dtype"):
        dtype = getattr(run, key)
        try:
            same = s.tables.dtype(dtype) == shipped.dtype(dtype)
        except SheetgenError:
            same = False
        if not same:
            raise SheetgenError(
                f"scenario {short(s.name)}: {key}",
                f"the workbook's Presets row for {short(dtype)} differs from the shipped "
                "dtype, which a scenario file cannot carry; use generate --from on the workbook",
            )


def scenarios_to_yaml(scenarios: list) -> str:
    """A scenario file that reproduces these scenarios (custom presets written out in full)."""
    import datetime as dt
    from dataclasses import fields

    import yaml

    from sheetgen.catalog import presets
    from sheetgen.scenarios.scenario import HARDWARE_FIELDS, MODEL_INT_FIELDS, Run

    items = []
    shipped_tables = presets.tables()
    for s in scenarios:
        _tables_expressible(s, shipped_tables)
        item: dict[str, Any] = {"name": s.name}
        shipped_m = presets.models().get(s.model.id)
        if shipped_m is not None and _same_fields(shipped_m, s.model):
            item["model"] = s.model.id
        else:
            spec = {"id": s.model.id, "name": s.model.name}
            spec.update({k: getattr(s.model, k) for k in MODEL_INT_FIELDS})
            spec["norm"], spec["mlp"] = s.model.norm, s.model.mlp
            item["model"] = spec
        shipped_h = presets.hardware().get(s.hardware.id)
        if shipped_h is not None and _same_fields(shipped_h, s.hardware):
            item["hardware"] = s.hardware.id
        else:
            spec = {"id": s.hardware.id, "name": s.hardware.name}
            spec.update({k: getattr(s.hardware, k) for k in HARDWARE_FIELDS})
            item["hardware"] = spec
        for f in fields(Run):
            value = getattr(s.run, f.name)
            if f.name == "phases":
                value = [{p.name: getattr(ph, p.name) for p in fields(ph)} for ph in value]
                if not value:
                    continue
            elif isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, dt.date):
                value = value.isoformat()
            item[f.name] = value
        items.append(item)
    header = (
        "# Scenarios exported by `sheetgen inputs`; regenerate with `sheetgen generate FILE`.\n"
    )
    return header + yaml.safe_dump({"scenarios": items}, sort_keys=False, allow_unicode=True)
