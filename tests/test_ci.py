"""CI (.ci/run) checks what the README and issue 25 claim: the README's test command
verbatim with the engines required, ruff, zero collected tests as a failure, and the
dependency floors (.ci/floors.py) installed and tested."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytest_plugins = ["pytester"]
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _floors_module():
    spec = importlib.util.spec_from_file_location("ci_floors", ROOT / ".ci" / "floors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ci_runs_the_readme_test_command_with_engines_required():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (command,) = [
        line
        for line in re.findall(r"```sh\n(.*?)\n```", readme, re.S)
        if "pytest" in line and "\n" not in line
    ]
    assert command in CI, f"README's test command not in .ci/run: {command}"
    assert "export SHEETGEN_REQUIRE_LIBREOFFICE=1" in CI


def test_ci_draws_the_same_hypothesis_examples_every_run():
    from hypothesis import settings

    assert "export SHEETGEN_HYPOTHESIS=ci" in CI
    assert settings.get_profile("ci").derandomize
    assert settings.get_profile("ci").database is None
    assert not settings.get_profile("dev").derandomize


@pytest.mark.parametrize("ci_variable", ["", "true"])
def test_a_developers_run_stays_random_wherever_it_runs(ci_variable):
    """Where CI is set, hypothesis first loads its own derandomised "ci" profile; the
    project's "dev" profile must not inherit it (stop 33's CI failed on exactly that)."""
    import os
    import sys

    script = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('c', {str(ROOT / 'tests' / 'conftest.py')!r})\n"
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
        "from hypothesis import settings\n"
        "print(settings.get_profile('dev').derandomize, settings().derandomize)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "SHEETGEN_HYPOTHESIS")}
    if ci_variable:
        env["CI"] = ci_variable
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "False"], out


@pytest.mark.parametrize(
    "step", ["ruff check .", "ruff format --check .", ".venv/bin/mypy ||", "floors.py --check"]
)
def test_ci_runs_the_step(step):
    assert step in CI, step


@pytest.mark.parametrize(("rc", "fails"), [(0, False), (1, True), (5, True)])
def test_ci_counts_pytest_exit_codes(rc, fails):
    """The script's own pytest_rc: exit code 5 (no tests collected) is a failure."""
    body = re.search(r"^pytest_rc\(\) \{.*?^\}$", CI, re.S | re.M)
    assert body, "pytest_rc() not found in .ci/run"
    script = f'failed=()\n{body.group(0)}\npytest_rc tests {rc}\necho "${{#failed[@]}}"\n'
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == ("1" if fails else "0"), done.stdout


def test_floors_pin_every_dependency_at_its_lower_bound():
    floors = _floors_module()
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    deps = re.search(r"^dependencies\s*=\s*\[(.*?)^\]", text, re.S | re.M).group(1)
    names = re.findall(r'^\s*"([A-Za-z0-9_.-]+)', deps, re.M)
    pins = floors.floors(text)
    assert [p.split("==")[0] for p in pins] == names
    assert "pandas==2.0" in pins and "openpyxl==3.1.2" in pins and "click==8.1" in pins
    with pytest.raises(SystemExit, match="no >= floor"):
        floors.floors('dependencies = [\n    "pandas",\n]\n')


def test_floor_check_fails_on_a_version_that_is_not_the_floor():
    floors = _floors_module()
    assert floors.check(["pytest==0.1"]) == 1
    assert floors.check(["no-such-package-sheetgen==1.0"]) == 1


PROBE = """
import pytest

def test_engine_missing():
    pytest.skip("LibreOffice (soffice) not installed")

def test_optional_extra():
    pytest.skip("torch not installed (optional)")

@pytest.mark.xfail(reason="known")
def test_known():
    assert False
"""


@pytest.mark.parametrize(("required", "failed", "skipped"), [("1", 1, 1), ("", 0, 2)])
def test_required_mode_turns_skips_into_failures(pytester, monkeypatch, required, failed, skipped):
    monkeypatch.setenv("SHEETGEN_REQUIRE_LIBREOFFICE", required)
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(failed=failed, skipped=skipped, xfailed=1)


def test_every_listed_slow_test_exists():
    """conftest.SLOW_TESTS names real test functions (a renamed test would run as fast)."""
    import ast

    from conftest import ALL, SLOW_TESTS

    for module, names in SLOW_TESTS.items():
        path = ROOT / "tests" / f"{module}.py"
        assert path.is_file(), f"SLOW_TESTS lists {module}, which is not a test module"
        if names == ALL:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        missing = sorted(set(names) - defined)
        assert not missing, f"SLOW_TESTS lists tests {module} does not define: {missing}"
