"""Presets and model import: the shipped (and team) models, hardware and recipes.

``presets`` loads the tables under the ``presets/`` data folder (and team folders
layered over them); ``parse`` turns a preset's fields into the ``scenarios`` dataclasses;
``hf_import`` writes a model preset from a Hugging Face ``config.json`` (its readers per
``model_type`` in ``hf_architectures``, windowed attention in ``hf_window``);
``references`` lists the public documents the sources name.  It imports ``scenarios``;
the workbook, planning, readback and the command line import it.
"""
