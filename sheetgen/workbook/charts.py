"""The Charts sheet: native charts fed by the workbook's formula rows.

Every series points at formula ranges (Memory, Budget, Sweeps, Months and Range
sheets) and every series title at a cell holding the scenario's name, so the
charts follow every edit and every rename on Inputs.  They are built to be
valid for Excel and LibreOffice alike: axes explicitly shown (``delete =
False``; openpyxl would otherwise leave them to the reader, and recent Excel
hides them), lines never smoothed.

What a reader can trust on every chart: a linear value axis starts at 0, a log
axis says "log" in the title, a title names what is drawn, the legend sits
below the plot in at most ``LEGEND_MAX_AREA`` of the chart, and a small plan is
never drawn on the scale of a large one where that would hide it: the budget
chart is on a log axis and the spend and sensitivity charts are one per plan.
Months are labelled by their calendar month ("2027-01", the Months sheet's
``month_label_<n>`` text formulas), so they follow an edited start date.

This module imports from ``layout``, ``printing`` and ``run_fields`` only;
nothing in ``sheetgen.workbook`` imports it but ``builder``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sheetgen.workbook import printing
from sheetgen.workbook.layout import FIRST_SCENARIO_COL, HEADER_ROW, Layout

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl import Workbook

    from sheetgen.scenarios.scenario import Scenario

CHARTS_SHEET = "Charts"

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
DRIVERS = ("mfu", "goodput", "price", "tokens")
GB_FORMAT = '#,##0,,," GB"'
USD_FORMAT = '"$"#,##0'
TITLES = {
    "memory": "Memory per GPU under each plan's layout vs GPU memory (GB, axis from 0)",
    "cost": "Budget per plan: GPU cost, energy, contingency (USD, log scale)",
    # The Memory sheet's stored activations (whole model, no sharding), not per GPU.
    "activations": "Activations of one micro-batch, no sharding, vs sequence length (GB, log-log)",
    "days": "Wall-clock days vs GPUs at the plan's MFU; memory not checked (log-log)",
    "cumulative": "Plan {n}: cumulative spend by calendar month (USD, axis from 0)",
    "tornado": "Plan {n}: change in total cost when one driver moves by the step (USD)",
}
CHART_W_CM = 24.0
CHART_H_CM = 8.8
# The legend's box, as fractions of the chart (manual layout, below the plot);
# the plot area takes the rest.
LEGEND_MAX_AREA = 1 / 3
LEGEND_BOX = {"x": 0.02, "y": 0.8, "w": 0.96, "h": 0.19}
PLOT_BOX = {"x": 0.05, "y": 0.1, "w": 0.93, "h": 0.62}
TITLE_PT = 11
MONTH_LABEL_EVERY = 3  # a calendar-month label every quarter: 12 labels over 36 months
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


def _title(text: str) -> Any:
    """A chart title in TITLE_PT bold, on one line at the chart's width."""
    from openpyxl.chart.text import RichText, Text
    from openpyxl.chart.title import Title
    from openpyxl.drawing.text import (
        CharacterProperties,
        Paragraph,
        ParagraphProperties,
        RegularTextRun,
    )

    font = CharacterProperties(sz=TITLE_PT * 100, b=True)
    para = Paragraph(pPr=ParagraphProperties(defRPr=font), r=[RegularTextRun(rPr=font, t=text)])
    return Title(tx=Text(rich=RichText(p=[para])), overlay=False)


def _from_zero(axis: Any) -> None:
    axis.scaling.min = 0


def _legend_below(chart: Any) -> None:
    """The legend in a box below the plot (at most LEGEND_MAX_AREA of the chart)."""
    from openpyxl.chart.layout import Layout as ChartLayout
    from openpyxl.chart.layout import ManualLayout

    chart.legend.position = "b"
    chart.legend.overlay = False
    edges = {"xMode": "edge", "yMode": "edge"}  # fractions of the chart, from its corner
    chart.legend.layout = ChartLayout(manualLayout=ManualLayout(**edges, **LEGEND_BOX))
    chart.layout = ChartLayout(  # openpyxl writes it as the plot area's layout
        manualLayout=ManualLayout(layoutTarget="outer", **edges, **PLOT_BOX)
    )


def _row_ref(wb: Workbook, layout: Layout, key: str, n: int) -> Any:
    """The scenario columns of one keyed row, as a chart reference."""
    from openpyxl.chart import Reference

    sheet, row = layout.cells[key]
    last = FIRST_SCENARIO_COL + n - 1
    return Reference(wb[sheet], min_col=FIRST_SCENARIO_COL, max_col=last, min_row=row, max_row=row)


def _rows_ref(wb: Workbook, layout: Layout, sheet: str, keys: list[str], col: int) -> Any:
    """Column ``col`` of consecutive keyed rows on ``sheet``, as a chart reference."""
    from openpyxl.chart import Reference

    rows = [layout.rows_on(sheet)[k] for k in keys]
    assert rows == list(range(rows[0], rows[0] + len(rows))), f"{keys} not consecutive"
    return Reference(wb[sheet], min_col=col, max_col=col, min_row=rows[0], max_row=rows[-1])


