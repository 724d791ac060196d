"""The serving step model: how long one decode step and one prefill take on a replica.

A few physical terms, bytes moved, FLOPs and fixed latencies per call, whose
efficiencies are fitted once per hardware family or engine, never per workload (the
shape of Vidur, Agrawal et al. 2024, and calculon, Isaev et al. 2023).  One replica of
t tensor-parallel GPUs, B sequences in flight at average context c:

  weights      W_s = weight bytes per GPU / (HBM bandwidth x inf_bw_eff): every step
               streams the weights once (Pope et al. 2022, section 2).
  GEMMs        G(B) = 2 N_active x (B + m_half) / (t x GEMM rate): the step's GEMMs
               have M = B rows; e(M) = e x M / (M + m_half), the small-M curve, so
               large batches become compute-bound.  m_half = inf_gemm_half_ridge x the
               ridge rows, bytes per weight x GEMM rate / (2 x HBM x inf_bw_eff): the M
               at which a GEMM's FLOPs take as long as streaming its weights (Williams
               et al. 2009, Roofline; fitted share 1.03, held at 1).  GEMM rate: the
               weight format's peak x e_max (gemm_peak) x w / (w + gemm_dim_half),
               w = h / t, the training clock's shape curve (gemm_rate).
  overlap      a GEMM streams its weights while it multiplies, so the two overlap
               within the kernel: max(W_s, G(B)).  Attention, all-reduces and the
               fixed costs run as their own kernels and calls, one after another,
               and add (the fitted terms absorb what a real engine overlaps).
  attention    per sequence A_s = max(KV bytes read at c x this GPU's share /
               (HBM bandwidth x inf_kv_eff x c / (c + inf_kv_ctx_half)),
               attention FLOPs at c / (t x BF16 peak x attn_eff)): the
               paged-attention kernel reads each sequence's cache; short contexts
               read it at a lower rate (fewer blocks per sequence to spread over the
               chip; Kwon et al. 2023, section 4.1).
  all-reduces  tensor parallel: 2 per layer (Shoeybi et al. 2019, section 3), each
               inf_collective_latency_s + B x h x act bytes x 2(t-1)/t / link;
               0 at t = 1.  Their latency does not shrink with t.
  per layer    n_layers x inf_layer_latency_s: kernel launches and synchronisation
               per layer, at any t (the reason decode stops scaling with t).
  per step     inf_step_overhead_s (scheduling, sampling, the host's share of a
               step) + B x inf_seq_overhead_s (per-sequence host work).

  step(B) = max(W_s, G(B)) + B x (A_s + all-reduce bytes per sequence +
            inf_seq_overhead_s) + fixed,   fixed = per layer + all-reduce latencies
            + inf_step_overhead_s: piecewise linear in B (the Serving sheet solves
            its SLO batch in closed form).

Prefill of T = b x P prompt tokens (one forward pass) runs at the training clock's
kernel efficiencies of the hardware preset: GEMMs at e_max x d / (d + gemm_dim_half),
d = min(h / t, T) (the clock's shape curve), the attention core at attn_eff x P / (P +
attn_seq_half); at least one read of the weights; + the prompt's all-reduces + the
per-layer and per-step fixed costs.  Time to first token = prefill +
inf_ttft_overhead_s (request handling before the first forward pass).
"""

from __future__ import annotations

from dataclasses import dataclass

from sheetgen.reference.weight_formats import FP4_FORMATS
from sheetgen.scenarios.scenario import Hardware, Scenario
from sheetgen.units import GIGA, TERA


def gemm_peak(hw: Hardware, weight_dtype: str) -> tuple[float, float]:
    """The GEMM peak (FLOP/s) and its large-GEMM efficiency for the served weight
    format: FP4 weights (MXFP4, NVFP4) on hardware with an FP4 peak multiply in FP4, at
    the FP8 GEMM efficiency (no FP4 GEMM is calibrated: a stated assumption); FP8
    weights, and FP4 weights without an FP4 peak, on hardware with an FP8 peak multiply
    in FP8; every other format (BF16, FP16, weight-only INT8/INT4, dequantized) in BF16
    (the same order as ``weight_formats.weight_format_peak_tflops``)."""
    if hw.gemm_eff_fp8 > 0:
        if weight_dtype in FP4_FORMATS and hw.peak_fp4_tflops > 0:
            return hw.peak_fp4_tflops * TERA, hw.gemm_eff_fp8
        if weight_dtype in (*FP4_FORMATS, "fp8") and hw.peak_fp8_tflops > 0:
            return hw.peak_fp8_tflops * TERA, hw.gemm_eff_fp8
    return hw.peak_bf16_tflops * TERA, hw.gemm_eff_bf16


def gemm_rate(s: Scenario, t: int) -> float:
    """FLOP/s one GPU's GEMMs reach with many rows: the weight format's peak x e_max x
    w / (w + gemm_dim_half), w = hidden / t, the training clock's shape curve at the
    layer's split width (reference.throughput)."""
    hw = s.hardware
    peak, eff = gemm_peak(hw, s.run.weight_dtype)
    width = s.model.hidden_size / t
    return peak * eff * width / (width + hw.gemm_dim_half)


def gemm_half_rows(s: Scenario) -> float:
    """Rows at which a GEMM runs at half its large-GEMM rate: inf_gemm_half_ridge x the
    ridge rows, the M at which a GEMM's FLOPs (2 M per weight) at the weight format's
    large-GEMM rate take as long as streaming its weights (bytes per weight) at the
    fitted share of HBM bandwidth."""
    hw, run = s.hardware, s.run
    peak, eff = gemm_peak(hw, run.weight_dtype)
    stream = hw.hbm_tbps * TERA * run.inf_bw_eff
    ridge = s.tables.dtype(run.weight_dtype) * peak * eff / (2 * stream)
    return run.inf_gemm_half_ridge * ridge


