"""The serving step model's calibration (issue 39): the shipped rows and their roles,
the engine profiles against the field defaults, the error quoted on the Serving sheet
against what serving-check computes, and the targets on the shipped set.
"""

from __future__ import annotations

import pytest

from sheetgen.calibration import serving_check
from sheetgen.scenarios.run_fields import FIELDS

DEFAULTS = {f.key: f.default for f in FIELDS}


@pytest.fixture(scope="module")
def results() -> list[serving_check.ServingResult]:
    return [serving_check.evaluate(r) for r in serving_check.load()]


def test_field_defaults_are_the_vllm_profile() -> None:
    profile = serving_check.engine_profiles()["vllm"]
    for key, value in profile.items():
        assert DEFAULTS[key] == pytest.approx(value, rel=1e-12), f"{key}: {DEFAULTS[key]}"


def test_every_profile_value_names_its_source() -> None:
    from sheetgen.scenarios.yaml_load import load_yaml

    path = serving_check.engines_path()
    doc = load_yaml(path.read_text(encoding="utf-8"), str(path))
    fitted = {"inf_bw_eff", "inf_kv_eff", "inf_kv_ctx_half", "inf_gemm_half_ridge"}
    fitted |= {"inf_layer_latency_s", "inf_collective_latency_s", "inf_step_overhead_s"}
    fitted |= {"inf_seq_overhead_s"}
    for engine in doc["engines"]:
        sources = engine["sources"]
        for key in engine["values"]:
            assert key in sources or (key in fitted and "fitted" in sources), (engine["id"], key)


def test_both_sources_have_fit_and_check_rows(results) -> None:
    for source in ("trtllm-perf-overview", "trtllm-perf-overview-0.9-ttft"):
        roles = {r.run.role for r in results if r.run.source == source}
        assert roles == {"fit", "check"}, source
    figures = {r.run.figure for r in results}
    assert figures == set(serving_check.FIGURES)


def test_quoted_error_is_the_shipped_90th_percentile(results) -> None:
    """serve_calibration_error (Serving sheet's range) = the 90th percentile |error| of
    the shipped output tok/s rows, to two decimals: fails when the two drift."""
    rows = [r for r in results if r.run.figure == "output_tok_s"]
    _, p90, _ = serving_check.stats(rows)
    assert DEFAULTS["serve_calibration_error"] == pytest.approx(round(p90, 2), abs=1e-12)


def test_targets_on_the_shipped_set(results) -> None:
    """Issue 39: median |error| <= 8%, 90th percentile <= 20% over the shipped figures."""
    median, p90, _ = serving_check.stats(results)
    assert median <= 0.08 and p90 <= 0.20, (median, p90)


def test_markdown_prints_every_figure_and_role(results) -> None:
    text = serving_check.markdown(results)
    for name in serving_check.FIGURE_NAMES.values():
        for role in ("fit", "check"):
            assert f"{name}, {role} rows:" in text, (name, role)
