"""Citations a reader can follow (issue 24.8): every author-year document named in a
template row's source or a preset's source is listed, with its link, among the
references the About sheet shows; the DeepSeek-V3 scenario cites DeepSeek's report,
not the Llama 3 paper; the HFU row cites documents that report HFU."""

from __future__ import annotations

import calendar
import re
from pathlib import Path

import pytest
import yaml

from sheetgen.catalog.references import REFERENCES
from sheetgen.workbook.templates import load_templates

ROOT = Path(__file__).resolve().parents[1]
# "Korthikanti et al. 2022", "DeepSeek-AI 2024", "Li 2023": an author (or body) and a year
CITATION = re.compile(r"\b([A-Z][A-Za-z-]+(?: et al\.)?) (\d{4})\b")
NOT_AUTHORS = {
    "Table",
    "Figure",
    "Section",
    "Appendix",
    "Llama",
    "Qwen",
    "Gemma",
    "Mistral",
    "Survey",  # "Uptime Institute Global Data Center Survey 2023" (listed as Uptime Institute 2023)
    # a month and year ("Jan 2024", "April 2024") dates a release; it names no document
    *(m[:3] for m in calendar.month_name[1:]),
    *calendar.month_name[1:],
}


def cited(text: str) -> set[str]:
    return {
        f"{who} {year}"
        for who, year in CITATION.findall(text)
        if who.split()[0] not in NOT_AUTHORS and 1990 < int(year) < 2100
    }


def listed() -> set[str]:
    return {part.strip() for short, _t, _l in REFERENCES for part in short.split(";")}


def preset_sources() -> list[tuple[str, str]]:
    out = []

    def walk(where: str, node: object) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("source", "sources") or k.endswith("_source"):
                    out.append((where, yaml.safe_dump(v)))
                else:
                    walk(f"{where}.{k}", v)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(f"{where}[{i}]", v)

    for path in sorted((ROOT / "presets").rglob("*.yaml")):
        walk(str(path.relative_to(ROOT)), yaml.safe_load(path.read_text(encoding="utf-8")))
    return out


def template_sources() -> list[tuple[str, str]]:
    return [
        (f"{t.sheet}:{row.key}", row.source)
        for t in load_templates()
        for row in t.keyed_rows
        if getattr(row, "source", None)
    ]


@pytest.mark.parametrize("kind", ["templates", "presets"])
def test_every_cited_document_is_listed_on_about(kind: str) -> None:
    sources = template_sources() if kind == "templates" else preset_sources()
    assert sources
    known = listed()
    missing = sorted({(c, w) for w, text in sources for c in cited(text) if c not in known})
    assert not missing, missing[:20]


def test_deepseek_scenario_cites_deepseeks_report() -> None:
    text = (ROOT / "presets" / "scenarios" / "deepseek-v3-phases.yaml").read_text("utf-8")
    assert "arXiv:2412.19437" in text and "Table 1" in text and "section 3.2" in text
    assert "Dubey" not in text and "Llama 3" not in text, (
        "the Llama 3 paper holds no DeepSeek number"
    )


def test_hfu_cites_documents_that_report_hfu() -> None:
    source = dict(template_sources())["FLOPs:hfu"]
    assert cited(source) <= {"Chowdhery et al. 2022", "Korthikanti et al. 2022"}, source
    assert "HFU" in source and re.search(r"section \d|Table \d", source)


def test_citation_pattern() -> None:
    assert cited("Dubey et al. 2024, Table 4; DeepSeek-AI 2024, section 3.2; Li 2023") == {
        "Dubey et al. 2024", "DeepSeek-AI 2024", "Li 2023"
    }  # fmt: skip
    assert cited("Table 2024 of Llama 3 2024") == set()
    assert cited("torchtitan (April 2024), PyTorch 2.5 (Oct 2024)") == set()


# This project's own files and commands: they may say how to repeat a figure, after the
# public document it comes from, never instead of it.
INTERNAL = re.compile(
    r"(?<![\w/.-])(?:benchmarks|presets|tests|tools|templates)/"
    r"|\bdocs/(?:DESIGN|benchmarks-holdout|run-settings)\.md"
    r"|\bsheetgen [a-z]+(?:-[a-z]+)*"
)
# Public documents named without an author-year: vendors' and projects' own pages.
PUBLIC = re.compile(r"NVIDIA|Hugging Face|PyTorch|Megatron-LM|DeepSpeed|arXiv|github\.com")


@pytest.mark.parametrize("kind", ["templates", "presets"])
def test_sources_name_a_public_document_before_any_internal_file(kind: str) -> None:
    """A source names a public document (paper, model card, datasheet, a vendor's or a
    project's published page) first; a mention of this project's script or command that
    repeats the figure may follow it (issue: printed pages cited benchmarks/*.py)."""
    sources = template_sources() if kind == "templates" else preset_sources()
    assert sources
    bad = []
    for where, text in sources:
        if where.startswith("presets/benchmarks/"):
            continue  # the published runs themselves, each naming its table and row
        m = INTERNAL.search(text)
        if m and not (cited(text[: m.start()]) or PUBLIC.search(text[: m.start()])):
            bad.append((where, text[:120]))
    assert not bad, bad[:10]


def test_internal_source_pattern() -> None:
    assert INTERNAL.search("Fitted by benchmarks/fit_throughput.py on the fit rows")
    assert INTERNAL.search("error: sheetgen benchmark-check (docs/DESIGN.md)")
    assert not INTERNAL.search("llm-foundry scripts/train/benchmarking/sweep.py")
    assert not INTERNAL.search("NVIDIA/NeMo docs/source/performance/performance_summary.md")
