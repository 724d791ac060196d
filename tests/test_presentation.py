"""Phased presets in LibreOffice, charts, the About sheet, print set-up and the PDF export."""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import gnumeric_values, mismatches

from sheetgen.checking.recalc import export_pdf, values_libreoffice
from sheetgen.cli.commands import main
from sheetgen.reference import compute
from sheetgen.scenarios.files import load_scenarios, scenario_from_dict
from sheetgen.workbook import write_workbook

ROOT = Path(__file__).parent.parent
SCENARIO_FILES = ["default.yaml", "llama3-405b-phases.yaml", "deepseek-v3-phases.yaml"]
CHART_TITLES = (
    "Memory per GPU under each plan's layout vs GPU memory",
    "Budget per plan",
    "Activations of one micro-batch, no sharding",
    "Wall-clock days vs GPUs",
    "cumulative spend by calendar month",
)


def all_preset_scenarios() -> list:
    out = []
    for name in SCENARIO_FILES:
        out.extend(load_scenarios(ROOT / "presets" / "scenarios" / name))
    return out


@pytest.fixture(scope="module")
def preset_book(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    scenarios = all_preset_scenarios()
    path = tmp_path_factory.mktemp("presets") / "presets.xlsx"
    write_workbook(scenarios, path, cache_values=False)
    return path, scenarios


def poppler(tool: str) -> str:
    found = shutil.which(tool)
    if not found:
        pytest.skip(f"{tool} (poppler-utils) not installed")
    return found


def pdf_pages(path: Path) -> int:
    out = subprocess.run([poppler("pdfinfo"), str(path)], capture_output=True, text=True)
    return int(re.search(r"^Pages:\s+(\d+)", out.stdout, re.M).group(1))


def pdf_text(path: Path) -> str:
    out = subprocess.run(
        [poppler("pdftotext"), "-layout", str(path), "-"], capture_output=True, text=True
    )
    return out.stdout


@pytest.mark.libreoffice
def test_phased_presets_equal_reference_in_libreoffice(lo, preset_book) -> None:
    path, scenarios = preset_book
    values = values_libreoffice(path, timeout=240)
    reference = {s.name: compute(s) for s in scenarios}
    bad = mismatches(values, reference)
    assert not bad, "\n".join(bad[:40])
    llama = reference["Llama 3 405B, phased (paper schedule)"]
    got = values[("Budget", "plan_gpu_hours", "Llama 3 405B, phased (paper schedule)")]
    assert got == pytest.approx(llama["phased_gpu_hours"], rel=1e-9)


@pytest.mark.gnumeric
def test_phased_presets_equal_reference_in_gnumeric(preset_book) -> None:
    path, scenarios = preset_book
    values = gnumeric_values(path)
    bad = mismatches(values, {s.name: compute(s) for s in scenarios})
    assert not bad, "Gnumeric:\n" + "\n".join(bad[:40])


@pytest.mark.libreoffice
def test_budget_inputs_follow_edits_in_libreoffice(lo, tmp_path: Path) -> None:
    """Turn phases on, switch to the reserved price, measure a pilot, move the start date."""
    import openpyxl

    scenarios = load_scenarios(ROOT / "presets" / "scenarios" / "default.yaml")
    path = write_workbook(scenarios, tmp_path / "edit.xlsx")
    wb = openpyxl.load_workbook(path)
    ws = wb["Inputs"]
    rows = {ws.cell(row=r, column=1).value: r for r in range(1, ws.max_row + 1)}
    edits = {
        "phase_1_tokens": 400 * 10**9,
        "phase_2_tokens": 600 * 10**9,
        "phase_2_seq_len": 32768,
        "price_basis": "reserved",
        "measured_tokens_per_s_per_gpu": 5000,
        "measured_peak_mem": 85 * 10**9,
        "start_date": 46023,  # 2026-01-01
        "contingency": 0.2,
    }
    for key, value in edits.items():
        ws.cell(row=rows[key], column=4).value = value
    wb.save(path)
    values = values_libreoffice(path)
    first = scenarios[0]
    item = {"name": first.name, "model": first.model.id, "hardware": first.hardware.id}
    run = {k: getattr(first.run, k) for k in first.run.__dataclass_fields__}
    run.update(
        price_basis="reserved",
        measured_tokens_per_s_per_gpu=5000,
        measured_peak_mem=85e9,
        start_date="2026-01-01",
        contingency=0.2,
        phases=[
            {"tokens": 400 * 10**9, "seq_len": 4096, "global_batch_tokens": 4 * 2**20, "mfu": 0.4},
            {"tokens": 600 * 10**9, "seq_len": 32768, "global_batch_tokens": 4 * 2**20, "mfu": 0.4},
        ],
    )
    edited = scenario_from_dict({**item, **run})
    reference = {s.name: compute(s) for s in [edited, *scenarios[1:]]}
    bad = mismatches(values, reference)
    assert not bad, "\n".join(bad[:40])
    assert reference[first.name]["plan_uses_phases"] == 1
    assert reference[first.name]["chk_phase_tokens_match"] == 1


def chart_parts(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as z:
        return {
            n: z.read(n).decode("utf-8") for n in z.namelist() if n.startswith("xl/charts/chart")
        }


def test_charts_are_native_and_fed_by_formula_ranges(preset_book) -> None:
    path, scenarios = preset_book
    charts = chart_parts(path)
    n = len(scenarios)
    assert len(charts) == 4 + 2 * n  # four comparison charts, spend and tornado per plan
    text = "\n".join(charts.values())
    for i in range(n):
        assert f"Plan {i + 1}: change in total cost" in text
        assert f"Plan {i + 1}: cumulative spend by calendar month" in text
    for title in CHART_TITLES:
        assert title in text
    for name, xml in charts.items():
        # Axes shown (Excel hides axes marked deleted), lines never smoothed.
        deletes = re.findall(r'<(?:c:)?delete val="(\w+)"\s*/>', xml)
        assert deletes and set(deletes) == {"0"}, name
        assert not re.search(r'<(?:c:)?smooth val="(1|true)"', xml), name
    refs = set(re.findall(r"<(?:c:)?f>'?([A-Za-z ]+)'?!", text))
    assert "strRef" in text  # scenario names are text categories
    assert refs == {"Parallelism", "Memory", "Inputs", "Budget", "Sweeps", "Months", "Range"}
    # One FlashAttention and one naive line per scenario; one days line per scenario,
    # each titled by a cell (the scenario's name on Inputs, or a Sweeps legend row);
    # the cumulative-spend chart names its lines by the scenario's name on Inputs too,
    # and each tornado its two bars by Range legend rows.
    titles = re.findall(r"<(?:c:)?tx><(?:c:)?strRef><(?:c:)?f>'?(\w+)'?!", text)
    assert titles.count("Sweeps") == 2 * n and titles.count("Inputs") == 2 * n, titles
    assert titles.count("Range") == 2 * n, titles


def test_about_sheet_properties_and_print_setup(preset_book) -> None:
    import openpyxl

    from sheetgen import __version__

    path, scenarios = preset_book
    wb = openpyxl.load_workbook(path)
    assert wb.sheetnames[:3] == ["About", "Summary", "Charts"]
    assert wb.active.title == "Summary"
    about = "\n".join(
        str(c.value) for row in wb["About"].iter_rows() for c in row if c.value is not None
    )
    assert f"sheetgen {__version__}" in about
    assert re.search(r"on \d{4}-\d{2}-\d{2}", about)
    for phrase in ("Inputs", "blue on yellow", "Presets", "Colour legend"):
        assert phrase in about
    assert wb.properties.title == "LLM training plan"
    assert wb.properties.creator.startswith("sheetgen")
    assert all(s.name in wb.properties.subject for s in scenarios)
    for ws in wb.worksheets:
        assert ws.page_setup.orientation == "landscape", ws.title
        # Fitted to one page only where that stays legible (the Summary); the rest
        # paginate at a fixed scale (test_print_legibility measures the PDF).
        assert ws.sheet_properties.pageSetUpPr.fitToPage == (ws.title == "Summary"), ws.title
        assert ws.print_area, ws.title
        assert "&P" in ws.oddFooter.right.text, ws.title
        # the generation date as ISO text, not &D (the printer's locale date)
        assert re.fullmatch(r"generated \d{4}-\d{2}-\d{2}", ws.oddFooter.left.text), ws.title
        assert ws.oddHeader.center.text, ws.title
    assert wb["Summary"].freeze_panes == "D5"
    assert wb["Budget"].freeze_panes == "D5"


@pytest.mark.libreoffice
def test_summary_pdf(lo, tmp_path: Path) -> None:
    scenarios = load_scenarios(ROOT / "presets" / "scenarios" / "default.yaml")
    book = write_workbook(scenarios, tmp_path / "plan.xlsx")
    pdf = export_pdf(book, tmp_path / "plan.pdf")
    assert pdf.is_file() and pdf.read_bytes()[:5] == b"%PDF-"
    assert pdf_pages(pdf) == 1
    text = pdf_text(pdf)
    from sheetgen.workbook.templates import load_templates

    title = next(t.title for t in load_templates() if t.sheet == "Summary")
    assert title in text
    assert "Total cost" in text and "Finish date" in text
    for s in scenarios:
        r = compute(s)
        assert f"${r['cost_total_usd']:,.0f}" in text  # the recalculated total, as formatted
    assert "Presets: lookup tables" not in text  # no other sheet printed
    assert "Page 1 of 1" in text
    assert re.search(r"generated \d{4}-\d{2}-\d{2}", text)  # the footer's date, ISO
    assert not re.search(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b", text), "a locale date printed"


@pytest.mark.libreoffice
def test_summary_and_charts_pdf_and_cli(lo, tmp_path: Path) -> None:
    out = tmp_path / "plan.xlsx"
    result = CliRunner().invoke(main, ["generate", "-o", str(out), "--pdf"])
    assert result.exit_code == 0, result.output
    assert pdf_pages(out.with_suffix(".pdf")) == 1
    both = tmp_path / "both.pdf"
    result = CliRunner().invoke(
        main, ["pdf", str(out), "-o", str(both), "--sheet", "Summary", "--sheet", "Charts"]
    )
    assert result.exit_code == 0, result.output
    n_charts = 4 + 2 * len(load_scenarios(ROOT / "presets" / "scenarios" / "default.yaml"))
    assert pdf_pages(both) == 1 + -(-n_charts // 2)  # Summary, then two charts a page
    text = pdf_text(both)
    for title in CHART_TITLES:
        assert title in text
    again = CliRunner().invoke(main, ["pdf", str(out), "-o", str(both)])
    assert again.exit_code == 0 and "replaced" in again.output  # a rerun
    missing = CliRunner().invoke(main, ["pdf", str(out), "--sheet", "Nope", "--force"])
    assert missing.exit_code == 2
    assert missing.output.strip().count("\n") == 0 and "no sheet named 'Nope'" in missing.output


def _about_block(ws, heading: str, stop: str) -> list[tuple[int, str, str]]:
    """(row, column A, column B) of the About rows under ``heading``, up to ``stop``."""
    rows = [(r, ws.cell(row=r, column=1).value, ws.cell(row=r, column=2).value)
            for r in range(1, ws.max_row + 1)]  # fmt: skip
    start = next(i for i, (_r, a, _b) in enumerate(rows) if a == heading)
    end = next(i for i, (_r, a, _b) in enumerate(rows) if i > start and a == stop)
    return [(r, a, b) for r, a, b in rows[start + 1 : end] if a or b]


def test_about_lists_every_sheet_in_workbook_order(preset_book) -> None:
    """The About page names every sheet the workbook has, in order, each with its own
    line (a sheet added later shows too: the list is the workbook's, not a copy)."""
    import openpyxl

    from sheetgen.workbook.presentation import SHEET_GUIDE

    path, _scenarios = preset_book
    wb = openpyxl.load_workbook(path)
    listed = _about_block(wb["About"], "Sheets", "References")
    assert [a for _r, a, _b in listed] == wb.sheetnames
    assert set(wb.sheetnames) <= set(SHEET_GUIDE), set(wb.sheetnames) - set(SHEET_GUIDE)
    assert all(b == SHEET_GUIDE[a] for _r, a, b in listed)


def test_about_rows_are_sized_for_their_wrapped_text(preset_book) -> None:
    """Nothing on About is cut or overprinted: every text row is as tall as its wrapped
    lines need, short citations wrap between words, and each link, alone in its cell
    (applications do not wrap a hyperlinked cell), fits the column's width."""
    import openpyxl

    from sheetgen.catalog.references import REFERENCES
    from sheetgen.workbook import printing
    from sheetgen.workbook.presentation import LABEL_WIDTH, TEXT_WIDTH

    path, _scenarios = preset_book
    ws = openpyxl.load_workbook(path)["About"]
    per_line = {w: int(w * printing.CHARS_PER_WIDTH) - 2 for w in (LABEL_WIDTH, TEXT_WIDTH)}
    for row in ws.iter_rows(min_row=3):
        for cell in row:
            if not isinstance(cell.value, str):
                continue
            width = LABEL_WIDTH if cell.column == 1 else TEXT_WIDTH
            assert max(len(w) for w in cell.value.split()) <= per_line[width], cell.coordinate
            need = printing.lines_needed(cell.value, width)
            height = ws.row_dimensions[cell.row].height or printing.LINE_HEIGHT_PT
            assert height >= need * printing.LINE_HEIGHT_PT - 0.01, (cell.coordinate, need)
    links = {c.hyperlink.target: c for row in ws.iter_rows() for c in row if c.hyperlink}
    assert set(links) == {link for _s, _t, link in REFERENCES}
    assert all(c.value == link for link, c in links.items())  # the link alone in its cell


@pytest.mark.libreoffice
def test_about_pdf_has_no_cut_link_and_no_overprinted_text(lo, tmp_path: Path) -> None:
    """Printed: every link whole on the page, no word past the edge, no two words
    printed over each other (a wrapped citation once ran into the next row)."""
    from pdf_measure import pdf_pages as measured_pages

    from sheetgen.catalog.references import REFERENCES

    book = write_workbook(load_scenarios(ROOT / "presets" / "scenarios" / "default.yaml"),
                          tmp_path / "plan.xlsx")  # fmt: skip
    pages = measured_pages(export_pdf(book, tmp_path / "about.pdf", ["About"]))
    words = {w[4] for p in pages for w in p.words}
    assert not [link for _s, _t, link in REFERENCES if link not in words]
    for p in pages:
        assert not p.words_past_edge(), (p.number, p.words_past_edge()[:5])
        boxes = sorted(p.words, key=lambda w: (w[1], w[0]))
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                if b[1] >= a[3]:
                    break  # sorted by top: no later word reaches up into a
                dx = min(a[2], b[2]) - max(a[0], b[0])
                dy = min(a[3], b[3]) - max(a[1], b[1])
                smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
                assert dx <= 0 or dy <= 0 or dx * dy < 0.3 * smaller, (p.number, a[4], b[4])
