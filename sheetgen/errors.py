"""The one error type every bad input turns into.

The CLI prints ``str(error)`` on one line and exits with code 2, so the message
must name the field, the value and what is accepted.
"""

from __future__ import annotations

from collections.abc import Iterable


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


# An "accepted: ..." list longer than this is cut to the nearest names (issue 26.10:
# a 66-name list made a 990-character line).
ACCEPTED_CHARS = 120


def did_you_mean(value: object, accepted: Iterable[str], where: str = "") -> str:
    """What to say after an unknown ``value``: the nearest accepted names (those it
    begins, then difflib's closest; case-insensitive), else the accepted list itself
    when it is short, else its size, the first few and ``where`` they are all listed.
    Bounded: under 200 characters."""
    import difflib

    names = list(dict.fromkeys(str(a) for a in accepted))
    text = str(value)[:200]
    by_lower: dict[str, str] = {}
    for name in names:
        by_lower.setdefault(name.lower(), name)
    key = text.lower()
    near = [n for n in by_lower if key and n.startswith(key)][:3]
    near += [
        n for n in difflib.get_close_matches(key, list(by_lower), n=3, cutoff=0.6) if n not in near
    ]
    near = near[:3]
    if near:
        return "did you mean " + " or ".join(repr(by_lower[n]) for n in near) + "?"
    listing = ", ".join(names)
    if len(listing) <= ACCEPTED_CHARS:
        return f"accepted: {listing}"
    shown = ""
    for name in names:
        if len(shown) + len(name) > ACCEPTED_CHARS - 20:
            break
        shown += f"{name}, "
    more = f"; all listed in {where}" if where else ""
    return f"{len(names)} accepted, e.g. {shown}…{more}"


def key_name(key: object) -> str:
    """A mapping key as an error message names it: plain keys as they are, anything
    else (spaces, line breaks, control characters, very long) quoted and shortened."""
    text = key if isinstance(key, str) else None
    if text is not None and len(text) <= QUOTE_CHARS and text.isprintable() and " " not in text:
        return text
    return short(key)


# A path in a message keeps its first and last characters up to this many in all.
PATH_CHARS = 120


def quote_path(path: object) -> str:
    """A file name for a one-line message: as it is when printable, else quoted the
    way ``repr`` quotes it (a newline in a name shows as ``\\n``, never a line break);
    a path longer than PATH_CHARS keeps its start and its end around '…'."""
    text = str(path)
    if not text.isprintable():
        text = repr(text)
    if len(text) > PATH_CHARS:
        text = text[: PATH_CHARS // 3] + "…" + text[-(PATH_CHARS - PATH_CHARS // 3 - 1) :]
    return text


def one_line(text: str) -> str:
    """``text`` with every line break and control character escaped (``\\n``, ``\\x1b``):
    what the CLI prints is one line whatever a name or a value contains."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == " " else repr(ch)[1:-1] for ch in text)
