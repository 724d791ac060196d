"""Issue 26.8 and 26.10: characters XML cannot hold, names that would split a line,
unknown keys answered with the nearest name, `sheetgen` alone, and LibreOffice's own
temporary files kept inside sheetgen's private folder."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hostile_helpers import BASE, one_line

from sheetgen.cli.commands import main

XML_ILLEGAL = {"U+FFFE": "\ufffe", "U+FFFF": "\uffff"}


def _file(tmp_path: Path, item: dict) -> str:
    base = {"name": "s", "model": "llama3-8b", "hardware": "h100-sxm"}
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({"scenarios": [{**base, **item}]}, allow_unicode=True))
    return str(spec)


# Where a name typed by a user ends up in the workbook: (how to give it, field named).
NAME_PLACES = {
    "scenario name flag": (lambda t, ch: [*BASE, "--name", f"a{ch}b"], "--name"),
    "scenario name yaml": (lambda t, ch: [_file(t, {"name": f"a{ch}b"})], "name"),
    "model id": (
        lambda t, ch: [_file(t, {"model": {"base": "llama3-8b", "id": f"m{ch}"}})],
        "model.id",
    ),
    "model name": (
        lambda t, ch: [_file(t, {"model": {"base": "llama3-8b", "name": f"m{ch}"}})],
        "model.name",
    ),
    "hardware name": (
        lambda t, ch: [_file(t, {"hardware": {"base": "h100-sxm", "name": f"h{ch}"}})],
        "hardware.name",
    ),
    "model source": (
        lambda t, ch: [_file(t, {"model": {"base": "llama3-8b", "source": f"s{ch}"}})],
        "model.source",
    ),
}


@pytest.mark.parametrize("char", XML_ILLEGAL)
@pytest.mark.parametrize("place", NAME_PLACES)
def test_xml_illegal_characters_are_refused(place: str, char: str, tmp_path: Path) -> None:
    make, field = NAME_PLACES[place]
    line = one_line(["compute", *make(tmp_path, XML_ILLEGAL[char])], expect=field)
    assert char in line and "XML" in line


# Characters a name may not hold besides control characters (Unicode categories Cf, Zl,
# Zp): invisible, direction-changing or line-breaking.
NAME_INVISIBLE = {
    "RTL override": "\u202e",
    "line separator": "\u2028",
    "paragraph separator": "\u2029",
    "byte-order mark": "\ufeff",
    "zero-width space": "\u200b",
    "LTR isolate": "\u2066",
}


@pytest.mark.parametrize("char", NAME_INVISIBLE)
@pytest.mark.parametrize("place", [p for p in NAME_PLACES if p != "model source"])
def test_invisible_characters_in_names_are_refused(place: str, char: str, tmp_path: Path) -> None:
    make, field = NAME_PLACES[place]
    code = f"U+{ord(NAME_INVISIBLE[char]):04X}"
    line = one_line(["compute", *make(tmp_path, NAME_INVISIBLE[char])], expect=field)
    assert code in line and "names accept letters, digits" in line


@pytest.mark.parametrize("name", ["   ", "\u3000"])
def test_whitespace_only_scenario_name_is_refused(name: str, tmp_path: Path) -> None:
    one_line(["compute", *BASE, "--name", name], expect="--name: is only spaces")
    one_line(["compute", _file(tmp_path, {"name": name})], expect="name: is only spaces")


def test_name_that_is_not_utf8_says_so() -> None:
    name = b"caf\xe9".decode("utf-8", "surrogateescape")  # as Python hands over argv
    line = one_line(["compute", *BASE, "--name", name], expect="--name: is not valid UTF-8")
    assert "0xE9" in line and "control character" not in line


@pytest.mark.parametrize("name", ["_x0041_", "plan _x263A_ two"])
def test_a_name_excel_would_unescape_is_refused(name: str, tmp_path: Path) -> None:
    """Excel reads _xHHHH_ in a cell as the character U+HHHH (ECMA-376 ST_Xstring):
    the workbook would show another name than the one typed."""
    line = one_line(["compute", *BASE, "--name", name], expect="--name: contains '_x")
    assert "which Excel reads as the character U+" in line
    one_line(["compute", _file(tmp_path, {"name": name})], expect="name: contains '_x")


@pytest.mark.parametrize("name", ["Café ✓ 日本語", "a-b_c (2027)", "مرحبا", "💻 team", "_x_ x0041"])
def test_ordinary_unicode_names_are_accepted(name: str) -> None:
    one_line(["compute", *BASE, "--name", name, "--format", "csv"], code=0)


@pytest.mark.parametrize("name", ["a\nb.yaml", "a\rb.yaml", "x\x1b[31mred.yaml", "t\tab.yaml"])
def test_file_names_with_line_breaks_stay_on_one_line(name: str, tmp_path: Path) -> None:
    one_line(["compute", str(tmp_path / name)], expect="not found")


def test_yaml_key_with_a_line_break_is_quoted(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text('scenarios:\n  - {model: llama3-8b, hardware: h100-sxm, "n_gpus\\nx": 8}\n')
    one_line(["compute", str(spec)], expect="'n_gpus\\nx'")


# (how the unknown key is given, the suggestion the line must hold)
UNKNOWN = {
    "setting N_GPUS": (lambda t: [_file(t, {"N_GPUS": 8})], "did you mean 'n_gpus'"),
    "setting seqlen": (lambda t: [_file(t, {"seqlen": 8})], "did you mean 'seq_len'"),
    "setting far off": (lambda t: [_file(t, {"zzzqqq": 8})], "accepted, e.g."),
    "model field": (
        lambda t: [_file(t, {"model": {"base": "llama3-8b", "n_layer": 3}})],
        "did you mean 'n_layers'",
    ),
    "hardware field": (
        lambda t: [_file(t, {"hardware": {"base": "h100-sxm", "mem_GB": 3}})],
        "did you mean 'mem_gb'",
    ),
    "phase field": (
        lambda t: [_file(t, {"phases": [{"tokens": "1T", "seqlen": 8}]})],
        "did you mean 'seq_len'",
    ),
    "model preset case": (
        lambda t: ["--model", "LLAMA3-8B", "--hardware", "h100-sxm"],
        "did you mean 'llama3-8b'",
    ),
    "hardware preset": (
        lambda t: ["--model", "llama3-8b", "--hardware", "h100"],
        "'h100-sxm'",
    ),
    "recipe choice": (lambda t: [*BASE, "--recipe", "bf16_adam"], "did you mean 'bf16-adam'"),
    "top-level key": (lambda t: [_top(t)], "did you mean 'scenarios'"),
}


def _top(tmp_path: Path) -> str:
    spec = tmp_path / "top.yaml"
    spec.write_text("scenario: []\nscenarios: [{model: llama3-8b, hardware: h100-sxm}]\n")
    return str(spec)


@pytest.mark.parametrize("case", UNKNOWN)
def test_unknown_keys_suggest_the_nearest(case: str, tmp_path: Path) -> None:
    make, expect = UNKNOWN[case]
    one_line(["compute", *make(tmp_path)], expect=expect)


@pytest.mark.parametrize("args", [[], ["presets"]], ids=["sheetgen", "sheetgen presets"])
def test_no_arguments_prints_the_help(args: list[str]) -> None:
    from click.testing import CliRunner

    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 2)
    assert "Usage:" in result.stdout and "Commands:" in result.stdout
    assert "error" not in result.stderr and "Traceback" not in result.stdout + result.stderr


def _soffice_tmpdirs(marker: str) -> list[str]:
    """TMPDIR of every live soffice process whose command line names ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
            env = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"soffice" in cmd and marker.encode() in cmd:
            tmp = [e[7:].decode() for e in env if e.startswith(b"TMPDIR=")]
            found.append(tmp[0] if tmp else "")
    return found


@pytest.mark.libreoffice
def test_libreoffice_gets_a_private_tmpdir(lo, tmp_path: Path) -> None:
    """soffice's TMPDIR is inside sheetgen's private work folder (removed with it), so
    a SIGTERM at any moment leaves none of LibreOffice's own files in $TMPDIR."""
    from sheetgen.scenarios.files import default_scenario_path, load_scenarios
    from sheetgen.workbook import write_workbook

    plan = write_workbook(load_scenarios(default_scenario_path())[:1], tmp_path / "p.xlsx")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = dict(os.environ, TMPDIR=str(tmpdir))
    proc = subprocess.Popen(
        [sys.executable, "-m", "sheetgen.cli", "check", str(plan)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    seen: list[str] = []
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline and not seen:
        seen = _soffice_tmpdirs(str(tmpdir))
        time.sleep(0.02)
    proc.wait(timeout=180)
    assert seen, "never saw LibreOffice running"
    for tmp in seen:
        assert tmp.startswith(str(tmpdir / "sheetgen-lo-")) and tmp.endswith("/tmp"), tmp
    assert list(tmpdir.iterdir()) == []
