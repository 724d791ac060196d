"""Read a (possibly edited, possibly older) sheetgen workbook back into scenarios.

The inputs are read from the Inputs sheet (one column per scenario) and the
models, hardware, recipes and dtypes from the Presets lookup tables, including
rows the user added.  Files that are not workbooks, are encrypted or corrupt, or
lack sheetgen's sheets raise SheetgenError with one line saying so.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sheetgen.errors import SheetgenError, quote_path, short

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # encrypted .xlsx and legacy .xls
REQUIRED_SHEETS = ("Inputs", "Presets")


def check_xlsx(path: str | Path) -> Path:
    """``path`` if it is a readable .xlsx zip, else a one-line SheetgenError saying why
    (missing, a directory, a device, too large on disk or uncompressed, empty,
    encrypted or legacy .xls, not a zip, corrupt)."""
    from sheetgen.errors import quote_path
    from sheetgen.input_files import (
        MAX_UNCOMPRESSED_BYTES,
        MAX_WORKBOOK_BYTES,
        check_regular,
        path_error,
    )

    path = Path(path)
    where = quote_path(path)
    check_regular(path, "workbook (.xlsx)", MAX_WORKBOOK_BYTES)
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError as e:
        raise path_error(path, e, "workbook (.xlsx)") from None
    if not head:
        raise SheetgenError(where, "is empty, not an .xlsx workbook")
    if head == OLE_MAGIC:
        raise SheetgenError(
            where,
            "is encrypted (password-protected) or a legacy .xls file; save it as an "
            "unprotected .xlsx workbook",
        )
    if not zipfile.is_zipfile(path):
        raise SheetgenError(where, "is not an .xlsx workbook (not a zip archive, or truncated)")
    try:
        with zipfile.ZipFile(path) as z:
            declared = sum(info.file_size for info in z.infolist())
            if declared > MAX_UNCOMPRESSED_BYTES:
                raise SheetgenError(
                    where,
                    f"unpacks to {declared / 2**20:,.0f} MiB; a workbook may unpack to at most "
                    f"{MAX_UNCOMPRESSED_BYTES // 2**20} MiB (a zip bomb, or not a sheetgen "
                    "workbook)",
                )
            bad = z.testzip()
            if bad is not None:
                raise SheetgenError(where, f"is corrupt (damaged member {short(bad)})")
            if "xl/workbook.xml" not in z.namelist():
                raise SheetgenError(where, "is a zip archive but not an .xlsx workbook")
    except SheetgenError:
        raise
    except Exception as e:  # noqa: BLE001 - zipfile raises many kinds on damaged files
        raise SheetgenError(where, f"is corrupt: {type(e).__name__}: {short(str(e))}") from None
    return path


def open_workbook(path: str | Path, data_only: bool = False) -> Any:
    """openpyxl workbook, or a one-line SheetgenError saying why the file cannot be read."""
    import openpyxl

    path = check_xlsx(path)
    where = str(path)
    try:
        import warnings

        with warnings.catch_warnings():
            # e.g. "Workbook contains no default style" on files Gnumeric saved
            warnings.simplefilter("ignore")
            return openpyxl.load_workbook(path, data_only=data_only)
    except Exception as e:  # openpyxl raises many kinds on damaged files
        raise SheetgenError(
            where, f"cannot be read as a workbook: {type(e).__name__}: {e}"[:300]
        ) from None


def require_sheets(wb: Any, where: str) -> None:
    for name in REQUIRED_SHEETS:
        if name not in wb.sheetnames:
            raise SheetgenError(where, f"is not a sheetgen workbook: sheet {name!r} is missing")


@dataclass
class SheetLayout:
    """Where a sheet's keys and scenario columns are."""

    header_row: int
    scenarios: list[str]  # names in column order
    first_col: int  # column index of the first scenario
    rows: dict[str, int] = field(default_factory=dict)  # key -> row


def used_cells(ws: Any) -> dict[tuple[int, int], Any]:
    """{(row, column): value} of the cells the sheet holds, read once.

    Only the cells stored in the file are visited: a note typed at A100000 adds one
    entry, not 100,000 rows (``ws.cell`` creates every cell it is asked for, and
    ``ws.max_row`` scans all cells on each call, so a loop over rows is quadratic).
    """
    cells = getattr(ws, "_cells", None)
    if cells is None:
        cells = {(c.row, c.column): c for row in ws.iter_rows() for c in row if hasattr(c, "row")}
    return {rc: c.value for rc, c in cells.items() if c.value is not None}


def formula_cells(ws: Any) -> set[tuple[int, int]]:
    """(row, column) of the sheet's formula cells (their values come from the cached copy)."""
    cells = getattr(ws, "_cells", {})
    return {rc for rc, c in cells.items() if c.data_type == "f"}


def used_rows(cells: dict[tuple[int, int], Any], column: int = 1) -> list[int]:
    """Rows, in order, whose cell in ``column`` is not empty."""
    return sorted(r for (r, c), v in cells.items() if c == column and v != "")


