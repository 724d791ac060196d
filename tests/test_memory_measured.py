"""Memory as measured (issue 40): the framework choices real runs make (optimizer
moments and master copy, FP8 activation caching, recomputed modules, the interleaved
pipeline's micro-batch group, activation offload, chunked cross-entropy) and the
memory PyTorch's counters and nvidia-smi see (allocator reserve, CUDA context, NCCL
buffers), each checked by hand; the workbook equals the reference after
recalculation in the in-process engine and in LibreOffice."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import build_matrix, calc, expect, libreoffice_values, mismatches

from sheetgen.checking.recalc import recalc_pycel

GB = 1e9
N_8B = 8_030_261_248  # Llama 3 8B parameters (Params sheet)
H_8B, F_8B, L_8B = 4096, 14336, 32


def test_optimizer_moments_and_master_copy_change_the_bytes_per_parameter() -> None:
    base = {"model": "llama3-8b", "recipe": "megatron-bf16"}
    r = calc("8B Megatron", **base)
    expect(r, "bytes_per_param", 18, abs=0)
    for dtype, moments in (("fp32", 8), ("bf16", 4), ("8bit", 2)):
        r = calc(f"8B moments {dtype}", **base, optimizer_state_dtype=dtype)
        expect(r, "optimizer_bytes", moments, abs=0)
        expect(r, "bytes_per_param", 10 + moments, abs=0)
    # Pure BF16: no FP32 master copy.
    r = calc("8B pure bf16", **base, master_weights=0, optimizer_state_dtype="bf16")
    expect(r, "master_bytes", 0, abs=0)
    expect(r, "bytes_per_param", 2 + 4 + 4, abs=0)
    expect(r, "mem_static", 10 * r["params_total"], rel=1e-12)


def test_lora_keeps_its_adapters_optimizer_bytes() -> None:
    r = calc("8B lora", model="llama3-8b", recipe="lora", optimizer_state_dtype="bf16")
    expect(r, "optimizer_bytes", r["lora_optimizer_bytes_avg"], rel=1e-12)


def values_per_token(recompute_norms: int = 0, mlp_act: int = 0) -> float:
    """Llama 3 8B's values kept per token and layer (formula profile): 2h norm inputs,
    2h norm outputs unless recomputed, Q, K, V, O (h + 1024 + 1024 + h), the MLP's 4 F
    tensors or, its activation recomputed, 2."""
    h = H_8B
    return 2 * h + 2 * h * (1 - recompute_norms) + 2 * h + 2 * 1024 + (2 if mlp_act else 4) * F_8B


@pytest.mark.parametrize("norms", [0, 1])
@pytest.mark.parametrize("mlp_act", [0, 1])
def test_recomputed_modules_drop_their_tensors(norms: int, mlp_act: int) -> None:
    r = calc(
        f"8B norms {norms} act {mlp_act}",
        model="llama3-8b",
        seq_len=4096,
        recompute_norms=norms,
        recompute_mlp_act=mlp_act,
    )
    expect(r, "act_values_dense_layer", values_per_token(norms, mlp_act), abs=0)
    expect(r, "mem_act_dense_layer", 2 * 4096 * values_per_token(norms, mlp_act), rel=1e-12)
    # What the layer writes does not change: the clock's memory-bound work stays.
    plain = calc("8B plain", model="llama3-8b", seq_len=4096)
    expect(r, "mem_act_layer_avg_gpu", plain["mem_act_layer_avg_gpu"], rel=1e-12)


@pytest.mark.parametrize(("targets", "frozen"), [("qv", 1), ("qkvo", 1), ("all-linear", 0)])
def test_lora_with_the_mlp_frozen_keeps_no_input_for_it(targets: str, frozen: int) -> None:
    """A frozen linear layer needs no weight gradient: nothing keeps the MLP norm's
    output (h) or the down projection's input (F) when LoRA leaves the MLP frozen."""
    full = calc("8B full", model="llama3-8b", seq_len=4096)
    r = calc(f"8B lora {targets}", model="llama3-8b", seq_len=4096, recipe="lora",
             lora_targets=targets)  # fmt: skip
    expect(r, "lora_frozen_mlp", frozen, abs=0)
    dropped = frozen * (H_8B + F_8B)
    expect(r, "act_values_dense_layer", full["act_values_dense_layer"] - dropped, abs=0)
    expect(r, "mem_act_layer_avg_gpu", full["mem_act_layer_avg_gpu"], rel=1e-12)


