"""Published serving throughput against the Serving sheet's model (``sheetgen serving-check``).

``presets/benchmarks/serving/*.yaml`` hold published serving measurements, each
with its source (document, table, column, row), the scenario it corresponds to
(model, accelerator, serving tp, prompt and output tokens; ``common:`` holds the
inputs every row of a file shares, such as the weight format and relaxed SLOs for
an offline maximum-throughput run) and the published output tokens per second of
the whole replica.  The prediction is ``serve_tokens_per_s_per_replica`` of the
reference (``sheetgen.reference.serving``) for that scenario, with every other
input at its default: nothing is fitted to these rows.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sheetgen.errors import SheetgenError, short


@dataclass(frozen=True)
class ServingRun:
    id: str
    source: str
    row: str
    scenario: dict[str, Any]
    published: float


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


def load(directory: Path | None = None) -> list[ServingRun]:
    from sheetgen.scenarios.yaml_load import load_yaml

    directory = directory or serving_dir()
    out: list[ServingRun] = []
    for path in sorted(directory.glob("*.yaml")):
        doc = load_yaml(path.read_text(encoding="utf-8"), str(path))
        common = doc.get("common") or {}
        for run in doc["runs"]:
            where = f"{path.name}: {run.get('id', '?')}"
            value = run.get("published_output_tokens_per_s")
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise SheetgenError(
                    f"{where}.published_output_tokens_per_s",
                    f"expected a number > 0, got {short(value)}",
                )
            out.append(
                ServingRun(
                    id=run["id"],
                    source=doc["source"]["id"],
                    row=run["row"],
                    scenario={**common, **run["scenario"]},
                    published=float(value),
                )
            )
    return out


def evaluate(run: ServingRun) -> ServingResult:
    from sheetgen.reference.serving import serving
    from sheetgen.scenarios.files import scenario_from_dict

    s = scenario_from_dict({"name": run.id, **run.scenario})
    r = serving(s)
    return ServingResult(
        run=run,
        predicted=float(r["serve_tokens_per_s_per_replica"]),
        batch=float(r["serve_batch_used"]),
        binding=str(r["serve_binding"]),
    )


def summary_line(results: list[ServingResult]) -> str:
    """Median and worst error, and the 90th percentile of |error|."""
    errs = sorted(abs(r.error) for r in results)
    worst = max((r.error for r in results), key=abs)
    p90 = errs[min(len(errs) - 1, int(0.9 * len(errs)))]
    return (
        f"{len(results)} runs; median |error| {statistics.median(errs):.1%}, worst "
        f"{worst:+.1%}, 90th percentile |error| {p90:.1%}"
    )


def markdown(results: list[ServingResult]) -> str:
    """The predicted-vs-published table (docs/DESIGN.md holds it)."""
    lines = [
        "| run | published out tok/s | predicted | error | batch (bound) |",
        "|---|---:|---:|---:|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.run.id} | {r.run.published:,.0f} | {r.predicted:,.0f} | {r.error:+.1%} | "
            f"{r.batch:,.0f} ({r.binding}) |"
        )
    lines += ["", "- " + summary_line(results)]
    return "\n".join(lines) + "\n"


def frame(results: list[ServingResult]):
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "run": r.run.id,
                "published_out_tok_s": round(r.run.published, 1),
                "predicted_out_tok_s": round(r.predicted, 1),
                "error": f"{r.error:+.1%}",
                "batch": int(r.batch),
                "bound_by": r.binding,
                "source": f"{r.run.source}: {r.run.row}",
            }
            for r in results
        ]
    )