def sheet_layout(ws: Any, cells: dict[tuple[int, int], Any] | None = None) -> SheetLayout | None:
    cells = used_cells(ws) if cells is None else cells
    header = next((r for r in range(1, 11) if cells.get((r, 1)) == "key"), None)
    if header is None:
        return None
    # Scenario columns run up to the "formula in words" header; a blank header among
    # them (a deleted heading) is still a column, never the end of the scenarios.
    ends = [c for (r, c), v in cells.items() if r == header and v == "formula in words"]
    names = []
    c = 4
    while (c < min(ends)) if ends else cells.get((header, c)) is not None:
        v = cells.get((header, c))
        names.append("" if v is None else str(v))
        c += 1
    layout = SheetLayout(header_row=header, scenarios=names, first_col=4)
    for r in used_rows(cells):
        key = cells[(r, 1)]
        if r > header and isinstance(key, str) and key.strip():
            layout.rows.setdefault(key.strip(), r)
    return layout


# Run settings the workbook derives with a formula (older workbooks had them as inputs):
# read only when typed, else the scenario derives them from the other inputs.
DERIVED_IN_WORKBOOK = frozenset({"dp"})


def scenario_names(wb: Any, cached: Any | None = None) -> list[str]:
    """Scenario names in column order: the Inputs ``scenario_name`` row (typed, or the
    cached value of a formula), else the Inputs header row of an older workbook."""
    ws = wb["Inputs"]
    layout = sheet_layout(ws)
    if layout is None:
        return []
    row = layout.rows.get("scenario_name", layout.header_row)
    names = []
    for i in range(len(layout.scenarios)):
        col = layout.first_col + i
        cell = ws.cell(row=row, column=col)
        value = cell.value
        if cell.data_type == "f" and cached is not None:
            value = cached["Inputs"].cell(row=row, column=col).value
        names.append("" if value is None else str(value))
    return names


def read_tables(ws: Any, cached: Any | None = None) -> dict[str, list[dict[str, Any]]]:
    """The Presets sheet's tables: {table: [row dict, ...]} keyed by header names.

    A table is a header row whose column A is ``id`` followed by data rows until a
    blank row; rows with an empty id (unused custom rows) are skipped.  Formula
    cells take their cached value from ``cached`` (the same sheet read data-only).
    """
    from sheetgen.workbook.layout import TABLE_COLUMNS

    by_first_cols = {cols[:3]: name for name, cols in TABLE_COLUMNS.items()}
    tables: dict[str, list[dict[str, Any]]] = {}
    cells = used_cells(ws)
    formulas = formula_cells(ws)
    stored = used_cells(cached) if cached is not None else {}
    for start in [r for r in used_rows(cells) if cells[(r, 1)] == "id"]:
        headers = []
        c = 1
        while cells.get((start, c)) not in (None, "source"):
            headers.append(str(cells[(start, c)]))
            c += 1
        name = next(
            (n for cols, n in by_first_cols.items() if tuple(headers[: len(cols)]) == cols),
            None,
        )
        rows = []
        r = start + 1
        # Data rows (unused custom rows included) run until the blank separator row.
        while any(cells.get((r, c)) not in (None, "") for c in range(1, len(headers) + 2)):
            values = {}
            for c, h in enumerate(headers, start=1):
                v = cells.get((r, c))
                if (r, c) in formulas and cached is not None:
                    v = stored.get((r, c))
                values[h] = v
            values["_row"] = r
            if values.get("id") not in (None, ""):
                rows.append(values)
            r += 1
        if name is not None:
            if name in tables:
                raise SheetgenError(
                    f"{ws.title}!A{start}", f"a second {name} table; keep one header row"
                )
            tables[name] = rows
    return tables


def _clean(v: Any) -> Any:
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


@dataclass
class WorkbookInputs:
    """What a workbook says: scenario names and, per scenario, its input values."""

    names: list[str]
    values: list[dict[str, Any]]  # per scenario: input key -> value
    tables: dict[str, list[dict[str, Any]]]
    # per scenario: the first input cell that is empty or not a number, else None
    problems: list[SheetgenError | None] = field(default_factory=list)


NUMERIC_KINDS = ("int", "float", "fraction", "share")


def input_cell(ws: Any, cached: Any, row: int, col: int, key: str, numeric: bool) -> Any:
    """The value of one input cell (a formula's cached result), or a SheetgenError naming
    the sheet, cell and key when it is empty or, for a number, holds text or an error:
    ``generate --from`` must not quietly substitute a default."""
    cell = ws.cell(row=row, column=col)
    v = cell.value
    if cell.data_type == "f":
        v = cached.cell(row=row, column=col).value
    at = f"{ws.title}!{cell.coordinate} ({key})"
    if v is None or (isinstance(v, str) and not v.strip()):
        raise SheetgenError(
            at, "is empty; type a value (no default is assumed for an emptied cell)"
        )
    if numeric and (isinstance(v, bool) or not isinstance(v, (int, float))):
        raise SheetgenError(at, f"must be a number, got {short(v)}")
    return _clean(v)


