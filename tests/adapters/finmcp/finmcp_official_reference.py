"""Test-only reference: FinMCP-Bench's official inference loop and evaluation script.

Re-implemented (our own code) from the official repository's
``DianJin-TIR/infer/inference_api.py`` and ``DianJin-TIR/eval/evaluation.py``
(aliyun/qwen-dianjin), to check the adapter against the official protocol
without the MCP server or the API client. What is reproduced, step by step:

Inference, per item: for every gold user message, the model is called on the
gold messages up to and including it; a reply's streamed tool calls are collected
into dicts whose ``name`` / ``arguments`` keys are set only from non-empty
pieces; every reply becomes a message that reads each call's ``id``, ``name`` and
``arguments`` (a missing key raises); while the reply has calls and the turn's
earlier calls number at most ``max_tool_num`` (20), every call's arguments are
decoded with ``json.loads`` (which may raise), the batch is executed, one tool
message per call is appended, and the model is called again. The prediction is
the system and user messages of the gold trajectory plus the model's messages of
each turn. ANY exception ends the item: its record becomes ``{"error": True,
"error_message": ..., "messages_pred": []}``.

Evaluation: records flagged ``error`` are dropped (``--drop_error_data``
defaults to true), records missing a key are skipped; per record, tool-name
multisets give TP/FP/FN and ``consist`` (ordered name lists equal); overall and
per level-1 scenario, difficulty and task: macro and micro P/R/F1 and the mean of
``consist``, rounded to 4 digits, and N.
"""

from __future__ import annotations

import copy
import json
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MAX_TOOL_NUM = 20


@dataclass
class StreamedCall:
    """One tool call as the server streamed it (pieces may be empty)."""

    id: str
    name: str
    arguments: str


@dataclass
class Reply:
    content: str | None = None
    calls: list[StreamedCall] = field(default_factory=list)


Policy = Callable[[list[dict[str, Any]]], Reply]
Executor = Callable[[list[tuple[str, Any]]], list[str]]


def collected(reply: Reply) -> list[dict[str, str]]:
    """The loop's per-call dicts: keys only for the pieces that were non-empty."""
    info: list[dict[str, str]] = []
    for call in reply.calls:
        entry: dict[str, str] = {}
        for key in ("id", "name", "arguments"):
            value = getattr(call, key)
            if value:
                entry[key] = value
        info.append(entry)
    return info


def reply_message(reply: Reply, info: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": reply.content or "",
        "tool_calls": [
            {
                "id": entry["id"],
                "type": "function",
                "function": {"name": entry["name"], "arguments": entry["arguments"]},
                "index": index,
            }
            for index, entry in enumerate(info)
        ]
        or None,
    }


def run_turn(
    history: list[dict[str, Any]], policy: Policy, execute: Executor, max_tool_num: int
) -> list[dict[str, Any]]:
    messages = list(history)
    reply = policy(messages)
    info = collected(reply)
    messages.append(reply_message(reply, info))
    calls_made = 0
    while info and calls_made <= max_tool_num:
        calls_made += len(info)
        batch = [(entry["name"], json.loads(entry["arguments"])) for entry in info]
        outputs = execute(batch)
        for entry, output in zip(info, outputs, strict=False):
            messages.append({"role": "tool", "content": output, "tool_call_id": entry["id"]})
        reply = policy(messages)
        info = collected(reply)
        messages.append(reply_message(reply, info))
    return messages


def infer_item(
    item: dict[str, Any], policy: Policy, execute: Executor, max_tool_num: int = MAX_TOOL_NUM
) -> dict[str, Any]:
    gold = item.get("messages", [])
    predicted: list[dict[str, Any]] = []
    for index, message in enumerate(gold):
        if message.get("role") in ("system", "user"):
            predicted.append(copy.deepcopy(message))
        if message.get("role") == "user":
            turn = run_turn(gold[: index + 1], policy, execute, max_tool_num)
            predicted.extend(turn[index + 1 :])
    return {**item, "messages_pred": predicted}


def infer_all(
    items: list[dict[str, Any]], policy: Policy, execute: Executor
) -> list[dict[str, Any]]:
    """The answer file: one record per item, failed items as error records."""
    results = []
    for item in items:
        try:
            results.append(infer_item(item, policy, execute))
        except Exception as exc:
            results.append({"error": True, "error_message": str(exc), "messages_pred": []})
    return results


# -- evaluation -------------------------------------------------------------------


def _names(messages: list[dict[str, Any]]) -> list[str]:
    return [
        str(call["function"]["name"])
        for message in messages
        if message.get("tool_calls")
        for call in message["tool_calls"]
    ]


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else 0


@dataclass(frozen=True)
class Row:
    level1: str
    difficulty: Any
    task: str
    tp: int
    fp: int
    fn: int
    consist: int


def _row(record: dict[str, Any]) -> Row:
    level1 = record["scenery"].split("-")[0].strip()
    difficulty = record["diff_level"]["level"]
    task = record.get("task", "any").replace(" ", "_")
    gold_list, predicted_list = _names(record["messages"]), _names(record["messages_pred"])
    gold, predicted = Counter(gold_list), Counter(predicted_list)
    return Row(
        level1,
        difficulty,
        task,
        tp=sum((predicted & gold).values()),
        fp=sum((predicted - gold).values()),
        fn=sum((gold - predicted).values()),
        consist=int(gold_list == predicted_list),
    )


def _metrics(rows: list[Row]) -> dict[str, float]:
    per_item = []
    for row in rows:
        p, r = _ratio(row.tp, row.tp + row.fp), _ratio(row.tp, row.tp + row.fn)
        per_item.append((p, r, _ratio(2 * p * r, p + r)))
    tp, fp, fn = (sum(getattr(row, k) for row in rows) for k in ("tp", "fp", "fn"))
    micro_p, micro_r = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    n = len(rows)

    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 4) if values else 0

    return {
        "macro_Precision": mean([v[0] for v in per_item]),
        "macro_Recall": mean([v[1] for v in per_item]),
        "macro_F1": mean([v[2] for v in per_item]),
        "micro_Precision": round(micro_p, 4),
        "micro_Recall": round(micro_r, 4),
        "micro_F1": round(_ratio(2 * micro_p * micro_r, micro_p + micro_r), 4),
        "N": n,
        "consist_mean": mean([row.consist for row in rows]),
    }


def evaluate(records: list[dict[str, Any]], drop_error_data: bool = True) -> dict[str, Any]:
    """``{"overall": metrics, "level1": {name: metrics}, "difficulty": ..., "task": ...}``"""
    if drop_error_data:
        records = [r for r in records if not r.get("error", False)]
    rows = []
    for record in records:
        try:
            rows.append(_row(record))
        except KeyError:
            continue
    groups: dict[str, dict[Any, list[Row]]] = {
        "level1": defaultdict(list),
        "difficulty": defaultdict(list),
        "task": defaultdict(list),
    }
    for row in rows:
        groups["level1"][row.level1].append(row)
        groups["difficulty"][row.difficulty].append(row)
        groups["task"][row.task].append(row)
    result: dict[str, Any] = {"overall": _metrics(rows)}
    for name, by_key in groups.items():
        result[name] = {key: _metrics(members) for key, members in by_key.items()}
    return result
