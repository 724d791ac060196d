"""Published measured peak memory per GPU against the memory model
(``sheetgen memory-check``), as ``benchmarks.py`` does for throughput.

``presets/benchmarks/memory/*.yaml`` hold published training runs, each with its
source (document, table or section, row), the layout as a sheetgen scenario, the
counter the source measured and its value:
  ``allocated``  PyTorch's torch.cuda.max_memory_allocated(): the tensors;
  ``reserved``   torch.cuda.max_memory_reserved(): what the caching allocator holds;
  ``device``     nvidia-smi's used memory (NVML): reserved + the CUDA context and
                 kernels + communication buffers.
The model's figure for that counter (``mem_<counter>_per_gpu`` on the Parallelism
sheet) is compared with it, like with like.  A run the source reports as out of
memory gives ``oom: true`` and no value; it is judged on the verdict alone (it
should not fit).  A run's ``mem_headroom`` is 0 unless the row says otherwise.

The one memory input fitted on measurements is the allocator's reserve share
(``mem_reserved_share``): the median of reserved / allocated - 1 over the ``reserve:``
rows (published runs that print both counters at the same step; no scenario needed).
A row's ``role`` says whether it was used to fit (``fit``) or is only checked
(``check``); docs/DESIGN.md names both.  Values are given in the unit
the source prints: ``peak_mib`` (MiB, as nvidia-smi and PyTorch's summaries print)
or ``peak_gb`` (decimal GB); a source that prints no peak but says the run ran gives
``ran: true`` (judged on the verdict alone, as an out-of-memory run is).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sheetgen.errors import SheetgenError, short

COUNTERS = ("allocated", "reserved", "device")
ROLES = ("fit", "check")
WITHIN = 0.20  # the band the summary counts rows inside (issue 40: ±20%)
MIB = 2**20


@dataclass(frozen=True)
class MemoryRun:
    id: str
    source: str
    row: str
    role: str
    counter: str
    scenario: dict[str, Any]
    measured_bytes: float  # 0 when the run went out of memory
    oom: bool
    notes: str = ""


@dataclass(frozen=True)
class MemoryResult:
    run: MemoryRun
    predicted_bytes: float  # the run's counter, as the model predicts it
    device_bytes: float  # what the verdict compares with the capacity
    fits: bool

    @property
    def error(self) -> float | None:
        if self.run.oom or not self.run.measured_bytes:
            return None
        return self.predicted_bytes / self.run.measured_bytes - 1

    @property
    def verdict_right(self) -> bool:
        """A run that ran must fit; one that went out of memory must not."""
        return self.fits != self.run.oom


def memory_dir() -> Path:
    from sheetgen.paths import presets_dir

    return presets_dir() / "benchmarks" / "memory"


def _measured(run: dict[str, Any], where: str) -> tuple[float, bool]:
    pub = run.get("published")
    if not isinstance(pub, dict):
        raise SheetgenError(
            f"{where}.published", "missing; give peak_mib, peak_gb, ran: true or oom: true"
        )
    if pub.get("oom") is True:
        return 0.0, True
    if pub.get("ran") is True:  # a run the source says ran, with no peak printed
        return 0.0, False
    for key, unit in (("peak_mib", MIB), ("peak_gb", 1e9)):
        value = pub.get(key)
        if value is not None:
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise SheetgenError(f"{where}.published.{key}", f"got {short(value)}; a number > 0")
            return float(value) * unit, False
    raise SheetgenError(f"{where}.published", "give peak_mib, peak_gb, ran: true or oom: true")


def load(directory: Path | None = None) -> list[MemoryRun]:
    from sheetgen.scenarios.yaml_load import load_yaml

    directory = directory or memory_dir()
    out: list[MemoryRun] = []
    for path in sorted(directory.glob("*.yaml")):
        doc = load_yaml(path.read_text(encoding="utf-8"), str(path))
        source = doc["source"]["id"]
        for run in doc.get("runs", []):
            where = f"{path.name}: {run.get('id', '?')}"
            if run.get("role") not in ROLES:
                got = short(run.get("role"))
                raise SheetgenError(f"{where}.role", f"got {got}; accepted: {', '.join(ROLES)}")
            if run.get("counter") not in COUNTERS:
                got = short(run.get("counter"))
                raise SheetgenError(
                    f"{where}.counter", f"got {got}; accepted: {', '.join(COUNTERS)}"
                )
            measured, oom = _measured(run, where)
            out.append(
                MemoryRun(
                    id=run["id"],
                    source=source,
                    row=run["row"],
                    role=run["role"],
                    counter=run["counter"],
                    scenario=run["scenario"],
                    measured_bytes=measured,
                    oom=oom,
                    notes=run.get("notes", ""),
                )
            )
    return out


def evaluate(run: MemoryRun, overrides: dict[str, Any] | None = None) -> MemoryResult:
    """Predict one published run's peak (``overrides``: run inputs, e.g. a reserve share)."""
    from sheetgen.reference.parallelism import predicted
    from sheetgen.scenarios.files import scenario_from_dict

    item = {"name": run.id, "train_tokens": 10**12, "mem_headroom": 0}
    item.update(run.scenario)
    item.update(overrides or {})
    lay = predicted(scenario_from_dict(item))
    return MemoryResult(
        run=run,
        predicted_bytes=lay[f"mem_{run.counter}_per_gpu"],
        device_bytes=lay["mem_total_calibrated"],
        fits=bool(lay["fits_per_gpu"]),
    )


