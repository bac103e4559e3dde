"""A record keeps each model reply once (harness/store/replies.py): a reply's message
points at its turn, a tool call keeps one form of its arguments where the other
follows from it, and every reader gets the full form back. Records written
before (every reply in full, three times) still read and regrade."""

from __future__ import annotations

import json
import re

import pytest

from harness import RunConfig, run_suite
from harness.boundary.sanitise import dumps_safe
from harness.cli import main
from harness.errors import ConfigError
from harness.models.base import ModelClient
from harness.store.records import Record
from harness.store.replies import compact_record, expand_record
from harness.store.run_store import RunStore, read_records, record_line
from harness.types import AssistantTurn, ToolCall, Trajectory, Usage

# 10 MB of code: quotes and newlines, which JSON escapes (each text form of the
# arguments is escaped once more inside the record's line).
TEN_MB = ('print("a line of code")\n' * 420_000)[:10_000_000]
LIMIT = 15_000_000


def target_of(messages) -> int:
    return int(re.search(r"Reach (\d+)", messages[-1]["content"]).group(1))


class LongWriter(ModelClient):
    """Solves a toy task with one call that also carries 10 MB of code."""

    name = "long-writer"

    def __init__(self, verbatim: bool):
        self.verbatim = verbatim  # arguments as the model's own text, else built in code

    async def complete(self, messages, tools, params) -> AssistantTurn:
        if messages[-1]["role"] == "tool":
            return AssistantTurn(content="Reached it.", finish_reason="stop")
        arguments = {"n": target_of(messages), "note": TEN_MB}
        if self.verbatim:
            # Spaced as no JSON writer spaces it: only the text gives the text back.
            text = "{ " + json.dumps(arguments)[1:-1] + " }"
            entry = {"id": "c1", "function": {"name": "add", "arguments": text}}
            call = ToolCall.from_openai(entry)
        else:
            call = ToolCall("c1", "add", arguments)
        return AssistantTurn(tool_calls=[call], usage=Usage(calls=1))


@pytest.mark.parametrize("verbatim", [False, True], ids=["built-in-code", "models-own-text"])
def test_a_10_mb_tool_argument_makes_a_record_under_15_mb(toy_suite, tmp_path, verbatim):
    out = tmp_path / "run"
    model = LongWriter(verbatim)
    config = RunConfig(suite=str(toy_suite), model=model, out=out, limit=1, progress=False)
    summary = run_suite(config)
    assert summary.ok == summary.ran == 2
    lines = (out / "samples.jsonl").read_bytes().splitlines()
    assert len(lines) == 2
    # Written in full, the reply made 38 MB (its arguments as an object, and twice
    # as text escaped twice); once, 11 MB (the object) or 13 MB (the model's text).
    assert all(len(line) < LIMIT for line in lines), [len(line) for line in lines]
    for record in read_records(out / "samples.jsonl").latest.values():
        trajectory = record["trajectory"]
        call = trajectory["turns"][0]["tool_calls"][0]
        assert call["arguments"]["note"] == TEN_MB
        assert json.loads(call["raw_arguments"]) == call["arguments"]
        sent = trajectory["messages"][0]["tool_calls"][0]["function"]["arguments"]
        assert sent == call["raw_arguments"]
        assert record["score"]["passed"] is True
    # A regrade reads the same replies and gives the same scores.
    assert main(["score", str(out)]) == 0
    regrade = json.loads((out / "scores.json").read_text())["regrade"]
    assert regrade == {"regraded": 2, "changed": 0, "failed": 0}


def trajectory_of(*turns: AssistantTurn, extra_messages=()) -> Trajectory:
    """A trajectory as the episode loop records it: each reply's message, then a
    tool result for each call."""
    trajectory = Trajectory()
    for turn in turns:
        trajectory.turns.append(turn)
        trajectory.messages.append(turn.to_message())
        for call in turn.tool_calls:
            result = {"role": "tool", "tool_call_id": call.id, "content": "ok"}
            trajectory.messages.append(result)
    trajectory.messages.extend(extra_messages)
    return trajectory


