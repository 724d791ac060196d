"""The machinery the CLI's commands share, apart from the commands themselves.

The run-setting flags (one per scalar field of the registry, sheetgen.scenarios.run_fields)
and ``--presets``; error handling (``handle_errors``, ``OneLineGroup``: every bad
input ends as one line on stderr);
``--timeout``; writing a text file safely; and the scenario built from flags.
Heavy modules are imported inside the functions, as in ``sheetgen.cli.commands``, so that
``sheetgen --help`` stays fast.  This module never imports ``sheetgen.cli.commands``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from sheetgen.cli.once import OnceCommand
from sheetgen.errors import SheetgenError, one_line

# One-scenario flags, one per scalar run setting of the registry (sheetgen.scenarios.run_fields
# FIELDS): --seq-len sets seq_len; a field's ``cli`` and ``cli_aliases`` rename it.


def _run_flags() -> list[tuple[str, str, str]]:
    """(flag, key, help) per scalar registry field, in registry order."""
    from sheetgen.scenarios.run_fields import FIELDS, SCALAR_KINDS

    flags = []
    for f in FIELDS:
        if f.kind not in SCALAR_KINDS:
            continue  # lists (phases, sweeps) are given in a scenario file
        accepted = " | ".join(f.choices) if f.kind == "choice" else ""
        text = f"{f.doc} [{accepted}]" if accepted else f.doc
        # A default of None is derived from other settings; the description says how.
        suffix = "" if f.default is None else f" (default {f.default})"
        flags.append((f.flag_name, f.key, f"{text}{suffix}"))
    return flags


RUN_FLAGS = _run_flags()
FLAG_OF = {key: flag for flag, key, _ in RUN_FLAGS}


def scenario_options(fn: Callable) -> Callable:
    """Flags that describe one scenario (instead of a scenario file)."""
    from sheetgen.scenarios.run_fields import FIELD

    for flag, key, help_text in reversed(RUN_FLAGS):
        names = [flag, *FIELD[key].cli_aliases]
        fn = click.option(*names, key, default=None, help=help_text)(fn)
    fn = click.option("--name", "scenario_name", default=None, help="scenario name")(fn)
    fn = click.option("--hardware", "hardware", default=None, help="hardware preset id")(fn)
    fn = click.option("--model", "model", default=None, help="model preset id")(fn)
    return fn


def presets_option(fn: Callable) -> Callable:
    """--presets DIR (repeatable): team preset folders layered over the shipped presets."""

    def use(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> None:
        from sheetgen.catalog import presets

        presets.use_team_dirs(value or None)
        ctx.call_on_close(lambda: presets.use_team_dirs(None))

    return click.option(
        "--presets",
        "team_presets",
        multiple=True,
        expose_value=False,
        is_eager=True,
        callback=use,
        metavar="DIR",
        help="team presets folder (models/, hardware/, scenarios/) layered over the shipped "
        "ones; repeatable, later wins; default: $SHEETGEN_PRESETS",
    )(fn)


def handle_errors(fn: Callable) -> Callable:
    """One line and exit 2 for bad input; one line and 128 + n for SIGTERM / SIGHUP
    (raised as Interrupted so that engines and writers clean up on the way out)."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from sheetgen.output.interrupt import Interrupted, signals_unwind

        try:
            with signals_unwind():
                return fn(*args, **kwargs)
        except SheetgenError as e:
            _fail(one_line(str(e)))
        except BrokenPipeError:  # `sheetgen compute | head`: the reader has all it wants
            _fail(None, 128 + 13)
        except OSError as e:  # a file-system error no check foresaw, or stdout on a full disk
            _fail(_os_error_line(e))
        except Interrupted as e:
            click.echo(f"error: stopped by {e.name}; temporary files removed", err=True)
            sys.exit(e.exit_code)
        except MemoryError:  # what no limit foresaw: one line, not a traceback
            _fail("out of memory; give fewer scenarios (compute --format csv or json streams)")

    return wrapper


def _os_error_line(e: OSError) -> str:
    """``<path>: <reason>``; ``<stdout>`` when printing was what failed."""
    from sheetgen.output.safe_write import shown

    reason = e.strerror or type(e).__name__
    if e.filename is not None:
        return f"{shown(e.filename)}: {reason}"
    return f"{_echoing(e) or 'writing'}: {reason}"


def _echoing(e: BaseException) -> str | None:
    """``<stdout>`` or ``<stderr>`` when ``e`` was raised inside ``click.echo``."""
    tb = e.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name == "echo" and frame.f_globals.get("__name__") == "click.utils":
            return "<stderr>" if frame.f_locals.get("err") else "<stdout>"
        tb = tb.tb_next
    return None


def _stdout_broken() -> None:
    """Standard output, when it cannot take what is waiting for it, pointed at
    /dev/null, so that Python's own flush at exit cannot add a second message."""
    import os

    try:
        sys.stdout.flush()
        return
    except (OSError, ValueError):
        pass
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


def _fail(message: str | None, code: int = 2) -> None:
    """``error: message`` on stderr (none for a closed pipe), exit ``code``."""
    _stdout_broken()
    if message is not None:
        click.echo(f"error: {one_line(message)}", err=True)
    sys.exit(code)


DEFAULT_TIMEOUT_S = 180.0


def timeout_option(fn: Callable) -> Callable:
    """``--timeout SECONDS`` for the commands that run LibreOffice or Gnumeric."""
    return click.option(
        "--timeout",
        "timeout",
        default=None,
        metavar="SECONDS",
        help=f"seconds LibreOffice (or Gnumeric) may take, > 0 (default {DEFAULT_TIMEOUT_S:g})",
    )(fn)


