"""The presentation layer: the About sheet, native charts, document properties.

Charts are openpyxl charts whose series point at formula ranges of the
workbook (Memory, Budget and Sweeps sheets), so they follow every edit.  They
are built to be valid for Excel and LibreOffice alike: axes explicitly shown
(``delete = False``; openpyxl would otherwise leave them to the reader, and
recent Excel hides them), lines never smoothed.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from sheetgen.workbook import printing
from sheetgen.workbook.cells import put_text
from sheetgen.workbook.layout import FIRST_SCENARIO_COL, HEADER_ROW, Layout

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl import Workbook

    from sheetgen.scenario import Scenario

ABOUT_SHEET = "About"
CHARTS_SHEET = "Charts"
TITLE = "LLM training plan"

# Memory rows stacked in the memory chart, bottom to top: the peak per GPU under
# the scenario's layout (Parallelism sheet; the whole model when nothing is sharded).
MEMORY_PARTS = (
    ("mem_weights_per_gpu", "Weights"),
    ("mem_grads_per_gpu", "Gradients"),
    ("mem_master_per_gpu", "FP32 master weights"),
    ("mem_optimizer_per_gpu", "Optimizer states"),
    ("mem_activations_per_gpu", "Activations"),
    ("mem_logits_per_gpu", "Logits"),
    ("mem_overhead", "Fixed overhead"),
)
COST_PARTS = (
    ("gpu_cost_usd", "GPU cost (chosen price)"),
    ("energy_cost_usd", "Energy"),
    ("cost_contingency_usd", "Contingency"),
)
GB_FORMAT = '#,##0,,," GB"'
CHART_W_CM = 24.0
CHART_H_CM = 7.5
# Charts two to a printed page (landscape A4 at the detail scale), one above the
# other: the first at row 4, one every CHART_ROWS rows (of CHART_ROW_PT points each,
# set explicitly so that every application agrees), a page break every two.
CHART_FIRST_ROW = 4
CHART_ROWS = 17
CHART_ROW_PT = 15
CHART_PAGE_ROWS = 2 * CHART_ROWS + 2  # a blank row above and below each pair
CHARTS_LAST_COL = "N"


def _show_axes(chart: Any) -> None:
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.x_axis.majorTickMark = "out"
    chart.y_axis.majorTickMark = "out"


def _row_ref(wb: Workbook, layout: Layout, key: str, n: int) -> Any:
    """The scenario columns of one keyed row, as a chart reference."""
    from openpyxl.chart import Reference

    sheet, row = layout.cells[key]
    return Reference(
        wb[sheet],
        min_col=FIRST_SCENARIO_COL,
        max_col=FIRST_SCENARIO_COL + n - 1,
        min_row=row,
        max_row=row,
    )


def _column_ref(wb: Workbook, layout: Layout, sheet: str, keys: list[str], i: int) -> Any:
    """One scenario's cells of consecutive keyed rows on ``sheet``, as a chart reference."""
    from openpyxl.chart import Reference

    rows = [layout.rows_on(sheet)[k] for k in keys]
    assert rows == list(range(rows[0], rows[0] + len(rows))), f"{keys} not consecutive"
    col = FIRST_SCENARIO_COL + i
    return Reference(wb[sheet], min_col=col, max_col=col, min_row=rows[0], max_row=rows[-1])


def _set_categories(chart: Any, sheet: str, n: int) -> None:
    """Scenario names (the header row) as text categories of every series."""
    from openpyxl.chart.data_source import AxDataSource, StrRef
    from openpyxl.utils import get_column_letter, quote_sheetname

    first = get_column_letter(FIRST_SCENARIO_COL)
    last = get_column_letter(FIRST_SCENARIO_COL + n - 1)
    ref = f"{quote_sheetname(sheet)}!${first}${HEADER_ROW}:${last}${HEADER_ROW}"
    for series in chart.series:
        series.cat = AxDataSource(strRef=StrRef(f=ref))


