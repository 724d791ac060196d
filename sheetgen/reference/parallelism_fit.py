"""Does a layout fit: the Parallelism sheet's peak per GPU against the usable memory,
the fewest GPUs that fit and the largest micro-batch (``parallelism.layout`` calls
these after it has counted the states and activations per GPU).

Peak memory per GPU, as the counters that measure it (issue 40):
  allocated = static + activations + logits live at once + ZeRO-3 buffer: the
              tensors, PyTorch's torch.cuda.max_memory_allocated();
  reserved  = allocated x (1 + mem_reserved_share): what the caching allocator holds
              at that peak (block rounding, fragmentation), max_memory_reserved();
  device    = reserved + overhead_bytes (the CUDA context and kernels, outside the
              allocator) + mem_comm_buffer_bytes (NCCL's buffers, on every GPU of a
              multi-GPU run): what nvidia-smi reports as used.
A pilot run's measured peak (``measured_peak_mem``) is read as the counter
``measured_peak_counter`` names and divided by the same counter predicted: that
factor scales the device figure, which the verdict compares with the capacity less
the planning headroom (``mem_headroom``, 0 by default).

The fewest GPUs and the largest micro-batch compare allocated bytes with the room
the allocator has: (usable / factor - CUDA context - NCCL buffers) / (1 + reserve).
"""

from __future__ import annotations

import math
from typing import Any

from sheetgen.reference.inputs import num_text, splits_evenly
from sheetgen.scenarios.scenario import Scenario
from sheetgen.units import GIGA


def zero3_buffer(stage: int, act: float, gather_unit: float) -> float:
    """ZeRO-3 / FSDP working buffer: 2 x act bytes x the largest unit gathered whole."""
    return 2 * act * gather_unit if stage >= 3 else 0


def comm_buffers(s: Scenario) -> float:
    """NCCL's buffers per GPU: only a run of more than one GPU has communicators."""
    return s.run.mem_comm_buffer_bytes if s.run.n_gpus > 1 else 0


def peak(s: Scenario, mem: dict[str, float], k: dict[str, Any]) -> dict[str, Any]:
    """Peak per GPU as each counter reports it, calibrated by a pilot run's measured
    peak (of the counter it names), against the usable memory."""
    run = s.run
    allocated = (
        k["mem_static_per_gpu"]
        + k["mem_activations_per_gpu"]
        + k["mem_logits_per_gpu"]
        + k["mem_zero3_buffer_per_gpu"]
    )
    total = allocated + run.overhead_bytes
    reserved = allocated * (1 + run.mem_reserved_share)
    comm = comm_buffers(s)
    device = reserved + run.overhead_bytes + comm
    counters = {"allocated": allocated, "reserved": reserved, "device": device}
    measured = run.measured_peak_mem
    overhead_factor = measured / counters[run.measured_peak_counter] if measured > 0 else 1
    calibrated = device * overhead_factor
    gpu_mem = s.hardware.mem_gb * GIGA
    usable = gpu_mem * (1 - run.mem_headroom)
    return {
        "mem_total_per_gpu": total,
        "mem_allocated_per_gpu": allocated,
        "mem_reserved_per_gpu": reserved,
        "mem_comm_buffers_per_gpu": comm,
        "mem_device_per_gpu": device,
        "mem_usable_per_gpu": usable,
        "mem_headroom_per_gpu": gpu_mem * run.mem_headroom,
        "mem_per_gpu_share": device / gpu_mem,
        "mem_overhead_factor": overhead_factor,
        "mem_total_calibrated": calibrated,
        "mem_alloc_room_per_gpu": (
            (usable / overhead_factor - run.overhead_bytes - comm) / (1 + run.mem_reserved_share)
        ),
        "fits_per_gpu": int(calibrated <= usable),
    }


