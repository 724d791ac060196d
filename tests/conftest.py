"""Shared fixtures: LibreOffice availability, scenarios, generated workbooks."""

from __future__ import annotations

import os

import pytest

from sheetgen.recalc import gnumeric_available, libreoffice_available


def _click_runner_as_8_2() -> None:
    """Click 8.2's CliRunner keeps stderr apart (``result.stderr``) and ``output`` shows
    both streams; 8.1, pyproject's floor, mixes them unless ``mix_stderr=False`` (a
    parameter 8.2 removed).  The tests are written for 8.2: under 8.1, the runner
    keeps the streams apart and ``output`` is stdout followed by stderr."""
    import inspect

    from click import testing

    if "mix_stderr" not in inspect.signature(testing.CliRunner.__init__).parameters:
        return
    init = testing.CliRunner.__init__

    def __init__(self, *args, mix_stderr=False, **kwargs):  # noqa: N807
        init(self, *args, mix_stderr=mix_stderr, **kwargs)

    testing.CliRunner.__init__ = __init__
    testing.Result.output = property(lambda r: r.stdout + r.stderr)


_click_runner_as_8_2()


def require_libreoffice() -> None:
    """Skip the calling test when LibreOffice is absent, or fail if CI requires it."""
    if libreoffice_available():
        return
    if os.environ.get("SHEETGEN_REQUIRE_LIBREOFFICE") == "1":
        pytest.fail("LibreOffice (soffice) not found but SHEETGEN_REQUIRE_LIBREOFFICE=1")
    pytest.skip("LibreOffice (soffice) not found; install it, or set SHEETGEN_SOFFICE to its path")


@pytest.fixture
def lo() -> None:
    """Use in a test that needs LibreOffice headless."""
    require_libreoffice()


def require_gnumeric() -> None:
    """Skip the calling test when Gnumeric's ssconvert is absent, or fail if CI requires it."""
    if gnumeric_available():
        return
    if os.environ.get("SHEETGEN_REQUIRE_LIBREOFFICE") == "1":
        pytest.fail("Gnumeric (ssconvert) not found but SHEETGEN_REQUIRE_LIBREOFFICE=1")
    pytest.skip("Gnumeric (ssconvert) not found; install gnumeric, or set SHEETGEN_SSCONVERT")


@pytest.fixture
def gnumeric() -> None:
    """Use in a test that needs Gnumeric's ssconvert."""
    require_gnumeric()


# In the required mode (SHEETGEN_REQUIRE_LIBREOFFICE=1, as CI sets) no test may skip:
# a skip there means an engine or tool CI installs is missing, or a test that
# silently did nothing.  The only skips allowed are the optional extras CI does not
# install (pip install 'sheetgen[torch]').
OPTIONAL_EXTRAS = ("torch", "transformers")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    if os.environ.get("SHEETGEN_REQUIRE_LIBREOFFICE") != "1":
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if any(extra in reason for extra in OPTIONAL_EXTRAS):
        return
    report.outcome = "failed"
    report.longrepr = f"skipped with SHEETGEN_REQUIRE_LIBREOFFICE=1, which allows no skip: {reason}"
