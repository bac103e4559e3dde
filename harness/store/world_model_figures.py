"""How well a rehearser predicted the real tool results: fidelity figures per
call, per list of calls and per run (``aggregate_world_model``), read from the
``{call, predicted, actual}`` entries stored in ``trajectory.extra["world_model"]``
(harness/strategies/world_model.py records them).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from harness.boundary.json_value import JsonMapping, JsonObject, JsonValue
from harness.boundary.tool_checks import result_status


def _value(content: JsonValue) -> tuple[bool, JsonValue]:
    """(is_json, value) of a result's text: strict JSON, else the stripped text."""
    text = content if isinstance(content, str) else json.dumps(content)
    try:
        parsed: JsonValue = json.loads(text)
        return True, parsed
    except (json.JSONDecodeError, RecursionError, TypeError):
        return False, text.strip()


def _object(value: JsonValue | None) -> JsonMapping:
    return value if isinstance(value, dict) else {}


@dataclass
class CallFidelity:
    status_agrees: bool
    exact_match: bool
    key_jaccard: float | None
    value_agreement: float | None
    format_error: bool


def call_fidelity(entry: JsonMapping) -> CallFidelity:
    """The metrics of one ``{call, predicted, actual}`` record."""
    predicted, actual = _object(entry.get("predicted")), _object(entry.get("actual"))
    actual_status = actual.get("status") or result_status(
        str(actual.get("content", "")), bool(actual.get("is_error"))
    )
    format_error = predicted.get("status") == "format_error"
    if format_error:
        both_objects = isinstance(_value(actual.get("content", ""))[1], dict)
        return CallFidelity(False, False, 0.0 if both_objects else None, None, True)
    _, left = _value(predicted.get("content", ""))
    _, right = _value(actual.get("content", ""))
    jaccard: float | None = None
    agreement: float | None = None
    if isinstance(left, dict) and isinstance(right, dict):
        union = set(left) | set(right)
        shared = set(left) & set(right)
        jaccard = len(shared) / len(union) if union else 1.0
        if shared:
            agreement = sum(left[k] == right[k] for k in shared) / len(shared)
    elif isinstance(left, dict) or isinstance(right, dict):
        jaccard = 0.0
    return CallFidelity(
        status_agrees=predicted.get("status") == actual_status,
        exact_match=left == right and type(left) is type(right),
        key_jaccard=jaccard,
        value_agreement=agreement,
        format_error=False,
    )


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(entries: Sequence[JsonMapping]) -> JsonObject:
    """Fidelity figures over a list of ``{call, predicted, actual}`` records."""
    scores = [call_fidelity(entry) for entry in entries]
    jaccards = [s.key_jaccard for s in scores if s.key_jaccard is not None]
    agreements = [s.value_agreement for s in scores if s.value_agreement is not None]
    return {
        "n_calls": len(scores),
        "status_agreement": _mean([float(s.status_agrees) for s in scores]),
        "exact_match": _mean([float(s.exact_match) for s in scores]),
        "key_jaccard": _mean(jaccards),
        "n_key_jaccard": len(jaccards),
        "value_agreement": _mean(agreements),
        "n_value_agreement": len(agreements),
        "format_errors": sum(s.format_error for s in scores),
    }


def record_entries(record: JsonMapping) -> list[JsonMapping]:
    """The world-model records stored in one run record (none if not measured)."""
    entries = _object(_object(record.get("trajectory")).get("extra")).get("world_model")
    return (
        [entry for entry in entries if isinstance(entry, dict)] if isinstance(entries, list) else []
    )


def aggregate_world_model(records: Sequence[JsonMapping]) -> JsonObject:
    """Per benchmark: ``overall`` and per-``subsets`` fidelity over stored run records
    (records without measurements, e.g. infrastructure errors, add nothing)."""
    by_benchmark: dict[str, dict[str, list[JsonMapping]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        entries = record_entries(record)
        if entries:
            by_benchmark[str(record.get("benchmark"))][str(record.get("subset"))].extend(entries)
    result: JsonObject = {}
    for benchmark, subsets in sorted(by_benchmark.items()):
        everything = [entry for entries in subsets.values() for entry in entries]
        result[benchmark] = {
            "overall": summarize(everything),
            "subsets": {name: summarize(entries) for name, entries in sorted(subsets.items())},
        }
    return result


def fidelity_dict(entry: JsonMapping) -> JsonObject:
    return asdict(call_fidelity(entry))
