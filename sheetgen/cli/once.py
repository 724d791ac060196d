"""Single-value flags given twice are an error (issue 22.4).

click keeps the last of ``--gpus 8 --gpus 16`` without a word; a plan built on the
value the user did not mean is worse than a refusal.  ``OnceCommand`` reads the
command line before click does and ends a flag given twice in one line naming it
(a usage error: exit code 2).  Options declared ``multiple=True`` or ``count=True``
(``pdf --sheet``, ``--presets``) repeat as before; ``--x`` and ``--no-x`` are one flag.
"""

from __future__ import annotations

from typing import Any

import click


class OnceCommand(click.Command):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        repeated = first_repeat(self.get_params(ctx), args)
        if repeated is not None:
            raise click.UsageError(repeated, ctx=ctx)
        return super().parse_args(ctx, args)


def first_repeat(params: list[click.Parameter], args: list[str]) -> str | None:
    """The message for the first single-value option ``args`` give twice, else None."""
    options: dict[str, click.Option] = {}
    for p in params:
        if isinstance(p, click.Option) and not (p.multiple or p.count):
            options.update({name: p for name in (*p.opts, *p.secondary_opts)})
    seen: dict[str, str] = {}  # option name -> the spelling given first
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == "--":
            break
        option, spelled, inline = _option(token, options)
        if option is None:
            continue
        key = option.name or spelled
        if key in seen:
            also = "" if seen[key] == spelled else f" (also as {seen[key]})"
            return f"option {spelled} given more than once{also}; give it once"
        seen[key] = spelled
        if not option.is_flag and not inline:
            i += max(1, option.nargs)  # its value, whatever it looks like
    return None


def _option(token: str, options: dict[str, click.Option]) -> tuple[Any, str, bool]:
    """(option, its name as given, value inline) for an option token, else (None, "", False)."""
    if token.startswith("--"):
        name, eq, _ = token.partition("=")
        return options.get(name), name, bool(eq)
    if token.startswith("-") and len(token) >= 2:
        name = token[:2]
        return options.get(name), name, len(token) > 2
    return None, "", False
