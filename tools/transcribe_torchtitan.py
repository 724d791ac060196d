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

from sheetgen.calibration.benchmarks import to_yaml

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


def table_1_and_3() -> list[dict]:
    """FSDP alone on 8 and 128 GPUs: Llama 3.1 8B, local batch 2, op-level checkpointing."""
    out = []
    techniques = (
        ("FSDP", "fsdp", "bf16"),
        ("FSDP + torch.compile", "fsdp-compile", "bf16"),
        ("FSDP + torch.compile + Float8", "fsdp-compile-fp8", "fp8"),
    )
    for number, gpus, printed in (
        (1, 8, [(5762, 82.4), (6667, 77.0), (8532, 76.8)]),
        (3, 128, [(5605, 67.0), (6514, 62.0), (8380, 61.8)]),
    ):
        table = (
            f"Table {number} (1D parallelism, FSDP; Llama 3.1 8B; {gpus} GPUs; local batch 2, "
            f"global {2 * gpus})"
        )
        for i, ((what, suffix, dtype), (tps, mem)) in enumerate(
            zip(techniques, printed, strict=True), 1
        ):
            layout = {"model": "llama3-8b", "n_gpus": gpus, "seq_len": 8192,
                      "global_batch_tokens": 2 * gpus * 8192, "micro_batch": 2,
                      "zero_stage": 3, "peak_dtype": dtype, "recompute": "full",
                      "recompute_layers": 16}  # fmt: skip
            note = (
                f"sequence 8,192 (train_configs/llama3_8b.toml at 9dec370); {OP_SAC}; "
                "torch.compile is not an input of the model: the rows with and without it "
                "are predicted alike"
            )
            rid = f"torchtitan-llama3-8b-g{gpus}-{suffix}"
            out.append(row(rid, table, i, what, layout, tps, mem, note))
    return out


# Context parallelism at four sequence lengths: (FSDP degree, CP degree, sequence,
# tokens/s per GPU, peak GiB), each table's rows in order.
CP_ROWS = {
    2: [(8, 1, 32768, 3890, 83.9), (4, 2, 65536, 2540, 84.2), (2, 4, 131072, 1071, 84.0),
        (1, 8, 262144, 548, 84.5)],
    6: [(8, 1, 32768, 76, 75.3), (4, 2, 65536, 47, 75.9), (2, 4, 131072, 31, 77.1),
        (1, 8, 262144, 16, 84.9)],
}  # fmt: skip


def table_2_and_6() -> list[dict]:
    """FSDP x CP at 32K-262K tokens: 8B on 8 GPUs, and 405B on 512 with TP 8 and PP 8."""
    tables = {
        2: (
            "Table 2 (FSDP + CP + torch.compile + Float8; Llama 3.1 8B; 8 GPUs; local batch 1; "
            "full activation checkpointing)",
            "8b-g8",
            {"model": "llama3-8b", "n_gpus": 8, "zero_stage": 3},
            1,
            "full activation checkpointing",
        ),
        6: (
            "Table 6 (4D: FSDP + TP + PP + CP + torch.compile + Float8 + AsyncTP + 1F1B; "
            "Llama 3.1 405B; 512 GPUs, TP 8, PP 8; local batch 8; full activation "
            "checkpointing)",
            "405b-g512",
            {
                "model": "llama3-405b",
                "n_gpus": 512,
                "tp": 8,
                "pp": 8,
                "sequence_parallel": 1,
                "zero_stage": 2,
            },  # fmt: skip
            8,
            "micro-batches: the pipeline degree, 8 (config_manager.py default), so one "
            "sequence each; with pipeline parallelism FSDP does not reshard after forward: "
            "ZeRO-2 memory",
        ),
    }
    out = []
    for number, (table, tag, base, local_batch, note) in tables.items():
        for i, (fsdp, cp, seq, tps, mem) in enumerate(CP_ROWS[number], 1):
            layout = {**base, "seq_len": seq, "cp": cp,
                      "global_batch_tokens": fsdp * local_batch * seq, "micro_batch": 1,
                      "peak_dtype": "fp8", "recompute": "full"}  # fmt: skip
            what = f"FSDP {fsdp}, CP {cp}, sequence {seq}"
            out.append(row(f"torchtitan-llama3-{tag}-cp{cp}-s{seq}", table, i, what, layout,
                           tps, mem, note))  # fmt: skip
    return out


