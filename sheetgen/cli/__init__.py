"""The command line: a thin click layer over the library.

``commands`` holds the group and the commands (the ``sheetgen`` console script and
``python -m sheetgen`` run ``commands.run``); ``plans`` the commands that judge and
advise plans; ``support`` the flags, error handling and helpers they share; ``once``
the repeated-flag rule; ``tables`` the pandas tables ``compute`` and ``presets`` print.
Nothing outside ``sheetgen.cli`` imports from here: it is the top of the house.
``sheetgen.cli.run`` / ``main`` (the console script's entry before the package
existed) and ``python -m sheetgen.cli`` still work.
"""


def __getattr__(name: str) -> object:
    """``sheetgen.cli.main`` and ``sheetgen.cli.run``, the names the console script and
    programs used before the package existed, loaded from ``commands`` when first
    asked for (importing the package alone loads no command)."""
    if name in ("main", "run"):
        from sheetgen.cli import commands

        return getattr(commands, name)
    raise AttributeError(f"module 'sheetgen.cli' has no attribute {name!r}")
