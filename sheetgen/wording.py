"""Numbers and counts in sentences a person reads: plurals that agree with their
count, money with its significant digits.

``money`` is the terminal's twin of the workbook's ``usd2`` number format
(``workbook.styles``): whole dollars from $100, cents from $1, and below $1 at
least three significant digits, so $0.0075 per M tokens never reads $0.01.
"""

from __future__ import annotations

import math

SIGNIFICANT = 3  # digits shown of a sub-dollar amount


def plural(n: float, word: str, many: str | None = None) -> str:
    """``1 scenario``, ``2 scenarios``, ``1,517 cells``: the count and its noun."""
    count = f"{int(n):,}" if float(n).is_integer() else f"{n:,.3g}"
    return f"{count} {word if n == 1 else (many or word + 's')}"


def money(usd: float) -> str:
    """$1,234 / $12.35 / $0.0075 / -$8,000: dollars with their significant digits."""
    if not math.isfinite(usd):
        return f"${usd}"
    sign, x = ("-" if usd < 0 else ""), abs(usd)
    if x >= 100:
        text = f"{x:,.0f}"
    elif x >= 1 or x == 0:
        text = f"{x:,.2f}"
    else:
        digits = SIGNIFICANT - 1 - math.floor(math.log10(x))
        text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
        if len(text.split(".")[-1]) < 2:  # cents at least: $0.50, not $0.5
            text = f"{x:.2f}"
    return f"{sign}${text}"
