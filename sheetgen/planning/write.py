"""``sheetgen advise --write``: the plans found, as a scenario file ``sheetgen generate``
takes: the user's run settings, each plan's layout (dp left to be derived) and, when
advise chose it, its global batch, on the layout clock; only distinct plans."""

from __future__ import annotations

from typing import Any

from sheetgen.planning.advise import LAYOUT_FIELDS, Search, layout_label


def plans_yaml(result: Search, given: dict[str, Any], name: str | None = None) -> str:
    """A scenario file (for ``sheetgen generate``) holding the distinct plans found, on
    the layout clock.  ``given``: the run settings the user gave, as parsed values
    (numbers as numbers); ``name``: the user's scenario name, kept (``#2``, ... after
    it for the plans below the first)."""
    import yaml

    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    for plan in result.plans:
        s = plan.scenario
        item: dict[str, Any] = {"name": ""}
        item["model"], item["hardware"] = s.model.id, s.hardware.id
        item.update({k: v for k, v in given.items() if k not in LAYOUT_FIELDS})
        if result.goal.search_batch:  # the batch advise chose for this plan
            item["global_batch_tokens"] = s.run.global_batch_tokens
        item["mfu_source"] = "layout"
        # dp is left to be derived (n_gpus / (tp x pp x cp)), as generate does.
        item.update({k: v for k, v in plan.layout().items() if k != "dp"})
        fingerprint = repr(sorted((k, v) for k, v in item.items() if k != "name"))
        if fingerprint in seen:
            continue
        seen.add(fingerprint)
        label = layout_label(plan.layout())
        n = len(items) + 1
        if name:
            item["name"] = name if n == 1 else f"{name} #{n}"
        else:
            item["name"] = f"advise #{n}: {label}"
        items.append(item)
    header = (
        "# Layouts found by `sheetgen advise`, best first; "
        "generate a workbook with `sheetgen generate FILE`.\n"
    )
    return header + yaml.safe_dump({"scenarios": items}, sort_keys=False, allow_unicode=True)
