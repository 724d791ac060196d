"""``compute --format json|csv``: the records written scenario by scenario.

A scenario file may hold 16,379 scenarios (the most a workbook holds), about 1,600
keys each: 26 million records, near 3 GB of JSON.  Held at once (a DataFrame, then
one string) they do not fit in memory; written as they are computed, memory stays
that of one scenario's records beside the reference's caches.  The bytes are those
``render(compute_frame(scenarios), fmt)`` writes, a record at a time: JSON as
``json.dumps(records, indent=1, default=float)`` lays it out, CSV through the same
``csv_safe`` and ``DataFrame.to_csv``, a few scenarios at a time.

Every scenario is computed and checked (``limits.check_results``) before the first
byte is written, so a scenario that cannot be computed ends in its one line with
nothing on standard output; the second pass computes again only what the
reference's caches no longer hold (none of a file of up to 1,024 scenarios).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from sheetgen.scenarios.scenario import Scenario

CSV_SCENARIOS_PER_CHUNK = 32  # scenarios per DataFrame written as CSV
# The aligned table puts the scenarios side by side and is built whole (a pivot of
# every record): beyond this it is unreadable and its memory grows past a laptop's.
MAX_TABLE_SCENARIOS = 1_000


def check_table_size(n: int) -> None:
    """``--format table`` of more than MAX_TABLE_SCENARIOS scenarios: one line."""
    from sheetgen.errors import SheetgenError

    if n > MAX_TABLE_SCENARIOS:
        raise SheetgenError(
            "--format",
            f"table shows at most {MAX_TABLE_SCENARIOS:,} scenarios side by side, got "
            f"{n:,}; --format csv or json writes any number as it computes them",
        )


def write_computed(scenarios: list[Scenario], fmt: str, write: Callable[[str], object]) -> None:
    """Write every computed key of ``scenarios`` as ``fmt`` (json or csv) through
    ``write``, ending with a newline, as ``click.echo(render(...))`` would."""
    from sheetgen.reference import compute
    from sheetgen.scenarios.limits import check_results

    for s in scenarios:
        check_results(s.name, compute(s))
    chunks = _json_chunks(scenarios) if fmt == "json" else _csv_chunks(scenarios)
    for chunk in chunks:
        write(chunk)


def _records(scenarios: list[Scenario]) -> Iterator[list[dict[str, Any]]]:
    """Each scenario's records, as ``tables.compute_records`` makes them."""
    from sheetgen.cli.tables import record_context, scenario_records
    from sheetgen.reference import compute

    dates, unit_of = record_context()
    for s in scenarios:
        yield scenario_records(s.name, compute(s), dates, unit_of)


def _json_value(value: Any) -> str:
    if type(value) is float and math.isfinite(value):
        return float.__repr__(value)
    if type(value) is int:
        return int.__repr__(value)
    return json.dumps(value, default=float)


def _json_chunks(scenarios: list[Scenario]) -> Iterator[str]:
    """``json.dumps(records, indent=1, default=float)`` + newline, scenario by scenario."""
    texts: dict[str, str] = {}  # keys and units repeat in every scenario: encoded once

    def text(s: str) -> str:
        found = texts.get(s)
        if found is None:
            found = texts[s] = json.dumps(s)
        return found

    first = True
    for records in _records(scenarios):
        parts = []
        for r in records:
            parts.append(
                ("[\n" if first else ",\n")
                + ' {\n  "scenario": '
                + json.dumps(r["scenario"])
                + ',\n  "key": '
                + text(r["key"])
                + ',\n  "value": '
                + _json_value(r["value"])
                + ',\n  "unit": '
                + text(r["unit"])
                + "\n }"
            )
            first = False
        yield "".join(parts)
    yield "[]\n" if first else "\n]\n"


def _csv_chunks(scenarios: list[Scenario]) -> Iterator[str]:
    """``csv_safe(frame).to_csv(index=False)``, a few scenarios at a time (every
    chunk's value column holds text, so it is of objects, as the whole frame's is)."""
    import pandas as pd

    from sheetgen.cli.tables import csv_safe

    header = True
    batch: list[dict[str, Any]] = []
    count = 0
    for records in _records(scenarios):
        batch.extend(records)
        count += 1
        if count % CSV_SCENARIOS_PER_CHUNK == 0:
            yield csv_safe(pd.DataFrame(batch)).to_csv(index=False, header=header)
            header, batch = False, []
    if batch or header:
        yield csv_safe(pd.DataFrame(batch)).to_csv(index=False, header=header)
