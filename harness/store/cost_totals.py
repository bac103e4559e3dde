"""A run's model and environment costs, summed over its stored records.

Each record of a strategy that keeps costs holds them in
``trajectory.extra["costs"]`` (by phase and role; harness/strategies/costs.py
writes them); ``aggregate_costs`` sums and averages them for ``scores.json``.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.boundary.json_value import JsonMapping, JsonObject, JsonValue


def _accumulate(total: JsonObject, record: JsonMapping) -> None:
    """Add ``record`` into ``total`` in place, at any depth (a run's sum is taken
    over every stored record, without a new dict per record)."""
    for key, value in record.items():
        if isinstance(value, dict):
            inner = total.get(key)
            if not isinstance(inner, dict):
                inner = total[key] = {}
            _accumulate(inner, value)
        else:
            total[key] = _number(total.get(key)) + _number(value)


def _number(value: JsonValue | None) -> int | float:
    """A cost as a number: none (absent, null) is 0; so is anything not a number."""
    return value if isinstance(value, int | float) else 0


def _object(value: JsonValue | None) -> JsonMapping:
    return value if isinstance(value, dict) else {}


def _rounded(record: JsonObject) -> JsonObject:
    return {
        key: _rounded(value)
        if isinstance(value, dict)
        else round(value, 4)
        if isinstance(value, float)
        else value
        for key, value in record.items()
    }


def _scaled(record: JsonObject, factor: float) -> JsonObject:
    """Each number times ``factor`` (after ``_accumulate`` a cost is a number or
    an object of costs)."""
    return {
        key: _scaled(value, factor)
        if isinstance(value, dict)
        else round(_number(value) * factor, 4)
        for key, value in record.items()
    }


def aggregate_costs(records: Sequence[JsonMapping]) -> JsonObject:
    """Costs over a run's stored records: the sum by phase and role, and the mean
    per record (what one sample costs). Records without a cost record (infrastructure
    errors, runs of strategies that keep none) are left out and counted."""
    found = [
        _object(_object(record.get("trajectory")).get("extra")).get("costs") for record in records
    ]
    costs = [c for c in found if isinstance(c, dict)]
    total: JsonObject = {}
    for cost in costs:
        _accumulate(total, cost)
    total = _rounded(total)
    mean = _scaled(total, 1 / len(costs)) if costs else {}
    return {
        "n_records": len(costs),
        "n_without_costs": len(records) - len(costs),
        "sum": total,
        "mean_per_record": mean,
    }
