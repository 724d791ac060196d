"""The context the model supports (``context_limit``): read by `presets import` from
``max_position_embeddings`` (GPT-2: ``n_positions``), set in the shipped presets, and
checked (warnings only) against the inference request and the training sequences;
the workbook equals the reference after recalculation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import build_matrix, calc, gnumeric_values, libreoffice_values, mismatches

from sheetgen.catalog.hf_import import architecture, import_config, read_config
from sheetgen.checking.recalc import recalc_pycel
from sheetgen.reference.checks import ERROR_FLAGS, WARNING_FLAGS

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "hf_configs"


@pytest.mark.parametrize(
    "name, context",
    [
        ("gemma2-27b", 8192),
        ("llama3-8b", 8192),
        ("mistral-7b", 32768),
        ("deepseek-v3", 163840),
        ("phi3-mini-4k", 4096),
        ("gpt2", 1024),  # n_positions
    ],
)
def test_import_reads_the_context(name: str, context: int) -> None:
    assert architecture(read_config(FIXTURES / f"{name}.json"))["context_limit"] == context


def test_import_without_the_field_is_unknown(tmp_path: Path) -> None:
    doc = read_config(FIXTURES / "llama3-8b.json")
    for value in ("absent", None):
        changed = {k: v for k, v in doc.items() if k != "max_position_embeddings"}
        if value is None:
            changed["max_position_embeddings"] = None
        assert architecture(changed)["context_limit"] == 0
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc))
    _, text = import_config(path, "imported")
    assert "context_limit: 8192" in text


def test_import_refuses_a_bad_context() -> None:
    from sheetgen.errors import SheetgenError

    doc = {**read_config(FIXTURES / "llama3-8b.json"), "max_position_embeddings": "8k"}
    with pytest.raises(SheetgenError, match="max_position_embeddings"):
        architecture(doc)


def test_warnings_only() -> None:
    for key in ("chk_inf_within_context", "chk_train_within_context"):
        assert key in WARNING_FLAGS and key not in ERROR_FLAGS


def test_a_32k_request_on_an_8k_model_warns() -> None:
    """The reviewer's case: Gemma 2 (8,192 tokens) asked for 30,000 + 2,000."""
    r = calc("gemma2 32k", model="gemma2-27b", inf_tp=1, prompt_len=30_000, output_len=2_000)
    assert r["context_limit"] == 8192
    assert r["inf_context_note"] == "request of 32000 tokens beyond the model's 8192 tokens"
    assert r["chk_inf_within_context"] == 0
    assert r["chk_warnings"] >= 1
    ok = calc("gemma2 8k", model="gemma2-27b", inf_tp=1, prompt_len=6_000, output_len=2_192)
    assert ok["inf_context_note"] == "OK" and ok["chk_inf_within_context"] == 1
    # The verdict does not read warnings.
    assert ok["plan_verdict"] == r["plan_verdict"]


def test_no_check_when_unknown() -> None:
    settings = {"inf_tp": 1, "prompt_len": 30_000, "output_len": 2_000, "seq_len": 65_536}
    r = calc("unknown", model={"base": "gemma2-27b", "context_limit": 0}, **settings)
    assert r["inf_context_note"] == r["train_context_note"] == "OK"
    assert r["chk_inf_within_context"] == r["chk_train_within_context"] == 1


def test_training_beyond_the_context_is_context_extension() -> None:
    r = calc("llama3 32k", model="llama3-8b", seq_len=32_768, global_batch_tokens=4_194_304)
    assert r["train_context_note"] == (
        "context extension beyond the model's 8192 tokens: sequences of 32768 tokens"
    )
    assert r["chk_train_within_context"] == 0
    # A phase with tokens counts; an unused slot does not.
    phased = calc(
        "llama3 phased",
        model="llama3-8b",
        seq_len=8192,
        phases=[{"tokens": "900B", "seq_len": 8192}, {"tokens": "100B", "seq_len": 131_072}],
    )
    assert phased["train_context_note"].endswith("sequences of 131072 tokens")
    assert calc("llama3 8k", model="llama3-8b", seq_len=8192)["chk_train_within_context"] == 1


def test_shipped_presets_state_their_context() -> None:
    from sheetgen.catalog.presets import models

    for mid, model in models().items():
        assert "Context:" in model.source, mid
        if model.context_limit == 0:
            assert "unknown" in model.source, mid


# ---------------------------------------------------------------------------
# The workbook equals the reference for every key (pycel, Gnumeric, LibreOffice)


def matrix_items() -> list[dict[str, Any]]:
    return [
        {"name": "gemma2 32k", "model": "gemma2-27b", "hardware": "h100-sxm", "inf_tp": 1,
         "prompt_len": 30_000, "output_len": 2_000, "seq_len": 4096},
        {"name": "llama3 extension", "model": "llama3-8b", "hardware": "h100-sxm",
         "seq_len": 8192, "phases": [{"tokens": "900B", "seq_len": 8192},
                                     {"tokens": "100B", "seq_len": 32_768}]},
        {"name": "unknown context", "model": {"base": "gemma2-27b", "context_limit": 0},
         "hardware": "h100-sxm", "inf_tp": 1, "prompt_len": 30_000, "output_len": 2_000},
        {"name": "imported gemma2", "model": {**architecture(
            read_config(FIXTURES / "gemma2-27b.json")), "id": "gemma2-imported"},
         "hardware": "h100-sxm", "seq_len": 16_384, "prompt_len": 4_000, "output_len": 100},
    ]  # fmt: skip


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory):
    return build_matrix(tmp_path_factory.mktemp("context"), matrix_items(), "context")


def test_matrix_reaches_every_branch(matrix) -> None:
    _, scenarios, reference = matrix
    r = {s.name: reference[s.name] for s in scenarios}
    assert r["gemma2 32k"]["chk_inf_within_context"] == 0
    assert r["llama3 extension"]["chk_train_within_context"] == 0
    assert r["unknown context"]["chk_inf_within_context"] == 1
    assert r["imported gemma2"]["chk_train_within_context"] == 0


def test_inprocess_engine_equals_reference(matrix) -> None:
    path, _, reference = matrix
    bad = mismatches(recalc_pycel(path), reference)
    assert not bad, f"{len(bad)} keys differ in pycel:\n" + "\n".join(bad[:40])


@pytest.mark.libreoffice
def test_libreoffice_equals_reference(matrix) -> None:
    path, _, reference = matrix
    bad = mismatches(libreoffice_values(path), reference)
    assert not bad, f"{len(bad)} keys differ in LibreOffice:\n" + "\n".join(bad[:40])


def test_gnumeric_equals_reference(matrix) -> None:
    path, _, reference = matrix
    bad = mismatches(gnumeric_values(path), reference)
    assert not bad, f"{len(bad)} keys differ in Gnumeric:\n" + "\n".join(bad[:40])
