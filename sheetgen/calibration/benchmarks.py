"""Published training runs against the step-time model (``sheetgen benchmark-check``).

``presets/benchmarks/*.yaml`` hold published runs, each with its source (paper or
page, table, row), the layout as a sheetgen scenario and the published throughput.
A row's ``role`` says whether the model's free parameters were fitted on it
(``fit``), it is only checked (``check``: the same three sources, not fitted), or
it is held out (``holdout``: other organisations' published runs, never used to
fit, predicted as they are; the MosaicML rows did prompt the attention-kernel input,
docs/benchmarks-holdout.md says how);
docs/DESIGN.md lists the first two, docs/benchmarks-holdout.md the third.

Published tokens/s per GPU: printed (NeMo tables) or derived from the published
TFLOP/s per GPU with the source's own FLOP count, stated per row:
  ``printed``       tokens/s per GPU as printed;
  ``megatron-eq3``  Narayanan et al. 2021, Eq. 3: F = 96 B s l h^2 (1 + s/6h +
                    V/16lh) per iteration (recomputation counted), so tokens/s
                    per GPU = TFLOP/s / (96 l h^2 (1 + s/6h + V/16lh));
  ``sheetgen``      the source does not state its convention (Llama 3): TFLOP/s
                    / this workbook's model FLOPs per token.
A row whose recomputation is not published is predicted with the least
recomputation that fits (none, then selective, then full on 1, 2, ... layers of
each pipeline stage, then on all), as a practitioner would choose (a row that
publishes partial recomputation states ``recompute_layers``, the layers per stage
recomputed); a row's ``mem_headroom`` is 0 (a run that ran fitted in the whole
memory), unless the row says otherwise.

A source may say ``blind: true``: its rows were written down before their first
prediction and nothing in the model changed because of them; the summary then gives
the blind rows a line of their own.

A row may name the attention kernel its run used (``attention_kernel``: name and
where the source says so); the run is then predicted with that kernel's speed
relative to the hardware preset's kernel (``ATTENTION_KERNELS``) as its
``attn_kernel_speed``, the input a user of that kernel types.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sheetgen.errors import SheetgenError, short

CONVENTIONS = ("printed", "megatron-eq3", "sheetgen")
ROLES = ("fit", "check", "holdout")
# The summary lines, in order: label and role (None: every row given).
SUMMARIES = (
    ("fit rows", "fit"),
    ("check rows", "check"),
    ("held-out rows", "holdout"),
    ("all rows", None),
)
WITHIN = 0.15  # the band the summary counts rows inside (the one-clock issue's ±15%)

# Attention kernels, by speed relative to FlashAttention-2 on the same GPU (head
# dimension 128, long sequences), applied to forward and backward alike.  Sources:
#   fa3     Shah et al. 2024, FlashAttention-3 (arXiv:2407.08608), abstract: FA3 reaches
#           up to 75% of the H100's BF16 peak where FA2 reaches 35% (forward-pass
#           figures): 75 / 35 (Hopper only);
#   fa2     Dao 2023, FlashAttention-2 (arXiv:2307.08691): the unit;
#   triton  the same paper, sec. 4: FA2 is 1.3-2.5x faster than FlashAttention in Triton
#           (sec. 4.1: 1.3-1.5x in the forward pass, about 2x in the backward); the
#           geometric middle of that range, sqrt(1.3 x 2.5) = 1.80;
#   fa1     the same sentence: FA2 is 1.7-3.0x faster than FlashAttention (v1); its
#           geometric middle, sqrt(1.7 x 3.0) = 2.26.
ATTENTION_KERNELS: dict[str, float] = {
    "fa3": 75 / 35,
    "fa2": 1.0,
    "triton": 1 / math.sqrt(1.3 * 2.5),
    "fa1": 1 / math.sqrt(1.7 * 3.0),
}
# The kernel each hardware preset's attn_eff describes (its source names it): the
# fastest published for that GPU.  FA3 runs on Hopper only.
PRESET_KERNEL = {"h100-sxm": "fa3", "h100-pcie": "fa3", "a100-80gb": "fa2", "a100-40gb": "fa2"}


def attention_kernel_speed(hardware_id: str, kernel: str) -> float:
    """``attn_kernel_speed`` for ``kernel`` on a hardware preset: its speed relative to
    the kernel the preset's ``attn_eff`` describes (PRESET_KERNEL)."""
    base = PRESET_KERNEL.get(hardware_id)
    if base is None:
        known = ", ".join(PRESET_KERNEL)
        raise SheetgenError(
            "attention_kernel", f"no kernel rates for {hardware_id}; accepted: {known}"
        )
    if kernel not in ATTENTION_KERNELS:
        accepted = ", ".join(ATTENTION_KERNELS)
        raise SheetgenError("attention_kernel", f"got {short(kernel)}; accepted: {accepted}")
    if kernel == "fa3" and base != "fa3":
        raise SheetgenError(
            "attention_kernel", f"fa3 runs on Hopper GPUs only, not on {hardware_id}"
        )
    return ATTENTION_KERNELS[kernel] / ATTENTION_KERNELS[base]


