"""Held-out rows from two published PyTorch-FSDP benchmark tables of spring 2024.

* ``torchtitan-a100``: the torchtitan team's Llama 2 13B/70B and Llama 3 8B/70B on 64 A100
  80GB with FSDP2 (github.com/pytorch/torchtitan, docs/performance.md at 1ea476e9f,
  2024-04-24);
* ``fms-fsdp``: IBM's Llama 2 7B/13B/34B/70B on 128 A100 80GB and 96 H100 (the
  foundation-model-stack/fms-fsdp README at ed74fd5, 2024-05-09).

Each row is transcribed by hand with its table and row; what the tables leave out
(sequence length, micro-batch, sharding, the checkpointed share of layers, the attention
kernel) is taken from each repository's code and configs at the commit named, stated in
the row's notes.  These rows were chosen and written before their first prediction, and
nothing in the model was changed after it (docs/benchmarks-holdout.md).

Usage (from the repository root, into presets/benchmarks/):
  python tools/transcribe_fsdp_2024.py torchtitan-a100 > presets/benchmarks/torchtitan_a100.yaml
  python tools/transcribe_fsdp_2024.py fms-fsdp > presets/benchmarks/fms_fsdp.yaml
"""

from __future__ import annotations

import sys

from sheetgen.calibration.benchmarks import to_yaml

# Llama 2 shapes (the released configs, meta-llama/Llama-2-{13b,70b}-hf config.json; the
# 34B Llama 2 was not released: fms-fsdp's config_utils.py gives its shape, Code Llama
# 34B's) and parameter counts (each Hugging Face repo's model.safetensors.index.json
# total_size / 2 bytes: Llama-2-13b-hf, Llama-2-70b-hf, CodeLlama-34b-hf).
SHAPE = ("n_layers", "hidden_size", "n_heads", "n_kv_heads", "ffn_size", "params_published")
LLAMA2 = {
    "13b": dict(zip(SHAPE, (40, 5120, 40, 40, 13824, 13_015_864_320), strict=True)),
    "34b": dict(zip(SHAPE, (48, 8192, 64, 8, 22016, 33_743_970_304), strict=True)),
    "70b": dict(zip(SHAPE, (80, 8192, 64, 8, 28672, 68_976_648_192), strict=True)),
}
COMMENT = (
    "Held-out published runs (sheetgen benchmark-check): never used to fit; transcribed\n"
    "by tools/transcribe_fsdp_2024.py from the source named below, each row naming its\n"
    "table and row; written before their first prediction."
)
RECIPE_NOTE = "recipe fsdp-bf16 (FSDP mixed precision: BF16 compute copies, FP32 sharded state)"


def llama2(size: str, tag: str) -> dict | str:
    """A Llama 2 model: the preset for 7B, else the shape above."""
    if size == "7b":
        return "llama2-7b"
    return {"id": f"{tag}-llama2-{size}", "name": f"Llama 2 {size.upper()}", **LLAMA2[size],
            "head_dim": 128, "vocab_size": 32000, "mlp": "gated", "norm": "rmsnorm",
            "tied_embeddings": 0}  # fmt: skip


def run(rid, row, kernel, scenario, tps, notes) -> dict:
    s = dict(scenario)
    for key, value in (
        ("tp", 1),
        ("pp", 1),
        ("pp_virtual_stages", 1),
        ("cp", 1),
        ("zero_stage", 3),
        ("peak_dtype", "bf16"),
        ("recipe", "fsdp-bf16"),
    ):
        s.setdefault(key, value)  # fmt: skip
    return {
        "id": rid,
        "row": row,
        "role": "holdout",
        "attention_kernel": dict(kernel),
        "scenario": s,
        "published": {"tokens_per_s_per_gpu": tps, "flop_convention": "printed"},
        "notes": notes,
    }


def recompute(layers: int, n_layers: int) -> dict:
    """Full recomputation of ``layers`` of ``n_layers`` (all: plain full, none: none)."""
    if layers <= 0:
        return {"recompute": "none"}
    if layers >= n_layers:
        return {"recompute": "full"}
    return {"recompute": "full", "recompute_layers": layers}


# --- torchtitan on 64 A100 80GB (April 2024) -------------------------------------------

