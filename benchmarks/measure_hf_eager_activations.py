"""Measure what Hugging Face transformers' Llama keeps for backward (the hf-eager profile).

Runs one forward pass with the loss computed from labels under
``torch.autograd.graph.saved_tensors_hooks`` and sums the bytes of every unique
storage saved for backward that is not a parameter.  Configuration (issue 12): 4
layers, hidden 512, 8 heads, 2 KV heads, head_dim 64, FFN 1408, vocabulary 4096,
untied embeddings, BF16 weights, batch 2, sequence 1024, SDPA attention.  CPU is
enough: which tensors are saved does not depend on the device (the SDPA kernel
saves its output and log-sum-exp on CPU as flash attention does on GPU).

    python benchmarks/measure_hf_eager_activations.py            # JSON on stdout
    python benchmarks/measure_hf_eager_activations.py --tensors  # and every saved tensor

Needs torch and transformers (``pip install 'sheetgen[torch]'``).  The figures in
tests/fixtures/hf_eager_activations.json come from this script.
"""

from __future__ import annotations

import json
import platform
import sys

CONFIG = {
    "n_layers": 4,
    "hidden_size": 512,
    "n_heads": 8,
    "n_kv_heads": 2,
    "head_dim": 64,
    "ffn_size": 1408,
    "vocab_size": 4096,
    "batch": 2,
    "seq_len": 1024,
}


def measure(config: dict[str, int] = CONFIG, with_tensors: bool = False) -> dict:
    """Bytes of the unique non-parameter storages saved for backward, and versions."""
    import torch
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        hidden_size=config["hidden_size"],
        intermediate_size=config["ffn_size"],
        num_hidden_layers=config["n_layers"],
        num_attention_heads=config["n_heads"],
        num_key_value_heads=config["n_kv_heads"],
        head_dim=config["head_dim"],
        vocab_size=config["vocab_size"],
        tie_word_embeddings=False,
        max_position_embeddings=max(2048, config["seq_len"]),
        attention_dropout=0.0,
    )
    cfg._attn_implementation = "sdpa"
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    model.train()
    ids = torch.randint(0, config["vocab_size"], (config["batch"], config["seq_len"]))
    param_storages = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}
    tensors: list[list] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        ptr = storage.data_ptr()
        if ptr not in param_storages and ptr not in saved:
            saved[ptr] = storage.nbytes()
            tensors.append([list(t.shape), str(t.dtype).removeprefix("torch."), storage.nbytes()])
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(input_ids=ids, labels=ids)
    out.loss.backward()  # the saved tensors were usable for backward
    result = {
        "config": dict(config),
        "attn_implementation": model.config._attn_implementation,
        "saved_bytes": sum(saved.values()),
        "saved_storages": len(saved),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "device": "cpu",
    }
    if with_tensors:
        result["tensors"] = tensors
    return result


def main(argv: list[str]) -> int:
    print(json.dumps(measure(with_tensors="--tensors" in argv), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