@dataclass(frozen=True)
class Benchmark:
    id: str
    source: str
    row: str
    role: str
    scenario: dict[str, Any]
    published: dict[str, Any]
    notes: str = ""
    attention_kernel: str = ""  # "" = the hardware preset's own attn_eff
    attention_kernel_source: str = ""
    # The source's rows were written down before their first prediction and nothing in
    # the model changed because of them (its file's ``source.blind``).
    blind: bool = False

    @property
    def moe(self) -> bool:
        """A Mixture-of-Experts run (its model routes to experts): its summary lines are
        its own, so the dense calibration's figures read as they did."""
        model = self.scenario.get("model")
        return isinstance(model, dict) and int(model.get("n_experts", 0) or 0) > 0


@dataclass(frozen=True)
class Result:
    bench: Benchmark
    recompute: str
    recompute_chosen: bool
    fits: bool
    mem_gb: float
    published_tps: float
    predicted_tps: float
    predicted_mfu: float
    published_mfu: float

    @property
    def error(self) -> float:
        return self.predicted_tps / self.published_tps - 1


def benchmarks_dir() -> Path:
    from sheetgen.paths import presets_dir

    return presets_dir() / "benchmarks"


def _preset_id(scenario: dict[str, Any]) -> str:
    """The hardware preset a row's scenario runs on: its id, or its mapping's ``base``."""
    spec = scenario["hardware"]
    return str(spec.get("base", "")) if isinstance(spec, dict) else str(spec)


def to_yaml(
    source_id: str, title: str, runs: list[dict[str, Any]], comment: str, *, blind: bool
) -> str:
    """A presets/benchmarks/ file as the transcription tools write it (``comment``: its
    opening lines, each to be prefixed with '# '; ``blind``: predicted as first written)."""
    import yaml

    head = "".join(f"# {line}\n" for line in comment.splitlines())
    doc = {"source": {"id": source_id, "title": title, "blind": blind}, "runs": runs}
    return head + yaml.safe_dump(doc, sort_keys=False, width=100, allow_unicode=True)


