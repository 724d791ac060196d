"""Count the parameters transformers builds for each fixture config.json (meta device).

Run with a Python that has torch and transformers (not a sheetgen dependency):

    python tools/count_hf_params.py tests/fixtures/hf_configs

Writes counts.json beside the configs: {"transformers": version, "torch": version,
"counts": {file stem: parameters}}.  Configs transformers cannot build (e.g. a
model type sheetgen refuses) are counted too when transformers knows them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def count(path: Path) -> int:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    doc = json.loads(path.read_text())
    doc.pop("auto_map", None)  # build transformers' own class, never repository code
    doc.pop("quantization_config", None)  # count the parameters, not an FP8 storage layout
    model_type = doc.pop("model_type")
    cfg = AutoConfig.for_model(model_type, **doc)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(cfg)
    return sum(p.numel() for p in model.parameters())


def main(folder: str) -> None:
    import torch
    import transformers

    root = Path(folder)
    counts = {p.stem: count(p) for p in sorted(root.glob("*.json")) if p.name != "counts.json"}
    out = {"transformers": transformers.__version__, "torch": torch.__version__, "counts": counts}
    (root / "counts.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main(sys.argv[1])
