"""Transcribe MosaicML's published MPT training benchmarks into held-out rows.

Reads the Markdown tables of llm-foundry's ``scripts/train/benchmarking/README.md``
(github.com/mosaicml/llm-foundry; the commit is given on the command line and
written into every row) and prints ``presets/benchmarks/mosaicml.yaml``: one
``role: holdout`` row per table row of a model of 1B parameters or more (the range
the one-clock issue judges: 1B to 405B).  Nothing in it is fitted: the rows are
predicted with the parameters fitted on the ``fit`` rows of the other sources.

Each row's model is MPT's shape as the README's NumParams column implies it
(checked here: L (12 d^2 + 13 d) + V d + s d + 2 d, biases on every linear layer
and LayerNorm, learned positions, tied embeddings, vocabulary 50,368, 4d GeLU MLP);
head counts from llm-foundry's ``scripts/train/yamls/pretrain/mpt-*.yaml``.

Usage: python tools/transcribe_llm_foundry.py README.md COMMIT > presets/benchmarks/mosaicml.yaml
"""

from __future__ import annotations

import sys

from sheetgen.calibration.benchmarks import to_yaml

VOCAB = 50368
# size -> (d_model, n_layers, n_heads): scripts/train/yamls/pretrain/mpt-<size>.yaml
SHAPES = {
    "1b": (2048, 24, 16),
    "3b": (2560, 32, 20),
    "7b": (4096, 32, 32),
    "13b": (5120, 40, 40),
    "30b": (7168, 48, 56),
    "70b": (8192, 80, 64),
}
HARDWARE = {"h100_80gb": "h100-sxm", "a100_80gb": "a100-80gb", "a100_40gb": "a100-40gb"}
SHARDING = {"FULL_SHARD": 3, "SHARD_GRAD_OP": 2}

# The attention kernel each table's runs used (llm-foundry's ``attn_impl``; the README
# does not print it, the harness that produced the tables sets it).  The large-scale
# table was added with scripts/train/benchmarking/sweep.py at commit 5e85bd62d
# (2024-01-06), which passes --attn_impl per model and installs .[gpu-flash2]:
# FlashAttention-2 ('flash') for 1B, 3B, 7B and 70B, llm-foundry's Triton
# FlashAttention ('triton') for 13B and 30B.  The other tables (added at 300cc5c58,
# ef350d9e6 and b2a43a147) name no kernel, so their runs took submit_benchmarks.py's
# default, --attn_impl triton, at each of those commits.
LARGE = "H100 80GB BF16 (Large Scale, >= 128 GPUs)"
LARGE_KERNEL = {"1b": "fa2", "3b": "fa2", "7b": "fa2", "13b": "triton", "30b": "triton",
                "70b": "fa2"}  # fmt: skip
KERNEL_SOURCE = {
    "large": (
        "llm-foundry scripts/train/benchmarking/sweep.py at commit 5e85bd62d (the commit "
        "that added this table): --attn_impl {impl} for MPT-{size}, with .[gpu-flash2] "
        "installed"
    ),
    "default": (
        "the table names no kernel; llm-foundry scripts/train/benchmarking/"
        "submit_benchmarks.py defaults to --attn_impl triton at the commits that added "
        "the tables (300cc5c58, ef350d9e6, b2a43a147)"
    ),
}


def kernel(heading: str, size: str) -> dict:
    """The attention kernel of one table row, and where the harness says so."""
    if heading == LARGE:
        name = LARGE_KERNEL[size]
        impl = "flash" if name == "fa2" else "triton"
        return {"name": name, "source": KERNEL_SOURCE["large"].format(impl=impl, size=size)}
    return {"name": "triton", "source": KERNEL_SOURCE["default"]}


def tables(text: str):
    """(heading, [row dicts]) for every Markdown table under a '## ' heading."""
    heading, header = "", None
    for line in text.splitlines():
        if line.startswith("## "):
            heading, header = line[3:].strip(), None
            continue
        if not line.startswith("|"):
            header = None if not line.strip() else header
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif set("".join(cells)) <= set("- "):
            continue
        else:
            yield heading, dict(zip(header, cells, strict=True))


