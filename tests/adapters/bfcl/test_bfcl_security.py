"""Hostile model output on a BFCL multi-turn environment: nothing runs, the
episode goes on, the model sees error strings."""

from __future__ import annotations

import asyncio
import json

from harness.adapters.bfcl import BFCLAdapter
from harness.models.base import ScriptedClient
from harness.models.prompt_mode import PromptModeClient
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Services
from harness.types import AssistantTurn, SamplingParams, ToolCall, Trajectory

ADAPTER = BFCLAdapter()
MEGABYTE = 1_000_000


def run(sample, model) -> Trajectory:
    trajectory = asyncio.run(PlainStrategy().run(sample, model, Services(), SamplingParams()))
    return Trajectory.from_dict(trajectory.to_dict())


def hostile_calls(marker) -> list[ToolCall]:
    command = f"__import__('os').system('touch {marker}')"
    calls = [
        (command, {}),
        ("eval", {"source": command}),
        ("exec", {"source": command}),
        ("__init__", {}),
        ("__class__", {}),
        ("_load_scenario", {"scenario": {}, "long_context": True}),
        ("_api_description", {}),
        ("GorillaFileSystem.ls", {}),
        ("ls.__globals__", {}),
        ("ls", {"a": True, "__class__": 1}),
        ("cd", {"folder": 123}),
        ("cd", {"folder": ["a", {"b": None}]}),
        ("touch", {"file_name": command}),  # a plain string: stored, never run
        ("echo", {"content": "x" * MEGABYTE, "file_name": "big.txt"}),
        ("post_tweet", {"content": "\ud800 lone surrogate", "tags": ["\udfff"]}),
    ]
    result = [
        ToolCall(f"h{i}", name, args, json.dumps(args)) for i, (name, args) in enumerate(calls)
    ]
    return result


def undecodable_reply() -> AssistantTurn:
    bad = ToolCall.from_openai({"id": "bad", "function": {"name": "ls", "arguments": "{oops"}})
    return AssistantTurn(tool_calls=[ToolCall("ok", "pwd", {}, "{}"), bad])


def test_hostile_tool_calls_in_fc_mode(tmp_path):
    marker = tmp_path / "pwned"
    sample = ADAPTER.load("multi_turn_base")[0]
    turns = [
        AssistantTurn(tool_calls=hostile_calls(marker)),
        undecodable_reply(),  # as in BFCL: ends the turn, none of its calls runs
        AssistantTurn(content="sorry"),
    ]
    trajectory = run(sample, ScriptedClient(turns))
    assert not marker.exists()
    assert trajectory.termination == "completed"  # every later turn still happened
    users = [m for m in trajectory.messages if m["role"] == "user"]
    assert len(users) == len(sample.gold.turns)
    results = {m["tool_call_id"]: m["content"] for m in trajectory.messages if m["role"] == "tool"}
    for call_id in ["h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8"]:
        assert results[call_id].startswith("Error during execution: name "), results[call_id]
    assert results["h9"].startswith("Error during execution:")  # unexpected keyword
    assert "bad" not in results and "ok" not in results
    assert len(results["h13"]) < 200  # the 1 MB argument is not echoed back
    # Scoring re-executes the same calls through the same dispatcher.
    result = asyncio.run(ADAPTER.score(sample, trajectory, Services()))
    assert not result.passed
    assert not marker.exists()
    json.dumps(trajectory.to_dict())  # the record stays serialisable


def test_hostile_text_in_prompt_mode(tmp_path):
    marker = tmp_path / "pwned"
    command = f"__import__('os').system('touch {marker}')"
    texts = [
        f"[{command}]",
        f"[ls(a={command})]",
        f"[(lambda: {command})()]",
        "[ls.__globals__()]",
        "[GorillaFileSystem.__init__()]",
        "[_load_scenario(scenario='x', long_context=True)]",
        f"[touch(file_name={command!r})]",
        "[cd(folder='x' * 10)]",
        f"[echo(content='{'y' * MEGABYTE}', file_name='big.txt')]",
        "[" * 5000 + "]" * 5000,
        "\udcff\x00 not utf-8 text",
    ]
    sample = ADAPTER.load("multi_turn_base", options={"mode": "prompt"})[0]
    seen_calls: dict[str, list[str]] = {}
    for text in texts:
        replies = [AssistantTurn(content=text)] + [AssistantTurn(content="done")] * 10
        inner = ScriptedClient(replies)
        trajectory = run(sample, PromptModeClient(inner, ADAPTER.prompt_format(sample)))
        assert not marker.exists()
        assert trajectory.termination == "completed"
        assert len(inner.calls) >= len(sample.gold.turns)  # the episode went on
        seen_calls[text[:40]] = [call.name for turn in trajectory.turns for call in turn.tool_calls]
        results = [m["content"] for m in trajectory.messages if m["role"] == "tool"]
        if "_load_scenario" in text:
            assert results == ["Error during execution: name '_load_scenario' is not defined"]
        result = asyncio.run(ADAPTER.score(sample, trajectory, Services()))
        assert not result.passed
        assert not marker.exists()
    # Names are read as BFCL's decoder reads them (a callee that is not a name
    # chain leaves its last attribute, or nothing); none of them ran anything.
    read = {name for names in seen_calls.values() for name in names}
    assert read == {
        "system",
        "ls",
        "",
        "ls.__globals__",
        "GorillaFileSystem.__init__",
        "_load_scenario",
        "touch",
        "cd",
        "echo",
    }