def _text_categories(chart: Any, ref: str) -> None:
    """``ref`` (text cells) as the categories of every series."""
    from openpyxl.chart.data_source import AxDataSource, StrRef

    for series in chart.series:
        series.cat = AxDataSource(strRef=StrRef(f=ref))


def _header_ref(sheet: str, n: int) -> str:
    """The scenario names of ``sheet``'s header row (formulas reading Inputs)."""
    from openpyxl.utils import get_column_letter, quote_sheetname

    first = get_column_letter(FIRST_SCENARIO_COL)
    last = get_column_letter(FIRST_SCENARIO_COL + n - 1)
    return f"{quote_sheetname(sheet)}!${first}${HEADER_ROW}:${last}${HEADER_ROW}"


def _title_ref(layout: Layout, key: str, i: int) -> Any:
    """A series title read from a scenario's cell (so renaming on Inputs renames it)."""
    from openpyxl.chart.data_source import StrRef
    from openpyxl.chart.series import SeriesLabel
    from openpyxl.utils import get_column_letter, quote_sheetname

    sheet, row = layout.cells[key]
    col = get_column_letter(FIRST_SCENARIO_COL + i)
    return SeriesLabel(strRef=StrRef(f=f"{quote_sheetname(sheet)}!${col}${row}"))


def memory_chart(wb: Workbook, layout: Layout, n: int) -> Any:
    from openpyxl.chart import BarChart, LineChart, Series

    bar = BarChart()
    bar.type = "col"
    bar.grouping = "stacked"
    bar.overlap = 100
    bar.title = _title(TITLES["memory"])
    bar.y_axis.title = "GB per GPU"
    bar.y_axis.number_format = GB_FORMAT
    bar.y_axis.majorGridlines = None
    _from_zero(bar.y_axis)
    for key, label in MEMORY_PARTS:
        bar.series.append(Series(_row_ref(wb, layout, key, n), title=label))
    _text_categories(bar, _header_ref("Memory", n))
    # Stacked lines: the usable memory (the verdict's line: a bar above it does not fit,
    # even below the capacity), then the headroom on top of it, which draws at the
    # capacity.  LibreOffice stacks every line of a stacked column chart when it saves
    # one (a second line at the capacity would move to usable + capacity), so the lines
    # are stacked from the start and read the same before and after such a save.
    line = LineChart()
    line.grouping = "stacked"
    usable = Series(_row_ref(wb, layout, "mem_usable_per_gpu", n),
                    title="Usable (capacity less headroom)")  # fmt: skip
    usable.smooth = False
    usable.marker.symbol = "dash"
    usable.graphicalProperties.line.width = 28575
    usable.graphicalProperties.line.dashStyle = "dash"
    line.series.append(usable)
    cap = Series(_row_ref(wb, layout, "mem_headroom_per_gpu", n),
                 title="GPU memory (capacity: usable + headroom)")  # fmt: skip
    cap.smooth = False
    cap.marker.symbol = "dash"
    cap.graphicalProperties.line.width = 28575
    line.series.append(cap)
    line.y_axis.axId = bar.y_axis.axId  # same scale as the bars
    _show_axes(bar)
    bar += line
    return bar


def cost_chart(wb: Workbook, layout: Layout, n: int) -> Any:
    """Side by side on a log axis, so a 405B plan does not flatten an 8B one."""
    from openpyxl.chart import BarChart, Series

    bar = BarChart()
    bar.type = "col"
    bar.grouping = "clustered"
    bar.title = _title(TITLES["cost"])
    bar.y_axis.title = "USD (log scale)"
    bar.y_axis.number_format = USD_FORMAT
    bar.y_axis.scaling.logBase = 10
    for key, label in COST_PARTS:
        bar.series.append(Series(_row_ref(wb, layout, key, n), title=label))
    _text_categories(bar, _header_ref("Budget", n))
    _show_axes(bar)
    return bar


def _scatter(title: str, x_title: str, y_title: str) -> Any:
    from openpyxl.chart import ScatterChart

    chart = ScatterChart()
    chart.title = _title(title)
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


def activation_chart(wb: Workbook, layout: Layout, n: int) -> Any:
    from sheetgen.scenarios.run_fields import SWEEP_POINTS

    chart = _scatter(
        TITLES["activations"],
        "sequence length, tokens (log)",
        "GB, no sharding or recomputation (log)",
    )
    seq_keys = [f"sweep_seq_{k}" for k in range(1, SWEEP_POINTS + 1)]
    for i in range(n):
        x = _rows_ref(wb, layout, "Sweeps", seq_keys, FIRST_SCENARIO_COL + i)
        for kind, dashed in (("flash", False), ("naive", True)):
            keys = [f"sweep_act_{kind}_gb_{k}" for k in range(1, SWEEP_POINTS + 1)]
            y = _rows_ref(wb, layout, "Sweeps", keys, FIRST_SCENARIO_COL + i)
            title = _title_ref(layout, f"sweep_series_{kind}", i)
            chart.series.append(_line_series(y, x, title, dashed))
    return chart


