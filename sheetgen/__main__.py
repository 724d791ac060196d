"""``python -m sheetgen``: the ``sheetgen`` command (``sheetgen.cli.commands.run``)."""

from sheetgen.cli.commands import run

if __name__ == "__main__":
    run(prog_name="sheetgen")
