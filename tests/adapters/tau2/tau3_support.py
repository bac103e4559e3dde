"""Shared pieces of the tau3 (tau2-bench v1.0.1) tests: the checkout, imperfect
scripted agents, and a deterministic NL judge behind the fake OpenAI server."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from support import shared_location, shared_path

from harness.adapters.tau2.oracle import ScriptPlayer, oracle_script
from harness.testing.fake_server import Reply
from harness.types import AssistantTurn, ToolCall

# tau2-bench v1.0.1 (source and data) in ../shared/vendor, as CI has it.
CHECKOUT = shared_location("tau2-bench")
BANKING_OFFLINE = {"retrieval": "bm25"}


def checkout_or_skip() -> Path:
    """The checkout; skipped where it is missing, a failure in CI (CI=true)."""
    return shared_path("tau2-bench")


def options_for(subset: str) -> dict:
    return dict(BANKING_OFFLINE) if subset.startswith("banking_knowledge") else {}


# --- imperfect agents ------------------------------------------------------------------

KINDS = (
    "oracle",
    "drop_write",
    "hallucinated",
    "wrong_argument",
    "extra_read",
    "malformed",
    "blank_arguments",
    "null",
)


def _call(
    turn_index: int, name: str, arguments: dict | None, raw: str | None = None
) -> AssistantTurn:
    text = raw if raw is not None else json.dumps(arguments)
    call = ToolCall.from_openai(
        {"id": f"imperfect_{turn_index}", "function": {"name": name, "arguments": text}}
    )
    return AssistantTurn(tool_calls=[call], finish_reason="tool_calls")


def _changed(arguments: dict) -> dict | None:
    """The arguments with their first string value altered (None: nothing to alter)."""
    for key, value in arguments.items():
        if isinstance(value, str) and value:
            return {**arguments, key: value + "_x"}
    return None


def imperfect_script(task, kind: str, write_tools: frozenset[str]) -> list[AssistantTurn] | None:
    """The oracle's script with one mistake of ``kind`` (None: the task has no place for it)."""
    criteria = task.evaluation_criteria
    actions = list((criteria.actions or []) if criteria is not None else [])
    writes = [a for a in actions if a.requestor == "assistant" and a.name in write_tools]
    if kind == "null":
        return [AssistantTurn(content="I am sorry, I cannot help with that.")]
    if kind == "drop_write":
        return oracle_script(task, {writes[-1].action_id}) if writes else None
    script = oracle_script(task)
    agent_steps = [i for i, t in enumerate(script) if t.tool_calls]
    if kind == "oracle":
        return script
    if kind == "hallucinated":  # a tool nobody has, then the gold
        return [_call(0, "refund_everything_now", {"reason": "goodwill"}), *script]
    if kind == "malformed":  # arguments that are not JSON, halfway through
        at = agent_steps[len(agent_steps) // 2] if agent_steps else 0
        return [*script[:at], _call(at, "get_user_details", None, '{"user_id": '), *script[at:]]
    if kind == "blank_arguments":  # "" for the arguments of the gold's next call, halfway
        at = agent_steps[len(agent_steps) // 2] if agent_steps else 0
        name = script[at].tool_calls[0].name if agent_steps else "get_user_details"
        return [*script[:at], _call(at, name, None, ""), *script[at:]]
    if kind == "wrong_argument":
        if not writes:
            return None
        target = writes[-1]
        for index, turn in enumerate(script):
            for call in turn.tool_calls:
                if call.name == target.name and call.arguments == dict(target.arguments):
                    changed = _changed(dict(target.arguments))
                    if changed is None:
                        return None
                    script[index] = _call(index, call.name, changed)
                    return script
        return None
    if kind == "extra_read":  # a read again, once more than the gold does
        reads = [a for a in actions if a.requestor == "assistant" and a.name not in write_tools]
        if not reads:
            return None
        extra = _call(0, reads[0].name, dict(reads[0].arguments))
        return [extra, *script]
    raise ValueError(kind)


# The imperfect agents play their scripts as the oracle plays the gold.
ScriptedAgent = ScriptPlayer


# --- a deterministic NL judge ------------------------------------------------------------


def judge_reply(request: dict) -> Reply:
    """tau2's NL judge answer format; each assertion met or not by a hash of the request,
    so that both pipelines get the same verdict only if they send the same request."""
    text = json.dumps(request.get("messages"), sort_keys=True)
    met = hashlib.sha256(text.encode()).digest()[0] % 4 != 0  # three in four met
    body = {"results": [{"expectedOutcome": "x", "reasoning": "scripted", "metExpectation": met}]}
    return Reply.text(json.dumps(body))
