"""Held-out rows from the torchtitan team's published Llama 3.1 benchmarks on H100.

The source (``benchmarks/llama3_h100_202412_torchtitan.md`` in github.com/pytorch/torchtitan,
first published as ``docs/performance.md``) prints six small tables of tokens/s per GPU
and peak memory; they are transcribed here by hand, each row with its table and row, and
what the tables leave out (sequence length, micro-batches, interleaving, resharding,
the activation-checkpointing policy, the attention kernel) is taken from torchtitan's
code and configs at the commit the source names (9dec370), stated in each row's notes.
Nothing in it is fitted: these rows were predicted once, as written here.

Usage: python tools/transcribe_torchtitan.py > presets/benchmarks/torchtitan.yaml
"""

from __future__ import annotations

import sys

import yaml

COMMIT = "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a"
SRC = "benchmarks/llama3_h100_202412_torchtitan.md"
HW = {
    "base": "h100-sxm",
    "id": "h100-sxm-96gb-grand-teton",
    "name": "NVIDIA H100 SXM 96GB HBM2e, 500 W (Grand Teton)",
    "mem_gb": 96,
    "hbm_tbps": 2.4,
    "peak_bf16_tflops": 912.45,
    "peak_fp8_tflops": 1824.7,
}
KERNEL = {
    "name": "fa2",
    "source": (
        "torchtitan at commit 9dec370 calls torch's scaled_dot_product_attention without "
        "choosing a backend; the PyTorch nightly it ran (1963fc8, 2024-12-23) runs its bundled "
        "FlashAttention-2 on H100, the cuDNN backend being opt-in since pytorch/pytorch#138522 "
        "(pytorch/pytorch#142132, 2024-12-05: SDPA 329 TFLOP/s against cuDNN's 631 on H100)"
    ),
}
COMMON_NOTE = (
    "Grand Teton H100: 96 GB HBM2e, 2.4 TB/s, 500 W power limit, 400 Gb/s per GPU between "
    "hosts (the source's Hardware section); its peak is 'between SXM and NVL' (the source's "
    "footnote 2): the middle of the two datasheet peaks is used, BF16 (989.4 + 835.5) / 2 "
    "= 912.45 and FP8 (1,978.9 + 1,670.5) / 2 = 1,824.7 TFLOP/s dense (NVIDIA H100 "
    "datasheet: SXM 1,979 / NVL 1,671 BF16 and 3,958 / 3,341 FP8 TFLOPS with sparsity), so "
    "every row carries up to +-8.5% from this alone; recipe fsdp-bf16 (FSDP2, BF16 "
    "parameters for compute, FP32 reduction: torchtitan's mixed-precision defaults)"
)
OP_SAC = (
    "selective activation checkpointing, torchtitan's 'op' policy (train_configs/llama3_8b.toml "
    "at 9dec370; parallelize_llama.py: every other matmul output and the attention output "
    "saved, the rest recomputed): modelled as full recomputation of half of the layers "
    "(recompute_layers 16 of 32), the same extra forward matmul FLOPs"
)


def row(rid, table, rownum, what, scen, tps, mem_gib, note):
    s = {"model": scen.pop("model"), "hardware": dict(HW)}
    s.update(scen)
    s.setdefault("cp", 1)
    s.setdefault("pp", 1)
    s.setdefault("pp_virtual_stages", 1)
    s.setdefault("tp", 1)
    s["recipe"] = "fsdp-bf16"
    return {
        "id": rid,
        "row": f"{table}, row {rownum} ({what})",
        "role": "holdout",
        "attention_kernel": dict(KERNEL),
        "scenario": s,
        "published": {"tokens_per_s_per_gpu": tps, "flop_convention": "printed"},
        "notes": f"published peak memory {mem_gib} GiB; {note}; {COMMON_NOTE}",
    }


runs = []
t1 = "Table 1 (1D parallelism, FSDP; Llama 3.1 8B; 8 GPUs; local batch 2, global 16)"
t3 = "Table 3 (1D parallelism, FSDP; Llama 3.1 8B; 128 GPUs; local batch 2, global 256)"
for table, gpus, tag, rows in (
    (
        t1,
        8,
        "g8",
        [
            ("FSDP", 5762, 82.4, "bf16"),
            ("FSDP + torch.compile", 6667, 77.0, "bf16"),
            ("FSDP + torch.compile + Float8", 8532, 76.8, "fp8"),
        ],
    ),
    (
        t3,
        128,
        "g128",
        [
            ("FSDP", 5605, 67.0, "bf16"),
            ("FSDP + torch.compile", 6514, 62.0, "bf16"),
            ("FSDP + torch.compile + Float8", 8380, 61.8, "fp8"),
        ],
    ),
):
    for i, (what, tps, mem, dt) in enumerate(rows, 1):
        suffix = {1: "fsdp", 2: "fsdp-compile", 3: "fsdp-compile-fp8"}[i]
        runs.append(
            row(
                f"torchtitan-llama3-8b-{tag}-{suffix}",
                table,
                i,
                what,
                {
                    "model": "llama3-8b",
                    "n_gpus": gpus,
                    "seq_len": 8192,
                    "global_batch_tokens": 2 * gpus * 8192,
                    "micro_batch": 2,
                    "zero_stage": 3,
                    "peak_dtype": dt,
                    "recompute": "full",
                    "recompute_layers": 16,
                },
                tps,
                mem,
                f"sequence 8,192 (train_configs/llama3_8b.toml at 9dec370); {OP_SAC}; "
                "torch.compile is not an input of the model: the rows with and without it are "
                "predicted alike",
            )
        )