def read_inputs(path: str | Path, books: tuple[Any, Any] | None = None) -> WorkbookInputs:
    """The input cells of every scenario column and the Presets tables, as typed.

    ``books``: ``path`` already opened, (formulas, data only), to read it once."""
    where = str(path)
    wb, cached = books or (open_workbook(path), None)
    require_sheets(wb, where)
    if cached is None:
        cached = open_workbook(path, data_only=True)
    ws = wb["Inputs"]
    layout = sheet_layout(ws)
    if layout is None or not layout.scenarios:
        raise SheetgenError(where, "sheet 'Inputs' has no header row with scenario columns")
    from sheetgen.run_fields import RUN_FIELDS

    wanted = ["model", "hardware", *RUN_FIELDS]
    missing = [k for k in ("model", "hardware") if k not in layout.rows]
    if missing:
        raise SheetgenError(where, f"sheet 'Inputs' has no row {missing[0]!r}")
    values = []
    problems: list[SheetgenError | None] = []
    for i, _name in enumerate(layout.scenarios):
        col = layout.first_col + i
        item: dict[str, Any] = {}
        problem = None
        try:
            for key in wanted:
                if key not in layout.rows:
                    continue  # an older workbook without this input: the default applies
                row = layout.rows[key]
                if key in DERIVED_IN_WORKBOOK and ws.cell(row=row, column=col).data_type == "f":
                    continue  # the workbook's own formula: the scenario derives it too
                numeric = key in RUN_FIELDS and RUN_FIELDS[key][0] in NUMERIC_KINDS
                item[key] = input_cell(ws, cached["Inputs"], row, col, key, numeric)
            item.update(_list_inputs(ws, layout, col, cached["Inputs"]))
        except SheetgenError as e:
            problem = e
        values.append(item)
        problems.append(problem)
    tables = read_tables(wb["Presets"], cached["Presets"])
    return WorkbookInputs(
        names=scenario_names(wb, cached), values=values, tables=tables, problems=problems
    )


def _list_inputs(ws: Any, layout: SheetLayout, col: int, cached: Any) -> dict[str, Any]:
    """Phases (slots with tokens > 0) and sweep points, as a scenario file lists them."""
    from sheetgen.run_fields import PHASE_FIELDS, PHASE_SLOTS, SWEEP_POINTS

    def cell(key: str) -> Any:
        if key not in layout.rows:
            return None  # an older workbook without this input: the default applies
        return input_cell(ws, cached, layout.rows[key], col, key, numeric=True)

    out: dict[str, Any] = {}
    phases = []
    for i in range(1, PHASE_SLOTS + 1):
        tokens = cell(f"phase_{i}_tokens")
        if tokens in (None, 0):
            continue  # an unused slot
        phase = {f: cell(f"phase_{i}_{f}") for f in PHASE_FIELDS}
        phases.append({k: v for k, v in phase.items() if v is not None})
    if phases:
        out["phases"] = phases
    for key, row in (("sweep_seq_lens", "sweep_seq"), ("sweep_gpus", "sweep_gpus")):
        points = [cell(f"{row}_{k}") for k in range(1, SWEEP_POINTS + 1)]
        if all(p is not None for p in points):
            out[key] = points
    return out


def _table_preset(
    row: dict[str, Any], make: Any, shipped: dict[str, Any], table: str, where: str
) -> Any:
    """A Model or Hardware from a Presets row; the shipped preset itself when the row
    still holds its values (so sources and published counts carry over)."""
    from sheetgen import workbook_tables

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


def scenario_results(path: str | Path, books: tuple[Any, Any] | None = None) -> list:
    """Per scenario column: the Scenario, or the SheetgenError its inputs raise
    (``books`` as for ``read_inputs``)."""
    from openpyxl.utils import get_column_letter

    from sheetgen import presets, workbook_tables
    from sheetgen.scenario import Tables

    data = read_inputs(path, books)
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
        if data.problems[i] is not None:
            e = data.problems[i]
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

    from sheetgen import presets, workbook_tables
    from sheetgen.scenario_parse import make_hardware

    def make(row: dict) -> Any:
        return _table_preset(row, make_hardware, presets.hardware(), "hardware", where)

    return replace(tables, hardware=workbook_tables.hardware_offers(hardware, make))


def _scenario(name: str, item: dict, models: dict, hardware: dict, tables: Any, at: str):
    from sheetgen.limits import check_text
    from sheetgen.scenario import Scenario
    from sheetgen.scenario_file import validate
    from sheetgen.scenario_parse import make_run

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
    from sheetgen import presets
    from sheetgen.scenario_parse import make_hardware, make_model

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

    from sheetgen import presets
    from sheetgen.scenario import HARDWARE_FIELDS, MODEL_INT_FIELDS, Run

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
