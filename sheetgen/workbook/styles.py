"""Workbook house style: number formats, fonts and fills (FAST-standard colours).

Inputs are blue on light yellow; looked-up preset values grey italic; formulas
black on white.  Bytes are stored in bytes and shown in decimal GB through the
number format (each trailing comma divides by 1,000).
"""

from __future__ import annotations

NUMBER_FORMATS = {
    "count": "#,##0",
    "num1": "#,##0.0",
    "num2": "#,##0.00",
    "num4": "#,##0.0000",
    "seconds": "[<0.001]0.0E+00;[<1]0.0000;#,##0.00",
    "bytes": '#,##0.00,,," GB"',
    "bytes_kib": '#,##0" B"',
    "flops": "0.00E+00",
    "sci": "0.00E+00",
    "pct": "0.0%",
    "usd": '"$"#,##0',
    "usd2": '"$"#,##0.00',
    "usd3": '"$"#,##0.000',
    "date": "yyyy-mm-dd",
    "flag": "0",
    "text": "@",
    "number": "General",
}

INPUT_FONT_COLOR = "0000CC"
INPUT_FILL = "FFF2CC"
LOOKUP_FONT_COLOR = "595959"
HEADER_FILL = "1F3864"
HEADER_FONT_COLOR = "FFFFFF"
SECTION_FILL = "D9E1F2"
PASS_FILL = "C6EFCE"
FAIL_FILL = "FFC7CE"
WARN_FILL = "FFEB9C"
FAIL_FONT_COLOR = "9C0006"

# Wrapped explanations: characters per line in the words column, points per line.
WORDS_CHARS_PER_LINE = 80
LINE_HEIGHT_PT = 13

COLUMN_WIDTHS = {"key": 28, "quantity": 42, "unit": 9, "scenario": 24, "words": 70, "source": 42}
