"""Published serving runs against the serving step model (``sheetgen serving-check``).

``presets/benchmarks/serving/*.yaml`` hold published serving measurements, each with
its source (document, table, row), the scenario it corresponds to (model,
accelerator, serving tp, prompt and output tokens; ``common:`` holds the inputs every
row of a file shares), the engine that ran it (``engine:``, a profile of
``presets/tables/serving_engines.yaml`` whose values are applied to the scenario),
what was measured (``measure:``) and whether the row set the model's parameters
(``role: fit``) or is only compared (``role: check``).  Figures:

  output_tok_s  an offline maximum-throughput run: the Serving sheet's
                ``serve_tokens_per_s_per_replica`` (relaxed SLOs, the batch the
                KV cache and the engine hold);
  ttft          a batch of ``inf_batch`` prompts started together: the time to
                first token (reference.serving.static_batch);
  tpot          the same batch's end-to-end latency / output tokens (a latency
                benchmark's mean latency per output token).

The printed error is predicted / published - 1; then, per figure and per role, the
median, the 90th percentile and the worst.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sheetgen.errors import SheetgenError, short

FIGURES = ("output_tok_s", "tpot", "ttft")
FIGURE_NAMES = {
    "output_tok_s": "output tok/s",
    "tpot": "time per output token",
    "ttft": "time to first token",
}


@dataclass(frozen=True)
class ServingRun:
    id: str
    source: str
    row: str
    scenario: dict[str, Any]
    published: float
    figure: str = "output_tok_s"
    role: str = "check"
    engine: str = ""


@dataclass(frozen=True)
class ServingResult:
    run: ServingRun
    predicted: float
    batch: float
    binding: str

    @property
    def error(self) -> float:
        return self.predicted / self.run.published - 1


def serving_dir() -> Path:
    from sheetgen.paths import presets_dir

    return presets_dir() / "benchmarks" / "serving"


def engines_path() -> Path:
    from sheetgen.paths import presets_dir

    return presets_dir() / "tables" / "serving_engines.yaml"


def engine_profiles(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Engine id -> {field: value} of presets/tables/serving_engines.yaml."""
    from sheetgen.scenarios.yaml_load import load_yaml

    path = path or engines_path()
    doc = load_yaml(path.read_text(encoding="utf-8"), str(path))
    return {e["id"]: dict(e["values"]) for e in doc["engines"]}


def _published(run: dict[str, Any], figure: str, where: str, output_len: Any) -> float:
    if "published_ms" in run:
        value = run["published_ms"]
    else:
        value = run.get("published_output_tokens_per_s")
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise SheetgenError(f"{where}.published", f"expected a number > 0, got {short(value)}")
    if figure == "ttft":
        return value / 1000
    if figure == "tpot":
        return value / 1000 / float(output_len)
    return float(value)


def load(directory: Path | None = None) -> list[ServingRun]:
    from sheetgen.scenarios.yaml_load import load_yaml

    directory = directory or serving_dir()
    profiles = engine_profiles()
    out: list[ServingRun] = []
    for path in sorted(directory.glob("*.yaml")):
        doc = load_yaml(path.read_text(encoding="utf-8"), str(path))
        common = doc.get("common") or {}
        engine = doc.get("engine", "")
        if engine and engine not in profiles:
            raise SheetgenError(
                f"{path.name}.engine", f"expected one of {sorted(profiles)}, got {short(engine)}"
            )
        figure = (doc.get("measure") or {}).get("figure", "output_tok_s")
        for run in doc["runs"]:
            where = f"{path.name}: {run.get('id', '?')}"
            scenario = {**profiles.get(engine, {}), **common, **run["scenario"]}
            out.append(
                ServingRun(
                    id=run["id"],
                    source=doc["source"]["id"],
                    row=run["row"],
                    scenario=scenario,
                    published=_published(run, figure, where, scenario.get("output_len")),
                    figure=figure,
                    role=run.get("role", "check"),
                    engine=engine,
                )
            )
    return out


def evaluate(run: ServingRun) -> ServingResult:
    from sheetgen.reference.serving import serving, static_batch
    from sheetgen.scenarios.files import scenario_from_dict

    s = scenario_from_dict({"name": run.id, **run.scenario})
    if run.figure == "output_tok_s":
        r = serving(s)
        return ServingResult(
            run=run,
            predicted=float(r["serve_tokens_per_s_per_replica"]),
            batch=float(r["serve_batch_used"]),
            binding=str(r["serve_binding"]),
        )
    st = static_batch(s, s.run.serve_tp, s.run.inf_batch)
    value = st["ttft"] if run.figure == "ttft" else st["e2e"] / s.run.output_len
    return ServingResult(run=run, predicted=value, batch=s.run.inf_batch, binding="stated")


def stats(results: list[ServingResult]) -> tuple[float, float, float]:
    """Median |error|, 90th percentile |error| and the worst (signed) error."""
    errs = sorted(abs(r.error) for r in results)
    worst = max((r.error for r in results), key=abs)
    p90 = errs[min(len(errs) - 1, int(0.9 * len(errs)))]
    return statistics.median(errs), p90, worst


def summary_line(results: list[ServingResult]) -> str:
    """Median and worst error, and the 90th percentile of |error|."""
    median, p90, worst = stats(results)
    return (
        f"{len(results)} runs; median |error| {median:.1%}, worst "
        f"{worst:+.1%}, 90th percentile |error| {p90:.1%}"
    )


def summary_lines(results: list[ServingResult]) -> list[str]:
    """One line for every figure and role present (and the figure's rows together),
    then fit, check and all figures."""
    lines = []
    for figure in FIGURES:
        for role in ("fit", "check", "all"):
            part = [r for r in results if r.run.figure == figure and role in ("all", r.run.role)]
            if part:
                lines.append(f"{FIGURE_NAMES[figure]}, {role} rows: {summary_line(part)}")
    for role in ("fit", "check"):
        part = [r for r in results if r.run.role == role]
        if part:
            lines.append(f"all figures, {role} rows: {summary_line(part)}")
    lines.append(f"all figures, all rows: {summary_line(results)}")
    return lines


def _value(figure: str, x: float) -> str:
    if figure == "output_tok_s":
        return f"{x:,.0f}"
    return f"{x * 1000:,.1f} ms"


def markdown(results: list[ServingResult]) -> str:
    """The predicted-vs-published table (docs/DESIGN.md holds it)."""
    lines = [
        "| run | role | figure | published | predicted | error | batch (bound) |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for r in results:
        f = r.run.figure
        lines.append(
            f"| {r.run.id} | {r.run.role} | {FIGURE_NAMES[f]} | {_value(f, r.run.published)} | "
            f"{_value(f, r.predicted)} | {r.error:+.1%} | {r.batch:,.0f} ({r.binding}) |"
        )
    lines += [""] + ["- " + line for line in summary_lines(results)]
    return "\n".join(lines) + "\n"


def frame(results: list[ServingResult]):
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "run": r.run.id,
                "role": r.run.role,
                "figure": r.run.figure,
                "published": round(r.run.published, 6),
                "predicted": round(r.predicted, 6),
                "error": f"{r.error:+.1%}",
                "batch": int(r.batch),
                "bound_by": r.binding,
                "source": f"{r.run.source}: {r.run.row}",
            }
            for r in results
        ]
    )