def memory_chart(wb: Workbook, layout: Layout, n: int) -> Any:
    from openpyxl.chart import BarChart, LineChart, Series

    bar = BarChart()
    bar.type = "col"
    bar.grouping = "stacked"
    bar.overlap = 100
    bar.title = "Memory per GPU vs capacity"
    bar.y_axis.title = "GB per GPU under the layout"
    bar.y_axis.number_format = GB_FORMAT
    bar.y_axis.majorGridlines = None
    for key, label in MEMORY_PARTS:
        bar.series.append(Series(_row_ref(wb, layout, key, n), title=label))
    _set_categories(bar, "Memory", n)
    line = LineChart()
    cap = Series(_row_ref(wb, layout, "gpu_mem_bytes", n), title="GPU memory (capacity)")
    cap.smooth = False
    cap.marker.symbol = "dash"
    cap.graphicalProperties.line.width = 28575
    line.series.append(cap)
    line.y_axis.axId = bar.y_axis.axId  # same scale as the bars
    _show_axes(bar)
    bar += line
    return bar


def _scatter(title: str, x_title: str, y_title: str) -> Any:
    from openpyxl.chart import ScatterChart

    chart = ScatterChart()
    chart.title = title
    chart.style = 2
    chart.scatterStyle = "lineMarker"
    chart.x_axis.title = x_title
    chart.y_axis.title = y_title
    chart.x_axis.scaling.logBase = 10
    chart.y_axis.scaling.logBase = 10
    chart.x_axis.number_format = "#,##0"
    chart.y_axis.number_format = "#,##0.#"
    _show_axes(chart)
    return chart


def _title_ref(layout: Layout, key: str, i: int) -> Any:
    """A series title read from a scenario's cell (so renaming on Inputs renames it)."""
    from openpyxl.chart.data_source import StrRef
    from openpyxl.chart.series import SeriesLabel
    from openpyxl.utils import get_column_letter, quote_sheetname

    sheet, row = layout.cells[key]
    col = get_column_letter(FIRST_SCENARIO_COL + i)
    return SeriesLabel(strRef=StrRef(f=f"{quote_sheetname(sheet)}!${col}${row}"))


def _line_series(y: Any, x: Any, title: Any, dashed: bool = False) -> Any:
    from openpyxl.chart import Series

    s = Series(y, x)
    s.tx = title
    s.smooth = False
    s.marker.symbol = "circle"
    s.marker.size = 5
    if dashed:
        s.graphicalProperties.line.dashStyle = "dash"
    return s


def activation_chart(wb: Workbook, layout: Layout, scenarios: list[Scenario]) -> Any:
    from sheetgen.run_fields import SWEEP_POINTS

    chart = _scatter(
        "Activations vs sequence length",
        "sequence length, tokens (log)",
        "GB per GPU, no recomputation (log)",
    )
    seq_keys = [f"sweep_seq_{k}" for k in range(1, SWEEP_POINTS + 1)]
    for i in range(len(scenarios)):
        x = _column_ref(wb, layout, "Sweeps", seq_keys, i)
        for kind, dashed in (("flash", False), ("naive", True)):
            keys = [f"sweep_act_{kind}_gb_{k}" for k in range(1, SWEEP_POINTS + 1)]
            y = _column_ref(wb, layout, "Sweeps", keys, i)
            title = _title_ref(layout, f"sweep_series_{kind}", i)
            chart.series.append(_line_series(y, x, title, dashed))
    return chart


def days_chart(wb: Workbook, layout: Layout, scenarios: list[Scenario]) -> Any:
    from sheetgen.run_fields import SWEEP_POINTS

    chart = _scatter(
        "Wall-clock days vs GPUs",
        "GPUs (log)",
        "days, single phase, same MFU (log)",
    )
    # GPU counts capped at the batch limit: the line stops where the batch runs out.
    gpu_keys = [f"sweep_gpus_used_{k}" for k in range(1, SWEEP_POINTS + 1)]
    day_keys = [f"sweep_days_{k}" for k in range(1, SWEEP_POINTS + 1)]
    for i in range(len(scenarios)):
        x = _column_ref(wb, layout, "Sweeps", gpu_keys, i)
        y = _column_ref(wb, layout, "Sweeps", day_keys, i)
        chart.series.append(_line_series(y, x, _title_ref(layout, "scenario_name", i)))
    return chart


def cost_chart(wb: Workbook, layout: Layout, n: int) -> Any:
    from openpyxl.chart import BarChart, Series

    bar = BarChart()
    bar.type = "col"
    bar.grouping = "stacked"
    bar.overlap = 100
    bar.title = "Budget per scenario"
    bar.y_axis.title = "USD"
    bar.y_axis.number_format = '"$"#,##0'
    for key, label in COST_PARTS:
        bar.series.append(Series(_row_ref(wb, layout, key, n), title=label))
    _set_categories(bar, "Budget", n)
    _show_axes(bar)
    return bar