def fewest_gpus(s: Scenario, mem: dict[str, float], k: dict[str, Any]) -> dict[str, Any]:
    """Smallest GPU count at this tp, pp, cp, ep: the data-parallel degree whose ZeRO
    shards bring the allocated bytes under the allocator's room.  Per GPU the sharded
    bytes are shard_bytes x (dense + ep x expert parameters per GPU) / (dp x cp);
    everything else (unsharded parameter bytes, activations, logits, the ZeRO-3
    buffer) does not shrink with dp.  Offloaded states are not on the GPU."""
    run = s.run
    tp, pp, cp, ep, zero = run.tp, run.pp, run.cp, run.ep, run.zero_stage
    oo, op = run.offload_optimizer, run.offload_params
    room = k["mem_alloc_room_per_gpu"]
    w_gpu = mem["weight_bytes"] * (1 - op)
    g_gpu = (mem["grad_bytes"] + mem["grad_accum_bytes"]) * (1 - oo)
    o_gpu = (mem["master_bytes"] + mem["optimizer_bytes"]) * (1 - oo)
    resident = w_gpu + g_gpu + o_gpu
    per_gpu_dense, per_gpu_expert = k["params_per_gpu_dense"], k["params_per_gpu_expert"]

    def shard_bytes(stage: int) -> float:
        return (
            (o_gpu if stage >= 1 else 0)
            + (g_gpu if stage >= 2 else 0)
            + (w_gpu if stage >= 3 else 0)
        )

    def fewest(stage: int) -> tuple[float, float, int | str]:
        shard_b = shard_bytes(stage)
        shardable = shard_b * (per_gpu_dense + ep * per_gpu_expert) / cp
        fixed = (resident - shard_b) * k["params_per_gpu"] + k["mem_activations_per_gpu"]
        fixed += k["mem_logits_per_gpu"] + run.overhead_bytes
        fixed += zero3_buffer(stage, mem["act_bytes"], k["params_gather_unit_gpu"])
        fixed_allocated = fixed - run.overhead_bytes
        if room <= fixed_allocated:
            return shardable, fixed, "none"
        dp = math.ceil(shardable / (room - fixed_allocated))
        return shardable, fixed, max(dp, math.ceil(ep / cp))

    shardable, fixed, dp_min = fewest(zero)
    shardable3, unshardable, dp_min3 = fewest(3)
    found = dp_min != "none"
    n_min = dp_min * tp * pp * cp if found else "none"
    if found:
        note = f"ZeRO-{zero}, dp {dp_min} × tp·pp·cp {tp * pp * cp}"
        if not splits_evenly(run.global_batch_tokens / run.seq_len / (run.micro_batch * dp_min)):
            note += f"; memory only: the batch does not split evenly over dp {dp_min}"
    else:
        note = (
            f"no count fits: {num_text((fixed - run.overhead_bytes) / GIGA, 1)} GB per GPU "
            f"that ZeRO-{zero} does not shard, {num_text(room / GIGA, 1)} GB the allocator "
            "has room for"
        )
    return {
        "bytes_per_param_gpu": resident,
        "zero_shard_bytes_per_param": shard_bytes(zero),
        "mem_shardable_own": shardable,
        "mem_unsharded_own": fixed,
        "dp_min": dp_min,
        "n_gpus_min": n_min,
        "n_gpus_min_note": note,
        "nodes_min": math.ceil(n_min / run.gpus_per_node) if found else "none",
        "mem_shardable_bytes": shardable3,
        "mem_unshardable_per_gpu": unshardable,
        "dp_min_zero3": dp_min3,
        "n_gpus_min_zero3": dp_min3 * tp * pp * cp if dp_min3 != "none" else "none",
    }


def max_micro_batch(s: Scenario, k: dict[str, Any]) -> dict[str, Any]:
    """Largest micro-batch: activations and logits scale with b, the rest does not,
    keeping this layout's micro-batches in flight; compared with the allocator's room."""
    run = s.run
    per_sequence = (k["mem_activations_per_gpu"] + k["mem_logits_per_gpu"]) / run.micro_batch
    fixed_mb = k["mem_static_per_gpu"] + k["mem_zero3_buffer_per_gpu"] + run.overhead_bytes
    free = k["mem_alloc_room_per_gpu"] - (fixed_mb - run.overhead_bytes)
    max_mb = math.floor(free / per_sequence) if free > 0 else 0
    accum = math.ceil(run.global_batch_tokens / (run.seq_len * max_mb * run.dp)) if max_mb else 0
    return {
        "mem_per_sequence_gpu": per_sequence,
        "mem_fixed_per_gpu": fixed_mb,
        "max_micro_batch": max_mb,
        "grad_accum_at_max_micro_batch": accum,
    }
