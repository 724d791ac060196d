"""Parsing and validation of scenario inputs into the dataclasses of
``sheetgen.scenarios.scenario``: counts, numbers and dates as people write them, run
settings (kinds and ranges from ``sheetgen.scenarios.run_fields``, list settings such as
phases and sweeps; models and hardware are ``sheetgen.catalog.parse``'s).  Every
failure is one ``SheetgenError`` naming the field.

Counts take K/M/B/T (decimal) or Ki/Mi/Gi/Ti (binary) suffixes (``15T``,
``4Mi``), exponents (``1e12``) and commas only as thousands separators between
groups of three digits (``1,000,000``): ``2,5`` is an error, never 25 (``digits``).
Numbers typed as text are ASCII digits only: Python's ``float`` would read
full-width ``０.５`` or Arabic-Indic digits as 0.5, and ``1_000`` as 1000, so both are
refused (``ascii_number``) instead of being read as something no one can see.  (A
YAML scenario's unquoted ``4_194_304`` is an integer YAML itself reads.)
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import fields, replace
from typing import Any

from sheetgen.errors import SheetgenError, did_you_mean, key_name, short
from sheetgen.scenarios.dates import SPREADSHEET_DATE_MAX, START_DATE_MAX, START_DATE_MIN
from sheetgen.scenarios.limits import (
    check_run_limit,
)
from sheetgen.scenarios.run_fields import (
    FIELD,
    FIELDS,
    LIST_FIELDS,
    PHASE_FIELDS,
    PHASE_OF,
    PHASE_SLOTS,
    RUN_FIELDS,
    SWEEP_POINTS,
)
from sheetgen.scenarios.scenario import Phase, Run

_SUFFIX = {
    "": 1,
    "K": 10**3,
    "M": 10**6,
    "B": 10**9,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "KI": 2**10,
    "MI": 2**20,
    "GI": 2**30,
    "TI": 2**40,
}
# The powers of 1000 an amount of money may carry (--budget 2.5M), as counts read them.
THOUSANDS_SUFFIXES = {k: _SUFFIX[k] for k in ("K", "M", "B", "T")}
_COUNT_RE = re.compile(
    r"^\s*([+-]?[0-9][0-9,]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]{0,2})\s*$"
)
# A comma is a thousands separator only in the whole part, between groups of three
# digits: 1,000,000 and 4,194,304.5 are read; 2,5 (a decimal comma), 1,5T, 10,00 and
# 1,000.000,1 are refused, since deleting the comma would silently change the value.
_THOUSANDS_RE = re.compile(r"^[+-]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?$")


# How a number typed as text may be written, for the messages that refuse one.
NUMBER_FORMS = "0.5, 1000, 1e3 or 1,000"
COUNT_FORMS = "1000, 1e3, 1,000 or 1K"


def ascii_number(text: str, field: str, forms: str = NUMBER_FORMS) -> str:
    """``text`` stripped of surrounding spaces, or one error when it holds a character
    other than ASCII (full-width or other scripts' digits) or an underscore."""
    text = text.strip()
    if not text.isascii():
        bad = next(ch for ch in text if not ch.isascii())
        raise SheetgenError(
            field,
            f"{short(text)} holds U+{ord(bad):04X}, not an ASCII character; "
            f"write numbers with the digits 0-9, e.g. {forms}",
        )
    if "_" in text:
        raise SheetgenError(
            field,
            f"{short(text)}: underscores are not accepted between digits; write {forms}",
        )
    return text


def digits(text: str, field: str, raw: Any = None) -> str:
    """``text`` with its thousands separators removed: commas only between thousands
    groups; any other comma is an error naming the field (and ``raw``, the value as
    given, when ``text`` is part of it)."""
    shown = text if raw is None else raw
    text = text.strip()
    if "," not in text:
        return text
    if not _THOUSANDS_RE.match(text):
        raise SheetgenError(
            field,
            f"{short(shown)}: a comma is accepted only between groups of three digits "
            "(1,000,000); write decimals with a point (2.5)",
        )
    return text.replace(",", "")


# The words a 0/1 setting (a registry field with flag=True) accepts besides 0 and 1
# and YAML true/false.
_FLAG_WORDS = {"true": 1, "false": 0, "yes": 1, "no": 0, "on": 1, "off": 0}


def parse_count(value: Any, field: str) -> int:
    """A whole count such as ``15.6T``, ``4Mi``, ``4_194_304`` or ``1e12``."""
    if isinstance(value, bool):
        raise SheetgenError(field, f"expected a whole number, got {short(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise SheetgenError(field, f"expected a whole number, got {short(value)}")
        return int(value)
    if isinstance(value, str) and len(value) <= 400:
        ascii_number(value, field, COUNT_FORMS)
        m = _COUNT_RE.match(value)
        if m and m.group(2).upper() in _SUFFIX:
            number = float(digits(m.group(1), field, value))
            total = number * _SUFFIX[m.group(2).upper()]
            if not math.isfinite(total):
                raise SheetgenError(field, f"{short(value)} is too large to be a count")
            if total == int(total):
                return int(total)
            raise SheetgenError(field, f"{short(value)} is not a whole number")
    raise SheetgenError(
        field,
        f"cannot read {short(value)} as a count; use a whole number, optionally with a suffix "
        "K, M, B, T (powers of 1000) or Ki, Mi, Gi, Ti (powers of 1024), e.g. 15.6T",
    )


def parse_number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise SheetgenError(field, f"expected a number, got {short(value)}")
    raw = value
    try:
        if isinstance(value, str):
            value = digits(ascii_number(value, field), field, raw)
        value = float(value)
    except (ValueError, OverflowError):
        raise SheetgenError(field, f"expected a number, got {short(raw)}") from None
    if not math.isfinite(value):
        raise SheetgenError(field, f"expected a finite number, got {short(raw)}")
    return value


def parse_date(value: Any, field: str) -> dt.date:
    """An ISO date (YYYY-MM-DD), as text or as the date YAML already parsed."""
    if isinstance(value, dt.datetime):
        value = value.date()
    if isinstance(value, str):
        try:
            value = dt.date.fromisoformat(value.strip())
        except ValueError:
            raise SheetgenError(
                field, f"expected an ISO date such as 2027-01-01, got {short(value)}"
            ) from None
    if not isinstance(value, dt.date):
        raise SheetgenError(field, f"expected an ISO date such as 2027-01-01, got {short(value)}")
    if value < START_DATE_MIN:
        raise SheetgenError(field, f"must be {START_DATE_MIN.isoformat()} or later, got {value}")
    if value > START_DATE_MAX:
        raise SheetgenError(
            field,
            f"must be {START_DATE_MAX.isoformat()} or earlier (the plan's months and fiscal "
            f"years must end by {SPREADSHEET_DATE_MAX.isoformat()}), got {value}",
        )
    return value


def _run_value(key: str, value: Any, where: str | None = None) -> Any:
    """One scalar run setting, checked as its registry entry (``FIELD[key]``) says;
    ``where`` names it in errors (default: the key)."""
    f = FIELD[key]
    name = where or key
    if f.kind == "date":
        return parse_date(value, name)
    if f.kind == "int":
        if f.flag:
            if isinstance(value, bool):
                value = int(value)
            elif isinstance(value, str) and value.strip().lower() in _FLAG_WORDS:
                value = _FLAG_WORDS[value.strip().lower()]
        n = parse_count(value, name)
        low, high = f.int_range
        if n < low or (high is not None and n > high):
            accepted = f">= {low}" if high is None else f"from {low} to {high}"
            raise SheetgenError(name, f"must be a whole number {accepted}, got {short(value)}")
        check_run_limit(key, n, value, name)
        return n
    if f.kind == "choice":
        if not isinstance(value, str) or value.strip().lower() not in f.choices:
            raise SheetgenError(name, f"got {short(value)}; {did_you_mean(value, f.choices)}")
        return value.strip().lower()
    number = parse_number(value, name)
    # A field's own limit (narrower than its kind's range) names what it accepts.
    if f.kind == "fraction":
        check_run_limit(key, number, value, name)
        if not 0 < number <= 1:
            raise SheetgenError(name, f"must be a fraction in (0, 1], got {short(value)}")
        return number
    if f.kind == "share":
        check_run_limit(key, number, value, name)
        if not 0 <= number < 1:
            raise SheetgenError(name, f"must be a share in [0, 1), got {short(value)}")
        return number
    if f.at_least is not None and number < f.at_least[0]:
        minimum, what = f.at_least
        raise SheetgenError(name, f"must be >= {minimum:g} ({what}), got {short(value)}")
    if f.zero_ok and number < 0:
        raise SheetgenError(name, f"must be >= 0, got {short(value)}")
    if not f.zero_ok and number <= 0:
        raise SheetgenError(name, f"must be > 0, got {short(value)}")
    check_run_limit(key, number, value, name)
    return int(number) if number == int(number) else number


def _phase(item: Any, run: Run, where: str) -> Phase:
    """One phase from a mapping; each setting but tokens defaults to the run's, and each
    is checked as the run setting it stands for (PHASE_OF)."""
    if isinstance(item, Phase):
        item = {f.name: getattr(item, f.name) for f in fields(Phase)}
    if not isinstance(item, dict):
        raise SheetgenError(
            where, f"each phase must be a mapping of {', '.join(PHASE_FIELDS)}, got {short(item)}"
        )
    for key in item:
        if key not in PHASE_FIELDS:
            raise SheetgenError(
                f"{where}.{key_name(key)}",
                f"unknown phase field; {did_you_mean(key, PHASE_FIELDS)}",
            )
    first = PHASE_FIELDS[0]
    if first not in item:
        raise SheetgenError(f"{where}.{first}", "missing; a phase needs its number of tokens")
    values: dict[str, Any] = {}
    for key, run_key in PHASE_OF.items():
        raw = item[key] if key in item else getattr(run, run_key)
        values[key] = _run_value(run_key, raw, f"{where}.{key}")
    return Phase(**values)


def _phases(value: Any, run: Run, where: str) -> tuple[Phase, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise SheetgenError(
            where, f"must be a list of at most {PHASE_SLOTS} phases, got {short(value)}"
        )
    if len(value) > PHASE_SLOTS:
        raise SheetgenError(
            where, f"at most {PHASE_SLOTS} phases fit the workbook's slots, got {len(value)}"
        )
    return tuple(_phase(item, run, f"{where}[{i + 1}]") for i, item in enumerate(value))


def _sweep(value: Any, where: str, like: str) -> tuple[int, ...]:
    """A sweep list: SWEEP_POINTS whole numbers >= 1, each within the limit of ``like``."""
    if not isinstance(value, (list, tuple)) or len(value) != SWEEP_POINTS:
        raise SheetgenError(
            where, f"must list exactly {SWEEP_POINTS} whole numbers >= 1, got {short(value)}"
        )
    out = []
    for i, raw in enumerate(value):
        n = parse_count(raw, f"{where}[{i + 1}]")
        if n < 1:
            raise SheetgenError(
                f"{where}[{i + 1}]", f"must be a whole number >= 1, got {short(raw)}"
            )
        check_run_limit(like, n, raw, f"{where}[{i + 1}]")
        out.append(n)
    return tuple(out)


def make_run(settings: dict[str, Any], where: str = "") -> Run:
    """Validated run settings; unknown keys are errors."""
    values: dict[str, Any] = {}
    for key, value in settings.items():
        if key in LIST_FIELDS:
            continue
        if key not in RUN_FIELDS:
            accepted = (*RUN_FIELDS, *LIST_FIELDS)
            raise SheetgenError(
                f"{where}{key_name(key)}",
                f"unknown setting; {did_you_mean(key, accepted, 'sheetgen compute --help')}",
            )
        try:
            values[key] = _run_value(key, value)
        except SheetgenError as e:
            raise SheetgenError(f"{where}{e.field}", e.message) from None
    if "mfu_source" not in values:
        values["mfu_source"] = implied_mfu_source(values)
    try:
        run = Run(**values)
    except SheetgenError as e:
        raise SheetgenError(f"{where}{e.field}", e.message) from None
    lists: dict[str, Any] = {}
    if "phases" in settings:
        lists["phases"] = _phases(settings["phases"], run, f"{where}phases")
    for f in FIELDS:
        if f.kind == "counts" and f.key in settings:
            lists[f.key] = _sweep(settings[f.key], f"{where}{f.key}", f.items_like or f.key)
    return replace(run, **lists) if lists else run


def implied_mfu_source(values: dict[str, Any]) -> str:
    """The clock a scenario that names none runs on: a pilot measurement when it gives
    one, the typed MFU when it sets ``mfu``, else the layout's prediction."""
    measured = ("measured_tokens_per_s_per_gpu", "measured_step_seconds")
    if any(values.get(k, 0) > 0 for k in measured):
        return "measured"
    return "typed" if "mfu" in values else "layout"


__all__ = ["ascii_number", "digits", "make_run", "parse_count", "parse_date", "parse_number"]
