"""sheetgen: LLM planning workbooks whose math lives in spreadsheet cells.

The package is split so that each piece of math lives in one place:

* ``sheetgen.scenarios.scenario``  inputs: frozen dataclasses (model, hardware, run, scenario)
* ``sheetgen.scenarios.run_fields`` the run settings: kinds, defaults with sources, accepted values
* ``sheetgen.scenarios.parse`` parsing and validation of inputs into those dataclasses
* ``sheetgen.catalog.presets``   model / hardware / recipe / dtype tables from ``presets/``
* ``sheetgen.reference`` the independent Python implementation of the math
* ``templates/``         the same math as spreadsheet formulas, one YAML per sheet
* ``sheetgen.workbook``  turns templates + scenarios into an .xlsx
* ``sheetgen.engines``   recalculates a workbook: LibreOffice, Gnumeric, pycel, formulas
  (``sheetgen.checking.recalc`` re-exports them)
"""

# The one place the version is written: pyproject.toml reads it (dynamic version),
# `sheetgen --version` prints it; CHANGELOG.md lists what each version changed.
__version__ = "0.1.0"