def test_gelu_mlp_with_its_activation_recomputed_keeps_its_input() -> None:
    r = calc("GPT-2 recompute act", model="gpt2-124m", recompute_mlp_act=1)
    expect(r, "mlp_act_tensors", 1, abs=0)


def test_deepseek_v3_options_as_the_report_states() -> None:
    """MLA up-projections recomputed keep only the latents and O; FP8 caching keeps
    the linear layers' inputs at 1 byte under the formula profile."""
    ds = {"model": "deepseek-v3", "hardware": "h800", "peak_dtype": "fp8", "seq_len": 4096}
    plain = calc("DS plain", **ds)
    r = calc("DS options", **ds, recompute_up_proj=1, recompute_norms=1, act_fp8_cache=1)
    # 128 heads: Q, K of 192 and V, O of 128 per head; latents 1,536 + 512.
    expect(plain, "act_values_attn", 256 * 192 + 256 * 128 + 1536 + 512, abs=0)
    expect(r, "act_values_attn", 128 * 128 + 1536 + 512, abs=0)
    expect(r, "act_norm_outputs_token", 0, abs=0)
    expect(r, "act_fp8_saved", 1, abs=0)
    expect(plain, "act_fp8_saved", 0, abs=0)
    # No norm outputs kept, so nothing of them to cache in FP8.
    expect(r, "act_fp8_whole_token", 0, abs=0)
    assert r["mem_activations"] < 0.6 * plain["mem_activations"]


def test_recompute_up_proj_needs_mla() -> None:
    r = calc("8B up-proj", model="llama3-8b", recompute_up_proj=1)
    expect(r, "attn_up_recomputed", 0, abs=0)
    expect(r, "act_values_attn", 2 * H_8B + 2 * 1024, abs=0)


def test_offload_and_chunked_loss() -> None:
    base = {"model": "llama3-8b", "seq_len": 8192}
    plain = calc("8B", **base)
    r = calc("8B offload chunks", **base, act_offload_share=0.25, logits_chunks=8)
    expect(r, "mem_logits_live", plain["mem_logits_live"] / 8, rel=1e-12)
    expect(r, "mem_activations", plain["mem_act_kept"] * 0.75, rel=1e-12)
    expect(r, "mem_activations_per_gpu", plain["mem_activations_per_gpu"] * 0.75, rel=1e-12)
    expect(r, "mem_logits_per_gpu", plain["mem_logits_per_gpu"] / 8, rel=1e-12)


@pytest.mark.parametrize(
    ("profile", "peak"), [("formula", 4), ("hf-eager", 12), ("megatron-te", 6)]
)
def test_the_logits_at_the_losss_peak(profile: str, peak: float) -> None:
    """formula: one FP32 copy; hf-eager: log_softmax's saved output and, in its
    backward, the incoming and outgoing FP32 gradients; megatron-te: the BF16 logits
    beside the FP32 copy (softmax and gradient then in place)."""
    r = calc(f"8B {profile}", model="llama3-8b", seq_len=8192, act_profile=profile)
    expect(r, "logits_peak_bytes", peak, abs=0)
    expect(r, "mem_logits_live", peak * 8192 * 128256, rel=1e-12)
    expect(r, "mem_logits", 4 * 8192 * 128256, rel=1e-12)  # the clock's loss reads this


