"""The one error type every bad input turns into.

The CLI prints ``str(error)`` on one line and exits with code 2, so the message
must name the field, the value and what is accepted.
"""

from __future__ import annotations


class SheetgenError(Exception):
    """Bad input: a field, the offending value and what would be accepted."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)


# Error messages quote at most this many characters of a value (a 40,000-character
# name or a deeply nested structure must not make the message itself the problem).
QUOTE_CHARS = 80


def short(value: object, limit: int = QUOTE_CHARS) -> str:
    """``repr(value)`` cut to ``limit`` characters (with '…'); bounded work for any size."""
    import reprlib

    r = reprlib.Repr()
    r.maxstring = r.maxother = limit + 2
    r.maxlist = r.maxtuple = r.maxdict = r.maxset = 8
    r.maxlevel = 3
    text = r.repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
