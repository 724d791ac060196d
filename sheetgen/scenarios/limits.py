"""Sane ranges for every number and text a user can give, checked before anything
is computed or written.

The ranges are generous (far beyond any training run planned today) but finite:
they keep every formula and every reference value inside a double and a
spreadsheet's date range, so a typo such as ``--gpus 1e295`` ends in one line
instead of an overflow, a 0-day answer or a workbook full of #NUM!.  Each bound
says why it is there.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from sheetgen.errors import SheetgenError, short
from sheetgen.scenarios.dates import SPREADSHEET_DATE_MAX, date_from_serial, excel_serial
from sheetgen.scenarios.run_fields import FIELDS

# Excel's grid (Microsoft, "Excel specifications and limits"): 16,384 columns per
# sheet.  Every sheet holds key, quantity, unit, one column per scenario, formula
# in words and source: five columns besides the scenarios.
SHEET_COLUMNS = 16_384
MAX_SCENARIOS = SHEET_COLUMNS - 5

# Names and ids appear in column headers, drop-down lists and chart legends;
# 100 characters is longer than any model or scenario name in use.  Sources and
# descriptions are free text up to 2,000 characters (the longest shipped source
# is about 700).  Excel's own cell limit is 32,767.
MAX_NAME_CHARS = 100
MAX_TEXT_CHARS = 2_000
# Excel's MATCH and LibreOffice (for .xlsx files) treat these as wildcards in a
# looked-up id: "llama*" would silently pick the first id starting with "llama".
ID_WILDCARDS = "*?~"
# XML 1.0 (the format inside .xlsx) allows every character from U+0020 except the
# surrogates and these two; a name holding one is written raw and the file no longer
# reads back (W3C XML 1.0, section 2.2 "Characters").  Control characters and
# surrogates are refused as such.
XML_ILLEGAL = "\ufffe\uffff"
# An escaped character in a cell's text (_x0041_ is "A"), ECMA-376 ST_Xstring.
XLSX_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")
# Unicode general categories a name may not hold (Unicode Standard, section 4.5): control
# characters (Cc) and surrogates (Cs); format characters (Cf), which are invisible or
# reorder what follows (U+202E right-to-left override makes "exe.txt" show as "txt.exe",
# U+FEFF byte-order mark, U+200B zero-width space); and the line and paragraph
# separators U+2028 and U+2029 (Zl, Zp), which break a one-line name.  Free text
# (sources, descriptions) may hold tabs and line breaks, but not the rest of Cc or Cs.
NAME_REFUSED_CATEGORIES = ("Cc", "Cs", "Cf", "Zl", "Zp")
TEXT_REFUSED_CATEGORIES = ("Cc", "Cs")
REFUSED_KINDS = {
    "Cc": "control character",
    "Cs": "surrogate",
    "Cf": "invisible format character",
    "Zl": "line separator",
    "Zp": "paragraph separator",
}

# Run settings: (lowest, highest, why), declared with each field in the registry
# (sheetgen/scenarios/run_fields.py FIELDS).  Whole-number settings keep INT_RANGES' lower bound;
# fractions and shares keep their (0, 1] / [0, 1) rule as well.
RUN_LIMITS: dict[str, tuple[float, float, str]] = {
    f.key: f.limit for f in FIELDS if f.limit is not None
}
# Settings where 0 means "not measured", "free" or "none", and any other value must be
# at least a lowest value (the registry's ``nonzero_at_least``): a value such as 1e-300
# would divide by (nearly) zero and give astronomical days, or be written to a cell as
# a number the workbook cannot hold at its precision.  (lowest value other than 0, why.)
ZERO_OR_AT_LEAST: dict[str, tuple[float, str]] = {
    f.key: f.nonzero_at_least for f in FIELDS if f.nonzero_at_least is not None
}
# Hardware fields' lowest values other than 0 (fields that may be 0: HARDWARE_ZERO_OK
# in scenario.py): below these no accelerator or link has been built.
HARDWARE_LOWEST: dict[str, tuple[float, str]] = {
    "peak_bf16_tflops": (1e-3, "TFLOP/s: 1 GFLOP/s"),
    "peak_fp8_tflops": (1e-3, "TFLOP/s: 1 GFLOP/s"),
    "mem_gb": (1e-3, "GB: 1 MB"),
    "hbm_tbps": (1e-4, "TB/s: 0.1 GB/s"),
    "tdp_w": (1, "watt"),
    "intra_node_gb_per_s": (1e-2, "GB/s: 10 MB/s, below 1 Gbit Ethernet's 0.125"),
    "inter_node_gb_per_s": (1e-2, "GB/s: 10 MB/s, below 1 Gbit Ethernet's 0.125"),
    "host_gb_per_s": (1e-2, "GB/s: 10 MB/s, below PCIe 1.0 x1's 0.25"),
    "gemm_eff_bf16": (1e-3, "of the peak: 0.1%"),
    "gemm_eff_fp8": (1e-3, "of the peak: 0.1%"),
    "gemm_dim_half": (1, "a GEMM width of one element"),
    "attn_eff": (1e-3, "of the peak: 0.1%"),
    "attn_seq_half": (1, "token"),
    "peak_fp4_tflops": (1e-3, "TFLOP/s: 1 GFLOP/s"),
    "fast_domain_gpus": (1, "accelerator"),
}
# Model fields: whole numbers up to these (the lower bounds: MODEL_POSITIVE_FIELDS in
# scenario.py, checked in scenario_parse.py).
MODEL_LIMITS: dict[str, tuple[int, str]] = {
    "n_layers": (10**5, "layers (GPT-3 has 96)"),
    "hidden_size": (10**7, "hidden width"),
    "n_heads": (10**6, "attention heads"),
    "n_kv_heads": (10**6, "KV heads"),
    "head_dim": (10**6, "head width"),
    "ffn_size": (10**8, "MLP width"),
    "vocab_size": (10**9, "vocabulary entries"),
    "n_experts": (10**6, "routed experts"),
    "experts_per_token": (10**6, "experts per token"),
    "n_shared_experts": (10**6, "shared experts"),
    "moe_ffn_size": (10**8, "expert MLP width"),
    "n_dense_layers": (10**5, "dense layers"),
    "q_lora_rank": (10**7, "query latent width"),
    "kv_lora_rank": (10**7, "KV latent width"),
    "qk_nope_head_dim": (10**6, "head width"),
    "qk_rope_head_dim": (10**6, "head width"),
    "v_head_dim": (10**6, "head width"),
    "sliding_window": (10**8, "tokens (contexts are ~10^6)"),
    "local_layers": (10**5, "layers (GPT-3 has 96)"),
    "context_limit": (10**8, "tokens (contexts are ~10^6)"),
    "norms_per_layer": (100, "norms per layer"),
    "qk_norm": (2, "(0 none, 1 per head, 2 over the whole projection)"),
    "params_published": (10**16, "parameters"),
}
# Hardware fields: up to these (peaks in TFLOP/s, memory in GB, bandwidth TB/s or GB/s).
HARDWARE_LIMITS: dict[str, tuple[float, str]] = {
    "peak_bf16_tflops": (10**6, "TFLOP/s per chip (1 exaFLOP/s)"),
    "peak_fp8_tflops": (10**6, "TFLOP/s per chip (1 exaFLOP/s)"),
    "mem_gb": (10**6, "GB per chip (1 PB)"),
    "hbm_tbps": (10**4, "TB/s per chip"),
    "gemm_eff_bf16": (1, "a share of the BF16 peak"),
    "gemm_eff_fp8": (1, "a share of the FP8 peak"),
    "gemm_dim_half": (10**6, "a GEMM dimension"),
    "attn_eff": (1, "a share of the BF16 peak"),
    "attn_seq_half": (10**8, "tokens"),
    "tdp_w": (10**5, "watts per chip"),
    "intra_node_gb_per_s": (10**6, "GB/s per GPU"),
    "inter_node_gb_per_s": (10**6, "GB/s per GPU"),
    "host_gb_per_s": (10**6, "GB/s per GPU to host memory"),
    "peak_fp4_tflops": (10**6, "TFLOP/s per chip (1 exaFLOP/s)"),
    "fast_domain_gpus": (10**5, "accelerators in one fast-interconnect domain"),
}


def _num(x: float) -> str:
    if x == int(x) and abs(x) >= 10**5:
        return f"10^{len(str(int(x))) - 1}" if str(int(x)).strip("0") == "1" else f"{x:,.0f}"
    return f"{x:g}"


def check_range(field: str, value: float, low: float, high: float, why: str, raw: Any) -> None:
    """``low <= value <= high`` or a one-line error saying the accepted range and why."""
    if not low <= value <= high:
        raise SheetgenError(
            field, f"must be from {_num(low)} to {_num(high)} ({why}), got {short(raw)}"
        )


def check_run_limit(key: str, value: float, raw: Any, field: str | None = None) -> None:
    if key in RUN_LIMITS:
        low, high, why = RUN_LIMITS[key]
        check_range(field or key, value, low, high, why, raw)
    if key in ZERO_OR_AT_LEAST:
        check_zero_or_at_least(field or key, value, *ZERO_OR_AT_LEAST[key], raw)


def check_zero_or_at_least(field: str, value: float, low: float, why: str, raw: Any) -> None:
    """0 (not measured / not published) or at least ``low``."""
    if value != 0 and value < low:
        raise SheetgenError(field, f"must be 0 or at least {low:g} ({why}), got {short(raw)}")


def check_text(value: Any, field: str, max_chars: int = MAX_NAME_CHARS, name: bool = True) -> str:
    """A name, id or source as text: no control characters (names: none at all;
    free text: tabs and line breaks allowed); names also no invisible format
    characters, line or paragraph separators and not only spaces; at most
    ``max_chars`` characters."""
    if not isinstance(value, str):
        raise SheetgenError(field, f"must be text, got {short(value)}")
    allowed = "" if name else "\t\n\r"
    refused = NAME_REFUSED_CATEGORIES if name else TEXT_REFUSED_CATEGORIES
    for ch in value:
        if ch in allowed:
            continue
        category = unicodedata.category(ch)
        if category == "Cs" and 0xDC80 <= ord(ch) <= 0xDCFF:
            # Python's surrogateescape: a byte of a command-line argument or file name
            # that is not valid UTF-8 arrives as U+DC80..U+DCFF.
            raise SheetgenError(
                field,
                f"is not valid UTF-8 text (byte 0x{ord(ch) - 0xDC00:02X}); "
                f"give the name in UTF-8 ({short(value)})",
            )
        if category in refused:
            kind = REFUSED_KINDS.get(category, "control character")
            raise SheetgenError(
                field,
                f"contains the {kind} U+{ord(ch):04X}; {'names' if name else 'text'} accept "
                f"letters, digits, punctuation, symbols and spaces ({short(value)})",
            )
        if ch in XML_ILLEGAL:
            raise SheetgenError(
                field,
                f"contains U+{ord(ch):04X}, which a workbook (XML 1.0) cannot hold; "
                f"remove it ({short(value)})",
            )
    escaped = XLSX_ESCAPE.search(value)
    if escaped:
        # Office Open XML (ECMA-376 Part 1, 22.9.2.19 ST_Xstring) reads _xHHHH_ in a cell's
        # text as the character U+HHHH: Excel would show another name than the one typed.
        raise SheetgenError(
            field,
            f"contains {escaped.group(0)!r}, which Excel reads as the character "
            f"U+{escaped.group(1).upper()}; accepted: text without _x, four hex digits and _ "
            f"({short(value)})",
        )
    if name and value and not value.strip():
        raise SheetgenError(
            field, f"is only spaces; give a name with a letter, digit or symbol ({short(value)})"
        )
    if len(value) > max_chars:
        raise SheetgenError(
            field, f"is {len(value):,} characters; at most {max_chars} accepted ({short(value)})"
        )
    return value


def check_id(value: Any, field: str) -> str:
    """An id: a name without the wildcards Excel's MATCH would expand."""
    text = check_text(value, field)
    bad = [ch for ch in ID_WILDCARDS if ch in text]
    if bad:
        raise SheetgenError(
            field,
            f"must not contain {bad[0]!r} (a wildcard in spreadsheet lookups), got {short(text)}",
        )
    if not text.strip():
        raise SheetgenError(field, "must not be blank")
    return text