def parse_timeout(value: str | None) -> float:
    """The ``--timeout`` value: a finite number of seconds > 0."""
    import math

    if value is None:
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        shown = value if len(value) <= 40 else value[:37] + "..."
        raise SheetgenError("--timeout", f"must be a number of seconds > 0, got {shown!r}")
    return seconds


def scenarios_from_args(scenario_file: str | None, flags: dict[str, Any]) -> list:
    """A scenario file, or one scenario built from flags (model and hardware required)."""
    from sheetgen.scenarios.files import load_scenarios, scenario_from_dict

    given = {k: v for k, v in flags.items() if v is not None}
    from sheetgen.scenarios.input_files import exists

    if scenario_file is not None and not exists(scenario_file):
        from sheetgen.catalog import presets

        found = presets.find_scenario(scenario_file)
        scenario_file = str(found) if found is not None else scenario_file
    if scenario_file is not None:
        if given:
            first = next(iter(given))
            raise SheetgenError(
                f"--{first.replace('_', '-')}",
                "cannot be combined with a scenario file; edit the file or drop the file argument",
            )
        return load_scenarios(scenario_file)
    if not given:
        return []
    for required in ("model", "hardware"):
        if required not in given:
            raise SheetgenError(f"--{required}", "required when no scenario file is given")
    item: dict[str, Any] = {"name": given.pop("scenario_name", None) or "Scenario 1"}
    item.update(given)
    if "dp" in given:
        _layout_matches(item)
    try:
        return [scenario_from_dict(item, 1)]
    except SheetgenError as e:
        if not e.field.startswith("scenarios[1]"):
            raise  # not a flag's value (a preset folder, a preset file)
        # Name the flag the user typed, not the scenario-file path of the field.
        field = e.field.removeprefix("scenarios[1].").split(".")[0]
        flag = FLAG_OF.get(field, f"--{field.replace('_', '-')}")
        raise SheetgenError(flag, e.message) from None


# click 8.2 raises this for a group called with no arguments; click 8.1 (pyproject's
# floor) prints the help and exits 0 itself, and has no such class (an empty tuple
# in an except clause catches nothing).
_NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())


FORCE_HELP = "replace the target whatever it holds (without it, a file you edited is kept)"


class OneLineGroup(click.Group):
    """Usage errors (unknown option, bad choice, missing argument, a single-value flag
    given twice: ``cli_once``) end in one line on stderr and exit code 2, like every
    other bad input.  Its commands and subgroups are built the same way."""

    command_class = OnceCommand
    group_class = type

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.Abort:
            click.echo("error: interrupted", err=True)
            sys.exit(130)
        except _NO_ARGS_IS_HELP as e:
            # `sheetgen` (or `sheetgen presets`) alone: the help, as click shows it.
            click.echo(
                e.ctx.get_help() if e.ctx is not None else self.get_help(self.context_class(self))
            )
            sys.exit(2)
        except click.UsageError as e:
            message = one_line(" ".join(e.format_message().split()))
            if len(message) > 300:
                message = message[:299] + "…"
            click.echo(f"error: {one_line(message)}", err=True)
            sys.exit(2)
        except click.exceptions.Exit as e:
            sys.exit(e.exit_code)
        except BrokenPipeError:
            _fail(None, 128 + 13)
        except OSError as e:  # --help or --version into a full disk
            _fail(_os_error_line(e))
        except click.ClickException as e:
            click.echo(f"error: {' '.join(e.format_message().split())}", err=True)
            sys.exit(e.exit_code)


def _layout_matches(item: dict[str, Any]) -> None:
    """An explicit --dp must use exactly the GPUs planned: n_gpus = dp x tp x pp x cp."""
    from sheetgen.scenarios.parse import parse_count
    from sheetgen.scenarios.run_fields import RUN_DEFAULTS

    try:
        n = {
            k: parse_count(item.get(k, RUN_DEFAULTS[k]), k)
            for k in ("n_gpus", "dp", "tp", "pp", "cp")
        }
    except SheetgenError:
        return  # the field's own check names it
    if n["n_gpus"] != n["dp"] * n["tp"] * n["pp"] * n["cp"]:
        raise SheetgenError(
            "--dp",
            f"dp x tp x pp x cp = {n['dp']} x {n['tp']} x {n['pp']} x {n['cp']} = "
            f"{n['dp'] * n['tp'] * n['pp'] * n['cp']} differs from --gpus {n['n_gpus']}; "
            "make them agree or leave --dp out (it is derived)",
        )


def openpyxl_without_numpy() -> None:
    """Import openpyxl without numpy, when neither is imported yet (``generate``).

    openpyxl imports numpy only to accept numpy numbers as cell values
    (``openpyxl.compat.numbers``); sheetgen writes Python numbers only, and numpy's
    import was about 0.09 s of the default workbook's 0.7 s of CPU.  numpy stays
    importable afterwards (pandas imports it as usual); only openpyxl, in this
    process, no longer takes numpy numbers as cell values.
    """
    if "openpyxl" in sys.modules or "numpy" in sys.modules:
        return
    sys.modules["numpy"] = None  # type: ignore[assignment]  # `import numpy` fails: openpyxl's fallback
    try:
        import openpyxl  # noqa: F401
    finally:
        del sys.modules["numpy"]
