"""`sheetgen memory-check` (issue 40): the published measured peaks per GPU in
presets/benchmarks/memory/, compared on the counter each source measured; the
allocator's reserve share fitted on the runs that print both PyTorch counters; bad
rows end in one line naming the field."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from sheetgen.calibration import memory_check
from sheetgen.cli import main
from sheetgen.errors import SheetgenError
from sheetgen.scenarios.run_fields import MEM_RESERVED_SHARE, RUN_DEFAULTS

RUNS = memory_check.load()
RESULTS = [memory_check.evaluate(r) for r in RUNS]
PAIRS = memory_check.load_reserve()


def test_every_row_names_its_source_row_and_counter() -> None:
    assert len(RUNS) >= 10 and len(PAIRS) >= 5
    for r in RUNS:
        assert r.row and r.source and r.counter in memory_check.COUNTERS, r.id
    assert len({r.id for r in RUNS}) == len(RUNS)


def test_the_shipped_reserve_share_is_the_fit() -> None:
    """mem_reserved_share = the median of reserved / allocated - 1 over the fit rows."""
    shares = [p.reserved_mib / p.allocated_mib - 1 for p in PAIRS if p.role == "fit"]
    assert memory_check.fit_reserved_share(PAIRS) == pytest.approx(statistics.median(shares))
    assert round(memory_check.fit_reserved_share(PAIRS), 3) == MEM_RESERVED_SHARE
    assert RUN_DEFAULTS["mem_reserved_share"] == MEM_RESERVED_SHARE


@pytest.mark.parametrize("result", RESULTS, ids=[r.run.id for r in RESULTS])
def test_each_verdict_is_right(result) -> None:
    """A run that ran fits; one reported out of memory does not."""
    assert result.verdict_right, (result.run.id, result.device_bytes / 1e9)


def test_the_measured_rows_stay_within_what_docs_state() -> None:
    """docs/DESIGN.md states these figures (median 5.4%, worst -22.6%, 6 of 7 in ±20%)."""
    s = memory_check.summarize(RESULTS)
    assert (s.n, s.within, s.ran, s.ran_fit, s.oom, s.oom_not_fit) == (7, 6, 10, 10, 3, 3)
    assert s.median_abs == pytest.approx(0.054, abs=0.0005)
    assert s.worst == pytest.approx(-0.226, abs=0.0005)


def test_predicted_is_the_counter_the_source_measured() -> None:
    bert = next(r for r in RESULTS if r.run.id == "hf-bert-large-v100-bs4-fp32")
    # nvidia-smi: the tensors x (1 + reserve) + the page's CUDA context (1,343 MiB).
    assert bert.run.counter == "device"
    assert bert.run.measured_bytes == 14949 * 2**20
    assert bert.predicted_bytes == pytest.approx(bert.device_bytes)


def test_the_command_prints_the_table_and_summary() -> None:
    result = CliRunner().invoke(main, ["memory-check"])
    assert result.exit_code == 0, result.output
    assert "hf-bert-large-v100-bs4-fp32" in result.output
    assert "median |error| 5.4%" in result.output
    assert "allocator reserve: 6 runs" in result.output
    md = CliRunner().invoke(main, ["memory-check", "--format", "markdown"])
    assert md.exit_code == 0 and md.output.startswith("| run | role | counter |")


def _write(tmp_path: Path, run: dict) -> Path:
    doc = {"source": {"id": "t", "title": "t"}, "runs": [run]}
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(doc))
    return tmp_path


GOOD = {
    "id": "r",
    "row": "row 1",
    "role": "check",
    "counter": "reserved",
    "scenario": {"model": "llama3-8b", "hardware": "h100-sxm"},
    "published": {"peak_gb": 50},
}


@pytest.mark.parametrize(
    "change, field",
    [
        ({"role": "holdout"}, "role"),
        ({"counter": "smi"}, "counter"),
        ({"published": {"peak_gb": -1}}, "published.peak_gb"),
        ({"published": {}}, "published"),
    ],
)
def test_bad_rows_name_the_field(tmp_path: Path, change: dict, field: str) -> None:
    folder = _write(tmp_path, {**GOOD, **change})
    with pytest.raises(SheetgenError) as e:
        memory_check.load(folder)
    assert f"t.yaml: r.{field}" in str(e.value)


def test_a_good_row_loads(tmp_path: Path) -> None:
    (run,) = memory_check.load(_write(tmp_path, GOOD))
    assert run.measured_bytes == 50e9 and not run.oom
    assert memory_check.evaluate(run).predicted_bytes > 0


def test_design_states_what_memory_check_prints() -> None:
    """docs/DESIGN.md holds the table `sheetgen memory-check --format markdown` prints."""
    import re

    text = (Path(__file__).resolve().parents[1] / "docs" / "DESIGN.md").read_text()
    block = re.search(r"<!-- memory-check:start -->\n(.*?)<!-- memory-check:end -->", text, re.S)
    assert block, "docs/DESIGN.md has no memory-check block"
    assert block.group(1) == memory_check.markdown(RESULTS)
