"""Scenarios and their inputs: what a plan is made of, and how it is read.

``scenario`` holds the frozen dataclasses (model, hardware, run, scenario); ``run_fields``
the one registry of run settings; ``limits`` the sane ranges every input is held to;
``parse`` the parsing and validation of values; ``files`` scenario files (YAML) and the
embedded defaults; ``yaml_load`` the one strict YAML loader; ``input_files`` the checks
every input file passes.  Every other package may import from here; ``scenario``,
``run_fields`` and ``limits`` import nothing of sheetgen's but ``errors``, ``units`` and
each other.
"""