def table_4() -> list[dict]:
    """FSDP 32 x TP 8: Llama 3.1 70B on 256 GPUs, local batch 16."""
    table = (
        "Table 4 (2D: FSDP + TP + torch.compile + Float8; Llama 3.1 70B; 256 GPUs, FSDP 32, "
        "TP 8; local batch 16, global 512; full activation checkpointing)"
    )
    note = (
        "sequence 8,192 (train_configs/llama3_70b.toml at 9dec370); torchtitan's tensor "
        "parallel plan shards the norms' sequence (sequence parallelism); no gradient "
        "accumulation, so the local batch of 16 is the micro-batch; AsyncTP is not an input "
        "of the model: both rows are predicted alike"
    )
    layout = {"model": "llama3-70b", "n_gpus": 256, "seq_len": 8192, "tp": 8,
              "sequence_parallel": 1, "global_batch_tokens": 512 * 8192, "micro_batch": 16,
              "zero_stage": 3, "peak_dtype": "fp8", "recompute": "full"}  # fmt: skip
    printed = [("2D", 829, 71.9, "2d"), ("2D + AsyncTP", 876, 67.6, "2d-asynctp")]
    return [
        row(f"torchtitan-llama3-70b-g256-{sfx}", table, i, what, dict(layout), tps, mem, note)
        for i, (what, tps, mem, sfx) in enumerate(printed, 1)
    ]


def table_5() -> list[dict]:
    """FSDP 8 x TP 8 x PP 8: Llama 3.1 405B on 512 GPUs, 1F1B and interleaved."""
    table = (
        "Table 5 (3D: FSDP + TP + PP + torch.compile + Float8 + AsyncTP; Llama 3.1 405B; 512 "
        "GPUs, FSDP 8, TP 8, PP 8; local batch 32, global 256; full activation checkpointing)"
    )
    note = (
        "sequence 8,192 (train_configs/llama3_405b.toml at 9dec370); micro-batches: the "
        "pipeline degree, 8 (config_manager.py default), so 32 / 8 = 4 sequences each; "
        "interleaving: 2 stages per rank (pipelining_utils.generate_split_points default); "
        "with pipeline parallelism FSDP does not reshard after forward (parallelize_llama.py): "
        "ZeRO-2 memory"
    )
    printed = [("1F1B", 1, 100, 82.5, "1f1b"), ("Interleaved 1F1B", 2, 128, 72.7, "interleaved")]
    out = []
    for i, (what, v, tps, mem, sfx) in enumerate(printed, 1):
        layout = {"model": "llama3-405b", "n_gpus": 512, "seq_len": 8192, "tp": 8, "pp": 8,
                  "pp_virtual_stages": v, "sequence_parallel": 1,
                  "global_batch_tokens": 256 * 8192, "micro_batch": 4, "zero_stage": 2,
                  "peak_dtype": "fp8", "recompute": "full"}  # fmt: skip
        out.append(row(f"torchtitan-llama3-405b-g512-pp8-{sfx}", table, i, what, layout, tps,
                       mem, note))  # fmt: skip
    return out


def main() -> None:
    with_cp = table_2_and_6()  # tables 2 and 6, four rows each
    runs = table_1_and_3() + with_cp[:4] + table_4() + table_5() + with_cp[4:]
    title = (
        "PyTorch torchtitan team, 'Llama 3.1 8B, 70B, 405B' performance benchmarks on H100 "
        f"(end of 2024; torch 1963fc8, torchao eab345c, torchtitan 9dec370), {SRC}, "
        f"github.com/pytorch/torchtitan at commit {COMMIT} (first published as "
        "docs/performance.md)"
    )
    comment = (
        "Held-out published runs (sheetgen benchmark-check): never used to fit; transcribed\n"
        "from the source named below by hand, each row naming its table and row."
    )
    sys.stdout.write(to_yaml("torchtitan", title, runs, comment, blind=True))


if __name__ == "__main__":
    main()