def record_of(trajectory: Trajectory) -> Record:
    return Record("b/s/1#0", "b", "s", "1", 0, trajectory=trajectory.to_dict())


def written_and_read(record: Record, tmp_path) -> tuple[dict, dict]:
    """(the record's line as stored, the record read back through the store)."""
    store = RunStore(tmp_path / "run")
    store.root.mkdir()
    store.open_for_append()
    store.append(record)
    store.close()
    line = store.samples_path.read_text(encoding="utf-8").splitlines()[0]
    return json.loads(line), store.records()["b/s/1#0"]


def openai_call(call_id: str, text: str) -> ToolCall:
    return ToolCall.from_openai({"id": call_id, "function": {"name": "f", "arguments": text}})


def test_each_form_of_the_arguments_is_stored_once_and_read_back_in_full(tmp_path):
    turns = [
        # Built in code: the object alone, its text written by json.dumps.
        AssistantTurn(tool_calls=[ToolCall("a", "f", {"x": 1, "é": "ü"})]),
        # OpenAI's text, without spaces: the object alone.
        AssistantTurn(content="two", tool_calls=[openai_call("b", '{"x":1.0,"y":[true]}')]),
        # The model's own spacing: the text alone.
        AssistantTurn(tool_calls=[openai_call("c", '{ "x" : 1 }')], reasoning="why"),
        # Not an object: both stay (there is nothing to parse back).
        AssistantTurn(tool_calls=[openai_call("d", "[1, 2]")]),
        AssistantTurn(content="done", finish_reason="stop"),
    ]
    record = record_of(trajectory_of(*turns))
    stored, read = written_and_read(record, tmp_path)
    assert read == record.to_dict()
    calls = [turn["tool_calls"] for turn in stored["trajectory"]["turns"]]
    assert calls[0][0]["raw_arguments_as"] == "json" and "raw_arguments" not in calls[0][0]
    assert calls[1][0]["raw_arguments_as"] == "json-compact"
    assert "arguments" not in calls[2][0] and calls[2][0]["raw_arguments"] == '{ "x" : 1 }'
    assert calls[3][0]["arguments"] is None and calls[3][0]["raw_arguments"] == "[1, 2]"
    replies = [m for m in stored["trajectory"]["messages"] if m["role"] == "assistant"]
    assert replies == [{"role": "assistant", "turn": index} for index in range(5)]


def test_a_message_that_is_not_exactly_a_reply_is_kept_whole(tmp_path):
    turn = AssistantTurn(content="hi", tool_calls=[ToolCall("a", "f", {"x": 1})])
    trajectory = trajectory_of(turn)
    trajectory.messages[0] = {**trajectory.messages[0], "hidden": True}
    # An assistant message no turn produced (a given history's, say).
    trajectory.messages.append({"role": "assistant", "content": "hi"})
    record = record_of(trajectory)
    stored, read = written_and_read(record, tmp_path)
    assert stored["trajectory"]["messages"] == record.to_dict()["trajectory"]["messages"]
    assert read == record.to_dict()


def test_writing_leaves_the_record_in_memory_as_it_was():
    record = record_of(trajectory_of(AssistantTurn(tool_calls=[ToolCall("a", "f", {"x": 1})])))
    before = json.dumps(record.to_dict())
    data = record.to_dict()
    compact = compact_record(data)
    assert compact != data and json.dumps(data) == before


def test_a_pointer_to_no_turn_is_named_as_damage(tmp_path):
    record = record_of(trajectory_of(AssistantTurn(content="hi")))
    line = json.loads(record_line(record))
    line["trajectory"]["messages"][0]["turn"] = 7
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(ConfigError, match=r"line 1: trajectory.messages\[0\].turn: 7, not the"):
        read_records(path)
    # Without the conversation (what aggregation reads) the record still reads.
    assert read_records(path, conversation=False).latest


