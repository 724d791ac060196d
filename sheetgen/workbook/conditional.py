"""Conditional formats: green / red / amber 1/0 check rows, the verdict, and the
figures of a plan that is not OK marked (red, struck through).

Rules refer to cells of the same sheet only (older Excel rejects other-sheet
references in conditional formats): the Summary mirrors plan_ok for that reason.
"""

from __future__ import annotations

from typing import Any

from sheetgen.workbook.templates import SheetTemplate

# Rows whose figures a plan that is not ok would misstate: marked (red, struck
# through) wherever plan_ok is on the same sheet.
PLAN_FIGURES = frozenset(
    {
        "train_days",
        "train_days_wall",
        "gpu_hours",
        "cost_usd",
        "plan_days_wall",
        "plan_gpu_hours",
        "gpu_cost_usd",
        "energy_cost_usd",
        "cost_contingency_usd",
        "cost_total_usd",
        "finish_date",
        # The range and the per-token figures rest on the same plan.
        "train_days_wall_low",
        "train_days_wall_high",
        "finish_date_high",
        "cost_total_usd_low",
        "cost_total_usd_high",
        "cost_total_per_m_tokens",
        "energy_kwh",
    }
)


# Sheets whose days, hours and money all rest on the plan: every such row (by its unit)
# is marked too, beside the sheet's own mirror of the verdict.  Serving rows are not:
# the serving plan has its own verdict (Serving sheet).
PLAN_SHEETS = frozenset({"Schedule", "Phases", "Budget", "Range", "Months"})
PLAN_UNITS = frozenset({"d", "days", "GPU·h", "USD", "kWh"})


def _plan_figure(t: SheetTemplate, key: str, unit: str) -> bool:
    if key in PLAN_FIGURES:
        return True
    return t.sheet in PLAN_SHEETS and unit in PLAN_UNITS and not key.startswith("serve_")


def flag_formatting(ws: Any, t: SheetTemplate, layout: Any, n: int, first_row: int) -> None:
    """Green / red / amber fills on 1/0 check rows and the verdict; figures of a plan
    that is not ok marked; "all checks pass" never green beside a plan that is not ok."""
    from openpyxl.formatting.rule import CellIsRule, FormulaRule
    from openpyxl.styles import Font, PatternFill

    from sheetgen.workbook import styles
    from sheetgen.workbook.templates import check_keys

    # Amber: a warning (something to look at). Red: an error, or one of the verdict's
    # tests (fits_per_gpu, batch_splits and their Checks rows): a 0 makes the plan not OK.
    warnings = set(check_keys("warning"))
    verdict_tests = {*check_keys("verdict_test"), "fits_per_gpu", "batch_splits"}
    flags = {*warnings, *verdict_tests, *check_keys("error"), "checks_ok", "plan_ok"}
    green = PatternFill("solid", fgColor=styles.PASS_FILL)
    red = PatternFill("solid", fgColor=styles.FAIL_FILL)
    plan_row = layout.sheet_keys.get(t.sheet, {}).get("plan_ok")
    first, last = layout.col(0), layout.col(n - 1)
    plan_ok = f"{first}${plan_row}" if plan_row else None
    row_no = first_row
    for r in t.rows:
        rng = f"{first}{row_no}:{last}{row_no}"
        if r.key and (r.key.startswith("chk_") or r.key in flags) and r.fmt == "flag":
            bad = styles.WARN_FILL if r.key in warnings else styles.FAIL_FILL
            if r.key == "checks_ok" and plan_ok:
                # Green only when the plan itself is ok; amber when checks pass but it is not.
                ok = f"AND({first}{row_no}=1,{plan_ok}=1)"
                ws.conditional_formatting.add(rng, FormulaRule(formula=[ok], fill=green))
                warn = PatternFill("solid", fgColor=styles.WARN_FILL)
                ws.conditional_formatting.add(
                    rng, FormulaRule(formula=[f"{first}{row_no}=1"], fill=warn)
                )
            else:
                ws.conditional_formatting.add(
                    rng, CellIsRule(operator="equal", formula=["1"], fill=green)
                )
            ws.conditional_formatting.add(
                rng,
                CellIsRule(
                    operator="notEqual", formula=["1"], fill=PatternFill("solid", fgColor=bad)
                ),
            )
        elif r.key == "plan_verdict":
            ok = f'{first}{row_no}="OK"'
            ws.conditional_formatting.add(rng, FormulaRule(formula=[ok], fill=green))
            ws.conditional_formatting.add(rng, FormulaRule(formula=[f"NOT({ok})"], fill=red))
        elif r.key and _plan_figure(t, r.key, r.unit) and plan_ok:
            ws.conditional_formatting.add(
                rng,
                FormulaRule(
                    formula=[f"{plan_ok}<>1"],
                    fill=red,
                    font=Font(strike=True, color=styles.FAIL_FONT_COLOR),
                ),
            )
        row_no += 1
