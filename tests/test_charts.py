"""Charts that inform (issue 24.6), read from the chart XML of a generated workbook:
value axes from 0 or a log scale said in the title, calendar-month categories that
follow an edited start date, legends in at most a third of the chart, a title that
names what is drawn, and every plan visible (a chart per plan where scales differ)."""

from __future__ import annotations

import datetime as dt
import re
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import openpyxl
import pytest

from sheetgen.engines import recalculate
from sheetgen.scenarios.files import default_scenario_path, load_scenarios
from sheetgen.workbook import write_workbook
from sheetgen.workbook.charts import LEGEND_MAX_AREA

C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    scenarios = load_scenarios(default_scenario_path())
    path = tmp_path_factory.mktemp("charts") / "plan.xlsx"
    write_workbook(scenarios, path)
    return path, scenarios


def charts(path: Path) -> list[ET.Element]:
    with zipfile.ZipFile(path) as z:
        names = sorted(
            (n for n in z.namelist() if re.fullmatch(r"xl/charts/chart\d+\.xml", n)),
            key=lambda n: int(re.search(r"\d+", n).group()),
        )
        return [ET.fromstring(z.read(n)) for n in names]


def title(chart: ET.Element) -> str:
    return "".join(t.text or "" for t in chart.find(f"{C}chart/{C}title").iter(f"{A}t"))


def value_axes(chart: ET.Element) -> list[ET.Element]:
    return list(chart.iter(f"{C}valAx"))


def test_every_value_axis_starts_at_zero_or_says_log(book) -> None:
    path, _ = book
    for chart in charts(path):
        name = title(chart)
        assert name, "a chart without a title"
        tornado = "change in total cost" in name  # diverging bars: the axis crosses at 0
        for axis in value_axes(chart):
            scaling = axis.find(f"{C}scaling")
            log = scaling.find(f"{C}logBase")
            low = scaling.find(f"{C}min")
            if log is not None:
                assert "log" in name, name
            elif tornado:
                assert axis.find(f"{C}crosses").get("val") == "autoZero", name
            else:
                assert low is not None and float(low.get("val")) == 0, name
                assert "axis from 0" in name, name


def test_legends_take_at_most_a_third_and_sit_below(book) -> None:
    path, _ = book
    for chart in charts(path):
        legend = chart.find(f"{C}chart/{C}legend")
        assert legend.find(f"{C}legendPos").get("val") == "b", title(chart)
        box = legend.find(f"{C}layout/{C}manualLayout")
        w, h = (float(box.find(f"{C}{k}").get("val")) for k in ("w", "h"))
        y = float(box.find(f"{C}y").get("val"))
        assert w * h <= LEGEND_MAX_AREA and y + h <= 1, title(chart)
        plot = chart.find(f"{C}chart/{C}plotArea/{C}layout/{C}manualLayout")
        plot_bottom = float(plot.find(f"{C}y").get("val")) + float(plot.find(f"{C}h").get("val"))
        assert plot_bottom < y, f"{title(chart)}: plot over the legend"


def _series_refs(chart: ET.Element, part: str) -> list[str]:
    return [f.text for s in chart.iter(f"{C}ser") for f in s.findall(f"{C}{part}//{C}f")]


def test_every_plan_has_its_spend_and_sensitivity_chart_and_a_series_elsewhere(book) -> None:
    path, scenarios = book
    found = charts(path)
    titles = [title(c) for c in found]
    n = len(scenarios)
    for i in range(1, n + 1):
        assert sum(t.startswith(f"Plan {i}: ") for t in titles) == 2, titles
    by_title = dict(zip(titles, found, strict=True))
    days = next(c for t, c in by_title.items() if t.startswith("Wall-clock days"))
    assert len(list(days.iter(f"{C}ser"))) == n  # a line per plan on log-log axes
    cost = next(c for t, c in by_title.items() if t.startswith("Budget per plan"))
    for ref in _series_refs(cost, "val"):  # each cost series spans every plan's column
        first, last = re.findall(r"\$([A-Z]+)\$\d+", ref)
        assert ord(last[-1]) - ord(first[-1]) == n - 1, ref


def month_label_refs(path: Path) -> list[str]:
    out = []
    for chart in charts(path):
        if "cumulative spend by calendar month" in title(chart):
            out += _series_refs(chart, "cat")
    return out


def _cells(wb: openpyxl.Workbook, ref: str) -> list:
    sheet, cells = ref.rsplit("!", 1)
    ws = wb[sheet.strip("'")]
    return [c.value for row in ws[cells.replace("$", "")] for c in row]


def test_month_categories_are_calendar_months_that_follow_the_start_date(
    book, tmp_path: Path
) -> None:
    path, scenarios = book
    refs = month_label_refs(path)
    assert len(refs) == len(scenarios)
    stored = openpyxl.load_workbook(path, data_only=True)
    for s, ref in zip(scenarios, refs, strict=True):
        labels = _cells(stored, ref)
        assert labels[0] == f"{s.run.start_date:%Y-%m}", (s.name, labels[:2])
        assert all(re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", v) for v in labels), labels
    # Edit the first plan's start date on Inputs: the labels follow after recalculation.
    wb = openpyxl.load_workbook(path)
    row = next(r for r in range(1, wb["Inputs"].max_row + 1)
               if wb["Inputs"].cell(row=r, column=1).value == "start_date")  # fmt: skip
    wb["Inputs"].cell(row=row, column=4).value = dt.datetime(2031, 11, 15)
    edited = tmp_path / "edited.xlsx"
    wb.save(edited)
    values = recalculate(edited, "pycel")
    name = scenarios[0].name
    got = [values[("Months", f"month_label_{m}", name)] for m in (1, 2, 3)]
    assert got == ["2031-11", "2031-12", "2032-01"]


def test_memory_lines_are_stacked_usable_then_headroom(book) -> None:
    """The capacity line is the usable memory + the headroom, stacked: LibreOffice stacks
    every line of a stacked column chart when it saves one, so an unstacked pair (capacity,
    usable) drew the usable line at capacity + usable after a save in LibreOffice."""
    path, _ = book
    memory = next(c for c in charts(path) if title(c).startswith("Memory per GPU"))
    line = memory.find(f"{C}chart/{C}plotArea/{C}lineChart")
    assert line.find(f"{C}grouping").get("val") == "stacked"
    refs = [s.find(f"{C}val/{C}numRef/{C}f").text for s in line.iter(f"{C}ser")]
    wb = openpyxl.load_workbook(path)
    ws = wb["Parallelism"]
    row_of = {ws.cell(r, 1).value: r for r in range(1, ws.max_row + 1)}
    first, second = (int(re.search(r"\$(\d+)$", f).group(1)) for f in refs)
    assert (first, second) == (row_of["mem_usable_per_gpu"], row_of["mem_headroom_per_gpu"])
