"""The one assertion every hostile-input case shares (issues 15 and 26): the command
ends with the expected exit code, one stderr line of at most 300 characters naming
what it must name, and no traceback."""

from __future__ import annotations

from typing import Any

from click.testing import CliRunner

from sheetgen.cli.commands import main

BASE = ["--model", "llama3-8b", "--hardware", "h100-sxm"]
MAX_LINE = 300


def one_line(args: list[str], code: int = 2, expect: str = "", env: dict | None = None) -> str:
    """Run the CLI in-process and return its one stderr line (exit ``code``)."""
    result = CliRunner().invoke(main, args, env=env)
    err = result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{args}: raised {type(result.exception).__name__}: {result.exception}"
    )
    assert "Traceback" not in err + result.stdout, f"{args}: traceback"
    assert result.exit_code == code, f"{args}: exit {result.exit_code}, stderr {err[:500]!r}"
    if code == 0:
        return result.stdout
    lines = err.splitlines()
    assert len(lines) == 1, f"{args}: {len(lines)} stderr lines: {err[:500]!r}"
    assert len(lines[0]) <= MAX_LINE, f"{args}: {len(lines[0])} characters: {lines[0]!r}"
    assert expect in lines[0], f"{args}: {expect!r} not in {lines[0]!r}"
    return lines[0]


def library_error(fn: Any, *args: Any, expect: str = "", **kwargs: Any) -> str:
    """``fn(*args)`` must raise one SheetgenError (one line, <= 300 characters)."""
    import pytest

    from sheetgen.errors import SheetgenError

    with pytest.raises(SheetgenError) as info:
        fn(*args, **kwargs)
    text = f"error: {info.value}"
    assert "\n" not in text and len(text) <= MAX_LINE, f"{text[:400]!r}"
    assert expect in text, f"{expect!r} not in {text!r}"
    return text