def test_the_record_view_reads_the_compact_form():
    from harness.view.runs import parse_record

    turn = AssistantTurn(tool_calls=[ToolCall("a", "f", {"x": 1})])
    record = record_of(trajectory_of(turn))
    read = parse_record(record_line(record).encode())
    assert read is not None and read.to_dict() == record.to_dict()


# A record as the harness wrote it before replies were kept once (a toy oracle run).
OLD_LINE = (
    '{"key": "toy/easy/easy-0#0", "benchmark": "toy", "subset": "easy", "sample_id": "easy-0", '
    '"trial": 0, "seed": 0, "status": "ok", "error": null, "score": {"passed": true, '
    '"reward": 1.0, "progress": null, "tool_tp": null, "tool_fp": null, "tool_fn": null, '
    '"details": {"total": 1}}, "metadata": {"target": 1}, "load_options": {}, '
    '"started_at": "2026-12-05T11:35:12+00:00", "latency_s": 0.0055, "trajectory": '
    '{"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", '
    '"type": "function", "function": {"name": "add", "arguments": "{\\"n\\": 1}"}}]}, '
    '{"role": "tool", "tool_call_id": "c1", "name": "add", "content": "1", "is_error": false}, '
    '{"role": "assistant", "content": "Done."}], "turns": [{"content": null, "tool_calls": '
    '[{"id": "c1", "name": "add", "arguments": {"n": 1}, "raw_arguments": "{\\"n\\": 1}", '
    '"parse_error": null}], "reasoning": null, "usage": {"calls": 1, "prompt_tokens": 0, '
    '"completion_tokens": 0, "cached_calls": 0}, "finish_reason": null}, {"content": "Done.", '
    '"tool_calls": [], "reasoning": null, "usage": {"calls": 1, "prompt_tokens": 0, '
    '"completion_tokens": 0, "cached_calls": 0}, "finish_reason": "stop"}], '
    '"termination": "completed", "tool_calls": 1, "tool_errors": 0, "usage": {"actor": '
    '{"calls": 2, "prompt_tokens": 0, "completion_tokens": 0, "cached_calls": 0}}, '
    '"context_resets": [], "reset_histories": [], "final_state": {"total": 1}, '
    '"extra": {"wall_time_s": 0.0001}}}'
)


def test_a_record_written_before_reads_as_it_was_and_is_then_stored_once():
    old = json.loads(OLD_LINE)
    read = Record.from_dict(json.loads(OLD_LINE))
    assert read.to_dict() == old
    rewritten = json.loads(record_line(read))
    assert rewritten["trajectory"]["messages"][0] == {"role": "assistant", "turn": 0}
    assert expand_record(rewritten) is None and rewritten == old


def test_a_run_written_before_regrades_to_the_same_scores(toy_suite, tmp_path):
    out = tmp_path / "run"
    assert main(["run", "--suite", str(toy_suite), "--model", "oracle", "--quiet",
                 "--out", str(out)]) == 0  # fmt: skip
    board = (out / "leaderboard.md").read_bytes()
    records = RunStore(out).load_records()
    # Every line as the harness wrote it before: each reply in full.
    old_lines = [dumps_safe(record.to_dict(), default=str) for record in records.values()]
    assert all('"turn": ' not in line and '"raw_arguments": ' in line for line in old_lines)
    (out / "samples.jsonl").write_text("".join(line + "\n" for line in old_lines))
    assert RunStore(out).records() == {key: r.to_dict() for key, r in records.items()}
    assert main(["score", str(out)]) == 0
    regrade = json.loads((out / "scores.json").read_text())["regrade"]
    assert regrade == {"regraded": len(records), "changed": 0, "failed": 0}
    assert (out / "leaderboard.md").read_bytes() == board
