"""Issue 26.2 (reading), 26.7 and 26.9: every input file is a bounded regular file or
one line ``error: <path>: <reason>``; ids differing only in case collide; a long
``base:`` chain is one line, not a RecursionError."""

from __future__ import annotations

import json
import os
import resource
import zipfile
from pathlib import Path

import pytest
from hostile_helpers import BASE, one_line

LONG = "a" * 300  # one path component over 255 bytes


def _zip_bomb(path: Path) -> Path:
    """A ~1 MB .xlsx whose sheet declares 1.1 GB (zeros compress ~1000:1)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("xl/workbook.xml", "<workbook/>")
        with z.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as fh:
            chunk = b"\0" * 2**20
            for _ in range(1100):
                fh.write(chunk)
    return path


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


# Ways an input path can be bad: (make the path, text the line must hold).
BAD_PATHS = {
    "component over 255 bytes": (lambda t: t / f"{LONG}.x", "file name too long"),
    "missing folder": (lambda t: t / "nope" / "f.x", "not found"),
    "a directory": (lambda t: t, "is a directory"),
    "/dev/zero": (lambda t: Path("/dev/zero"), "not a regular file"),
    "/dev/null": (lambda t: Path("/dev/null"), "not a regular file"),
    "a FIFO": (_fifo, "not a regular file"),
    "newline in the name": (lambda t: t / "a\nb.x", "'"),
}
# Commands that read one input file: (argument list given the path).
READERS = {
    "compute scenario file": lambda p: ["compute", str(p)],
    "generate scenario file": lambda p: ["generate", str(p), "-o", "/nonexistent/x.xlsx"],
    "presets import config.json": lambda p: ["presets", "import", str(p)],
    "inputs workbook": lambda p: ["inputs", str(p)],
    "generate --from workbook": lambda p: ["generate", "--from", str(p), "-o", "/tmp/nx/x.xlsx"],
    "check workbook": lambda p: ["check", str(p), "--engine", "pycel"],
    "pdf workbook": lambda p: ["pdf", str(p)],
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", BAD_PATHS)
def test_bad_input_paths_are_one_line(case: str, reader: str, tmp_path: Path) -> None:
    make, expect = BAD_PATHS[case]
    path = make(tmp_path)
    if case == "a directory" and reader.startswith(("presets", "compute", "generate s")):
        expect = "directory"
    line = one_line(READERS[reader](path), expect=expect)
    assert "\n" not in line


@pytest.mark.parametrize("flag", ["--presets", "SHEETGEN_PRESETS"])
@pytest.mark.parametrize("case", ["component over 255 bytes", "a FIFO", "/dev/zero"])
def test_bad_preset_folders_are_one_line(flag: str, case: str, tmp_path: Path) -> None:
    path = BAD_PATHS[case][0](tmp_path)
    if flag == "--presets":
        one_line(["compute", "--presets", str(path), *BASE], expect="--presets")
    else:
        one_line(["compute", *BASE], expect=flag, env={flag: str(path)})


def test_oversized_text_input_is_refused(tmp_path: Path, monkeypatch) -> None:
    from sheetgen.scenarios import input_files

    monkeypatch.setattr(input_files, "MAX_TEXT_BYTES", 1000)
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * 2000 + "\nscenarios: []\n")
    one_line(["compute", str(big)], expect="at most")


def test_zip_bomb_is_refused_before_it_is_loaded(tmp_path: Path) -> None:
    bomb = _zip_bomb(tmp_path / "bomb.xlsx")
    assert bomb.stat().st_size < 3 * 2**20
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for args in (["inputs", str(bomb)], ["generate", "--from", str(bomb), "-o", "x.xlsx"]):
        one_line(args, expect="unpacks to 1,100 MiB")
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 200 * 1024, f"reading the bomb grew memory by {grown_kib} KiB"


# --- ids that differ only in case ------------------------------------------------


def _team(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


CASE_COLLISIONS = {
    "model vs shipped": ({"models/a.yaml": "id: LLAMA3-8B\nbase: llama3-8b\n"}, "llama3-8b"),
    "hardware vs shipped": ({"hardware/a.yaml": "id: H100-SXM\nbase: h100-sxm\n"}, "h100-sxm"),
    "two files, one folder": (
        {"models/a.yaml": "id: mine\nbase: llama3-8b\n", "models/b.yaml": "id: MINE\nbase: mine\n"},
        "only in case",
    ),
    "file name as id": ({"models/Llama3-8b.yaml": "base: llama3-8b\n"}, "llama3-8b"),
}


@pytest.mark.parametrize("case", CASE_COLLISIONS)
def test_ids_differing_only_in_case_collide(case: str, tmp_path: Path) -> None:
    files, expect = CASE_COLLISIONS[case]
    team = _team(tmp_path / "team", files)
    line = one_line(["compute", "--presets", str(team), *BASE], expect="only in case")
    assert expect in line


def test_same_spelling_still_replaces(tmp_path: Path) -> None:
    team = _team(tmp_path / "team", {"models/a.yaml": "id: llama3-8b\nbase: llama3-8b\n"})
    one_line(["compute", "--presets", str(team), *BASE, "--format", "json"], code=0)


def test_layers_differing_only_in_case_collide(tmp_path: Path) -> None:
    one = _team(tmp_path / "one", {"models/a.yaml": "id: team-m\nbase: llama3-8b\n"})
    two = _team(tmp_path / "two", {"models/a.yaml": "id: Team-M\nbase: llama3-8b\n"})
    one_line(["compute", "--presets", str(one), "--presets", str(two), *BASE], expect="Team-M")


def test_custom_model_ids_differing_in_case_get_their_own_rows(tmp_path: Path) -> None:
    from sheetgen.scenarios.files import load_scenarios_text

    text = (
        "scenarios:\n"
        "  - {name: a, hardware: h100-sxm, model: {base: llama3-8b, id: LLAMA3-8B, n_layers: 8}}\n"
    )
    (s,) = load_scenarios_text(text)
    assert s.model.id.casefold() != "llama3-8b"


# --- base: chains --------------------------------------------------------------


@pytest.mark.parametrize("depth", [1500, 65])
def test_long_base_chain_is_one_line(depth: int, tmp_path: Path) -> None:
    files = {
        f"models/m{i:05d}.yaml": f"id: m{i}\nbase: {'llama3-8b' if i == 0 else f'm{i - 1}'}\n"
        for i in range(depth)
    }
    team = _team(tmp_path / "team", files)
    args = ["compute", "--presets", str(team), "--model", f"m{depth - 1}", "--hardware", "h100-sxm"]
    one_line(args, expect="chain of more than 64")


def test_base_chain_within_the_cap_resolves(tmp_path: Path) -> None:
    files = {
        f"models/m{i:05d}.yaml": f"id: m{i}\nbase: {'llama3-8b' if i == 0 else f'm{i - 1}'}\n"
        for i in range(60)
    }
    files["models/m00059.yaml"] += "architecture: {n_layers: 7}\n"
    team = _team(tmp_path / "team", files)
    out = one_line(["compute", "--presets", str(team), "--model", "m59", "--hardware",
                    "h100-sxm", "--format", "json"], code=0)  # fmt: skip
    values = {r["key"]: r["value"] for r in json.loads(out)}
    assert values["n_layers"] == 7


def test_base_cycle_is_one_line(tmp_path: Path) -> None:
    team = _team(
        tmp_path / "team",
        {"models/a.yaml": "id: a\nbase: b\n", "models/b.yaml": "id: b\nbase: a\n"},
    )
    one_line(["compute", "--presets", str(team), *BASE], expect="leads back to itself")
