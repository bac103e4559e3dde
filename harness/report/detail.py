"""What a sample page shows of one record: ``sample_detail(record, inputs)``.

The report and any other page over run folders draw a sample from this one JSON
value (``assets/sample.js``, ``SampleView.render``): the sample's input as the
run kept it (first messages, tools, gold; harness.store.inputs), the transcript,
the score with its plain-language explanation, counts that agree with the
transcript, and usage and costs only where they are not all zero.
"""

from __future__ import annotations

from typing import Any

from harness.store.inputs import SampleInput
from harness.store.records import Record

INPUT_NOT_KEPT = "input not kept by this run"


def without_zeros(value: Any) -> Any:
    """``value`` without its numbers that are 0 (and the objects left empty by
    that); None when nothing is left: usage and costs shown only where they count."""
    if isinstance(value, dict):
        kept = {k: v for k, v in ((k, without_zeros(v)) for k, v in value.items()) if v is not None}
        return kept or None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value or None
    return value


def transcript_counts(trajectory: dict[str, Any]) -> dict[str, int]:
    """Counts read off the transcript itself, so that the summary agrees with it:
    a single-turn benchmark records its calls without running them."""
    messages = [m for m in trajectory.get("messages") or [] if isinstance(m, dict)]
    replies = [m for m in messages if m.get("role") == "assistant"]
    calls = sum(len(m.get("tool_calls") or []) for m in replies)
    return {
        "model replies": len(replies),
        "tool calls made": calls,
        "tool calls run": int(trajectory.get("tool_calls") or 0),
        "tool errors": int(trajectory.get("tool_errors") or 0),
    }


def _trajectory(trajectory: dict[str, Any]) -> dict[str, Any]:
    shown = dict(trajectory)
    usage = without_zeros(shown.get("usage"))
    shown["usage"] = usage
    extra = dict(shown.get("extra") or {})
    if "costs" in extra:
        costs = without_zeros(extra["costs"])
        if (
            costs is None
            or set(costs) == {"committed", "total"}
            and costs["committed"] == costs["total"]
        ):
            # Nothing beyond the committed episode: the usage above says it all.
            extra.pop("costs")
        else:
            extra["costs"] = costs
    shown["extra"] = extra
    return shown


def _input(sample_input: SampleInput | None) -> dict[str, Any] | None:
    if sample_input is None:
        return None
    return {
        "messages": sample_input.messages,
        "tools": sample_input.tools,
        "gold": sample_input.gold,
    }


def sample_detail(record: Record, sample_input: SampleInput | None) -> dict[str, Any]:
    """What a sample page shows of one record (its run and key travel apart):
    everything but bulky load options, with its input when the run kept it."""
    trajectory = record.trajectory or {}
    score = record.score or {}
    found = score.get("details")
    details = found if isinstance(found, dict) else {}
    return {
        "status": record.status,
        "error": record.error,
        "score": record.score,
        "explanation": score.get("explanation") or "",
        "error_code": details.get("error_type") if details else None,
        "score_error": record.score_error,
        "metadata": record.metadata,
        "latency_s": record.latency_s,
        "seed": record.seed,
        "counts": transcript_counts(trajectory),
        "input": _input(sample_input),
        "input_note": "" if sample_input is not None else INPUT_NOT_KEPT,
        "trajectory": _trajectory(trajectory),
    }