@dataclass(frozen=True)
class Step:
    """The decode step's terms on one replica (seconds)."""

    weight_s: float  # weights per GPU / (HBM x inf_bw_eff)
    gemm_fixed_s: float  # the small-M floor: 2 N m_half / (t peak e_max)
    gemm_seq_s: float  # per sequence: 2 N / (t peak e_max)
    attn_seq_s: float  # per sequence: the paged-attention kernel at context c
    ar_seq_s: float  # per sequence: all-reduce bytes
    seq_s: float  # per sequence: host overhead
    layer_s: float  # n_layers x inf_layer_latency_s
    ar_fixed_s: float  # 2 n_layers x inf_collective_latency_s (t > 1)
    step_s: float  # inf_step_overhead_s

    @property
    def fixed_s(self) -> float:
        return self.layer_s + self.ar_fixed_s + self.step_s

    @property
    def per_seq_s(self) -> float:
        """The batch-proportional terms outside the GEMM/weights overlap."""
        return self.attn_seq_s + self.ar_seq_s + self.seq_s

    def time(self, batch: float) -> float:
        gemm = self.gemm_fixed_s + batch * self.gemm_seq_s
        return max(self.weight_s, gemm) + batch * self.per_seq_s + self.fixed_s


def attn_seq_s(
    s: Scenario, t: int, kv_read_seq: float, attended: float, attn_flops: float, ctx: float
) -> float:
    """One sequence's paged-attention time per decode step at average context ``ctx``:
    ``kv_read_seq`` this GPU's cache bytes, ``attended`` keys, ``attn_flops`` the
    attention FLOPs per token per attended token (whole model)."""
    run, hw = s.run, s.hardware
    hbm = hw.hbm_tbps * TERA
    read = kv_read_seq * (ctx + run.inf_kv_ctx_half) / (ctx * hbm * run.inf_kv_eff)
    flops = attended * attn_flops / (t * hw.peak_bf16_tflops * TERA * hw.attn_eff)
    return max(read, flops)


def allreduce_seq_s(s: Scenario, t: int, act_bytes: float) -> float:
    """All-reduce transfer time per step per sequence: 2 per layer of h values of
    ``act_bytes`` each, ring 2(t-1)/t at the intra-node link; 0 at t = 1."""
    if t <= 1:
        return 0.0
    m, hw = s.model, s.hardware
    ring = 2 * (t - 1) / t
    return 2 * m.n_layers * ring * m.hidden_size * act_bytes / (hw.intra_node_gb_per_s * GIGA)


def decode_step(
    s: Scenario,
    t: int,
    weight_bytes: float,
    flops_token: float,
    attn_s: float,
    act_bytes: float,
) -> Step:
    """The decode step's terms for a replica of ``t`` GPUs: ``weight_bytes`` the weights
    read per step (whole replica), ``flops_token`` 2 N_active, ``attn_s`` one sequence's
    attention time (attn_seq_s), ``act_bytes`` bytes per activation value."""
    m, run, hw = s.model, s.run, s.hardware
    per_seq_gemm = flops_token / (t * gemm_rate(s, t))
    multi = t > 1
    return Step(
        weight_s=weight_bytes / (t * hw.hbm_tbps * TERA * run.inf_bw_eff),
        gemm_fixed_s=gemm_half_rows(s) * per_seq_gemm,
        gemm_seq_s=per_seq_gemm,
        attn_seq_s=attn_s,
        ar_seq_s=allreduce_seq_s(s, t, act_bytes),
        seq_s=run.inf_seq_overhead_s,
        layer_s=m.n_layers * run.inf_layer_latency_s,
        ar_fixed_s=2 * m.n_layers * run.inf_collective_latency_s if multi else 0.0,
        step_s=run.inf_step_overhead_s,
    )


@dataclass(frozen=True)
class Prefill:
    """One prefill pass's terms (seconds)."""

    weight_s: float
    gemm_s: float
    attn_s: float
    ar_s: float
    fixed_s: float  # per layer + per step (+ all-reduce latencies)

    @property
    def time(self) -> float:
        return max(self.weight_s, self.gemm_s) + self.attn_s + self.ar_s + self.fixed_s


def prefill(
    s: Scenario,
    t: int,
    batch: float,
    prompt: int,
    flops_token: float,
    attn_core_flops: float,
    weight_bytes: float,
    act_bytes: float,
    rows: float = 0,
) -> Prefill:
    """A forward pass over ``batch`` prompts of ``prompt`` tokens on ``t`` GPUs;
    ``attn_core_flops`` the attention core's FLOPs for one prompt (causal, window share
    applied), ``weight_bytes`` the replica's weights; ``rows`` > 0: the GEMMs' row count
    when other prompts share the pass (else the pass's own tokens)."""
    hw = s.hardware
    tokens = batch * prompt
    m_rows = rows or tokens
    rate = gemm_rate(s, t) * m_rows / (m_rows + gemm_half_rows(s))
    attn_eff = hw.attn_eff * prompt / (prompt + hw.attn_seq_half)
    multi = t > 1
    step = decode_step(s, t, weight_bytes, flops_token, 0.0, act_bytes)
    return Prefill(
        weight_s=step.weight_s,
        gemm_s=tokens * flops_token / (t * rate),
        attn_s=batch * attn_core_flops / (t * hw.peak_bf16_tflops * TERA * attn_eff),
        ar_s=tokens * step.ar_seq_s if multi else 0.0,
        fixed_s=step.fixed_s,
    )
