"""Shared fixtures: LibreOffice availability, scenarios, generated workbooks."""

from __future__ import annotations

import os

import pytest

from sheetgen.recalc import gnumeric_available, libreoffice_available


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
