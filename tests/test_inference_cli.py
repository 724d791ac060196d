"""The Inference sheet's settings on the command line (flags, one-line errors), edited
inputs followed in LibreOffice, and the tp chosen when inf_tp is 0."""

from __future__ import annotations

import pytest
from test_reference_seeds import calc

# ---------------------------------------------------------------------------
# Command line: the new settings are flags, validated with one-line errors


def test_cli_inference_flags() -> None:
    import json

    from click.testing import CliRunner

    from sheetgen.cli import main

    args = ["compute", "--model", "llama3-70b", "--hardware", "h100-sxm", "--format", "json"]
    result = CliRunner().invoke(
        main,
        [*args, "--inf-tp", "4", "--prompt-len", "100", "--output-len", "4000",
         "--quant-scale-bytes", "0.015625", "--weight-dtype", "int4", "--inf-bw-eff", "0.9"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    values = {r["key"]: r["value"] for r in json.loads(result.output)}
    assert values["inf_tp"] == 4 and values["inf_request_tokens"] == 4100
    assert values["inf_weight_bytes_per_param"] == pytest.approx(0.515625, rel=1e-12)
    for key in ("inf_fits", "inf_max_batch", "inf_ttft_s", "inf_cost_per_mtok"):
        assert key in values


@pytest.mark.parametrize(
    "flag, value, message",
    [
        ("--inf-tp", "-1", "--inf-tp: must be a whole number >= 0"),
        ("--prompt-len", "-5", "--prompt-len: must be a whole number >= 1"),
        ("--quant-scale-bytes", "-0.1", "must be >= 0"),
        ("--inf-compute-eff", "1.5", "from 0.0001 to 1"),
        ("--inf-bw-eff", "0", "from 0.0001 to 1"),
        ("--inf-overhead-bytes", "-1", "must be >= 0"),
    ],
)
def test_cli_rejects_bad_inference_settings(flag, value, message) -> None:
    from click.testing import CliRunner

    from sheetgen.cli import main

    args = ["compute", "--model", "llama3-8b", "--hardware", "h100-sxm", flag, value]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.output


AUTO_TP_CASES = [
    ("llama3-8b", "h100-sxm", {}, 1),
    ("llama3-70b", "h100-sxm", {}, 2),
    ("llama3-70b", "l40s", {"weight_dtype": "int4"}, 1),
    ("llama2-7b", "h100-sxm", {"inf_batch": 8, "prompt_len": 32000, "output_len": 768}, 4),
    ("llama3-405b", "h100-sxm", {"weight_dtype": "fp8"}, 8),
    ("deepseek-v3", "h200", {"weight_dtype": "fp8"}, 8),
]


@pytest.mark.parametrize(("model", "hardware", "more", "tp"), AUTO_TP_CASES)
def test_inf_tp_0_takes_the_fewest_gpus_on_which_the_batch_fits(model, hardware, more, tp):
    """inf_tp 0 (the default): the smallest power of two up to the node that splits the
    heads and on which the batch fits at both peaks. The same plan typed with that tp
    fits; with half of it it does not."""
    r = calc(f"{model} auto", model=model, hardware=hardware, **more)
    assert (r["inf_tp_used"], r["inf_fits"]) == (tp, 1), (r["inf_tp_used"], r["inf_tp_note"])
    assert r["inf_tp_note"] == (
        f"chosen: tp {tp}, the smallest power of two up to the node (8) that splits the heads "
        "and on which the batch fits"
    )
    typed = calc(f"{model} tp {tp}", model=model, hardware=hardware, inf_tp=tp, **more)
    assert typed["inf_fits"] == 1 and typed["inf_tp_note"] == f"given on Inputs: tp {tp}"
    assert {
        k: typed[k] for k in r if k.startswith("inf_") and k not in ("inf_tp", "inf_tp_note")
    } == {k: r[k] for k in r if k.startswith("inf_") and k not in ("inf_tp", "inf_tp_note")}
    if tp > 1:
        half = calc(f"{model} tp {tp // 2}", model=model, hardware=hardware, inf_tp=tp // 2, **more)
        assert half["inf_fits"] == 0, f"{model} fits on {tp // 2} GPUs already"


def test_inf_tp_0_names_the_node_when_nothing_fits() -> None:
    """BF16 Llama 3 405B (810 GB of weights) fits no power of two in an 8-GPU node: the
    largest, 8, is used and the note and Checks say it does not fit."""
    r = calc("405B bf16 auto", model="llama3-405b", hardware="h100-sxm")
    assert (r["inf_tp_used"], r["inf_fits"], r["chk_inf_fits"]) == (8, 0, 0)
    assert r["inf_tp_note"] == (
        "chosen: tp 8, the largest power of two in the node (8) that splits the heads; the "
        "batch fits on none that does"
    )
