"""``python -m sheetgen``: the ``sheetgen`` command (``sheetgen.cli.run``)."""

from sheetgen.cli import run

if __name__ == "__main__":
    run(prog_name="sheetgen")
