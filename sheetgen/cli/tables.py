"""pandas tables for the CLI: presets, computed keys, and their rendering."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from sheetgen.scenarios.scenario import Scenario


def presets_frame(kind: str) -> pd.DataFrame:
    import pandas as pd

    from sheetgen.catalog import presets
    from sheetgen.reference.params import params

    rows: list[dict[str, Any]] = []
    if kind == "models":
        presets.models()  # validated first: a broken file ends in one line
        docs = presets.model_docs()
        origin = presets.origins("models")
        for mid, m in presets.models().items():
            p = params(m)
            rows.append(
                {
                    "id": mid,
                    "name": m.name,
                    "params_total": p["params_total"],
                    "params_active": p["params_active"],
                    "layers": m.n_layers,
                    "hidden": m.hidden_size,
                    "heads": f"{m.n_heads}/{m.n_kv_heads}",
                    "as_of": docs.get(mid, {}).get("as_of", ""),
                    "origin": origin[mid],
                    "source": m.source,
                }
            )
    elif kind == "hardware":
        presets.hardware()  # validated first: a broken file ends in one line
        docs = presets.hardware_docs()
        origin = presets.origins("hardware")
        prices = presets.hardware_prices()
        for hid, hw in presets.hardware().items():
            sources = dict(hw.sources)
            rows.append(
                {
                    "id": hid,
                    "name": hw.name,
                    "bf16_tflops": hw.peak_bf16_tflops,
                    "fp8_tflops": hw.peak_fp8_tflops,
                    "fp4_tflops": hw.peak_fp4_tflops,
                    "mem_gb": hw.mem_gb,
                    "hbm_tbps": hw.hbm_tbps,
                    "tdp_w": hw.tdp_w,
                    "intra_node_gb_s": hw.intra_node_gb_per_s,
                    "inter_node_gb_s": hw.inter_node_gb_per_s,
                    "host_gb_s": hw.host_gb_per_s,
                    "fast_domain": int(hw.fast_domain_gpus),
                    "price_per_gpu_hour": prices.get(hid, {}).get("price_per_gpu_hour", ""),
                    "as_of": docs.get(hid, {}).get("as_of", ""),
                    "origin": origin[hid],
                    "source": sources.get("peak_bf16_tflops", ""),
                }
            )
    else:
        for r in presets.tables().recipes:
            rows.append(
                {
                    "id": r.id,
                    "name": r.name,
                    "weights": r.weight_bytes,
                    "grads": r.grad_bytes + r.grad_accum_bytes,
                    "master": r.master_bytes,
                    "optimizer": r.optimizer_bytes,
                    "activation_bytes": r.act_bytes,
                    "frameworks": r.frameworks,
                    "source": r.source or presets.table_sources()["recipes"],
                }
            )
    return pd.DataFrame(rows)


def record_context() -> tuple[set[str], dict[str, str]]:
    """(the keys shown as dates, each key's unit): what a record is written with."""
    from sheetgen.workbook.templates import key_index, units

    # Dates as a reader writes them (2027-04-07), not the spreadsheet's day serial.
    dates = {k for k, (_s, row) in key_index().items() if row.fmt == "date"}
    return dates, units()


def scenario_records(
    name: str, result: dict[str, Any], dates: set[str], unit_of: dict[str, str]
) -> list[dict[str, Any]]:
    """One scenario's computed keys as records {"scenario", "key", "value", "unit"}."""
    from sheetgen.scenarios.dates import date_from_serial

    records = []
    for key, value in result.items():
        if key in dates and isinstance(value, (int, float)):
            value = date_from_serial(value).isoformat()
        records.append({"scenario": name, "key": key, "value": value, "unit": unit_of.get(key, "")})
    return records


def compute_records(scenarios: list[Scenario]) -> list[dict[str, Any]]:
    """One record per scenario and key: {"scenario", "key", "value", "unit"}."""
    from sheetgen.reference import compute
    from sheetgen.scenarios.limits import check_results

    dates, unit_of = record_context()
    records = []
    for s in scenarios:
        result = compute(s)
        check_results(s.name, result)
        records.extend(scenario_records(s.name, result, dates, unit_of))
    return records


def compute_frame(scenarios: list[Scenario]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(compute_records(scenarios))


def _fmt_value(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        v = int(v)
    if isinstance(v, int):
        return f"{v:,}"
    if abs(v) >= 1e6 or (v != 0 and abs(v) < 1e-3):
        return f"{v:.4g}"
    return f"{v:,.4f}".rstrip("0").rstrip(".")


# A CSV field starting with one of these is a formula to a spreadsheet that opens
# the file (OWASP, "CSV Injection"): such text fields get a leading apostrophe.
CSV_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with text cells that a spreadsheet would run as formulas prefixed by '."""

    def esc(v: Any) -> Any:
        return "'" + v if isinstance(v, str) and v.startswith(CSV_FORMULA_STARTS) else v

    out = df.copy()
    for col in out.columns:
        out[col] = out[col].map(esc).astype(object)
    out.columns = [esc(c) for c in out.columns]
    return out


# An aligned table pads every cell of a column to its longest: one verdict of 200
# characters would push every number of its scenario off the screen.
TABLE_TEXT_MAX = 60


def _cut_text(text: str) -> str:
    return text if len(text) <= TABLE_TEXT_MAX else text[: TABLE_TEXT_MAX - 1] + "…"


def render(df: pd.DataFrame, fmt: str, wide: bool = False) -> str:
    """table (aligned text), csv or json (a list of records)."""
    if fmt == "json":
        return json.dumps(df.to_dict(orient="records"), indent=1, default=float)
    if fmt == "csv":
        return csv_safe(df).to_csv(index=False).rstrip("\n")
    if wide and {"scenario", "key", "value", "unit"} <= set(df.columns):
        table = df.pivot_table(
            index=["key", "unit"], columns="scenario", values="value", aggfunc="first", sort=False
        )
        table = table[list(dict.fromkeys(df["scenario"]))]
        # Column by column: DataFrame.map needs pandas 2.1; pyproject allows 2.0.
        table = table.apply(lambda col: col.map(_fmt_value))
        shown = table.apply(lambda col: col.map(_cut_text))
        note = (
            f"\n(texts longer than {TABLE_TEXT_MAX} characters are cut with …; "
            "--format csv or json prints them whole)"
        )
        cut = not shown.equals(table)
        return shown.reset_index().to_string(index=False) + (note if cut else "")
    shown = df.copy()
    for col in shown.columns:
        if shown[col].dtype != object:
            shown[col] = shown[col].map(_fmt_value)
    if "source" in shown.columns:
        shown["source"] = shown["source"].str.slice(0, 60)
    return shown.to_string(index=False)


TERMINAL_WIDTH = 100


def _money(usd: float) -> str:
    """$65.9M, $740k, $512: short money for a terminal line."""
    if abs(usd) >= 10**6:
        return f"${usd / 10**6:,.1f}M"
    if abs(usd) >= 10**4:
        return f"${usd / 10**3:,.0f}k"
    return f"${usd:,.0f}"


def _fit(line: str) -> str:
    return line if len(line) <= TERMINAL_WIDTH else line[: TERMINAL_WIDTH - 1] + "…"


def summary_lines(scenarios: list[Scenario]) -> list[str]:
    """Headline figures per scenario for the terminal, at most 100 characters a line:
    the verdict first, then days, dates and GPU-hours, then the cost with its range."""
    from sheetgen.reference import compute
    from sheetgen.reference.checks import ERROR_FLAGS
    from sheetgen.scenarios.dates import date_from_serial
    from sheetgen.wording import money, plural
    from sheetgen.workbook.templates import labels

    label = labels()
    lines = []
    for s in scenarios:
        r = compute(s)
        verdict = "OK" if r["plan_ok"] else f"NOT OK, {r['plan_verdict']}"
        failed = [label[k] for k in ERROR_FLAGS if r.get(k) == 0]
        if failed and r["plan_verdict"].startswith("error check failed"):
            # The terminal names the checks the Checks sheet shows in red.
            verdict = f"NOT OK, error check failed: {'; '.join(failed)}"
        phased = ", phased" if r["plan_uses_phases"] else ""
        lines += [
            _fit(f"  {s.name}"),
            _fit(
                f"    {verdict}; {r['layout_text']}, {r['mem_total_calibrated'] / 1e9:,.1f} of "
                f"{r['gpu_mem_bytes'] / 1e9:,.1f} GB/GPU"
            ),
            _fit(
                f"    {r['plan_days_wall']:,.1f} days{phased} ({r['train_days_wall_low']:,.1f}-"
                f"{r['train_days_wall_high']:,.1f}), {date_from_serial(r['start_date'])} to "
                f"{date_from_serial(r['finish_date'])}, {r['plan_gpu_hours']:,.0f} GPU-h"
            ),
            _fit(
                f"    cost ${r['cost_total_usd']:,.0f} (range {_money(r['cost_total_usd_low'])}-"
                f"{_money(r['cost_total_usd_high'])}), {money(r['cost_total_per_m_tokens'])} "
                "per M training tokens"
            ),
            _fit(
                # The Inference sheet: one replica with the whole batch prefilled at once,
                # not the traffic-sized serving plan (next line, when one is asked for).
                f"    inference, batch {r['inf_batch']:,} on {plural(r['inf_tp_used'], 'GPU')}: "
                f"{r['inf_total_bytes_per_gpu'] / 1e9:,.1f} GB/GPU"
                f"{'' if r['inf_fits'] else ' (does NOT fit)'}, TTFT {r['inf_ttft_s']:.3g} s"
                f"{_over_target(r)}, {r['inf_decode_tokens_per_s']:,.0f} tok/s, "
                f"{money(r['inf_cost_per_mtok'])}/M out"
            ),
        ]
        if r["serve_requests_per_s"] > 0:
            lines.append(_fit(f"    serving plan: {r['serve_summary_text']}"))
    return lines


def _over_target(r: dict[str, Any]) -> str:
    """ " (target 2 s)" when the batch's first token misses the TTFT target."""
    if r["inf_ttft_s"] <= r["slo_ttft_s"]:
        return ""
    return f" (target {r['slo_ttft_s']:.3g} s)"


def advise_frame(result: Any) -> pd.DataFrame:
    """The plans ``sheetgen advise`` found, best first, one row each."""
    import pandas as pd

    from sheetgen.planning.advise import layout_label
    from sheetgen.planning.why import why_better

    rows = []
    plans = result.plans
    for i, plan in enumerate(plans):
        v = plan.values
        rows.append(
            {
                "rank": i + 1,
                **({"accelerator": plan.scenario.hardware.id} if result.accelerators else {}),
                "gpus": plan.scenario.run.n_gpus,
                "layout": layout_label(plan.layout()),
                "mem_per_gpu_gb": round(v["mem_total_per_gpu"] / 1e9, 1),
                "usable_gb": round(v["mem_usable_per_gpu"] / 1e9, 1),
                "step_s": round(v["step_seconds_predicted"], 2),
                "mfu": f"{v['mfu_predicted']:.1%}",
                "bubble": f"{v['pipeline_bubble']:.1%}",
                "days": round(plan.days, 2),
                "cost_usd": round(plan.cost),
                "why": why_better(plan, plans[i + 1] if i + 1 < len(plans) else None, result.goal),
            }
        )
    return pd.DataFrame(rows)


def advise_summary(result: Any) -> str:
    """One line: what was searched, how fast, and what was rejected for what."""
    from sheetgen.wording import plural

    rejected = ", ".join(f"{n:,} {why}" for why, n in sorted(result.rejected.items()))
    counts = result.gpu_counts
    on = plural(counts[0], "GPU") if len(counts) == 1 else f"{counts[0]:,} to {counts[-1]:,} GPUs"
    kinds = result.accelerators
    on += f" of each of {len(kinds)} accelerators" if kinds else ""
    return (
        f"searched {result.candidates:,} layouts on {on} in {result.seconds:.2f}s "
        f"({result.rate:,.0f}/s); {result.fitting:,} fit"
        + (f"; rejected: {rejected}" if rejected else "")
    )


def benchmark_frame(results: list[Any]) -> pd.DataFrame:
    """``sheetgen benchmark-check``: one row per published run, predicted vs published."""
    import pandas as pd

    rows = []
    for r in results:
        b = r.bench
        rows.append(
            {
                "run": b.id,
                "role": b.role,
                "gpus": b.scenario["n_gpus"],
                "recompute": r.recompute + (" (chosen)" if r.recompute_chosen else ""),
                "fits": "yes" if r.fits else "no",
                "mem_gb": round(r.mem_gb, 1),
                "published_tok_s_gpu": round(r.published_tps, 1),
                "predicted_tok_s_gpu": round(r.predicted_tps, 1),
                "error": f"{r.error:+.1%}",
                "published_mfu": f"{r.published_mfu:.1%}",
                "predicted_mfu": f"{r.predicted_mfu:.1%}",
                "source": f"{b.source}: {b.row}",
            }
        )
    return pd.DataFrame(rows)