def check_scenario_count(n: int, field: str) -> None:
    if n > MAX_SCENARIOS:
        raise SheetgenError(
            field,
            f"{n:,} scenarios; a sheet holds at most {MAX_SCENARIOS:,} "
            f"({SHEET_COLUMNS:,} columns, 5 of them for keys, labels and notes)",
        )


def check_results(name: str, result: dict[str, Any]) -> None:
    """Computed values a workbook can hold: a finish date no later than 9999-12-31
    (the last date Excel and LibreOffice show) and finite numbers."""
    import math

    dates = [v for k, v in result.items() if k.startswith("finish_date")]
    finish = max((v for v in dates if isinstance(v, (int, float))), default=None)
    if isinstance(finish, (int, float)) and not finish <= excel_serial(SPREADSHEET_DATE_MAX):
        days = result.get("train_days_wall", float("nan"))
        raise SheetgenError(
            f"scenario {short(name)}: start_date",
            f"the run ({days:,.0f} wall-clock days) would finish after "
            f"{SPREADSHEET_DATE_MAX.isoformat()}, the last date a spreadsheet can show; "
            "plan fewer tokens, more GPUs or an earlier start",
        )
    if isinstance(finish, (int, float)):
        date_from_serial(finish)  # representable
    for key, value in result.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise SheetgenError(
                f"scenario {short(name)}: {key}",
                f"computes to {value!r}; an input is out of proportion to the others",
            )
