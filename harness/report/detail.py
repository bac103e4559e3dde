"""What a sample page shows of one record: ``sample_detail(record, inputs)``.

The report and any other page over run folders draw a sample from this one JSON
value (``assets/sample.js``, ``SampleView.render``): the sample's input as the
run kept it (first messages, tools, gold; harness.store.inputs), the transcript,
the score with its plain-language explanation, counts that agree with the
transcript, and usage and costs only where they are not all zero.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.boundary.json_value import count_field
from harness.store.inputs import SampleInput
from harness.store.records import Record

INPUT_NOT_KEPT = "input not kept by this run"


def without_zeros(value: object) -> object:
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


def transcript_counts(trajectory: Mapping[str, object]) -> dict[str, int]:
    """Counts read off the transcript itself, so that the summary agrees with it:
    a single-turn benchmark records its calls without running them."""
    listed = trajectory.get("messages") or []
    if not isinstance(listed, (list, tuple)):
        raise TypeError(f"the transcript's messages are not a list: {listed!r}")
    messages = [m for m in listed if isinstance(m, dict)]
    replies = [m for m in messages if m.get("role") == "assistant"]
    calls = sum(len(m.get("tool_calls") or []) for m in replies)
    return {
        "model replies": len(replies),
        "tool calls made": calls,
        "tool calls run": count_field(trajectory.get("tool_calls")),
        "tool errors": count_field(trajectory.get("tool_errors")),
    }


def _trajectory(trajectory: Mapping[str, object]) -> dict[str, object]:
    shown = dict(trajectory)
    usage = without_zeros(shown.get("usage"))
    shown["usage"] = usage
    held = shown.get("extra") or {}
    if not isinstance(held, Mapping):
        raise TypeError(f"the trajectory's extra is not an object: {held!r}")
    extra = dict(held)
    if "costs" in extra:
        costs = without_zeros(extra["costs"])
        if (
            costs is None
            or isinstance(costs, dict)
            and set(costs) == {"committed", "total"}
            and costs["committed"] == costs["total"]
        ):
            # Nothing beyond the committed episode: the usage above says it all.
            extra.pop("costs")
        else:
            extra["costs"] = costs
    shown["extra"] = extra
    return shown


def _input(sample_input: SampleInput | None) -> dict[str, object] | None:
    if sample_input is None:
        return None
    return {
        "messages": sample_input.messages,
        "tools": sample_input.tools,
        "gold": sample_input.gold,
    }


def sample_detail(record: Record, sample_input: SampleInput | None) -> dict[str, object]:
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