def days_chart(wb: Workbook, layout: Layout, n: int) -> Any:
    from sheetgen.scenarios.run_fields import SWEEP_POINTS

    chart = _scatter(TITLES["days"], "GPUs (log)", "days at the plan's MFU (log)")
    # GPU counts capped at the batch limit: the line stops where the batch runs out.
    gpu_keys = [f"sweep_gpus_used_{k}" for k in range(1, SWEEP_POINTS + 1)]
    day_keys = [f"sweep_days_{k}" for k in range(1, SWEEP_POINTS + 1)]
    for i in range(n):
        x = _rows_ref(wb, layout, "Sweeps", gpu_keys, FIRST_SCENARIO_COL + i)
        y = _rows_ref(wb, layout, "Sweeps", day_keys, FIRST_SCENARIO_COL + i)
        chart.series.append(_line_series(y, x, _title_ref(layout, "scenario_name", i)))
    return chart


def cumulative_chart(wb: Workbook, layout: Layout, i: int) -> Any:
    """One plan's spend by the end of each calendar month (its own months)."""
    from openpyxl.chart import LineChart, Series

    from sheetgen.scenarios.run_fields import MONTH_SLOTS

    col = FIRST_SCENARIO_COL + i
    keys = [f"month_cost_cum_usd_{m}" for m in range(1, MONTH_SLOTS + 1)]
    chart = LineChart()
    chart.title = _title(TITLES["cumulative"].format(n=i + 1))
    chart.y_axis.title = "USD spent by the month's end"
    chart.x_axis.title = "calendar month (Months sheet)"
    chart.y_axis.number_format = USD_FORMAT
    _from_zero(chart.y_axis)
    series = Series(_rows_ref(wb, layout, "Months", keys, col))
    series.tx = _title_ref(layout, "scenario_name", i)  # follows a renamed scenario
    series.smooth = False
    chart.series.append(series)
    labels = [f"month_label_{m}" for m in range(1, MONTH_SLOTS + 1)]
    _text_categories(chart, str(_rows_ref(wb, layout, "Months", labels, col)))
    chart.x_axis.tickLblSkip = MONTH_LABEL_EVERY
    chart.x_axis.tickMarkSkip = MONTH_LABEL_EVERY
    _show_axes(chart)
    return chart


def tornado_chart(wb: Workbook, layout: Layout, i: int) -> Any:
    """One plan's change in total cost per driver, down and up: a diverging bar chart
    whose value axis crosses at 0 (the plan as entered)."""
    from openpyxl.chart import BarChart, Series

    chart = BarChart()
    chart.type = "bar"
    chart.grouping = "clustered"
    chart.overlap = 100
    chart.gapWidth = 40
    # The legend names the scenario (Range formula rows, so it follows a rename on
    # Inputs); the title says which plan column it charts.
    chart.title = _title(TITLES["tornado"].format(n=i + 1))
    chart.x_axis.title = "driver (Range sheet)"
    chart.y_axis.title = "change in total cost, USD"
    chart.y_axis.number_format = USD_FORMAT
    chart.y_axis.crosses = "autoZero"
    chart.x_axis.tickLblPos = "low"  # driver names left of the bars, not on the zero line
    col = FIRST_SCENARIO_COL + i
    for direction in ("down", "up"):
        keys = [f"sens_{d}_{direction}_usd" for d in DRIVERS]
        series = Series(_rows_ref(wb, layout, "Range", keys, col))
        series.tx = _title_ref(layout, f"sens_series_{direction}", i)
        chart.series.append(series)
    chart.set_categories(_rows_ref(wb, layout, "Range", [f"sens_{d}_down_usd" for d in DRIVERS], 2))
    _show_axes(chart)
    return chart


def all_charts(wb: Workbook, layout: Layout, n: int) -> list[Any]:
    """The four plan-comparison charts, then per plan its spend and its sensitivity
    (one printed page per plan)."""
    charts = [
        memory_chart(wb, layout, n),
        cost_chart(wb, layout, n),
        activation_chart(wb, layout, n),
        days_chart(wb, layout, n),
    ]
    for i in range(n):
        charts += [cumulative_chart(wb, layout, i), tornado_chart(wb, layout, i)]
    return charts


def write_charts_sheet(wb: Workbook, layout: Layout, scenarios: list[Scenario], index: int) -> None:
    from openpyxl.styles import Font
    from openpyxl.worksheet.pagebreak import Break

    ws = wb.create_sheet(CHARTS_SHEET, index)
    ws.cell(row=1, column=1, value="Charts").font = Font(bold=True, size=14)
    # Two lines, each narrower than the printed page (one line ran past its edge).
    ws.cell(
        row=2,
        column=1,
        value="Drawn from the Parallelism, Memory, Budget, Sweeps, Months and Range sheets: "
        "edit any input and they follow.",
    )
    ws.cell(row=3, column=1, value="First the plans side by side, then a page per plan.")
    charts = all_charts(wb, layout, len(scenarios))
    for k, chart in enumerate(charts):  # two per printed page, one above the other
        chart.width = CHART_W_CM
        chart.height = CHART_H_CM
        _legend_below(chart)
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