TT_COMMIT = "1ea476e9f24be439eda358aa864f45c1c37a8a88"
TT_KERNEL = {
    "name": "fa2",
    "source": (
        "torchtitan at 1ea476e9f calls torch's scaled_dot_product_attention without choosing "
        "a backend; on A100 SDPA runs its bundled FlashAttention-2 (PyTorch 2.2 release notes: "
        "FlashAttention-2 in SDPA), the kernel the a100-80gb preset describes"
    ),
}
# (table, row, model, size, local batch, checkpointing as printed, tokens/s per GPU)
TT_ROWS = [
    ("Llama 3", 1, "llama3", "8b", 1, "selective layer", 2904),
    ("Llama 3", 2, "llama3", "8b", 1, "selective op", 2973),
    ("Llama 3", 3, "llama3", "70b", 1, "full", 331),
    ("Llama 2", 1, "llama2", "13b", 2, "no", 2162),
    ("Llama 2", 2, "llama2", "13b", 2, "selective layer", 1914),
    ("Llama 2", 3, "llama2", "13b", 2, "selective op", 1904),
    ("Llama 2", 4, "llama2", "70b", 1, "selective op", 355),
    ("Llama 2", 5, "llama2", "70b", 2, "full", 353),
]
TT_AC = {
    "no": "no activation checkpointing",
    "selective layer": (
        "selective 'layer' checkpointing: every other block checkpointed "
        "(config_manager.py at 1ea476e9f: selective_ac_option default '2'), modelled as full "
        "recomputation of half of the layers"
    ),
    "selective op": (
        "selective 'op' checkpointing (parallelize_llama.py at 1ea476e9f: the outputs of every "
        "other matmul and of attention saved, the rest recomputed), modelled as full "
        "recomputation of half of the layers, the same extra forward matmul FLOPs"
    ),
    "full": "full activation checkpointing of every block",
}


