"""Write presets/benchmarks/mbridge_moe.yaml: the DGX-H100 Mixture-of-Experts pretraining
rows of NVIDIA's Megatron-Bridge performance summary (NeMo containers 25.09-26.06), as
printed in github.com/NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md
(commit 067f987df03b8355b03192d88d70f1709fedf51a; the line of each row is named).

The tables print #-GPUs, precision, GBS, MBS, sequence length, FSDP, TP, PP, CP, VP, EP,
(GA) and tokens/s per GPU; the layout facts they do not print (sequence parallelism,
recomputation, dispatcher) come from the same repository's H100 performance recipes
(src/megatron/bridge/perf_recipes/{qwen,deepseek}/h100/), as each row's notes say.
Fit rows: the DeepSeek-V3 row (the only DGX-H100 one), Qwen3 30B-A3B at EP 16 across
two nodes (26.04.01) and at EP 8 inside one (26.02.01), Qwen3 235B-A22B (26.04.01);
every other row is only checked.

    python tools/transcribe_mbridge_moe.py > presets/benchmarks/mbridge_moe.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path

from sheetgen.calibration.benchmarks import to_yaml
from sheetgen.scenarios.run_fields import EP_COMM_OVERLAP_MEGATRON

DOC = "github.com/NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md"
QWEN3_30B = {
    "id": "qwen3-30b-a3b",
    "name": "Qwen3 30B-A3B",
    "n_layers": 48,
    "hidden_size": 2048,
    "n_heads": 32,
    "n_kv_heads": 4,
    "head_dim": 128,
    "ffn_size": 6144,
    "vocab_size": 151936,
    "mlp": "gated",
    "norm": "rmsnorm",
    "tied_embeddings": 0,
    "n_experts": 128,
    "experts_per_token": 8,
    "n_shared_experts": 0,
    "moe_ffn_size": 768,
    "n_dense_layers": 0,
    "router_bias": 0,
}
QWEN3_235B = {
    **QWEN3_30B,
    "id": "qwen3-235b-a22b",
    "name": "Qwen3 235B-A22B",
    "n_layers": 94,
    "hidden_size": 4096,
    "n_heads": 64,
    "ffn_size": 12288,
    "moe_ffn_size": 1536,
}
ARCH_SOURCE = (
    "architecture: config.json of the Hugging Face repos Qwen/Qwen3-30B-A3B (48 layers, "
    "hidden 2048, 32 heads, 4 KV heads, head_dim 128, 128 experts, 8 per token, "
    "moe_intermediate_size 768, vocab 151936, untied) and Qwen/Qwen3-235B-A22B (94 "
    "layers, hidden 4096, 64 heads, 4 KV heads, moe_intermediate_size 1536); no dense or "
    "shared experts (decoder_sparse_step 1, mlp_only_layers empty); per-head q/k norms "
    "not counted (under 0.01% of the work)"
)
BALANCED = (
    "routing force-balanced and dropless (the table's footnote: 'we force-balance the "
    "token distribution among experts and all benchmarks are token-dropless'): "
    "moe_load_imbalance 1"
)
# The recipes' dispatcher, by model: the flex dispatcher with HybridEP (sends once per
# node) for DeepSeek-V3 and Qwen3 30B-A3B, alltoall for Qwen3 235B-A22B.
DEDUP = {"deepseek-v3": 1, "qwen3-30b-a3b": 1, "qwen3-235b-a22b": 0}
DSV3, Q30, Q235 = "deepseek-v3", QWEN3_30B, QWEN3_235B
# (id, role, container, archive line, model, GPUs, GBS, MBS, TP, PP, VP, EP, tokens/s
#  per GPU); every row FP8, sequence parallel where TP > 1 (the recipes)
# fmt: off
ROWS = [
    ("mb2509-deepseekv3-g1024", "fit", "25.09", 631, DSV3, 1024, 8192, 1, 2, 8, 4, 64, 1297),
    ("mb260401-qwen3-30b-g16", "fit", "26.04.01", 248, Q30, 16, 1024, 1, 1, 1, 1, 16, 8960),
    ("mb260201-qwen3-30b-g16-ep8", "fit", "26.02.01", 445, Q30, 16, 1024, 1, 1, 2, 12, 8, 9058),
    ("mb260401-qwen3-235b-g256", "fit", "26.04.01", 258, Q235, 256, 8192, 1, 2, 8, 4, 32, 1712),
    ("mb2606-qwen3-30b-g16", "check", "26.06", 132, Q30, 16, 1024, 1, 1, 1, 1, 16, 8826),
    ("mb2604-qwen3-30b-g16", "check", "26.04", 348, Q30, 16, 1024, 1, 1, 1, 1, 16, 8901),
    ("mb2602-qwen3-30b-g16-ep8", "check", "26.02", 530, Q30, 16, 1024, 1, 1, 2, 12, 8, 5113),
    ("mb2511-qwen3-30b-g16-ep8", "check", "25.11", 593, Q30, 16, 512, 2, 1, 2, 24, 8, 5275),
    ("mb2604-qwen3-235b-g256", "check", "26.04", 357, Q235, 256, 8192, 1, 2, 8, 4, 32, 1686),
    ("mb260201-qwen3-235b-g256", "check", "26.02.01", 454, Q235, 256, 8192, 1, 2, 8, 4, 32, 1611),
    ("mb2602-qwen3-235b-g256", "check", "26.02", 540, Q235, 256, 8192, 1, 2, 8, 4, 32, 1633),
    ("mb2511-qwen3-235b-g256", "check", "25.11", 594, Q235, 256, 2048, 1, 2, 8, 4, 32, 1575),
]
# fmt: on


def deepseek_v3() -> dict:
    """The DeepSeek-V3 preset's architecture (presets/models/deepseek-v3.yaml)."""
    import yaml

    path = Path(__file__).resolve().parents[1] / "presets" / "models" / "deepseek-v3.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {"id": "deepseek-v3", "name": "DeepSeek-V3", **doc["architecture"]}


