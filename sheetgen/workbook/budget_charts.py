"""Charts of the budget proposal: cumulative spend by month and one tornado of
the cost sensitivity per scenario, fed by the Months and Range sheets' formula
rows (so they follow every edit)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sheetgen.workbook.layout import FIRST_SCENARIO_COL, Layout

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl import Workbook

    from sheetgen.scenario import Scenario

DRIVERS = ("mfu", "goodput", "price", "tokens")
USD_FORMAT = '"$"#,##0'


def _rows(wb: Workbook, layout: Layout, sheet: str, keys: list[str], col: int) -> Any:
    from openpyxl.chart import Reference

    rows = [layout.rows_on(sheet)[k] for k in keys]
    assert rows == list(range(rows[0], rows[0] + len(rows))), f"{keys} not consecutive"
    return Reference(wb[sheet], min_col=col, max_col=col, min_row=rows[0], max_row=rows[-1])


def cumulative_chart(wb: Workbook, layout: Layout, scenarios: list[Scenario]) -> Any:
    from openpyxl.chart import LineChart, Series

    from sheetgen.run_fields import MONTH_SLOTS

    keys = [f"month_cost_cum_usd_{n}" for n in range(1, MONTH_SLOTS + 1)]
    chart = LineChart()
    chart.title = "Cumulative spend by month"
    chart.y_axis.title = "USD spent by the end of the month"
    chart.x_axis.title = "month from the start date"
    chart.y_axis.number_format = USD_FORMAT
    from sheetgen.workbook.presentation import _title_ref

    for i, _s in enumerate(scenarios):
        series = Series(_rows(wb, layout, "Months", keys, FIRST_SCENARIO_COL + i))
        series.tx = _title_ref(layout, "scenario_name", i)  # follows a renamed scenario
        series.smooth = False
        chart.series.append(series)
    chart.set_categories(_rows(wb, layout, "Months", keys, 2))
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    return chart


def tornado_chart(wb: Workbook, layout: Layout, i: int) -> Any:
    from openpyxl.chart import BarChart, Series

    chart = BarChart()
    chart.type = "bar"
    chart.grouping = "clustered"
    chart.overlap = 100
    chart.gapWidth = 40
    # The legend names the scenario (Range formula rows, so it follows a rename on
    # Inputs); the title says which plan column it charts.
    chart.title = f"Sensitivity of the total cost, plan {i + 1}"
    chart.x_axis.title = "driver (Range sheet)"
    chart.y_axis.title = "change in total cost, USD"
    chart.y_axis.number_format = USD_FORMAT
    chart.x_axis.tickLblPos = "low"  # driver names left of the bars, not on the zero line
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    col = FIRST_SCENARIO_COL + i
    from sheetgen.workbook.presentation import _title_ref

    for direction in ("down", "up"):
        keys = [f"sens_{d}_{direction}_usd" for d in DRIVERS]
        series = Series(_rows(wb, layout, "Range", keys, col))
        series.tx = _title_ref(layout, f"sens_series_{direction}", i)
        chart.series.append(series)
    chart.set_categories(_rows(wb, layout, "Range", [f"sens_{d}_down_usd" for d in DRIVERS], 2))
    return chart