def load(directory: Path | None = None) -> list[Benchmark]:
    from sheetgen.scenarios.yaml_load import load_yaml

    directory = directory or benchmarks_dir()
    out: list[Benchmark] = []
    for path in sorted(directory.glob("*.yaml")):
        doc = load_yaml(path.read_text(encoding="utf-8"), str(path))
        source = doc["source"]["id"]
        blind = doc["source"].get("blind", False)
        if not isinstance(blind, bool):
            raise SheetgenError(
                f"{path.name}: source.blind", f"got {short(blind)}; accepted: true, false"
            )
        for run in doc["runs"]:
            where = f"{path.name}: {run.get('id', '?')}"
            if run.get("role") not in ROLES:
                got = short(run.get("role"))
                raise SheetgenError(f"{where}.role", f"got {got}; accepted: {', '.join(ROLES)}")
            conv = run["published"].get("flop_convention")
            if conv not in CONVENTIONS:
                raise SheetgenError(f"{where}.published.flop_convention", f"got {short(conv)}")
            kernel = run.get("attention_kernel") or {}
            if kernel:  # a kernel it has a rate for, on that hardware
                try:
                    attention_kernel_speed(_preset_id(run["scenario"]), str(kernel.get("name")))
                except SheetgenError as e:
                    raise SheetgenError(f"{where}.attention_kernel", e.message) from None
            out.append(
                Benchmark(
                    id=run["id"],
                    source=source,
                    row=run["row"],
                    role=run["role"],
                    scenario=run["scenario"],
                    published=run["published"],
                    notes=run.get("notes", ""),
                    attention_kernel=kernel.get("name", ""),
                    attention_kernel_source=kernel.get("source", ""),
                    blind=blind,
                )
            )
    return out


def _scenario(b: Benchmark, recompute: str, overrides: dict[str, Any]):
    from sheetgen.scenarios.files import scenario_from_dict

    item = {"name": b.id, "train_tokens": 10**12, "mem_headroom": 0, "mfu_source": "layout"}
    item.update(b.scenario)
    item["recompute"] = recompute
    item.update(overrides)
    return scenario_from_dict(item)


def published_tokens_per_s(b: Benchmark, flops_per_token: float) -> float:
    pub, conv = b.published, b.published["flop_convention"]
    if conv == "printed":
        return float(pub["tokens_per_s_per_gpu"])
    tflops = float(pub["tflops_per_gpu"]) * 1e12
    if conv == "megatron-eq3":
        m = b.scenario["model"]
        layers, h, vocab = m["n_layers"], m["hidden_size"], m["vocab_size"]
        seq = b.scenario["seq_len"]
        per_token = 96 * layers * h * h * (1 + seq / (6 * h) + vocab / (16 * layers * h))
        return tflops / per_token
    return tflops / flops_per_token


def _recompute_options(b: Benchmark) -> list[tuple[str, int]]:
    """The stated recomputation, or the least that may fit, in order: none,
    selective, then full on 1, 2, ... layers of each pipeline stage, then all."""
    stated = b.scenario.get("recompute")
    if stated:
        return [(stated, 0)]
    per_stage = math.ceil(b.scenario["model"]["n_layers"] / b.scenario.get("pp", 1))
    partial = [("full", k) for k in range(1, per_stage)]
    return [("none", 0), ("selective", 0), *partial, ("full", 0)]


def evaluate(b: Benchmark, overrides: dict[str, Any] | None = None, hw=None) -> Result:
    """Predict one published run (``overrides``: run inputs; ``hw``: a Hardware to use)."""
    from dataclasses import replace

    from sheetgen.reference.flops import flops
    from sheetgen.reference.parallelism import predicted

    overrides = overrides or {}
    if b.attention_kernel:  # the run's kernel, as a user of it types attn_kernel_speed
        speed = attention_kernel_speed(_preset_id(b.scenario), b.attention_kernel)
        overrides = {"attn_kernel_speed": speed, **overrides}
    stated = b.scenario.get("recompute")
    chosen = None
    for rc, layers in _recompute_options(b):
        s = _scenario(b, rc, {**({"recompute_layers": layers} if layers else {}), **overrides})
        if hw is not None:
            s = replace(s, hardware=hw)
        lay = predicted(s)
        chosen = (rc, s, lay)
        if lay["fits_per_gpu"]:
            break
    assert chosen is not None
    rc, s, lay = chosen
    f = flops(s)
    pub = published_tokens_per_s(b, f["flops_per_token"])
    layers = s.run.recompute_layers if rc == "full" else 0
    return Result(
        bench=b,
        recompute=f"{rc} ({layers} layers per stage)" if layers else rc,
        recompute_chosen=not stated,
        fits=bool(lay["fits_per_gpu"]),
        mem_gb=lay["mem_total_calibrated"] / 1e9,
        published_tps=pub,
        predicted_tps=lay["tokens_per_s_per_gpu_predicted"],
        predicted_mfu=lay["mfu_predicted"],
        published_mfu=pub * f["flops_per_token"] / f["peak_flops"],
    )


