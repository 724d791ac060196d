"""``python -m sheetgen.cli``, as before the package existed: the ``sheetgen`` command."""

from sheetgen.cli.commands import run

if __name__ == "__main__":
    run(prog_name="sheetgen")