t2 = (
    "Table 2 (FSDP + CP + torch.compile + Float8; Llama 3.1 8B; 8 GPUs; local batch 1; "
    "full activation checkpointing)"
)
for i, (fsdp, cp, seq, tps, mem) in enumerate(
    [
        (8, 1, 32768, 3890, 83.9),
        (4, 2, 65536, 2540, 84.2),
        (2, 4, 131072, 1071, 84.0),
        (1, 8, 262144, 548, 84.5),
    ],
    1,
):
    runs.append(
        row(
            f"torchtitan-llama3-8b-g8-cp{cp}-s{seq}",
            t2,
            i,
            f"FSDP {fsdp}, CP {cp}, sequence {seq}",
            {
                "model": "llama3-8b",
                "n_gpus": 8,
                "seq_len": seq,
                "cp": cp,
                "global_batch_tokens": fsdp * seq,
                "micro_batch": 1,
                "zero_stage": 3,
                "peak_dtype": "fp8",
                "recompute": "full",
            },
            tps,
            mem,
            "full activation checkpointing",
        )
    )
t4 = (
    "Table 4 (2D: FSDP + TP + torch.compile + Float8; Llama 3.1 70B; 256 GPUs, FSDP 32, "
    "TP 8; local batch 16, global 512; full activation checkpointing)"
)
for i, (what, tps, mem, sfx) in enumerate(
    [("2D", 829, 71.9, "2d"), ("2D + AsyncTP", 876, 67.6, "2d-asynctp")], 1
):
    runs.append(
        row(
            f"torchtitan-llama3-70b-g256-{sfx}",
            t4,
            i,
            what,
            {
                "model": "llama3-70b",
                "n_gpus": 256,
                "seq_len": 8192,
                "tp": 8,
                "sequence_parallel": 1,
                "global_batch_tokens": 512 * 8192,
                "micro_batch": 16,
                "zero_stage": 3,
                "peak_dtype": "fp8",
                "recompute": "full",
            },
            tps,
            mem,
            "sequence 8,192 (train_configs/llama3_70b.toml at 9dec370); torchtitan's tensor "
            "parallel plan shards the norms' sequence (sequence parallelism); no gradient "
            "accumulation, so the local batch of 16 is the micro-batch; AsyncTP is not an input "
            "of the model: both rows are predicted alike",
        )
    )
t5 = (
    "Table 5 (3D: FSDP + TP + PP + torch.compile + Float8 + AsyncTP; Llama 3.1 405B; 512 GPUs, "
    "FSDP 8, TP 8, PP 8; local batch 32, global 256; full activation checkpointing)"
)
for i, (what, v, tps, mem, sfx) in enumerate(
    [("1F1B", 1, 100, 82.5, "1f1b"), ("Interleaved 1F1B", 2, 128, 72.7, "interleaved")], 1
):
    runs.append(
        row(
            f"torchtitan-llama3-405b-g512-pp8-{sfx}",
            t5,
            i,
            what,
            {
                "model": "llama3-405b",
                "n_gpus": 512,
                "seq_len": 8192,
                "tp": 8,
                "pp": 8,
                "pp_virtual_stages": v,
                "sequence_parallel": 1,
                "global_batch_tokens": 256 * 8192,
                "micro_batch": 4,
                "zero_stage": 2,
                "peak_dtype": "fp8",
                "recompute": "full",
            },
            tps,
            mem,
            "sequence 8,192 (train_configs/llama3_405b.toml at 9dec370); micro-batches: the "
            "pipeline degree, 8 (config_manager.py default), so 32 / 8 = 4 sequences each; "
            "interleaving: 2 stages per rank (pipelining_utils.generate_split_points default); "
            "with pipeline parallelism FSDP does not reshard after forward (parallelize_llama.py): "
            "ZeRO-2 memory",
        )
    )
t6 = (
    "Table 6 (4D: FSDP + TP + PP + CP + torch.compile + Float8 + AsyncTP + 1F1B; Llama 3.1 "
    "405B; 512 GPUs, TP 8, PP 8; local batch 8; full activation checkpointing)"
)
for i, (fsdp, cp, seq, tps, mem) in enumerate(
    [
        (8, 1, 32768, 76, 75.3),
        (4, 2, 65536, 47, 75.9),
        (2, 4, 131072, 31, 77.1),
        (1, 8, 262144, 16, 84.9),
    ],
    1,
):
    runs.append(
        row(
            f"torchtitan-llama3-405b-g512-cp{cp}-s{seq}",
            t6,
            i,
            f"FSDP {fsdp}, CP {cp}, sequence {seq}",
            {
                "model": "llama3-405b",
                "n_gpus": 512,
                "seq_len": seq,
                "tp": 8,
                "pp": 8,
                "cp": cp,
                "sequence_parallel": 1,
                "global_batch_tokens": fsdp * 8 * seq,
                "micro_batch": 1,
                "zero_stage": 2,
                "peak_dtype": "fp8",
                "recompute": "full",
            },
            tps,
            mem,
            "micro-batches: the pipeline degree, 8 (config_manager.py default), so one sequence "
            "each; with pipeline parallelism FSDP does not reshard after forward: ZeRO-2 memory",
        )
    )

doc = {
    "source": {
        "id": "torchtitan",
        "title": (
            "PyTorch torchtitan team, 'Llama 3.1 8B, 70B, 405B' performance benchmarks on H100 "
            f"(end of 2024; torch 1963fc8, torchao eab345c, torchtitan 9dec370), {SRC}, "
            f"github.com/pytorch/torchtitan at commit {COMMIT} (first published as "
            "docs/performance.md)"
        ),
    },
    "runs": runs,
}
head = (
    "# Held-out published runs (sheetgen benchmark-check): never used to fit; transcribed\n"
    "# from the source named below by hand, each row naming its table and row.\n"
)
sys.stdout.write(head + yaml.safe_dump(doc, sort_keys=False, width=100, allow_unicode=True))
