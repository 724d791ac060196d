"""`compute --format json|csv` writes scenario by scenario (issue 42): the bytes are
those the whole table rendered at once gives, a scenario that cannot be computed
still ends in one line with nothing on standard output, the aligned table refuses
more scenarios than it can show, and running out of memory is one line too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from sheetgen.cli import compute_output
from sheetgen.cli.commands import main
from sheetgen.cli.tables import compute_frame, render
from sheetgen.scenarios.files import load_scenarios

MODELS = ["llama3-8b", "llama3-70b", "mixtral-8x7b", "deepseek-v3"]
HARDWARE = ["h100-sxm", "a100-80gb", "mi300x"]


def _spec(tmp_path: Path, n: int) -> Path:
    items = [
        {
            "name": name,
            "model": MODELS[i % len(MODELS)],
            "hardware": HARDWARE[i % len(HARDWARE)],
            "n_gpus": 8 * (1 + i % 4),
        }
        for i, name in enumerate(
            # names a CSV reader would run as formulas, quotes, commas, non-ASCII
            ["plain", "=1+1", "-neg", 'say "hi", then', "naïve ☃", "@at", "+plus", "x"]
        )
    ][:n]
    spec = tmp_path / "many.yaml"
    spec.write_text(yaml.safe_dump({"scenarios": items}, sort_keys=False), encoding="utf-8")
    return spec


@pytest.mark.parametrize("fmt", ["json", "csv"])
@pytest.mark.parametrize("chunk", [1, 3, 32])
def test_streamed_output_is_the_whole_table_rendered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, chunk: int
) -> None:
    monkeypatch.setattr(compute_output, "CSV_SCENARIOS_PER_CHUNK", chunk)
    spec = _spec(tmp_path, 8)
    whole = render(compute_frame(load_scenarios(spec)), fmt) + "\n"
    result = CliRunner().invoke(main, ["compute", str(spec), "--format", fmt])
    assert result.exit_code == 0, result.output
    if result.stdout != whole:
        at = len(os.path.commonprefix([result.stdout, whole]))
        pytest.fail(f"{fmt}: differs at byte {at}: {result.stdout[at - 60 : at + 60]!r}")


def test_json_values_are_encoded_as_json_dumps_encodes_them() -> None:
    import json

    for value in [0.1, 1e300, -0.0, 3, -7, 2**70, True, False, None, "é", float("nan"),
                  float("inf"), float("-inf"), 1.5e-7]:  # fmt: skip
        assert compute_output._json_value(value) == json.dumps(value, default=float), value


def test_a_scenario_that_cannot_be_computed_writes_nothing(tmp_path: Path) -> None:
    spec = _spec(tmp_path, 3)
    data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    data["scenarios"][-1]["start_date"] = "9994-12-31"  # finishes after 9999-12-31
    data["scenarios"][-1]["train_tokens"] = 10**16
    spec.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    for fmt in ("json", "csv"):
        result = CliRunner().invoke(main, ["compute", str(spec), "--format", fmt])
        assert result.exit_code == 2, result.output
        assert result.stdout == "", f"{fmt}: {len(result.stdout)} characters written"
        assert len(result.stderr.splitlines()) == 1 and "would finish after" in result.stderr


def test_the_table_refuses_more_scenarios_than_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compute_output, "MAX_TABLE_SCENARIOS", 2)
    spec = _spec(tmp_path, 3)
    result = CliRunner().invoke(main, ["compute", str(spec)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("error: --format: table shows at most 2 scenarios")
    assert CliRunner().invoke(main, ["compute", str(spec), "--format", "csv"]).exit_code == 0


def test_out_of_memory_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_memory(*args: object) -> None:
        raise MemoryError

    monkeypatch.setattr(compute_output, "write_computed", no_memory)
    result = CliRunner().invoke(main, ["compute", str(_spec(tmp_path, 2)), "--format", "json"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.strip() == (
        "error: out of memory; give fewer scenarios (compute --format csv or json streams)"
    )
