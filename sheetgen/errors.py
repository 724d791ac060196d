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