def test_the_micro_batch_group_sets_the_warm_up() -> None:
    """Interleaved: 2 (pp - 1) + (v - 1) N + 1 chunk passes on the first stage, i.e. N
    whole stages and 2 pp - 1 - N passes of the first chunk (even chunks: 1 / v)."""
    base = {"model": "llama3-70b", "n_gpus": 64, "tp": 4, "pp": 4, "pp_virtual_stages": 2}
    base.update(global_batch_tokens=64 * 4096)  # 64 sequences over dp 4: m = 16
    default = calc("70B N=pp", **base)
    expect(default, "pp_group_used", 4, abs=0)
    expect(default, "interleave_factor", 1 + 3 / 4 / 2, rel=1e-12)
    r = calc("70B N=6", **base, pp_microbatch_group=6)
    expect(r, "micro_batches_in_flight", 6, abs=0)
    expect(r, "interleave_factor", 1 + (2 * 4 - 1 - 6) / 6 / 2, rel=1e-12)
    passes = 2 * (4 - 1) + (2 - 1) * 6 + 1
    in_flight = r["micro_batches_in_flight"] * r["interleave_factor"]
    expect({**r, "_in_flight": in_flight}, "_in_flight", passes / 2, rel=1e-12)


@pytest.mark.parametrize("group", [1, 2, 8, 16, 24])
@pytest.mark.parametrize("split", [0, 1])
def test_the_warm_up_counted_pass_by_pass(group: int, split: int) -> None:
    """Stage 1's warm-up enumerated: pass k runs chunk (k // N) mod v; the activations
    it keeps are that chunk's layers (the first chunk holds one fewer with the
    embedding in a layer's place)."""
    pp, v, layers = 16, 4, 126
    base = {"model": "llama3-405b", "n_gpus": 2048, "tp": 8, "pp": pp, "pp_virtual_stages": v}
    base.update(global_batch_tokens=64 * 16 * 8192, seq_len=8192)  # m = 64 micro-batches
    r = calc(f"405B N={group} split={split}", **base, pp_microbatch_group=group,
             pp_split_embedding_loss=split)  # fmt: skip
    places = layers + 2 * split
    chunk_layers = [places / (pp * v) - (split if c == 0 else 0) for c in range(v)]
    passes = 2 * (pp - 1) + (v - 1) * group + 1
    kept = sum(chunk_layers[(k // group) % v] for k in range(passes))
    expect(r, "pp_warmup_passes", passes, abs=0)
    in_flight = r["micro_batches_in_flight"] * r["interleave_factor"]
    expect({**r, "_layers": in_flight * r["layers_first_stage"]}, "_layers", kept, rel=1e-12)


def device(total: float, n_gpus: int, overhead: float = 1.5 * GB) -> float:
    """nvidia-smi's peak: the tensors x 1.017 (allocator reserve) + the CUDA context + NCCL."""
    nccl = 2 * 32 * 2 * 4 * 2**20 if n_gpus > 1 else 0
    return (total - overhead) * 1.017 + overhead + nccl


@pytest.mark.parametrize("n_gpus", [1, 8])
def test_the_counters(n_gpus: int) -> None:
    r = calc(f"8B on {n_gpus}", model="llama3-8b", n_gpus=n_gpus, zero_stage=3)
    allocated = r["mem_total_per_gpu"] - 1.5 * GB
    expect(r, "mem_allocated_per_gpu", allocated, rel=1e-12)
    expect(r, "mem_reserved_per_gpu", allocated * 1.017, rel=1e-12)
    expect(r, "mem_device_per_gpu", device(r["mem_total_per_gpu"], n_gpus), rel=1e-12)
    expect(r, "fits_per_gpu", int(r["mem_device_per_gpu"] <= r["gpu_mem_bytes"]), abs=0)


@pytest.mark.parametrize("counter", ["allocated", "reserved", "device"])
def test_a_measured_peak_is_compared_like_with_like(counter: str) -> None:
    base = {"model": "llama3-8b", "n_gpus": 8, "zero_stage": 3}
    plain = calc("8B", **base)
    measured = 1.1 * plain[f"mem_{counter}_per_gpu"]
    r = calc(f"8B measured {counter}", **base, measured_peak_mem=measured,
             measured_peak_counter=counter)  # fmt: skip
    expect(r, "mem_overhead_factor", 1.1, rel=1e-12)
    expect(r, "mem_total_calibrated", 1.1 * plain["mem_device_per_gpu"], rel=1e-12)


def matrix_items() -> list[dict[str, Any]]:
    return [
        {"name": "DeepSeek-V3 report options", "model": "deepseek-v3", "hardware": "h800",
         "n_gpus": 2048, "pp": 16, "ep": 64, "zero_stage": 1, "seq_len": 4096,
         "global_batch_tokens": 62_914_560, "peak_dtype": "fp8",
         "optimizer_state_dtype": "bf16", "act_fp8_cache": 1, "recompute_norms": 1,
         "recompute_up_proj": 1},
        {"name": "8B pure bf16 offload", "model": "llama3-8b", "hardware": "h100-sxm", "n_gpus": 8, "zero_stage": 1,
         "optimizer_state_dtype": "8bit", "master_weights": 0, "recompute_norms": 1,
         "recompute_mlp_act": 1, "act_offload_share": 0.3, "logits_chunks": 8,
         "act_profile": "hf-eager", "measured_peak_mem": 40e9,
         "measured_peak_counter": "allocated"},
        {"name": "70B interleaved N", "model": "llama3-70b", "hardware": "h100-sxm", "n_gpus": 64, "tp": 4, "pp": 4,
         "pp_virtual_stages": 2, "pp_microbatch_group": 6, "pp_split_embedding_loss": 1,
         "peak_dtype": "fp8", "act_fp8_cache": 1, "sequence_parallel": 1,
         "act_profile": "megatron-te", "recompute_mlp_act": 1,
         "measured_peak_mem": 70e9, "measured_peak_counter": "device",
         "mem_reserved_share": 0.1, "mem_comm_buffer_bytes": 1e9},
        {"name": "8B QLoRA qv", "model": "llama3-8b", "hardware": "l40s", "n_gpus": 1,
         "recipe": "qlora", "lora_targets": "qv", "recompute_norms": 1, "logits_chunks": 4},
        {"name": "GPT-2 one GPU", "model": "gpt2-124m", "hardware": "a100-80gb", "n_gpus": 1, "recompute_mlp_act": 1,
         "optimizer_state_dtype": "fp32", "attention": "naive", "recompute": "full",
         "measured_peak_mem": 5e9, "mem_headroom": 0.05},
    ]  # fmt: skip


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory):
    return build_matrix(tmp_path_factory.mktemp("memory40"), matrix_items(), "memory40")


def test_pycel_equals_reference(matrix) -> None:
    path, _, reference = matrix
    bad = mismatches(recalc_pycel(path), reference)
    assert not bad, f"{len(bad)} keys differ in pycel:\n" + "\n".join(bad[:40])


@pytest.mark.libreoffice
def test_libreoffice_equals_reference(matrix) -> None:
    path, _, reference = matrix
    bad = mismatches(libreoffice_values(path), reference)
    assert not bad, f"{len(bad)} keys differ in LibreOffice:\n" + "\n".join(bad[:40])


def test_the_shipped_deepseek_v3_plan_is_ok_with_the_reports_savings() -> None:
    """The report's layout (2,048 H800, PP 16, EP 64, ZeRO-1, FP8) with its memory savings
    (sections 3.2.3 and 3.3.3) fits; without them it does not (108.7 GB before issue 40)."""
    from dataclasses import replace

    from sheetgen.reference import compute
    from sheetgen.scenarios.files import load_scenarios

    (s,) = load_scenarios("presets/scenarios/deepseek-v3-phases.yaml")
    run = s.run
    assert (run.recompute_norms, run.recompute_up_proj, run.act_fp8_cache) == (1, 1, 1)
    assert run.optimizer_state_dtype == "bf16"
    r = compute(s)
    assert (r["plan_verdict"], r["fits_per_gpu"]) == ("OK", 1), r["plan_verdict"]
    assert r["mem_total_calibrated"] / GB == pytest.approx(68.6, abs=0.05)
    plain = replace(run, recompute_norms=0, recompute_up_proj=0, act_fp8_cache=0,
                    optimizer_state_dtype="recipe")  # fmt: skip
    assert compute(replace(s, run=plain))["fits_per_gpu"] == 0
