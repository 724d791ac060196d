"""What ``check`` reports: findings, the report, and their words.

A finding names the sheet, key and scenario, what was expected and what was
found.  Kinds:

* ``missing sheet`` / ``missing row`` — a sheet or a template row was deleted;
* ``constant`` — a derived cell holds a typed value instead of its formula;
* ``formula changed`` — a derived cell's formula is not the template's, compared as
  token streams (``formula_compare``): a file re-saved by LibreOffice, Gnumeric or
  Excel with no edits compares clean;
* ``error value`` / ``blank`` — the cell computes to an error or nothing;
* ``value differs`` — the recalculated value is not the reference's;
* ``stored value differs`` — the value stored in the file (what viewers that do not
  calculate, pandas and mail previews show) is not the formula's result;
* ``no stored values`` (a warning, not a problem) — formula cells saved without their
  result, by a program that does not calculate: viewers that do not calculate show
  them blank;
* ``defined name`` — a workbook name (``train_days_1``) is missing or does not point
  at its key's cell for its scenario (other workbooks linking to it would get
  another number);
* ``check failed`` — an error check on the Checks sheet is 0;
* ``input invalid`` — a scenario's inputs cannot be used (the reason says why).

Warnings on the Checks sheet (an uneven split, …), the verdict's tests (the
peak does not fit, the batch does not split) and the verdict itself are listed
with kind ``warning`` and do not count as problems: the file is not tampered with,
the plan is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sheetgen.reference.checks import VERDICT_TESTS

PROBLEM_KINDS = (
    "missing sheet",
    "missing row",
    "constant",
    "formula changed",
    "error value",
    "blank",
    "value differs",
    "stored value differs",
    "defined name",
    "check failed",
    "input invalid",
)


@dataclass(frozen=True)
class Finding:
    kind: str
    sheet: str
    key: str
    scenario: str
    expected: Any = None
    actual: Any = None
    detail: str = ""

    @property
    def is_problem(self) -> bool:
        return self.kind in PROBLEM_KINDS


@dataclass
class Report:
    path: str
    engine: str
    scenarios: list[str]
    findings: list[Finding]
    cells_compared: int

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.is_problem]

    def records(self) -> list[dict[str, Any]]:
        return [asdict(f) for f in self.findings]


SHOWN_ERROR_CELLS = 3  # cells named in the one finding for a scenario's error values


def errors_from_invalid_inputs(findings: list[Finding]) -> list[Finding]:
    """A scenario with an invalid input has error values wherever the input flows (an
    n_gpus of 'abc' gives over 700): one finding says how many and names the first
    cells, after the input finding that explains them."""
    from sheetgen.wording import plural

    invalid = {f.scenario for f in findings if f.kind == "input invalid"}
    errors: dict[str, list[Finding]] = {}
    kept = []
    for f in findings:
        if f.kind == "error value" and f.scenario in invalid:
            errors.setdefault(f.scenario, []).append(f)
        else:
            kept.append(f)
    for scenario, found in errors.items():
        first = ", ".join(f"{f.sheet} {f.key} ({f.detail})" for f in found[:SHOWN_ERROR_CELLS])
        more = len(found) - SHOWN_ERROR_CELLS
        detail = (
            f"{plural(len(found), 'cell')} compute to error values, following from the "
            f"invalid input: {first}" + (f" and {more:,} more" if more > 0 else "")
        )
        kept.append(Finding("error value", "", "", scenario, detail=detail))
    return kept


def unstored_finding(unstored: dict[str, int]) -> Finding:
    """One warning for formula cells saved without their result (a program that does not
    calculate, such as openpyxl, wrote the file): not wrong, but viewers that do not
    calculate (pandas, mail previews, some phones) show them blank."""
    from sheetgen.wording import plural

    total = sum(unstored.values())
    sheets = ", ".join(sorted(unstored, key=lambda s: -unstored[s])[:4])
    more = f" and {plural(len(unstored) - 4, 'more sheet')}" if len(unstored) > 4 else ""
    detail = (
        f"{plural(total, 'formula cell')} ({sheets}{more}) have no stored result: a program "
        "that does not calculate saved the file, so pandas and mail previews show them "
        "blank; open and save it in Excel or LibreOffice before sending it"
    )
    return Finding("no stored values", "", "", "", detail=detail)


def render_report(report: Report, fmt: str) -> str:
    import json

    if fmt == "json":
        return json.dumps(
            {
                "file": report.path,
                "engine": report.engine,
                "scenarios": report.scenarios,
                "cells_compared": report.cells_compared,
                "problems": len(report.problems),
                "findings": report.records(),
            },
            indent=1,
            default=str,
        )
    from sheetgen.wording import plural

    lines = [finding_line(f) for f in report.findings]
    n = len(report.problems)
    warnings = len(report.findings) - n
    verdict = "OK" if n == 0 else plural(n, "problem")
    if warnings:
        verdict += f", {plural(warnings, 'warning')}"
    lines.append(
        f"{verdict}: {plural(report.cells_compared, 'cell')} of "
        f"{plural(len(report.scenarios), 'scenario')} compared with the reference ({report.engine})"
    )
    return "\n".join(lines)


# The verdict and its two tests: a 0 is a plan that cannot run as entered (reported
# beside the warnings, as neither is a fault of the file).
VERDICT_KEYS = frozenset({"plan_ok", *VERDICT_TESTS})


def finding_line(f: Finding) -> str:
    """One finding in words: level and kind, the check or key and its sheet, the
    scenario, the numbers, and why."""
    level = "FAIL" if f.is_problem else "WARN"
    if f.kind in ("warning", "check failed"):
        kind = "warning" if f.kind == "warning" else "error check failed"
        if f.kind == "warning" and f.key in VERDICT_KEYS:  # not OK, yet not tampering
            kind = "plan not OK"
        scen = f", scenario {f.scenario!r}" if f.scenario else ""
        return f"{level} {kind}: {f.key} on {f.sheet}{scen} is 0 (1 = pass), {f.detail}"
    what = f"{f.sheet} {f.key}".strip()  # other findings: "Schedule train_days [name]"
    if not what:  # a finding about the whole file, or a whole scenario
        scen = f" [{f.scenario}]" if f.scenario else ""
        return f"{level} {f.kind}{scen}: {f.detail}"
    scen = f" [{f.scenario}]" if f.scenario else ""
    vals = ""
    if f.expected is not None or f.actual is not None:
        vals = f": expected {f.expected!r}, found {f.actual!r}"
    extra = f" ({f.detail})" if f.detail else ""
    return f"{level} {f.kind}: {what}{scen}{vals}{extra}"
