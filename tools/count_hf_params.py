"""Count the parameters transformers builds for each fixture config.json (meta device).

Run with a Python that has torch and transformers (not a sheetgen dependency):

    python tools/count_hf_params.py tests/fixtures/hf_configs

Writes counts.json beside the configs: {"transformers": version, "torch": version,
"counts": {file stem: parameters}}.  Configs transformers cannot build (e.g. a
model type sheetgen refuses) are counted too when transformers knows them.  For a
multimodal config with a ``text_config`` (Llama 4, Gemma 3) the language model is
counted (``AutoModelForCausalLM.from_config(config.get_text_config())``), as sheetgen
counts it; the vision encoder and projector are not.  ``active`` is the count less
the routed experts a token does not visit (each MoE module's expert tensors, from
the built model, times (E - k) / E).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def build(path: Path):  # noqa: ANN201 (a torch module; torch is not a dependency)
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    doc = json.loads(path.read_text())
    doc.pop("auto_map", None)  # build transformers' own class, never repository code
    doc.pop("quantization_config", None)  # count the parameters, not an FP8 storage layout
    model_type = doc.pop("model_type")
    cfg = AutoConfig.for_model(model_type, **doc)
    if "text_config" in doc:
        cfg = cfg.get_text_config()  # the language model (Llama 4, Gemma 3)
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(cfg)


def count(path: Path) -> int:
    return sum(p.numel() for p in build(path).parameters())


def active(path: Path) -> int:
    """Parameters one token passes through: all, less (E - k) / E of the routed experts'
    tensors in every module that holds them (a ``num_experts`` attribute and top-k)."""
    model = build(path)
    total = sum(p.numel() for p in model.parameters())
    skipped = 0.0
    for module in model.modules():
        experts = getattr(module, "num_experts", None)
        if not isinstance(experts, int) or not hasattr(module, "gate_up_proj"):
            continue
        k = model.config.num_experts_per_tok
        skipped += (
            sum(p.numel() for p in module.parameters(recurse=False)) * (experts - k) / experts
        )
    return round(total - skipped)


def main(folder: str) -> None:
    import torch
    import transformers

    root = Path(folder)
    paths = [p for p in sorted(root.glob("*.json")) if p.name != "counts.json"]
    counts = {p.stem: count(p) for p in paths}
    actives = {p.stem: active(p) for p in paths if p.stem != "mamba-130m"}
    moe = {k: v for k, v in actives.items() if v != counts[k]}
    out = {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "counts": counts,
        "active": moe,
    }
    (root / "counts.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main(sys.argv[1])
