"""The grid every templated sheet uses, written once: the writer
(``sheetgen.workbook.layout``) places cells with it and the engines' reader
(``sheetgen.engines.common``) finds the scenario columns with it.  Standard
library only, so the engines import it cheaply.
"""

from __future__ import annotations

HEADER_ROW = 4  # key | quantity | unit | <scenarios> | formula in words | source
FIRST_ROW = 5  # the first key row
FIRST_SCENARIO_COL = 4  # column D (1-based): the first scenario's values
