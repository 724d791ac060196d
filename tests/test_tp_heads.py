"""Tensor parallelism against the attention heads: a tp GPUs can split must divide the
query heads, and divide the key/value heads or be a multiple of them (each KV head then
copied: vLLM's rule, vllm/model_executor/models/llama.py, LlamaAttention; MLA: the query
heads only). Serving and inference never choose another tp; a typed one is refused in
one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from helpers import calc

from sheetgen import presets
from sheetgen.cli import main
from sheetgen.errors import SheetgenError
from sheetgen.run_fields import SERVE_TP_SLOTS
from sheetgen.scenario_file import load_scenarios, scenario_from_dict

# Phi-3-medium's attention (config.json of microsoft/Phi-3-medium-4k-instruct: 40 layers,
# hidden 5120, 40 query heads, 10 KV heads, intermediate 17920, vocabulary 32064).
PHI3_MEDIUM = {
    "base": "llama3-8b", "id": "phi3-medium-shape", "name": "Phi-3-medium shape",
    "n_layers": 40, "hidden_size": 5120, "n_heads": 40, "n_kv_heads": 10,
    "ffn_size": 17920, "vocab_size": 32064,
}  # fmt: skip
# The reviewer's plans: a power of two that fits (8) does not split the heads.
QWEN_LONG = {
    "model": "qwen2.5-7b", "inf_batch": 150, "prompt_len": 8000, "output_len": 500,
    "serve_requests_per_s": 1, "slo_tpot_s": 1, "slo_ttft_s": 5,
}  # fmt: skip
PHI3_SHORT = {
    "model": PHI3_MEDIUM, "inf_batch": 400, "prompt_len": 2000, "output_len": 40,
    "serve_requests_per_s": 1, "slo_tpot_s": 1, "slo_ttft_s": 5,
}  # fmt: skip
CANDIDATES = [2**k for k in range(SERVE_TP_SLOTS)]


def splits(n_heads: int, n_kv: int, tp: int) -> bool:
    """vLLM's rule, stated here rather than imported from the code under test."""
    return n_heads % tp == 0 and (n_kv % tp == 0 or tp % n_kv == 0)


def heads(model) -> tuple[int, int]:
    """Query heads and the key/value heads tp splits (MLA: the query heads)."""
    return model.n_heads, model.n_heads if model.is_mla else model.n_kv_heads


FALLBACK = {
    "inf_tp": "that splits the heads; the batch fits on none that does",
    "serve_tp": (
        "that splits the heads; none that does holds the weights and one SLO batch's KV "
        "cache, memory caps the batch"
    ),
}


def run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(
    ("name", "settings", "tp"),
    [("Qwen2.5 7B, 8 GPUs fit", QWEN_LONG, 4), ("Phi-3-medium shape", PHI3_SHORT, 2)],
)
@pytest.mark.parametrize("sheet", ["inf_tp", "serve_tp"])
def test_a_tp_that_fits_but_does_not_split_the_heads_is_skipped(
    name: str, settings: dict[str, Any], tp: int, sheet: str
) -> None:
    """The batch fits on 8 GPUs, which do not split 28 query heads (Qwen) or 10 KV heads
    (Phi-3-medium); nothing smaller fits: the largest power of two in the node that
    splits them is used, and the note says so."""
    r = calc(name, **settings)
    used, note = r[f"{sheet}_used"], r[f"{sheet}_note"]
    assert used == tp, f"{sheet}_used [{name}]: {used}, expected {tp} ({note})"
    expected = f"chosen: tp {tp}, the largest power of two in the node (8) {FALLBACK[sheet]}"
    assert note == expected, f"{sheet}_note [{name}]: {note!r}"
    prefix = "inf_cand" if sheet == "inf_tp" else "serve_cand"
    possible = [r[f"{prefix}_possible_{n}"] for n in range(1, SERVE_TP_SLOTS + 1)]
    model = scenario_from_dict({"name": name, "hardware": "h100-sxm", **settings}).model
    expected_possible = [int(splits(*heads(model), t)) for t in CANDIDATES]
    assert possible == expected_possible, f"{prefix}_possible_* [{name}]: {possible}"
    assert r["chk_serve_tp_divides_heads"] == 1, f"chk_serve_tp_divides_heads [{name}]"


@pytest.mark.parametrize("model", sorted(presets.models()))
@pytest.mark.parametrize(
    "load",
    [
        {"inf_batch": 1, "prompt_len": 100, "output_len": 100},
        {"inf_batch": 256, "prompt_len": 32000, "output_len": 2000, "slo_tpot_s": 1},
    ],
    ids=["light", "heavy"],
)
def test_every_chosen_tp_splits_the_heads(model: str, load: dict[str, Any]) -> None:
    """Whichever candidate wins, or none fits: the tp used on Inference and Serving splits
    the model's heads, and Checks' warning agrees."""
    name = f"{model} {load['inf_batch']}"
    r = calc(name, model=model, serve_requests_per_s=1, **load)
    a, kv = heads(presets.get_model(model))
    for key in ("inf_tp_used", "serve_tp_used"):
        assert splits(a, kv, r[key]), f"{key} [{name}]: {r[key]} for {a} query, {kv} KV heads"
    assert r["chk_serve_tp_divides_heads"] == 1, f"chk_serve_tp_divides_heads [{name}]"


IMPOSSIBLE_FLAGS = [
    (["--inf-tp", "7"], "--inf-tp: 7 neither divides the 4 KV heads"),
    (["--serve-tp", "14"], "--serve-tp: 14 neither divides the 4 KV heads"),
    (["--inf-tp", "8"], "--inf-tp: 8 does not divide the 28 query heads"),
]


@pytest.mark.parametrize(
    ("flags", "words"), IMPOSSIBLE_FLAGS, ids=[" ".join(f) for f, _w in IMPOSSIBLE_FLAGS]
)
def test_an_impossible_tp_flag_is_one_line(flags: list[str], words: str) -> None:
    """Qwen2.5 7B (28 query, 4 KV heads): tp 7 or 14 divides the query heads but splits
    KV heads no engine splits: refused like a tp that splits query heads (exit 2)."""
    result = run("compute", "--model", "qwen2.5-7b", "--hardware", "h100-sxm", *flags)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, f"{flags}: exit {result.exit_code}\n{result.output}"
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert words in lines[0] and "accepted:" in lines[0] and "1, 2, 4 or 28" in lines[0], lines


IMPOSSIBLE_KEYS = [("inf_tp", 7), ("serve_tp", 14)]


@pytest.mark.parametrize(("key", "tp"), IMPOSSIBLE_KEYS)
def test_an_impossible_tp_in_a_scenario_file_is_one_line(tmp_path: Path, key: str, tp: int):
    spec = tmp_path / "kv.yaml"
    item = {"name": f"qwen {key} {tp}", "model": "qwen2.5-7b", "hardware": "h100-sxm"}
    spec.write_text(yaml.safe_dump({"scenarios": [{**item, "n_gpus": 56, key: tp}]}))
    with pytest.raises(SheetgenError) as err:
        load_scenarios(spec)
    text = str(err.value)
    assert f"scenarios[1].{key}: {tp} neither divides the 4 KV heads" in text, text
    assert "\n" not in text, text
