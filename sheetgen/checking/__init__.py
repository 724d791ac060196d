"""Checking a workbook: recalculate it in an engine and compare every cell.

``check`` compares each recalculated key with the reference and reads the Checks
sheet's verdicts; ``formula_compare`` compares formulas with the template's;
``recalc`` keeps the engine names older code imported (a facade over ``engines``).
It is the last step of the data flow: it imports ``readback``, ``reference``,
``workbook`` and ``engines``; only the command line imports it.
"""
