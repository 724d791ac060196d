"""Hostile input and hostile files (issue 15).

Every bad input — flags, scenario files, preset files, workbooks — ends with exit
code 2 (1 for `check` findings), exactly one line on stderr, no traceback and no
file created or changed.  Plus: user text never becomes a formula, `check` passes
a workbook LibreOffice (and Gnumeric) re-saved with no edits, and it catches
forged stored values and moved workbook names.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import fast_engine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sheetgen.cli.commands import main

BASE = ["--model", "llama3-8b", "--hardware", "h100-sxm"]
LONG = "x" * 101


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with a hash of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def invoke(args: list[str], folder: Path, code: int = 2, expect: str = ""):
    """Run the CLI in-process; assert exit code, one stderr line, no traceback, no
    file changed under ``folder``.  Returns the stderr line."""
    before = snapshot(folder)
    result = CliRunner().invoke(main, args)
    err = result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{args}: raised {type(result.exception).__name__}: {result.exception}"
    )
    assert result.exit_code == code, f"{args}: exit {result.exit_code}, stderr {err!r}"
    assert "Traceback" not in err + result.stdout, f"{args}: traceback"
    if code == 2:
        lines = err.splitlines()
        assert len(lines) == 1, f"{args}: {len(lines)} stderr lines: {err[:500]!r}"
        assert len(lines[0]) < 1000, f"{args}: stderr line of {len(lines[0])} characters"
        assert expect in lines[0], f"{args}: {expect!r} not in {lines[0]!r}"
    assert snapshot(folder) == before, f"{args}: files changed under {folder}"
    return err.strip()


# --- flags -----------------------------------------------------------------------
# (arguments after `compute`/`generate`, text the one line must contain)
FLAG_CASES = {
    "gpus 1e400": (["--gpus", "1e400"], "--n-gpus"),
    "gpus 1e295": (["--gpus", "1e295"], "10^7"),
    "gpus 0": (["--gpus", "0"], "--n-gpus"),
    "gpus negative": (["--gpus", "-8"], "--n-gpus"),
    "gpus text": (["--gpus", "eight"], "--n-gpus"),
    "gpus fraction": (["--gpus", "1.5"], "not a whole number"),
    "gpus empty": (["--gpus", ""], "--n-gpus"),
    "gpus above limit": (["--n-gpus", "10000001"], "10^7"),
    "tokens 1e308T": (["--tokens", "1e308T"], "too large"),
    "tokens 20P": (["--tokens", "20P"], "9999-12-31"),
    "tokens 1e18": (["--tokens", "1e18"], "--tokens"),
    "tokens 0": (["--tokens", "0"], "--tokens"),
    "tokens nan": (["--tokens", "nan"], "--tokens"),
    "tokens inf": (["--tokens", "inf"], "--tokens"),
    "tokens bad suffix": (["--tokens", "15X"], "--tokens"),
    "seq 400 digits": (["--seq-len", "9" * 400], "--seq-len"),
    "seq 1e9": (["--seq-len", "1e9"], "10^8"),
    "mfu 1e-300": (["--mfu", "1e-300"], "0.0001"),
    "mfu 0": (["--mfu", "0"], "--mfu"),
    "mfu 1.5": (["--mfu", "1.5"], "--mfu"),
    "mfu nan": (["--mfu", "nan"], "--mfu"),
    "mfu inf": (["--mfu", "inf"], "--mfu"),
    "mfu 1e400": (["--mfu", "1e400"], "--mfu"),
    "goodput 2": (["--goodput", "2"], "--goodput"),
    "contingency 100": (["--contingency", "100"], "--contingency"),
    "contingency negative": (["--contingency", "-1"], "--contingency"),
    "pue below 1": (["--pue", "0.5"], "--pue: must be >= 1 (facility power / IT power)"),
    "host buffer below 1": (["--host-buffer-factor", "0.5"], "host bytes per offloaded byte"),
    "pue 100": (["--pue", "100"], "--pue"),
    "price negative": (["--price-per-gpu-hour", "-1"], "--price-per-gpu-hour"),
    "price 1e6": (["--price-per-gpu-hour", "1e6"], "--price-per-gpu-hour"),
    "start 9999-12-31": (["--start-date", "9999-12-31"], "9999-12-31"),
    "start month 13": (["--start-date", "2025-13-01"], "--start-date"),
    "start 1800": (["--start-date", "1800-01-01"], "--start-date"),
    "recipe unknown": (["--recipe", "fp4-adam"], "--recipe"),
    "attention unknown": (["--attention", "sparse"], "--attention"),
    "zero stage 4": (["--zero-stage", "4"], "--zero-stage"),
    "sequence parallel 2": (["--sequence-parallel", "2"], "--sequence-parallel"),
    "headroom 1": (["--mem-headroom", "1"], "--mem-headroom"),
    "dp mismatch": (["--dp", "3", "--tp", "2", "--gpus", "8"], "--gpus 8"),
    "tp not dividing": (["--tp", "3"], "dp"),
    "inf tp negative": (["--inf-tp", "-1"], "--inf-tp"),
    "inf batch 1e8": (["--inf-batch", "1e8"], "--inf-batch"),
    "peak mem 1e400": (["--measured-peak-mem", "1e400"], "--measured-peak-mem"),
    "overhead huge": (["--overhead-bytes", "1e300"], "--overhead-bytes"),
    "name control char": (["--name", "a\x01b"], "U+0001"),
    "name newline": (["--name", "a\nb"], "U+000A"),
    "name escape": (["--name", "\x1b[31mred"], "U+001B"),
    "name 101 chars": (["--name", LONG], "at most 100"),
    "name 40001 chars": (["--name", "n" * 40_001], "at most 100"),
    "unknown option": (["--bogus", "1"], "--bogus"),
    "format xml": (["--format", "xml"], "--format"),
}
NO_BASE = {
    "model unknown": (["--model", "llama9", "--hardware", "h100-sxm"], "llama9"),
    "model 500 chars": (["--model", "m" * 500, "--hardware", "h100-sxm"], "--model"),
    "hardware unknown": (["--model", "llama3-8b", "--hardware", "h900"], "h900"),
    "hardware missing": (["--model", "llama3-8b"], "--hardware"),
}


@pytest.mark.parametrize("case", [*FLAG_CASES, *NO_BASE])
def test_bad_flags_compute(case: str, tmp_path: Path) -> None:
    args, expect = FLAG_CASES[case] if case in FLAG_CASES else NO_BASE[case]
    base = BASE if case in FLAG_CASES else []
    line = invoke(["compute", *base, *args], tmp_path, expect=expect)
    assert len(line) < 400 or case == "model unknown"


@pytest.mark.parametrize(
    "case", ["gpus 1e295", "tokens 20P", "start 9999-12-31", "name control char", "mfu 1e-300"]
)
def test_bad_flags_generate_write_nothing(case: str, tmp_path: Path) -> None:
    args, expect = FLAG_CASES[case]
    out = tmp_path / "out" / "plan.xlsx"
    invoke(["generate", *BASE, *args, "-o", str(out)], tmp_path, expect=expect)
    assert not out.parent.exists()


OUTPUT_CASES = {
    "empty": ("", "is empty"),
    "csv": ("plan.csv", ".xlsx"),
    "under a file": ("plan.csv/plan.xlsx", "Not a directory"),
}


@pytest.mark.parametrize("case", OUTPUT_CASES)
def test_bad_output(case: str, tmp_path: Path) -> None:
    target, expect = OUTPUT_CASES[case]
    if target:
        (tmp_path / "plan.csv").write_text("a file")
        target = str(tmp_path / target)
    invoke(["generate", *BASE, "-o", target], tmp_path, expect=expect)


def test_existing_output_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "plan.xlsx"
    out.write_bytes(b"my edits")
    result = CliRunner().invoke(main, ["generate", *BASE, "-o", str(out)])
    assert result.exit_code == 0, result.output
    (kept,) = tmp_path.glob("plan.kept-*.xlsx")
    assert kept.read_bytes() == b"my edits" and str(kept) in result.output


def _refuses_new_files(folder: Path) -> bool:
    try:
        (folder / ".sheetgen-probe").touch()
    except OSError:
        return True
    (folder / ".sheetgen-probe").unlink()
    return False


def test_read_only_directory(tmp_path: Path) -> None:
    """A directory that refuses new files: mode 0500, or for root (whom mode bits do
    not stop, as in CI) sysfs, which refuses new files to root too."""
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        target = ro
        if not _refuses_new_files(ro):  # root
            target = Path("/sys")
            assert target.is_dir() and _refuses_new_files(target), "no read-only directory"
        out = target / "plan.xlsx"
        line = invoke(["generate", *BASE, "-o", str(out)], tmp_path)
        assert line.startswith(f"error: {out}: "), line  # error: <path>: <reason>
        assert not out.exists()
    finally:
        ro.chmod(0o700)


def test_output_under_a_regular_file(tmp_path: Path) -> None:
    """A path whose folder is a regular file cannot be written, by root either."""
    parent = tmp_path / "notes.txt"
    parent.write_text("mine")
    invoke(["generate", *BASE, "-o", str(parent / "plan.xlsx")], tmp_path, expect="Not a directory")
    assert parent.read_text() == "mine"


@pytest.mark.parametrize("timeout", ["-1", "0", "nan", "abc"])
def test_check_timeout_must_be_positive(timeout: str, tmp_path: Path) -> None:
    book = tmp_path / "any.xlsx"
    book.write_bytes(b"x")
    invoke(["check", str(book), "--timeout", timeout], tmp_path, expect="--timeout")


# --- scenario files ----------------------------------------------------------------
S = "scenarios:\n  - name: a\n    model: llama3-8b\n    hardware: h100-sxm\n"
LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)
SCENARIO_CASES = {
    "duplicate key": (S + "    n_gpus: 8\n    n_gpus: 64\n", "duplicate key 'n_gpus'"),
    "duplicate top key": (S + "scenarios: []\n", "duplicate key"),
    "alias": ("x: &m llama3-8b\n" + S.replace("llama3-8b", "*m"), "aliases"),
    "billion laughs": (
        LAUGHS + "scenarios:\n  - name: *i\n    model: llama3-8b\n    hardware: h100-sxm\n",
        "aliases",
    ),
    "merge key with alias": (
        "d: &d {model: llama3-8b, hardware: h100-sxm}\nscenarios:\n  - <<: *d\n    name: a\n",
        "aliases",
    ),
    "syntax": ("scenarios: [\n", "invalid YAML"),
    "tab indentation": ("scenarios:\n\t- name: a\n", "invalid YAML"),
    "python tag": ("scenarios: !!python/object/apply:os.system [ls]\n", "invalid YAML"),
    "not a mapping": ("- a\n- b\n", "'scenarios:'"),
    "empty": ("", "'scenarios:'"),
    "scenarios not a list": ("scenarios: 3\n", "non-empty list"),
    "empty list": ("scenarios: []\n", "non-empty list"),
    "unknown top key": ("foo: 1\n" + S, "unknown top-level key"),
    "unknown setting": (S + "    n_gpu: 8\n", "unknown setting"),
    "name control": (S.replace("name: a", 'name: "a\\x07"'), "U+0007"),
    "name too long": (S.replace("name: a", f"name: {LONG}"), "at most 100"),
    "name a list": (S.replace("name: a", "name: [1, 2]"), "must be text"),
    "duplicate names": (S + S.split("\n", 1)[1], "duplicate scenario name"),
    "model id wildcard": (
        S.replace("model: llama3-8b", "model: {base: llama3-8b, id: 'llama*'}"),
        "wildcard",
    ),
    "model id control": (
        S.replace("model: llama3-8b", 'model: {base: llama3-8b, id: "a\\x00"}'),
        "U+0000",
    ),
    "model name too long": (
        S.replace("model: llama3-8b", f"model: {{base: llama3-8b, name: {LONG}}}"),
        "at most 100",
    ),
    "model id a mapping": (
        S.replace("model: llama3-8b", "model: {base: llama3-8b, id: {a: 1}}"),
        "must be text",
    ),
    "layers 400 digits": (
        S.replace("model: llama3-8b", f"model: {{base: llama3-8b, n_layers: {'9' * 400}}}"),
        "n_layers",
    ),
    "layers 1e6": (
        S.replace("model: llama3-8b", "model: {base: llama3-8b, n_layers: 1000000}"),
        "10^5",
    ),
    "hidden 0": (
        S.replace("model: llama3-8b", "model: {base: llama3-8b, hidden_size: 0}"),
        "hidden_size",
    ),
    "mem inf": (
        S.replace("hardware: h100-sxm", "hardware: {base: h100-sxm, mem_gb: .inf}"),
        "mem_gb",
    ),
    "mem 1e400": (
        S.replace("hardware: h100-sxm", "hardware: {base: h100-sxm, mem_gb: 1.0e+400}"),
        "mem_gb",
    ),
    "peak 1e12": (
        S.replace("hardware: h100-sxm", "hardware: {base: h100-sxm, peak_bf16_tflops: 1e12}"),
        "peak_bf16_tflops",
    ),
    "sources a list": (
        S.replace("hardware: h100-sxm", "hardware: {base: h100-sxm, sources: [a, b]}"),
        "sources",
    ),
    "five phases": (S + "    phases: [" + ", ".join(["{tokens: 1T}"] * 5) + "]\n", "phases"),
    "phase mfu 0": (S + "    phases: [{tokens: 1T, mfu: 0}]\n", "mfu"),
    "phase tokens 1e18": (S + "    phases: [{tokens: 1000P}]\n", "tokens"),
    "phase a number": (S + "    phases: [5]\n", "phases[1]"),
    "sweep 5 points": (S + "    sweep_gpus: [1, 2, 3, 4, 5]\n", "sweep_gpus"),
    "sweep 1e8 gpus": (S + "    sweep_gpus: [1, 2, 3, 4, 5, 100000000]\n", "sweep_gpus[6]"),
    "gpus 1e295": (S + "    n_gpus: 1e295\n", "n_gpus"),
    "gpus huge int": (S + f"    n_gpus: {'9' * 400}\n", "n_gpus"),
    "tokens float inf": (S + "    train_tokens: .inf\n", "train_tokens"),
    "date 9999": (S + "    start_date: 9999-12-31\n", "9999-12-31"),
    "date bad": (S + "    start_date: 2025-02-30\n", "start_date"),
    "mfu a list": (S + "    mfu: [0.4]\n", "mfu"),
    "contingency 100": (S + "    contingency: 100\n", "contingency"),
    "dp mismatch": (S + "    n_gpus: 8\n    tp: 3\n", "dp"),
}


@pytest.mark.parametrize("case", SCENARIO_CASES)
def test_bad_scenario_files(case: str, tmp_path: Path) -> None:
    text, expect = SCENARIO_CASES[case]
    path = tmp_path / "plans.yaml"
    path.write_text(text, encoding="utf-8")
    started = time.perf_counter()
    invoke(["compute", str(path)], tmp_path, expect=expect)
    assert time.perf_counter() - started < 5, case


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_billion_laughs_fails_fast_and_small(tmp_path: Path) -> None:
    """The nested-alias file (612 bytes in the report) ends in one line within a second
    and under 100 MB (peak resident memory of a fresh process, VmHWM: ru_maxrss would
    include the forking test process), in a fresh process."""
    text, _ = SCENARIO_CASES["billion laughs"]
    path = tmp_path / "laughs.yaml"
    path.write_text(text)
    assert len(text) < 1000
    code = (
        "import re, sys, time\n"
        "from sheetgen.errors import SheetgenError\n"
        "from sheetgen.scenarios.files import load_scenarios\n"
        "t = time.perf_counter()\n"
        "try:\n"
        f"    load_scenarios({str(path)!r})\n"
        "except SheetgenError as e:\n"
        "    status = open('/proc/self/status').read()\n"
        "    peak = re.search(r'VmHWM:\\s+(\\d+)', status)\n"
        "    print(len(str(e).splitlines()), time.perf_counter() - t, peak.group(1))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines, seconds, rss_kib = out.stdout.split()
    assert lines == "1"
    assert float(seconds) < 1.0, f"{seconds} s"
    assert int(rss_kib) < 100 * 1024, f"{int(rss_kib) // 1024} MB"


def test_too_many_scenarios_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "many.yaml"
    item = "  - {model: llama3-8b, hardware: h100-sxm}\n"
    path.write_text("scenarios:\n" + item * 16_400)
    started = time.perf_counter()
    invoke(["generate", str(path), "-o", str(tmp_path / "many.xlsx")], tmp_path, expect="16,379")
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize(
    "content, expect",
    [(b"\xff\xfe\x00bad", "UTF-8"), (None, "directory"), ("missing", "not found")],
    ids=["binary", "directory", "missing"],
)
def test_unreadable_scenario_files(content, expect: str, tmp_path: Path) -> None:
    path = tmp_path / "plans.yaml"
    if content is None:
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    invoke(["compute", str(path)], tmp_path, expect=expect)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=st.one_of(st.text(max_size=30), st.floats().map(repr), st.integers().map(str)))
def test_any_numeric_flag_text_is_a_result_or_one_line(value: str, tmp_path: Path) -> None:
    """Whatever text a numeric flag gets: a result (exit 0) or one line (exit 2)."""
    result = CliRunner().invoke(main, ["compute", *BASE, "--gpus", value, "--format", "json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert result.exit_code in (0, 2)
    if result.exit_code == 2:
        assert len(result.stderr.splitlines()) == 1 and "--n-gpus" in result.stderr
    else:  # accepted: the scenario plans a whole number of GPUs in range
        import json

        (n,) = {r["value"] for r in json.loads(result.stdout) if r["key"] == "n_gpus"}
        assert isinstance(n, int) and 1 <= n <= 10**7, f"--gpus {value!r} accepted as {n!r}"


@settings(max_examples=40, deadline=None)
@given(
    field=st.sampled_from(["mfu", "seq_len", "contingency", "pue", "inf_batch", "tp"]),
    value=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(min_value=-(10**500), max_value=10**500),
        st.text(max_size=20),
        st.lists(st.integers(), max_size=3),
        st.none(),
        st.booleans(),
    ),
)
def test_any_scenario_value_is_a_scenario_or_one_line(field: str, value) -> None:
    from sheetgen.errors import SheetgenError
    from sheetgen.scenarios.files import scenario_from_dict
    from sheetgen.scenarios.limits import RUN_LIMITS
    from sheetgen.scenarios.run_fields import FIELD

    try:
        s = scenario_from_dict({"model": "llama3-8b", "hardware": "h100-sxm", field: value})
    except SheetgenError as e:
        assert "\n" not in str(e) and len(str(e)) < 400 and field in str(e)
        return
    # Accepted: then it was a number (or number text) and the run holds it, in range.
    assert not isinstance(value, (bool, list)) and value is not None, f"{field}={value!r}"
    got = getattr(s.run, field)
    assert isinstance(got, (int, float)) and not isinstance(got, bool), f"{field}: {got!r}"
    low, high, _why = RUN_LIMITS[field]
    assert low <= got <= high, f"{field}={value!r} accepted as {got!r}"
    if FIELD[field].kind == "int":
        assert isinstance(got, int), f"{field}={value!r} accepted as {got!r}"
    if isinstance(value, (int, float)):
        assert got == pytest.approx(value), f"{field}={value!r} stored as {got!r}"


# --- preset files ------------------------------------------------------------------
MODEL = "architecture: {n_layers: 2, hidden_size: 64, n_heads: 4, ffn_size: 8, vocab_size: 10}\n"
PRESET_CASES = {
    "model id reused": ("models/zz-copy.yaml", "id: llama3-8b\n" + MODEL, "llama3-8b.yaml"),
    "hardware id reused": (
        "hardware/zz-copy.yaml",
        (Path(__file__).parents[1] / "presets/hardware/h100-sxm.yaml").read_text(),
        "h100-sxm.yaml",
    ),
    "model id a list": ("models/zz.yaml", "id: [a]\n" + MODEL, "must be text"),
    "model name control": ("models/zz.yaml", 'id: zz\nname: "a\\x02"\n' + MODEL, "U+0002"),
    "model duplicate key": ("models/zz.yaml", "id: zz\nid: yy\n" + MODEL, "duplicate key"),
    "model alias": ("models/zz.yaml", "id: &i zz\nname: *i\n" + MODEL, "aliases"),
    "model source a mapping": ("models/zz.yaml", "id: zz\nsource: {a: 1}\n" + MODEL, "source"),
    "hardware sources a list": (
        "hardware/zz.yaml",
        "id: zz\npeak_bf16_tflops: 1\npeak_fp8_tflops: 0\nmem_gb: 8\nhbm_tbps: 1\ntdp_w: 1\n"
        "intra_node_gb_per_s: 1\ninter_node_gb_per_s: 1\nsources: [a]\n",
        "sources",
    ),
    "recipes not a list": ("tables/recipes.yaml", "recipes: 3\n", "recipes"),
    "recipe missing field": (
        "tables/recipes.yaml",
        "recipes:\n  - {id: r, name: R, weight_bytes: 2}\n",
        "missing field",
    ),
    "recipe bytes text": (
        "tables/recipes.yaml",
        "recipes:\n  - {id: r, name: R, weight_bytes: two, grad_bytes: 2, grad_accum_bytes: 0,"
        " master_bytes: 4, optimizer_bytes: 8, act_bytes: 2}\n",
        "weight_bytes",
    ),
    "recipe row a number": ("tables/recipes.yaml", "recipes: [1]\n", "recipes[1]"),
    "dtypes bytes zero": ("tables/dtypes.yaml", "dtypes:\n  - {id: bf16, bytes: 0}\n", "bytes"),
    "dtypes missing bytes": ("tables/dtypes.yaml", "dtypes:\n  - {id: bf16}\n", "bytes"),
    "dtypes empty file": ("tables/dtypes.yaml", "", "dtypes"),
}


@pytest.fixture
def data_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from sheetgen import paths
    from sheetgen.catalog import presets

    root = tmp_path / "data"
    shutil.copytree(paths.data_root() / "presets", root / "presets")
    shutil.copytree(paths.data_root() / "templates", root / "templates")
    monkeypatch.setattr(paths, "data_root", lambda: root)
    loaders = (presets.models, presets.hardware, presets.model_docs, presets.hardware_docs)
    for loader in (*loaders, presets.tables):
        loader.cache_clear()
    yield root
    for loader in (*loaders, presets.tables):
        loader.cache_clear()


@pytest.mark.parametrize("case", PRESET_CASES)
def test_bad_preset_files(case: str, data_copy: Path, tmp_path: Path) -> None:
    rel, text, expect = PRESET_CASES[case]
    (data_copy / "presets" / rel).write_text(text)
    line = invoke(["compute", *BASE], tmp_path, expect=expect)
    if "reused" in case:
        assert "zz-copy.yaml" in line  # both files named
    kind = {"models": "models", "hardware": "hardware"}.get(rel.split("/")[0], "recipes")
    invoke(["presets", kind], tmp_path, expect=expect)


def test_preset_id_other_than_file_name_lists(data_copy: Path, tmp_path: Path) -> None:
    """Layering a preset under another file name on purpose (a new id) works."""
    (data_copy / "presets" / "models" / "zz-mine.yaml").write_text("id: mine\n" + MODEL)
    result = CliRunner().invoke(main, ["presets", "models", "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert "\nmine," in result.stdout


def test_every_numeric_setting_has_a_documented_range() -> None:
    from sheetgen.scenarios.limits import RUN_LIMITS
    from sheetgen.scenarios.run_fields import RUN_FIELDS

    numeric = [k for k, (kind, _d, _doc) in RUN_FIELDS.items() if kind not in ("choice", "date")]
    missing = [k for k in numeric if k not in RUN_LIMITS]
    assert not missing, (
        f"RUN_FIELDS without a range in sheetgen/scenarios/limits.py RUN_LIMITS: {missing}"
    )
    for key, (low, high, why) in RUN_LIMITS.items():
        assert low < high and why, key
        default = RUN_FIELDS[key][1]
        assert default is None or low <= default <= high, f"{key}: default {default} out of range"


# --- workbooks ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-scenario workbook whose names and ids are formula injections."""
    folder = tmp_path_factory.mktemp("hostile")
    spec = folder / "inject.yaml"
    spec.write_text(INJECTION_YAML)
    out = folder / "inject.xlsx"
    result = CliRunner().invoke(main, ["generate", str(spec), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


INJECTION_NAMES = [
    '=HYPERLINK("http://x.invalid","y")',
    "=1+1",
    "=cmd|' /C calc'!A0",
    "@SUM(1+1)+cmd|' /C calc'!A0",
    "+1+1",
    "-2+3",
]
INJECTION_YAML = f"""scenarios:
  - name: '{INJECTION_NAMES[0]}'
    model: {{base: llama3-8b, id: "{INJECTION_NAMES[2]}", name: "{INJECTION_NAMES[1]}"}}
    hardware: {{base: h100-sxm, id: "{INJECTION_NAMES[3]}", name: "{INJECTION_NAMES[4]}"}}
"""


def test_user_text_is_never_a_formula(small_book: Path) -> None:
    """No <f> element of any sheet holds user text; the text is stored as text."""
    with zipfile.ZipFile(small_book) as z:
        sheets = {n: z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/")}
        strings = z.read("xl/sharedStrings.xml").decode()  # text cells: the string table
    formulas = [f for text in sheets.values() for f in re.findall(r"<f>(.*?)</f>", text, re.S)]
    assert len(formulas) > 300
    # "1+1" and "2+3" as expressions of their own, not the tail of a cell reference
    # (a formula reading 'Inputs'!D161+12 holds the characters "1+1").
    arithmetic = re.compile(r"(?<![\w$.])(?:1\+1|2\+3)")
    for f in formulas:
        for marker in ("HYPERLINK", "cmd|", "SUM(1"):
            assert marker not in f, f"formula from user text: {f[:120]}"
        assert not arithmetic.search(f), f"formula from user text: {f[:120]}"
    texts = "".join(sheets.values()) + strings
    for name in INJECTION_NAMES[:5]:
        escaped = name.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
        assert escaped in texts or name in texts, name
    import openpyxl

    wb = openpyxl.load_workbook(small_book)
    ws = wb["Inputs"]
    row = next(r for r in range(1, ws.max_row + 1) if ws.cell(row=r, column=1).value == "model")
    names = [c for c in ws["D"] if c.value == INJECTION_NAMES[0]]
    assert names and all(c.data_type == "s" and c.quotePrefix for c in names)
    model = ws.cell(row=row, column=4)
    assert model.value == INJECTION_NAMES[2] and model.data_type == "s"


def test_csv_escapes_formula_like_fields(tmp_path: Path) -> None:
    spec = tmp_path / "inject.yaml"
    spec.write_text(INJECTION_YAML)
    result = CliRunner().invoke(main, ["compute", str(spec), "--format", "csv"])
    assert result.exit_code == 0, result.output
    import csv
    import io

    def number(field: str) -> bool:  # a negative number is data, not a formula
        try:
            float(field)
        except ValueError:
            return False
        return True

    rows = list(csv.reader(io.StringIO(result.stdout)))
    for row in rows[1:]:
        for field in row:
            assert number(field) or not field.startswith(("=", "+", "-", "@")), row
    assert any(f == "'" + INJECTION_NAMES[2] for r in rows for f in r)


def _edit_inputs(src: Path, dst: Path, key: str, value) -> str:
    import openpyxl

    wb = openpyxl.load_workbook(src)
    ws = wb["Inputs"]
    row = next(r for r in range(1, ws.max_row + 1) if ws.cell(row=r, column=1).value == key)
    ws.cell(row=row, column=4).value = value
    wb.save(dst)
    return f"D{row}"


@pytest.mark.parametrize(
    "value", [None, "4k", "#N/A", True], ids=["empty", "text", "error", "bool"]
)
@pytest.mark.parametrize("key", ["seq_len", "mfu", "n_gpus"])
def test_generate_from_refuses_emptied_or_text_cells(
    small_book: Path, tmp_path: Path, key: str, value
) -> None:
    book = tmp_path / "edited.xlsx"
    cell = _edit_inputs(small_book, book, key, value)
    line = invoke(
        ["generate", "--from", str(book), "-o", str(tmp_path / "out" / "x.xlsx")],
        tmp_path,
        expect=f"Inputs!{cell} ({key})",
    )
    assert "empty" in line if value is None else "must be a number" in line


BAD_FILES = {
    "text": b"just text, not a workbook",
    "empty": b"",
    "encrypted": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 500,
    "zip, not xlsx": None,
    "truncated": "truncated",
}


@pytest.mark.parametrize("command", ["check", "inputs", "pdf", "generate --from"])
@pytest.mark.parametrize("kind", BAD_FILES)
def test_unreadable_workbooks(
    kind: str, command: str, small_book: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHEETGEN_SOFFICE", "/nonexistent/soffice")  # never reached
    book = tmp_path / "book.xlsx"
    content = BAD_FILES[kind]
    if content is None:
        with zipfile.ZipFile(book, "w") as z:
            z.writestr("hello.txt", "hi")
    elif content == "truncated":
        book.write_bytes(small_book.read_bytes()[:5000])
    else:
        book.write_bytes(content)
    args = command.split() + [str(book)]
    if command != "check":
        name = {"pdf": "x.pdf", "inputs": "x.yaml"}.get(command, "x.xlsx")
        args += ["-o", str(tmp_path / name)]
    invoke(args, tmp_path, expect=str(book))


# --- check: re-saved files, forgeries ---------------------------------------------
def _check(book: Path, tmp_path: Path, code: int):
    result = CliRunner().invoke(main, ["check", str(book), "--engine", fast_engine()])
    assert result.exit_code == code, result.output[-2000:]
    return result.stdout


def _soffice() -> str | None:
    return os.environ.get("SHEETGEN_SOFFICE") or shutil.which("soffice")


def _resave_libreoffice(src: Path, folder: Path) -> Path:
    soffice = _soffice()
    if soffice is None:
        if os.environ.get("SHEETGEN_REQUIRE_LIBREOFFICE"):
            pytest.fail("LibreOffice required (SHEETGEN_REQUIRE_LIBREOFFICE) but not found")
        pytest.skip("LibreOffice (soffice) not installed")
    profile = folder / "profile"
    out = folder / "resaved"
    subprocess.run(
        [soffice, f"-env:UserInstallation={profile.as_uri()}", "--headless", "--convert-to",
         "xlsx:Calc MS Excel 2007 XML", "--outdir", str(out), str(src)],
        capture_output=True, timeout=240, check=True,
    )  # fmt: skip
    return out / src.name


@pytest.fixture(scope="module")
def lo_resaved(small_book: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _resave_libreoffice(small_book, tmp_path_factory.mktemp("lo"))


def test_libreoffice_resave_checks_clean(lo_resaved: Path, tmp_path: Path) -> None:
    out = _check(lo_resaved, tmp_path, 0)
    assert "formula changed" not in out and out.strip().splitlines()[-1].startswith("OK")


def test_libreoffice_resave_keeps_text_as_text(lo_resaved: Path) -> None:
    with zipfile.ZipFile(lo_resaved) as z:
        for n in z.namelist():
            if n.startswith("xl/worksheets/"):
                for f in re.findall(r"<f[^>]*>(.*?)</f>", z.read(n).decode(), re.S):
                    assert "HYPERLINK" not in f and "cmd|" not in f, f


def test_real_edit_after_resave_still_reported(lo_resaved: Path, tmp_path: Path) -> None:
    import openpyxl

    wb = openpyxl.load_workbook(lo_resaved)
    ws = wb["Schedule"]
    row = next(
        r for r in range(1, ws.max_row + 1) if ws.cell(row=r, column=1).value == "train_days"
    )
    ws.cell(row=row, column=4).value = ws.cell(row=row, column=4).value + "*2"
    book = tmp_path / "edited.xlsx"
    wb.save(book)
    out = _check(book, tmp_path, 1)
    assert "formula changed: Schedule train_days" in out


def test_gnumeric_resave_checks_clean(small_book: Path, tmp_path: Path) -> None:
    ssconvert = shutil.which("ssconvert")
    if ssconvert is None:
        pytest.skip("Gnumeric (ssconvert) not installed")
    out = tmp_path / "gnumeric.xlsx"
    subprocess.run([ssconvert, str(small_book), str(out)], capture_output=True, timeout=240,
                   check=True)  # fmt: skip
    text = _check(out, tmp_path, 0)
    assert "formula changed" not in text


def _forge_cached(src: Path, dst: Path, sheet: str, key: str, new: str) -> None:
    """Replace the stored (cached) value of ``key``'s first scenario cell in the XML."""
    import openpyxl

    from sheetgen.workbook.cache import sheet_parts

    ws = openpyxl.load_workbook(src)[sheet]
    row = next(r for r in range(1, ws.max_row + 1) if ws.cell(row=r, column=1).value == key)
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as out:
        part = sheet_parts(z)[sheet]
        for item in z.infolist():
            data = z.read(item.filename)
            if item.filename == part:
                pattern = rf'(<c r="D{row}"[^>]*>(?:<f>.*?</f>)?<v>)[^<]*(</v>)'
                text, n = re.subn(pattern, rf"\g<1>{new}\g<2>", data.decode(), count=1)
                assert n == 1
                data = text.encode()
            out.writestr(item, data)


def test_forged_stored_value_is_reported(small_book: Path, tmp_path: Path) -> None:
    book = tmp_path / "forged.xlsx"
    _forge_cached(small_book, book, "Summary", "train_days_wall", "3")
    out = _check(book, tmp_path, 1)
    line = next(x for x in out.splitlines() if "stored value differs" in x)
    assert "Summary train_days_wall" in line and "found 3" in line
    assert "stored value differs from the formula's result" in line


def test_moved_defined_name_is_reported(small_book: Path, tmp_path: Path) -> None:
    import openpyxl

    wb = openpyxl.load_workbook(small_book)
    dn = wb.defined_names["train_days_1"]
    m = re.match(r"(.*\$)(\d+)$", dn.attr_text)
    dn.attr_text = f"{m.group(1)}{int(m.group(2)) + 1}"
    book = tmp_path / "moved.xlsx"
    wb.save(book)
    out = _check(book, tmp_path, 1)
    assert "defined name: Schedule train_days" in out and "points elsewhere" in out
