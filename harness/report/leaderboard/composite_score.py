"""A row's composite across benchmarks (the definition is data: ``harness.results.composite``)."""

from __future__ import annotations

from dataclasses import replace

from harness.report.leaderboard.rows import BenchmarkEntry, Composite
from harness.results import stats
from harness.results.composite import CompositeDefinition, default_composite
from harness.results.headlines import benchmark_label


def composite_of(
    entries: dict[str, BenchmarkEntry], definition: CompositeDefinition | None = None
) -> Composite:
    """The composite of one row (default: the first composite definition found)."""
    definition = definition or default_composite()
    if definition is None:
        return Composite(None)
    missing = [
        b for b in definition.benchmarks if b not in entries or entries[b].primary_value is None
    ]
    if missing:
        return Composite(None, missing=missing)
    parts = [entries[b] for b in definition.benchmarks]
    values = [float(e.primary_value) for e in parts if e.primary_value is not None]
    value = sum(values) / len(values)  # every part has one (checked above)
    interval = None
    arrays = [e.replicates for e in parts if e.replicates is not None]
    if len(arrays) == len(parts):
        # The benchmarks are independent task sets: averaging their
        # independent bootstrap replicates gives replicates of the composite.
        total = arrays[0]
        for array in arrays[1:]:
            total = total + array
        replicates = total / len(parts)
        interval = replace(
            stats.percentile_interval(replicates),
            n=sum(e.interval.n or 0 for e in parts if e.interval is not None) or None,
        )
    return Composite(value, interval, caveats=[c for c in map(_caveat, parts) if c])


def _caveat(entry: BenchmarkEntry) -> str:
    """Why a composite's component is not over its full set ('' when it is)."""
    label = benchmark_label(entry.benchmark)
    if entry.coverage is not None and entry.coverage.declared:
        return f"{label}: {entry.coverage.describe()}" if entry.partial else ""
    return f"{label}: {entry.incomplete()}" if entry.incomplete() else ""
