"""World-model fidelity: how well the rehearser predicts the real environment.

With ``measure_world_model`` on, ``PredictingEnvironment`` asks the rehearser for
every real tool call of the committed episode *before* the real call runs (so the
prediction cannot peek), then runs it; both go to
``trajectory.extra["world_model"]`` as ``{call, predicted, actual}``. The
prediction never reaches the agent.

Metrics per call (``call_fidelity``):
- status agreement: predicted and real result agree on error vs success (a
  prediction the rehearser did not format readably agrees with nothing);
- exact match: the same JSON value (or, for text, the same stripped text);
- key overlap: Jaccard index of the top-level keys, where both are JSON objects
  (0 where only one is an object; not applicable where neither is);
- value agreement: share of the shared top-level keys whose values are equal
  (applicable where both are objects sharing at least one key).
``summarize`` averages them over calls (each call weighs the same; the last two
over the calls where they apply) and ``aggregate_world_model`` does it per
benchmark and subset over a run's stored records.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any

from harness.models.base import ModelError
from harness.strategies.rehearser import (
    ConversationTap,
    Rehearser,
    call_dict,
    reply_text,
    result_status,
)
from harness.task.contract import Environment, WrappedEnvironment
from harness.types import ToolCall, ToolResult, ToolSchema


class PredictingEnvironment(WrappedEnvironment):
    """The real environment, with the rehearser's prediction recorded before each call."""

    def __init__(
        self,
        inner: Environment,
        rehearser: Rehearser,
        tap: ConversationTap,
        tools: list[ToolSchema],
    ):
        super().__init__(inner)
        self.rehearser = rehearser
        self.tap = tap
        self.default_tools = tools
        self.records: list[dict[str, Any]] = []
        # Earlier real calls and results of this episode: the rehearser's examples.
        self.examples: list[tuple[ToolCall, str]] = []
        self.failure: BaseException | None = None

    async def execute(self, call: ToolCall) -> ToolResult:
        try:
            prediction = await self.rehearser.predict(
                call,
                self.tap.tools or self.default_tools,
                self.tap.messages,
                reply_text(self.tap.reply),
                list(self.examples),
            )
        except ModelError as exc:
            # A measurement with holes is not a measurement: end the episode as an
            # infrastructure error (the real call below still runs for this step).
            self.failure = exc
            self.tap.abort = exc
            prediction = None
        try:
            actual = await self.inner.execute(call)
        except Exception as exc:
            actual = ToolResult(f"Error: {type(exc).__name__}: {exc}", True)
            self._record(call, prediction, actual)
            raise
        self._record(call, prediction, actual)
        self.examples.append((call, actual.content))
        return actual

    def _record(self, call: ToolCall, prediction: Any, actual: ToolResult) -> None:
        if prediction is None:
            return
        self.records.append(
            {
                "call": call_dict(call),
                "predicted": prediction.to_dict(),
                "actual": {
                    "content": actual.content,
                    "is_error": actual.is_error,
                    "status": result_status(actual.content, actual.is_error),
                },
            }
        )


# ---------------------------------------------------------------- metrics


def _value(content: Any) -> tuple[bool, Any]:
    """(is_json, value) of a result's text: strict JSON, else the stripped text."""
    text = content if isinstance(content, str) else json.dumps(content)
    try:
        return True, json.loads(text)
    except (json.JSONDecodeError, RecursionError, TypeError):
        return False, text.strip()


@dataclass
class CallFidelity:
    status_agrees: bool
    exact_match: bool
    key_jaccard: float | None
    value_agreement: float | None
    format_error: bool


def call_fidelity(entry: dict[str, Any]) -> CallFidelity:
    """The metrics of one ``{call, predicted, actual}`` record."""
    predicted, actual = entry.get("predicted") or {}, entry.get("actual") or {}
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


def summarize(entries: list[dict[str, Any]]) -> dict[str, Any]:
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


def record_entries(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The world-model records stored in one run record (none if not measured)."""
    trajectory = record.get("trajectory") or {}
    return list((trajectory.get("extra") or {}).get("world_model") or [])


def aggregate_world_model(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per benchmark: ``overall`` and per-``subsets`` fidelity over stored run records
    (records without measurements, e.g. infrastructure errors, add nothing)."""
    by_benchmark: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for record in records:
        entries = record_entries(record)
        if entries:
            by_benchmark[str(record.get("benchmark"))][str(record.get("subset"))].extend(entries)
    result = {}
    for benchmark, subsets in sorted(by_benchmark.items()):
        everything = [entry for entries in subsets.values() for entry in entries]
        result[benchmark] = {
            "overall": summarize(everything),
            "subsets": {name: summarize(entries) for name, entries in sorted(subsets.items())},
        }
    return result


def fidelity_dict(entry: dict[str, Any]) -> dict[str, Any]:
    return asdict(call_fidelity(entry))