def write_charts_sheet(wb: Workbook, layout: Layout, scenarios: list[Scenario], index: int) -> None:
    from openpyxl.styles import Font
    from openpyxl.worksheet.pagebreak import Break

    from sheetgen.workbook import budget_charts

    ws = wb.create_sheet(CHARTS_SHEET, index)
    ws.cell(row=1, column=1, value="Charts").font = Font(bold=True, size=14)
    ws.cell(
        row=2,
        column=1,
        value="Drawn from the Parallelism, Memory, Budget, Sweeps, Months and Range sheets: edit "
        "any input and they follow. Sweep points are inputs on the Inputs sheet.",
    )
    n = len(scenarios)
    charts = [
        memory_chart(wb, layout, n),
        cost_chart(wb, layout, n),
        activation_chart(wb, layout, scenarios),
        days_chart(wb, layout, scenarios),
        budget_charts.cumulative_chart(wb, layout, scenarios),
        *(budget_charts.tornado_chart(wb, layout, i) for i in range(len(scenarios))),
    ]
    # Two charts per printed page, one above the other.
    for k, chart in enumerate(charts):
        chart.width = CHART_W_CM
        chart.height = CHART_H_CM
        chart.legend.position = "r"
        page_top = CHART_FIRST_ROW + (k // 2) * CHART_PAGE_ROWS
        ws.add_chart(chart, f"A{page_top + 1 + (k % 2) * CHART_ROWS}")
    pages = -(-len(charts) // 2)
    last_row = CHART_FIRST_ROW + pages * CHART_PAGE_ROWS - 1
    for r in range(1, last_row + 1):
        ws.row_dimensions[r].height = CHART_ROW_PT
    for p in range(1, pages):
        ws.row_breaks.append(Break(id=CHART_FIRST_ROW + p * CHART_PAGE_ROWS - 1))
    printing.page_setup(ws, "Charts")  # landscape A4 at the legible detail scale
    ws.print_area = f"A1:{CHARTS_LAST_COL}{last_row}"


LEGEND = (
    ("input", "Input: type here (blue on yellow)."),
    ("lookup", "Looked up from the Presets tables (grey italic): edit Presets, not these."),
    ("formula", "Formula (black): never overwrite; change the inputs instead."),
    ("pass", "Check passes (1)."),
    ("warn", "Warning (0): the plan will not run as entered."),
    ("fail", "Error (0): a number in the workbook cannot be trusted."),
)

SHEET_GUIDE = (
    ("Summary", "Headline figures per scenario: what a proposal quotes."),
    ("Charts", "Memory vs capacity, budget, activation memory vs sequence length, days vs GPUs."),
    ("Inputs", "Everything the workbook computes from: the only place to type."),
    ("Presets", "Models, accelerators, precision recipes, bytes per format; add your own rows."),
    ("Params", "Exact parameter counts by component."),
    ("Memory", "Training memory per GPU: weights, gradients, optimizer, activations."),
    ("FLOPs", "FLOPs per token, training FLOPs, MFU (measured when given), throughput."),
    ("KV cache", "Inference memory for keys and values."),
    ("Schedule", "Single-phase steps, days, GPU-hours and cost."),
    ("Phases", "Up to four phases with their own sequence length, batch and MFU."),
    ("Budget", "GPU cost (on-demand, reserved), energy, contingency, total; start and finish."),
    ("Sweeps", "The tables behind the line charts."),
    ("Checks", "1/0 flags; the master flag shows on Summary."),
)


def write_about_sheet(wb: Workbook, scenarios: list[Scenario], generated: dt.date) -> None:
    from openpyxl.styles import Alignment, Font, PatternFill

    from sheetgen import __version__
    from sheetgen.workbook import styles

    ws = wb.create_sheet(ABOUT_SHEET, 0)
    ws.column_dimensions["A"].width = 24
    ws.column_dimensions["B"].width = 110
    ws.cell(row=1, column=1, value=TITLE).font = Font(bold=True, size=16)
    lines: list[tuple[str, str]] = [
        (
            "What this is",
            "A plan for training a large language model: parameters, memory per GPU, FLOPs, "
            "days, GPU-hours, energy and cost. Every derived number is a live formula; an "
            "independent Python implementation computed the same values when the file was "
            "generated, and the tests require both to agree.",
        ),
        (
            "How to use it",
            "Change the blue-on-yellow cells on the Inputs sheet (one column per scenario), or "
            "add a model or accelerator as a new row on Presets and pick its id. Summary, Charts "
            "and every other sheet follow. Check the master flag on Summary.",
        ),
        ("Scenarios", "; ".join(s.name for s in scenarios)),
        ("Generated by", f"sheetgen {__version__} on {generated.isoformat()}"),
        (
            "Units",
            "Memory in bytes shown as decimal GB (10^9); FLOPs in FLOP; days in days; money in "
            "USD; dates are spreadsheet day numbers shown as YYYY-MM-DD.",
        ),
    ]
    lines.append(
        (
            "Layout",
            "Each sheet's columns: key | quantity | unit | one column per scenario | formula in "
            "words | source. Headline keys are also workbook names (train_days_1, "
            "cost_total_usd_2, ...) other workbooks can link to.",
        )
    )
    row = 3
    for label, text in lines:
        head = ws.cell(row=row, column=1, value=label)
        head.font = Font(bold=True)
        head.alignment = Alignment(vertical="top")
        cell = put_text(ws, row, 2, text)
        cell.alignment = Alignment(wrap_text=True, vertical="top")
        ws.row_dimensions[row].height = 15 * (1 + len(text) // 105)
        row += 1
    row += 1
    ws.cell(row=row, column=1, value="Colour legend").font = Font(bold=True, size=12)
    row += 1
    fills = {
        "input": (styles.INPUT_FILL, styles.INPUT_FONT_COLOR, False),
        "lookup": (None, styles.LOOKUP_FONT_COLOR, True),
        "formula": (None, "000000", False),
        "pass": (styles.PASS_FILL, "000000", False),
        "warn": (styles.WARN_FILL, "000000", False),
        "fail": (styles.FAIL_FILL, "000000", False),
    }
    samples = {"input": 8192, "lookup": 128256, "formula": 69.1, "pass": 1, "warn": 0, "fail": 0}
    for kind, text in LEGEND:
        fill, color, italic = fills[kind]
        sample = ws.cell(row=row, column=1, value=samples[kind])
        sample.font = Font(color=color, italic=italic)
        if fill:
            sample.fill = PatternFill("solid", fgColor=fill)
        sample.alignment = Alignment(horizontal="right")
        ws.cell(row=row, column=2, value=text)
        row += 1
    row += 1
    ws.cell(row=row, column=1, value="Sheets").font = Font(bold=True, size=12)
    row += 1
    for sheet, text in SHEET_GUIDE:
        ws.cell(row=row, column=1, value=sheet).font = Font(bold=True)
        ws.cell(row=row, column=2, value=text)
        row += 1
    row += 1
    ws.cell(row=row, column=1, value="References").font = Font(bold=True, size=12)
    row += 1
    from sheetgen.references import REFERENCES

    for short, title_text, link in REFERENCES:
        ws.cell(row=row, column=1, value=short).alignment = Alignment(
            vertical="top", wrap_text=True
        )
        cell = ws.cell(row=row, column=2, value=f"{title_text}. {link}")
        cell.hyperlink = link
        cell.alignment = Alignment(wrap_text=True, vertical="top")
        row += 1
    printing.page_setup(ws, "About")
    ws.print_area = f"A1:B{row - 1}"


def set_properties(wb: Workbook, scenarios: list[Scenario], generated: dt.datetime) -> None:
    from sheetgen import __version__

    p = wb.properties
    p.title = TITLE
    p.subject = "; ".join(s.name for s in scenarios)[:250]
    p.creator = f"sheetgen {__version__}"
    p.lastModifiedBy = f"sheetgen {__version__}"
    p.description = (
        "LLM training plan: parameters, memory, FLOPs, schedule, phases, budget and checks as "
        "live formulas, verified against an independent reference implementation."
    )
    p.keywords = "LLM, training, GPU, budget, FLOPs, memory, sheetgen"
    p.category = "Planning"
    p.created = generated
    p.modified = generated
