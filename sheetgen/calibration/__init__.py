"""Calibration: the models' predictions against published runs.

``benchmarks`` reads the published training runs (``presets/benchmarks/``) and prints
predicted vs published throughput (``sheetgen benchmark-check``); ``serving_check``
does the same for published serving measurements (``sheetgen serving-check``).  It
imports ``scenarios`` and ``reference``; the command line, benchmarks/ and tools/
import it.
"""
