"""The command line: a thin click layer over the library.

``commands`` holds the group and the commands (the ``sheetgen`` console script and
``python -m sheetgen`` run ``commands.run``); ``plans`` the commands that judge and
advise plans; ``support`` the flags, error handling and helpers they share; ``once``
the repeated-flag rule; ``tables`` the pandas tables ``compute`` and ``presets`` print.
Nothing outside ``sheetgen.cli`` imports from here: it is the top of the house.
"""