def params(d: int, layers: int, seq: int) -> int:
    return layers * (12 * d * d + 13 * d) + VOCAB * d + seq * d + 2 * d


def row(heading: str, number: int, r: dict, commit: str) -> dict:
    size, seq, gpus = r["Model"], int(r["SeqLen (T)"]), int(r["# GPUs"])
    d, layers, heads = SHAPES[size]
    if params(d, layers, seq) != int(r["NumParams"]):
        raise SystemExit(f"{heading} row {number}: NumParams {r['NumParams']} is not MPT-{size}")
    fp8 = r["Precision"] == "amp_fp8"
    rid = f"mosaicml-mpt{size}-s{seq}-g{gpus}-{r['GPU'].replace('_', '')}"
    rid += "-fp8" if fp8 else ""
    rid += "-large" if "Large Scale" in heading else ""
    rid += f"-mb{r['MicroBatchSize']}"
    return {
        "id": rid,
        "row": f"table '{heading}', row {number} (MPT-{size}, seq {seq}, {gpus} GPUs)",
        "role": "holdout",
        "attention_kernel": kernel(heading, size),
        "scenario": {
            "model": {
                "id": f"mpt-{size}-s{seq}",
                "name": f"MPT {size.upper()} (llm-foundry)",
                "n_layers": layers,
                "hidden_size": d,
                "n_heads": heads,
                "n_kv_heads": heads,
                "head_dim": d // heads,
                "ffn_size": 4 * d,
                "vocab_size": VOCAB,
                "mlp": "gelu",
                "norm": "layernorm",
                "tied_embeddings": 1,
                "pos_embeddings": seq,
                "qkv_bias": 1,
                "out_bias": 1,
                "mlp_bias": 1,
                "params_published": int(r["NumParams"]),
            },
            "hardware": HARDWARE[r["GPU"]],
            "n_gpus": gpus,
            "seq_len": seq,
            "global_batch_tokens": int(r["GlobalBatchSize (T)"]),
            "micro_batch": int(r["MicroBatchSize"]),
            "tp": 1,
            "pp": 1,
            "cp": 1,
            "peak_dtype": "fp8" if fp8 else "bf16",
            "recipe": "fsdp-bf16",
            "zero_stage": SHARDING[r["Sharding Strategy"]],
            "recompute": "full" if r["Activation Checkpointing"] == "True" else "none",
        },
        "published": {
            "tokens_per_s_per_gpu": int(r["Throughput (T/s/GPU)"]),
            "flop_convention": "printed",
            "mfu": round(float(r["MFU"]) / 100, 4),
        },
        "notes": (
            f"llm-foundry commit {commit[:12]}; {r['Precision']}, FSDP {r['Sharding Strategy']} "
            f"(mixed precision {r['MP Mode']}), activation checkpointing "
            f"{r['Activation Checkpointing']}, gradient accumulation {r['GradAccum']}; "
            "recipe fsdp-bf16 (the yamls train with decoupled AdamW)"
        ),
    }


def main() -> None:
    path, commit = sys.argv[1], sys.argv[2]
    text = open(path, encoding="utf-8").read()
    runs, seen, counts = [], set(), {}
    for heading, r in tables(text):
        if "Model" not in r:
            continue
        counts[heading] = counts.get(heading, 0) + 1
        if r["Model"] not in SHAPES:
            continue
        item = row(heading, counts[heading], r, commit)
        if item["id"] in seen:
            item["id"] += f"-r{counts[heading]}"
        seen.add(item["id"])
        runs.append(item)
    title = (
        "MosaicML (Databricks), llm-foundry, scripts/train/benchmarking/README.md, "
        "'MPT Training Benchmarks' (throughput of MPT models 1B-70B on H100 80GB BF16 "
        "and FP8, A100 80GB and A100 40GB, PyTorch FSDP), "
        f"github.com/mosaicml/llm-foundry at commit {commit}"
    )
    comment = (
        "Held-out published runs (sheetgen benchmark-check): never used to fit, transcribed\n"
        "by tools/transcribe_llm_foundry.py from the source named below."
    )
    sys.stdout.write(to_yaml("mosaicml", title, runs, comment, blind=False))


if __name__ == "__main__":
    main()
