"""Read a PDF back as a reader sees it: per page, the words with their boxes
(``pdftotext -bbox``, its XML escapes undone), the median word height, any word
past the page edge and any word its cell cuts off (``clipped_words``)."""

from __future__ import annotations

import html
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
            (float(a), float(b), float(c), float(d), html.unescape(t))
            for a, b, c, d, t in _WORD.findall(body)
        )
        pages.append(Page(i, float(w), float(h), words))
    return pages


INK = 60  # grey levels (of 255) between a glyph's pixels and the paper beside it


def clipped_words(pdf: Path, page: Page, dpi: int = 144) -> list[str]:
    """The words of ``page`` whose end does not show: ``pdftotext`` reports a word whole
    even where its cell clips it, so the page is rendered (``pdftoppm``, grey) and a
    word's last 3 pt must differ somewhere from the paper just past its end."""
    import tempfile

    if not shutil.which("pdftoppm"):
        import pytest

        pytest.skip("pdftoppm (poppler-utils) not installed")
    with tempfile.TemporaryDirectory() as tmp:
        n = str(page.number)
        command = ["pdftoppm", "-r", str(dpi), "-gray", "-f", n, "-l", n, str(pdf), f"{tmp}/p"]
        subprocess.run(command, check=True, capture_output=True)
        data = next(Path(tmp).iterdir()).read_bytes()
    _magic, w, h, _maxval, _rest = data.split(maxsplit=4)  # binary PGM (P5)
    width, height = int(w), int(h)
    pixels = data[len(data) - width * height :]
    k = dpi / 72
    out = []
    for _x0, y0, x1, y1, text in page.words:
        rows = range(int(y0 * k) + 1, min(height, int(y1 * k)))

        def strip(a: float, b: float, rows: range = rows) -> list[int]:
            cols = range(max(0, int(a * k)), min(width, int(b * k)))
            return [pixels[y * width + x] for y in rows for x in cols]

        inside, beside = strip(x1 - 3, x1), strip(x1 + 0.5, x1 + 3)
        if inside and beside:
            paper = sorted(beside)[len(beside) // 2]
            if max(abs(p - paper) for p in inside) < INK:
                out.append(text)
    return out


def overlapping_words(page: Page) -> list[tuple[str, str]]:
    """Pairs of words drawn over each other (boxes overlapping by over 1 pt across and
    over half the lower one's height: boxes of consecutive lines overlap by about 1 pt),
    as a text that ran out of its row over the next one is."""
    words = sorted(page.words, key=lambda w: w[0])
    out = []
    for i, (_x0, y0, x1, y1, t) in enumerate(words):
        for u0, v0, _u1, v1, s in words[i + 1 :]:
            if u0 > x1 - 1:
                break
            if min(y1, v1) - max(y0, v0) > min(y1 - y0, v1 - v0) / 2:
                out.append((t, s))
    return out