def run(row: tuple) -> dict:
    rid, role, container, line, model, gpus, gbs, mbs, tp, pp, vp, ep, tps = row
    prec, sp = "fp8", int(tp > 1)
    dedup = DEDUP[model if isinstance(model, str) else model["id"]]
    seq = 4096
    preset = isinstance(model, str)
    model = deepseek_v3() if preset else model
    name = model["name"]
    scenario = {
        "model": {**model, "id": f"{rid}-model"},
        "hardware": "h100-sxm",
        "n_gpus": gpus,
        "seq_len": seq,
        "global_batch_tokens": gbs * seq,
        "micro_batch": mbs,
        "tp": tp,
        "pp": pp,
        "cp": 1,
        "ep": ep,
        "pp_virtual_stages": vp,
        "peak_dtype": prec,
        "recipe": "megatron-bf16",
        "act_profile": "megatron-te",
        "sequence_parallel": sp,
        "zero_stage": 1,
        "expert_tp": 1,
        "ep_comm_overlap": EP_COMM_OVERLAP_MEGATRON if "235b" in rid else 0,
        "ep_dispatch_dedup": dedup,
        "moe_load_imbalance": 1,
    }
    dispatcher = (
        "dispatcher: not printed; the HEAD recipe's flex dispatcher with the HybridEP "
        "backend (NVLINK_DOMAIN_SIZE 8) sends a token once to each other node that hosts "
        "one of its experts and forwards it there over NVLink: ep_dispatch_dedup 1"
        if dedup
        else "dispatcher: alltoall (HEAD recipe moe_token_dispatcher_type): ep_dispatch_dedup 0"
    )
    recompute = (
        "recomputation: not printed; the HEAD recipe recomputes MLA's up-projections and the "
        "MLP (recompute_modules), which this workbook cannot express: the least that fits "
        "is chosen"
        if "deepseek" in rid
        else "recomputation: none (HEAD recipe: recompute_granularity None)"
    )
    if "deepseek" not in rid:
        scenario["recompute"] = "none"
    else:  # the recipe's pipeline layout "Et|(tt|)*30mL"
        scenario["pp_split_embedding_loss"] = 1
    notes = "; ".join(
        [
            f"{name}, DGX-H100, {prec.upper()} as printed"
            + (
                " (FP8 current scaling; the parenthesised figure is blockwise FP8)"
                if "deepseek" in rid
                else ""
            ),
            f"sequence parallelism {sp} (HEAD recipe sequence_parallel)",
            dispatcher,
            (
                "expert-parallel overlap on (HEAD recipe overlap_moe_expert_parallel_comm, "
                f"moe_a2a_overlap): ep_comm_overlap {EP_COMM_OVERLAP_MEGATRON}, the share "
                "fitted on the fit rows that turn it on"
                if "235b" in rid
                else "expert-parallel overlap off (HEAD recipe): ep_comm_overlap 0"
            ),
            recompute,
            "expert tensor parallelism 1 (HEAD recipe expert_tensor_parallel_size)",
            *(
                [
                    "pipeline: the HEAD recipe's layout 'Et|(tt|)*30mL' gives the embedding "
                    "and the loss (with the MTP module) chunks of their own: "
                    "pp_split_embedding_loss 1; the MTP module itself is not counted (the "
                    "table's 338 model TFLOP/s at 1,297 tokens/s is 261 GFLOP per token, 4% "
                    "above this workbook's 250 without it)"
                ]
                if "deepseek" in rid
                else []
            ),
            "distributed optimizer (ZeRO-1): Megatron-Bridge's default",
            BALANCED,
            ARCH_SOURCE
            if not preset
            else "architecture: presets/models/deepseek-v3.yaml (MTP module not counted)",
        ]
    )
    return {
        "id": rid,
        "row": (
            f"{container} NeMo Container / Pre-Training Performance, {name} table, "
            f"row DGX-H100 (archive line {line})"
        ),
        "role": role,
        "scenario": scenario,
        "published": {"tokens_per_s_per_gpu": tps, "flop_convention": "printed"},
        "notes": notes,
    }


def main() -> None:
    runs = [run(r) for r in ROWS]
    comment = (
        "Published MoE pretraining runs (sheetgen benchmark-check); written by\n"
        "tools/transcribe_mbridge_moe.py from the source below; 'role: fit' rows were\n"
        "used to fit the step model's MoE terms, 'check' rows only checked."
    )
    title = (
        "NVIDIA NeMo / Megatron-Bridge performance summary, DGX-H100 MoE pretraining "
        f"(NeMo 25.09-26.06): {DOC} at commit 067f987df03b8355b03192d88d70f1709fedf51a"
    )
    sys.stdout.write(to_yaml("mbridge-moe", title, runs, comment, blind=False))


if __name__ == "__main__":
    main()
