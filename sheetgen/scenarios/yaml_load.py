"""The one YAML loader for scenario files, presets and tables.

Safe (no Python objects), fast (libyaml's ``CSafeLoader`` where PyYAML was built
with it), and strict where silence would mislead:

* a key given twice in one mapping is an error (``n_gpus: 8`` then ``n_gpus: 64``
  would otherwise keep the last one silently);
* anchors and aliases (``&a`` / ``*a``) are refused: a 600-byte file of nested
  aliases ("billion laughs") expands to gigabytes in anything that walks it;
* dates stay text unless ``dates=True``, so sheetgen validates them and names the
  field (PyYAML's own date parsing raises on 2025-13-01).

Every problem is a one-line SheetgenError naming the file and line.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sheetgen.errors import QUOTE_CHARS, SheetgenError, short

TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


@cache
def _loader(dates: bool) -> type:
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc, valid-type]
        pass

    if not dates:
        Loader.yaml_implicit_resolvers = {
            first: [(tag, rx) for tag, rx in resolvers if tag != TIMESTAMP_TAG]
            for first, resolvers in base.yaml_implicit_resolvers.items()
        }
    return Loader


def _cut(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "…"


def _line(node: Any) -> str:
    mark = getattr(node, "start_mark", None)
    return f"line {mark.line + 1}" if mark is not None else "somewhere"


def _check_tree(root: Any, source: str) -> None:
    """Refuse shared nodes (aliases) and duplicate mapping keys; linear in the tree."""
    import yaml

    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise SheetgenError(
                source,
                f"{_line(node)}: anchors and aliases (&name / *name) are not accepted; "
                "write the values out",
            )
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: dict[tuple[str, str], Any] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    k = (key.tag, key.value)
                    if k in keys:
                        raise SheetgenError(
                            source,
                            f"{_line(key)}: duplicate key {short(key.value)} "
                            f"(first given on {_line(keys[k])}); give each key once",
                        )
                    keys[k] = key
                stack.extend((key, value))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def load_yaml(text: str, source: str, dates: bool = False) -> Any:
    """The document in ``text`` (None when empty), or a one-line SheetgenError."""
    import yaml

    loader = _loader(dates)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_tree(node, source)
        return loader.construct_document(node)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise SheetgenError(source, f"invalid YAML{where}: {_cut(problem)}") from None
    except (ValueError, TypeError, OverflowError, RecursionError) as e:
        raise SheetgenError(source, f"cannot read YAML: {_cut(str(e))}") from None
    finally:
        loader.dispose()


def read_text(path: Any, what: str = "YAML file") -> str:
    """A UTF-8 text file's contents; a missing, unreadable, non-regular or oversized
    file is one line naming it and ``what`` (``sheetgen.scenarios.input_files``)."""
    from sheetgen.scenarios import input_files

    return input_files.read_text(path, what)


def load_yaml_file(path: Any, dates: bool = False) -> Any:
    """``load_yaml`` of a file; unreadable files are one-line errors too."""
    return load_yaml(read_text(path), str(path), dates=dates)