def torchtitan_a100() -> tuple[str, list[dict]]:
    out = []
    for table, number, family, size, local, ac, tps in TT_ROWS:
        seq = 8192 if family == "llama3" else 4096
        model = f"llama3-{size}" if family == "llama3" else llama2(size, "torchtitan2404")
        n_layers = {"8b": 32, "70b": 80, "13b": 40}[size]
        share = {"no": 0, "full": n_layers}.get(ac, n_layers // 2)
        scen = {"model": model, "hardware": "a100-80gb", "n_gpus": 64, "seq_len": seq,
                "global_batch_tokens": 64 * local * seq, "micro_batch": local,
                **recompute(share, n_layers)}  # fmt: skip
        name = "Llama 3" if family == "llama3" else "Llama 2"
        row = (
            f"'{table} performance numbers' table (FSDP2, 64 A100 80GB), row {number} "
            f"({name} {size.upper()}, batch {local}, {ac} checkpointing)"
        )
        notes = (
            f"sequence {seq:,} (train_configs/{family}_{size}.toml at 1ea476e9f); local batch "
            f"{local} on each of 64 FSDP ranks, no gradient accumulation, global {64 * local}; "
            f"{TT_AC[ac]}; 1D FSDP2 (the table's heading), every block resharded after forward "
            "but the last (parallelize_llama.py): ZeRO-3; torch.compile off (the toml); the "
            "published WPS is tokens per second per GPU (train.py: tokens / time / model-"
            f"parallel size, 1 here); the network between hosts is not stated: the preset's; "
            f"{RECIPE_NOTE}, FP32 reduction (MixedPrecisionPolicy in parallelize_llama.py)"
        )
        tag = ac.replace("selective ", "sel-").replace(" ", "-")
        rid = f"torchtitan2404-{family}-{size}-g64-mb{local}-{tag}"
        out.append(run(rid, row, TT_KERNEL, scen, tps, notes))
    title = (
        "PyTorch torchtitan team, 'Llama 3 / Llama 2 performance numbers' on 64 A100 80GB with "
        f"FSDP2 (April 2024), docs/performance.md, github.com/pytorch/torchtitan at commit "
        f"{TT_COMMIT}"
    )
    return title, out


# --- IBM fms-fsdp on 128 A100 80GB and 96 H100 (May 2024) -----------------------------

FMS_COMMIT = "ed74fd5ddec00e309eac20f478de883464c86526"
FMS_KERNEL = {
    "name": "fa2",
    "source": (
        "fms-fsdp README at ed74fd5: 'SDPA implementation of Flash attention v2' (PyTorch's "
        "bundled FlashAttention-2; cuDNN attention became SDPA's default on H100 only with "
        "PyTorch 2.5, October 2024)"
    ),
}
# The GPUs: the table's column headings.  The network is printed per cluster ('400Gbps',
# '800 Gbps'); read per GPU, since per node (6.25 / 12.5 GB/s a GPU) could not carry
# ZeRO-3's three passes over the weights (about 6 bytes a parameter a step) in any
# published row's step time.
FMS_HW = {
    "a100": ({"base": "a100-80gb", "id": "a100-80gb-400gbps", "inter_node_gb_per_s": 50,
              "name": "NVIDIA A100 SXM4 80GB, 400 Gb/s a GPU between hosts"}, 128, "A100 80G"),
    "h100": ({"base": "h100-sxm", "id": "h100-sxm-800gbps", "inter_node_gb_per_s": 100,
              "name": "NVIDIA H100 SXM 80GB, 800 Gb/s a GPU between hosts"}, 96, "H100"),
}  # fmt: skip
# (row, size, sharding, checkpointing, tokens/s per GPU on A100, on H100)
FMS_ROWS = [
    (1, "7b", "HSDP", "No AC", 4550, 9600),
    (2, "13b", "FSDP", "Selective AC", 2150, 4850),
    (3, "34b", "FSDP", "Selective AC", 820, 1830),
    (4, "70b", "FSDP", "Selective AC", 410, 890),
]
# The second table's (MFU, HFU) per GPU and size: the checkpointed share of layers is
# 3 x (HFU / MFU - 1) (one more forward on top of forward and backward's three passes).
FMS_MFU_HFU = {
    "a100": {"7b": (0.68, 0.68), "13b": (0.61, 0.69), "34b": (0.55, 0.74), "70b": (0.55, 0.74)},
    "h100": {"7b": (0.46, 0.46), "13b": (0.43, 0.46), "34b": (0.38, 0.49), "70b": (0.38, 0.47)},
}  # fmt: skip


def fms_fsdp() -> tuple[str, list[dict]]:
    out = []
    for gpu, column in (("a100", 5), ("h100", 6)):
        hw, n_gpus, label = FMS_HW[gpu]
        for number, size, sharding, ac, *tps in FMS_ROWS:
            n_layers = 32 if size == "7b" else LLAMA2[size]["n_layers"]
            mfu, hfu = FMS_MFU_HFU[gpu][size]
            layers = 0 if ac == "No AC" else round(min(1.0, 3 * (hfu / mfu - 1)) * n_layers)
            scen = {"model": llama2(size, "fms"), "hardware": dict(hw), "n_gpus": n_gpus,
                    "seq_len": 4096, "global_batch_tokens": n_gpus * 2 * 4096, "micro_batch": 2,
                    **recompute(layers, n_layers), "recompute_mlp_act": 1}  # fmt: skip
            what = f"{size}, {sharding}, {ac}, batch 2; column {column}, {label}, {n_gpus} GPUs"
            ac_note = (
                "no activation checkpointing"
                if not layers
                else (
                    f"'Selective AC' (fms_fsdp/policies/ac_handler.py: full checkpointing of an "
                    f"evenly spread share of the blocks) with the share not printed: taken from "
                    f"the second table's {label} MFU {mfu} and HFU {hfu}, 3 x (HFU / MFU - 1) "
                    f"= {3 * (hfu / mfu - 1):.3f} of the layers, {layers} of {n_layers}"
                )
            )
            shard_note = (
                "HSDP (sharded inside each 8-GPU node, replicated across nodes) modelled as "
                "ZeRO-3 over all GPUs: the model has no shard-group input"
                if sharding == "HSDP"
                else "FSDP FULL_SHARD: ZeRO-3"
            )
            notes = (
                f"sequence 4,096 (fms_fsdp/config/training.py at ed74fd5: seq_length 4096; the "
                f"README: '4k context length'); batch 2 a GPU, no gradient accumulation "
                f"(train_utils.py: one optimizer step per batch); {ac_note}; {shard_note}; "
                "torch.compile on: AOTAutograd's min-cut partitioner recomputes the SwiGLU's "
                "pointwise ops in the backward pass, keeping the gate and up outputs "
                "(recompute_mlp_act 1); the network as the column "
                "heading prints it, read per GPU; tokens per second per GPU as printed "
                f"(train_utils.py: 'token per gpu per sec'); {RECIPE_NOTE}, reduced in BF16 "
                "(fms_fsdp/policies/mixed_precision.py bfSixteen) where the recipe counts FP32"
            )
            rid = f"fms-llama2-{size}-g{n_gpus}-{gpu}"
            row = f"training throughput table, row {number} ({what})"
            out.append(run(rid, row, FMS_KERNEL, scen, tps[column - 5], notes))
    title = (
        "IBM, foundation-model-stack/fms-fsdp, README.md 'Training throughput benchmarks' "
        "(Llama 2 7B-70B with PyTorch FSDP and torch.compile on 128 A100 80GB and 96 H100, "
        f"May 2024), github.com/foundation-model-stack/fms-fsdp at commit {FMS_COMMIT}"
    )
    return title, out


SOURCES = {"torchtitan-a100": torchtitan_a100, "fms-fsdp": fms_fsdp}


def main() -> None:
    if len(sys.argv) != 2 or sys.argv[1] not in SOURCES:
        sys.exit(f"usage: transcribe_fsdp_2024.py {{{'|'.join(SOURCES)}}}")
    source = sys.argv[1]
    title, runs = SOURCES[source]()
    sys.stdout.write(to_yaml(source, title, runs, COMMENT, blind=True))


if __name__ == "__main__":
    main()