@dataclass(frozen=True)
class Summary:
    n: int
    median_abs: float
    worst: float
    p90_abs: float
    fits: int
    within: int  # rows whose |error| <= WITHIN


def summarize(results: list[Result]) -> Summary:
    errs = sorted(abs(r.error) for r in results)
    worst = max((r.error for r in results), key=abs)
    p90 = errs[min(len(errs) - 1, int(0.9 * len(errs)))] if errs else 0.0
    return Summary(
        n=len(results),
        median_abs=statistics.median(errs) if errs else 0.0,
        worst=worst,
        p90_abs=p90,
        fits=sum(r.fits for r in results),
        within=sum(abs(r.error) <= WITHIN + 1e-12 for r in results),
    )


def summary_line(summary: Summary, label: str) -> str:
    """One line: median and worst error, 90th percentile, rows within ±15%, layouts
    accepted as fitting."""
    return (
        f"{label}: {summary.n} runs; median |error| {summary.median_abs:.1%}, worst "
        f"{summary.worst:+.1%}, 90th percentile |error| {summary.p90_abs:.1%}, "
        f"{summary.within} of {summary.n} within ±{WITHIN:.0%}; "
        f"{summary.fits} of {summary.n} published layouts fit in memory"
    )


def summary_lines(results: list[Result]) -> list[str]:
    """The summary lines of the dense rows, then, when there are Mixture-of-Experts rows,
    theirs, each label prefixed 'MoE' (the MoE terms vanish for dense models, so the
    dense lines read as they did before MoE rows were added)."""
    dense = [r for r in results if not r.bench.moe]
    moe = [r for r in results if r.bench.moe]
    lines = _role_lines(dense) if dense else []
    return lines + [f"MoE {line}" for line in _role_lines(moe)] if moe else lines


def _role_lines(results: list[Result]) -> list[str]:
    """The summary line of each role present (held-out rows also per source, when they
    come from more than one, and the blind sources' rows together, when some are not
    blind), then of all rows when more than one role is present."""
    lines: list[str] = []
    several_roles = len({r.bench.role for r in results}) > 1
    summaries = [(label, role) for label, role in SUMMARIES if role is not None or several_roles]
    for label, role in summaries:
        subset = [r for r in results if role in (None, r.bench.role)]
        if subset:
            lines.append(summary_line(summarize(subset), label))
        sources = sorted({r.bench.source for r in subset})
        if role == "holdout" and len(sources) > 1:  # each organisation on its own
            for source in sources:
                rows = [r for r in subset if r.bench.source == source]
                lines.append(summary_line(summarize(rows), f"{label}, {source}"))
            blind = [r for r in subset if r.bench.blind]
            if blind and len(blind) < len(subset):  # the rows that are a blind test
                names = ", ".join(sorted({r.bench.source for r in blind}))
                lines.append(summary_line(summarize(blind), f"{label} predicted blind ({names})"))
    return lines


def markdown(results: list[Result]) -> str:
    """The predicted-vs-published table and its summary as Markdown (docs/DESIGN.md
    holds this block; ``sheetgen benchmark-check --format markdown`` prints it)."""
    lines = [
        "| run | role | published tok/s/GPU | predicted | error | fits |",
        "|---|---|---:|---:|---:|---|",
    ]
    for r in results:
        fits = "yes" if r.fits else "no"
        rc = ""
        if r.recompute_chosen:  # the least that fits, none included
            what = "no" if r.recompute == "none" else r.recompute
            rc = f", {what} recomputation chosen"
        lines.append(
            f"| {r.bench.id} | {r.bench.role} | {r.published_tps:,.1f} | "
            f"{r.predicted_tps:,.1f} | {r.error:+.1%} | {fits}{rc} |"
        )
    lines.append("")
    lines += ["- " + line for line in summary_lines(results)]
    return "\n".join(lines) + "\n"
