"""Read a PDF back as a reader sees it: per page, the words with their boxes
(``pdftotext -bbox``), the median word height and any word past the page edge."""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path

_PAGE = re.compile(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', re.S)
_WORD = re.compile(
    r'<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)">([^<]*)</word>'
)


@dataclass(frozen=True)
class Page:
    number: int
    width: float
    height: float
    words: tuple[tuple[float, float, float, float, str], ...]

    @property
    def median_word_height(self) -> float:
        return statistics.median(y1 - y0 for _x0, y0, _x1, y1, _t in self.words)

    def words_past_edge(self) -> list[str]:
        return [
            t
            for x0, y0, x1, y1, t in self.words
            if x0 < 0 or y0 < 0 or x1 > self.width or y1 > self.height
        ]

    @property
    def text(self) -> str:
        return " ".join(w[4] for w in self.words)


def pdf_pages(pdf: Path) -> list[Page]:
    if not shutil.which("pdftotext"):
        import pytest

        pytest.skip("pdftotext (poppler-utils) not installed")
    out = subprocess.run(
        ["pdftotext", "-bbox", str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout
    pages = []
    for i, (w, h, body) in enumerate(_PAGE.findall(out), start=1):
        words = tuple(
            (float(a), float(b), float(c), float(d), t) for a, b, c, d, t in _WORD.findall(body)
        )
        pages.append(Page(i, float(w), float(h), words))
    return pages
