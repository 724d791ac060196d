"""Reading a workbook back: the file opened safely, its cells read, scenarios rebuilt.

``opening`` opens an .xlsx safely (size, zip bombs, OLE files); ``reading`` reads the
layout, inputs and formulas; ``scenarios`` turns the inputs back into scenarios and a
scenario file; ``tables`` reads the Presets tables as untrusted input; ``access`` keeps
the names older code imported (a facade).  It imports ``scenarios``, ``catalog`` and
``workbook`` (for the layout); ``checking``, ``engines`` and the command line import it.
"""
