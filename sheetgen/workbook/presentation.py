"""The About sheet and the document properties (the charts are in ``charts``)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from sheetgen.workbook import printing
from sheetgen.workbook.cells import put_text

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl import Workbook

    from sheetgen.scenarios.scenario import Scenario

ABOUT_SHEET = "About"
TITLE = "LLM training plan"

LEGEND = (
    ("input", "Input: type here (blue on yellow)."),
    ("lookup", "Looked up from the Presets tables (grey italic): edit Presets, not these."),
    ("formula", "Formula (black): never overwrite; change the inputs instead."),
    ("pass", "Check passes (1)."),
    (
        "warn",
        "Warning (0, amber): something to look at, such as an uneven split or a figure that "
        "may be off. The verdict does not read warnings: a plan can be OK with one. Amber also "
        "marks 'All error checks pass' beside a plan that is not OK.",
    ),
    (
        "fail",
        "Error or verdict test (0, red): the plan is not OK. An error means a number in the "
        "workbook cannot be trusted or the layout cannot exist; the verdict's two tests are "
        "the peak memory per GPU within the usable memory and the batch split into whole "
        "micro-batches.",
    ),
)

# One line per sheet, for the About page's list; the list itself is the workbook's
# sheets in order (write_about_sheet), so a sheet without a line here still shows,
# with its template's title (tests/test_presentation.py requires a line for each).
SHEET_GUIDE = {
    "About": "This page: what the workbook is, how to use it, the colours, the sheets and the "
    "documents cited.",
    "Summary": "Headline figures per scenario, the verdict first: what a proposal quotes.",
    "Charts": "Memory, budget, activations, days vs GPUs; spend and sensitivity per plan.",
    "Inputs": "Everything the workbook computes from: the only place to type.",
    "Presets": "Models, accelerators, precision recipes, bytes per format; add your own rows.",
    "Params": "Exact parameter counts by component.",
    "LoRA": "LoRA / QLoRA fine-tuning: trainable adapters, frozen weights, bytes, FLOPs.",
    "Memory": "Training memory of the whole model on one GPU, no parallelism: weights, "
    "gradients, optimizer states, activations (per GPU under the layout: Parallelism).",
    "FLOPs": "FLOPs per token, training FLOPs, MFU (measured when given), throughput.",
    "Scaling": "Chinchilla's compute-optimal model size and tokens for the plan's compute.",
    "KV cache": "Inference memory for keys and values, and the weights to serve.",
    "Inference": "One serving replica: whether it fits, time to first token, tokens/s, cost per "
    "million output tokens.",
    "Serving": "Replicas, GPUs and monthly cost for a traffic target and its SLOs.",
    "Schedule": "Single-phase steps, days, GPU-hours and GPU cost (before energy and contingency).",
    "Parallelism": "The multi-GPU layout: memory per GPU, fewest GPUs, communication, and the "
    "step time that drives the days (calibrated on published runs).",
    "Phases": "Up to four phases with their own sequence length, batch and MFU.",
    "Budget": "GPU cost (on-demand, reserved), energy, contingency, total; start and finish.",
    "Range": "How sure the figure is: pessimistic and optimistic days and cost, and each "
    "driver's effect on the total.",
    "Months": "Spend by calendar month, fiscal quarter and fiscal year: training and serving.",
    "Sweeps": "The tables behind the line charts.",
    "Hardware": "This plan on every accelerator of the Presets table: fits, days, cost and the "
    "cheapest that fits (at the plan's GPU-hour price unless a Presets row has its own).",
    "Checks": "1/0 flags: errors and the verdict's two tests decide the verdict; warnings flag "
    "something to look at.",
}

LABEL_WIDTH = 24  # column A: headings, legend samples, sheet names, short citations
TEXT_WIDTH = 110  # column B: the text, wrapped; A + B fill the printed page's width


def _lines(text: str, width: float) -> int:
    """Printed lines of a wrapped cell, its explicit line breaks included."""
    return sum(printing.lines_needed(part, width) for part in str(text).split("\n"))


def _fit(ws: Any, row: int, label: object, text: str) -> None:
    """Size ``row`` for its wrapped label (column A) and text (column B)."""
    lines = max(_lines(str(label or ""), LABEL_WIDTH), _lines(text, TEXT_WIDTH))
    ws.row_dimensions[row].height = printing.LINE_HEIGHT_PT * lines


def sheet_guide(sheetnames: list[str]) -> list[tuple[str, str]]:
    """(sheet, one line) for every sheet of the workbook, in its order."""
    from sheetgen.workbook.templates import load_templates

    titles = {t.sheet: t.title for t in load_templates()}
    return [(name, SHEET_GUIDE.get(name) or titles.get(name, name)) for name in sheetnames]


def write_about_sheet(wb: Workbook, scenarios: list[Scenario], generated: dt.date) -> None:
    """The About sheet, first in the workbook; written after every other sheet, whose
    names it lists in order."""
    from openpyxl.styles import Alignment, Font, PatternFill

    from sheetgen import __version__
    from sheetgen.workbook import styles

    ws = wb.create_sheet(ABOUT_SHEET, 0)
    ws.column_dimensions["A"].width = LABEL_WIDTH
    ws.column_dimensions["B"].width = TEXT_WIDTH
    wrap = Alignment(wrap_text=True, vertical="top")
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
            "and every other sheet follow. Read the verdict at the top of the Summary.",
        ),
        ("Scenarios", "; ".join(s.name for s in scenarios)),
        ("Generated by", f"sheetgen {__version__} on {generated.isoformat()}"),
        (
            "Units",
            "Memory in bytes shown as decimal GB (10^9); FLOPs in FLOP; days in days; money in "
            "USD, prices in USD per GPU-hour; dates are spreadsheet day numbers shown as "
            "YYYY-MM-DD.",
        ),
        (
            "Layout",
            "Each sheet's columns: key | quantity | unit | one column per scenario | formula in "
            "words | source. Headline keys are also workbook names (train_days_1, "
            "cost_total_usd_2, ...) other workbooks can link to.",
        ),
    ]
    row = 3
    for label, text in lines:
        head = ws.cell(row=row, column=1, value=label)
        head.font = Font(bold=True)
        head.alignment = wrap
        put_text(ws, row, 2, text).alignment = wrap
        _fit(ws, row, label, text)
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
        sample.alignment = Alignment(horizontal="right", vertical="top")
        ws.cell(row=row, column=2, value=text).alignment = wrap
        _fit(ws, row, "", text)
        row += 1
    row += 1
    ws.cell(row=row, column=1, value="Sheets").font = Font(bold=True, size=12)
    row += 1
    for sheet, text in sheet_guide(wb.sheetnames):
        name = ws.cell(row=row, column=1, value=sheet)
        name.font = Font(bold=True)
        name.alignment = wrap
        put_text(ws, row, 2, text).alignment = wrap
        _fit(ws, row, sheet, text)
        row += 1
    row += 1
    ws.cell(row=row, column=1, value="References").font = Font(bold=True, size=12)
    row += 1
    from sheetgen.catalog.references import REFERENCES

    for short, title_text, link in REFERENCES:
        # The title wraps; the link, on the row below, is a cell of its own: spreadsheet
        # applications neither wrap nor break a hyperlinked cell, so it holds the link
        # alone, and every link fits the column's width (tests/test_presentation.py).
        ws.cell(row=row, column=1, value=short).alignment = wrap
        ws.cell(row=row, column=2, value=f"{title_text}.").alignment = wrap
        _fit(ws, row, short, title_text)
        cell = ws.cell(row=row + 1, column=2, value=link)
        cell.hyperlink = link
        cell.alignment = Alignment(vertical="top")
        row += 2
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
