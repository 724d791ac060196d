"""Planning: the layout advisor and its reasons.

``advise`` searches the layouts (tp, pp, cp, ep, dp, ZeRO, ...) the reference says fit
and ranks them; ``why`` writes each layout's "why" column; ``hardware`` runs the same
search on every accelerator preset (``advise --hardware all``).  It imports
``scenarios`` and ``reference``; only the command line imports it.
"""
