"""One row of the sample list: what the report's and the viewer's list show of a record.

A row is a compact list (its positions are INDEX_COLUMNS; the page's script reads
rows by those positions). Run, benchmark, subset and error kind are positions in
the index's name lists (``Names``), so that a long list repeats no text.

Sample ids sort naturally (``_2`` before ``_10``): a number inside an id is
compared as a number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypeAlias

from harness.results import stats
from harness.store.records import OK, Record

OUTCOME_FAIL, OUTCOME_PASS, OUTCOME_ERROR = 0, 1, 2

# The row layout (the page's script reads rows by these positions).
INDEX_COLUMNS = (
    "run",
    "benchmark",
    "subset",
    "sample_id",
    "trial",
    "outcome",
    "reward",
    "key",
    "entry",  # where the page gets the sample's detail: an entry number, or a version
    "error_kind",  # a position in the index's error kinds; 0 is "" (none)
)

# A row's values, in INDEX_COLUMNS order.
SampleRow: TypeAlias = list[int | float | str | None]
# How rows sort: benchmark, subset, sample id (numbers by value), trial.
SampleOrder: TypeAlias = tuple[str, str, tuple[tuple[int, int | str], ...], int]

_DIGITS = re.compile(r"(\d+)")


def outcome_of(record: Record) -> int:
    ok, values = stats.trial_values(record.to_dict())
    if not ok:
        return OUTCOME_ERROR
    return OUTCOME_PASS if values["passed"] >= 1.0 else OUTCOME_FAIL


def error_kind_of(record: Record) -> str:
    """The benchmark's own error code (``score.details.error_type``) where it gives
    one, else the type of a run error (a sample that raised); "" for none."""
    details = (record.score or {}).get("details")
    error_type = details.get("error_type") if isinstance(details, dict) else None
    if isinstance(error_type, str):
        return error_type
    if isinstance(record.error, dict) and isinstance(record.error.get("type"), str):
        return str(record.error["type"])
    return ""


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that orders the numbers inside ``text`` by value (``a_2`` < ``a_10``)."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(text) if part
    )


def sample_order(record: Record) -> SampleOrder:
    return (record.benchmark, record.subset, natural_key(str(record.sample_id)), record.trial)


@dataclass
class Names:
    """The index's name lists: each distinct run, benchmark, subset and error kind once."""

    runs: list[str] = field(default_factory=list)
    benchmarks: list[str] = field(default_factory=list)
    subsets: list[str] = field(default_factory=list)
    error_kinds: list[str] = field(default_factory=lambda: [""])
    _positions: dict[tuple[str, str], int] = field(default_factory=dict)

    def position(self, kind: str, value: str) -> int:
        values: list[str] = getattr(self, kind)
        known = self._positions.get((kind, value))
        if known is None:
            known = values.index(value) if value in values else len(values)
            if known == len(values):
                values.append(value)
            self._positions[(kind, value)] = known
        return known

    def as_dict(self) -> dict[str, list[str]]:
        return {
            "runs": self.runs,
            "benchmarks": self.benchmarks,
            "subsets": self.subsets,
            "error_kinds": self.error_kinds,
        }


def sample_row(record: Record, run: str, names: Names, entry: int) -> SampleRow:
    """The list row of ``record`` of run ``run``; ``entry`` says where its detail is."""
    score = record.score or {}
    reward = score.get("reward") if record.status == OK else None
    return [
        names.position("runs", run),
        names.position("benchmarks", record.benchmark),
        names.position("subsets", f"{record.benchmark}/{record.subset}"),
        str(record.sample_id),
        record.trial,
        outcome_of(record),
        round(float(reward), 4) if isinstance(reward, int | float) else None,
        record.key,
        entry,
        names.position("error_kinds", error_kind_of(record)),
    ]
