"""Conventions people expect: ``python -m sheetgen``, one version, a changelog."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from sheetgen import __version__

ROOT = Path(__file__).resolve().parents[1]


def _module(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sheetgen", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


def test_python_m_sheetgen_prints_the_version():
    done = _module("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"sheetgen, version {__version__}"


def test_python_m_sheetgen_is_the_sheetgen_command():
    done = _module("--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: sheetgen "), done.stdout[:80]
    bad = _module("compute", "--mfu", "2", "--model", "llama3-8b", "--hardware", "h100-sxm")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --mfu:"), bad.stderr


def test_version_is_written_once():
    """pyproject reads the version from sheetgen/__init__.py; nothing else writes it."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    project = pyproject.split("[project]", 1)[1].split("\n[", 1)[0]
    assert not re.search(r"^version\s*=", project, re.M), "pyproject [project] has a version"
    assert re.search(r'^dynamic\s*=\s*\[\s*"version"\s*\]', project, re.M)
    assert 'version = { attr = "sheetgen.__version__" }' in pyproject
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__), __version__


def test_changelog_has_the_current_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "Keep a Changelog" in text
    headings = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert headings[:1] in (["Unreleased"], [__version__]), headings
    assert __version__ in headings, f"CHANGELOG.md has no section for {__version__}"


def test_every_package_ships():
    """pyproject lists its packages by hand: every folder of sheetgen/ holding an
    __init__.py is among them, so a wheel carries it."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    listed = set(re.findall(r'"(sheetgen(?:\.\w+)*)"', pyproject.split("packages = [", 1)[1]))
    found = {
        ".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "sheetgen").rglob("__init__.py")
    }
    assert found <= listed, f"packages missing from pyproject.toml: {sorted(found - listed)}"


def test_the_entry_points_of_before_the_packages_still_work():
    """An install made before the move runs ``sheetgen.cli:run``; ``python -m
    sheetgen.cli`` was the module form."""
    from sheetgen.cli import commands, main, run

    assert run is commands.run and main is commands.main
    done = subprocess.run(
        [sys.executable, "-m", "sheetgen.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0 and done.stdout.strip() == f"sheetgen, version {__version__}"