@dataclass(frozen=True)
class MemorySummary:
    n: int  # runs with a measured peak
    median_abs: float
    worst: float
    within: int  # runs whose |error| <= WITHIN
    ran: int  # runs that ran (measured)
    ran_fit: int  # ... judged to fit
    oom: int  # runs reported out of memory
    oom_not_fit: int  # ... judged not to fit


def summarize(results: list[MemoryResult]) -> MemorySummary:
    errors = [r.error for r in results if r.error is not None]
    ran = [r for r in results if not r.run.oom]
    oom = [r for r in results if r.run.oom]
    return MemorySummary(
        n=len(errors),
        median_abs=statistics.median(abs(e) for e in errors) if errors else 0.0,
        worst=max(errors, key=abs) if errors else 0.0,
        within=sum(abs(e) <= WITHIN + 1e-12 for e in errors),
        ran=len(ran),
        ran_fit=sum(r.fits for r in ran),
        oom=len(oom),
        oom_not_fit=sum(not r.fits for r in oom),
    )


def summary_line(s: MemorySummary, label: str) -> str:
    return (
        f"{label}: {s.n} measured runs; median |error| {s.median_abs:.1%}, worst "
        f"{s.worst:+.1%}, {s.within} of {s.n} within ±{WITHIN:.0%}; {s.ran_fit} of {s.ran} "
        f"runs that ran judged to fit, {s.oom_not_fit} of {s.oom} out-of-memory runs judged "
        "not to fit"
    )


def summary_lines(results: list[MemoryResult]) -> list[str]:
    lines = []
    several = len({r.run.role for r in results}) > 1
    for label, role in (("fit rows", "fit"), ("check rows", "check"), ("all rows", None)):
        subset = [r for r in results if role in (None, r.run.role)]
        if subset and (role is not None or several):
            lines.append(summary_line(summarize(subset), label))
    return lines


@dataclass(frozen=True)
class ReservePair:
    """A published run's two PyTorch counters at the same step (MiB)."""

    id: str
    source: str
    row: str
    role: str
    allocated_mib: float
    reserved_mib: float

    @property
    def share(self) -> float:
        return self.reserved_mib / self.allocated_mib - 1


def load_reserve(directory: Path | None = None) -> list[ReservePair]:
    """The ``reserve:`` rows of presets/benchmarks/memory/*.yaml."""
    from sheetgen.scenarios.yaml_load import load_yaml

    directory = directory or memory_dir()
    out: list[ReservePair] = []
    for path in sorted(directory.glob("*.yaml")):
        doc = load_yaml(path.read_text(encoding="utf-8"), str(path))
        for row in doc.get("reserve", []):
            where = f"{path.name}: {row.get('id', '?')}"
            if row.get("role") not in ROLES:
                got = short(row.get("role"))
                raise SheetgenError(f"{where}.role", f"got {got}; accepted: {', '.join(ROLES)}")
            values = []
            for key in ("allocated_mib", "reserved_mib"):
                value = row.get(key)
                if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                    raise SheetgenError(f"{where}.{key}", f"got {short(value)}; a number > 0")
                values.append(float(value))
            out.append(
                ReservePair(row["id"], doc["source"]["id"], row["row"], row["role"], *values)
            )
    return out


def fit_reserved_share(pairs: list[ReservePair]) -> float:
    """mem_reserved_share fitted: the median of reserved / allocated - 1 over the fit rows."""
    return statistics.median(p.share for p in pairs if p.role == "fit")


def reserve_line(pairs: list[ReservePair], shipped: float) -> str:
    fit = [p for p in pairs if p.role == "fit"]
    shares = sorted(p.share for p in fit)
    return (
        f"allocator reserve: {len(fit)} runs with both counters; reserved / allocated - 1 "
        f"median {fit_reserved_share(pairs):.1%} (from {shares[0]:.1%} to {shares[-1]:.1%}); "
        f"mem_reserved_share ships {shipped:.1%}"
    )


def frame_rows(results: list[MemoryResult]) -> list[dict[str, Any]]:
    """One row per run: what ``sheetgen memory-check`` prints."""
    out = []
    for r in results:
        err = r.error
        out.append(
            {
                "run": r.run.id,
                "role": r.run.role,
                "counter": r.run.counter,
                "measured_gb": (
                    "OOM"
                    if r.run.oom
                    else round(r.run.measured_bytes / 1e9, 2)
                    if r.run.measured_bytes
                    else "ran"
                ),
                "predicted_gb": round(r.predicted_bytes / 1e9, 2),
                "error": "–" if err is None else f"{err:+.1%}",
                "fits": "yes" if r.fits else "no",
                "verdict": "right" if r.verdict_right else "WRONG",
                "source": f"{r.run.source}: {r.run.row}"[:60],
            }
        )
    return out


def markdown(results: list[MemoryResult]) -> str:
    lines = [
        "| run | role | counter | measured GB | predicted GB | error | fits |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for row in frame_rows(results):
        lines.append(
            f"| {row['run']} | {row['role']} | {row['counter']} | {row['measured_gb']} | "
            f"{row['predicted_gb']} | {row['error']} | {row['fits']} |"
        )
    lines.append("")
    lines += ["- " + line for line in summary_lines(results)]
    return "\n".join(lines) + "\n"
