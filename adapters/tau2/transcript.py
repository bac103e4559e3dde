"""A tau2 episode's transcript: parsing, tau2's termination rules, tau2 messages.

The transcript is the harness's list of OpenAI-style messages after the greeting.
The user's own tool calls (telecom) are recorded as hidden messages: a
``{"role": "user", "tool_calls": [...]}`` message followed by its tool results.
Tool results always follow the message that called them, in call order.

tau2's orchestrator counts *steps*, not messages: every agent or user message
is one step, and the environment's answer to all tool calls of one message is
one more step. After every step that does not go to the environment it stops
with ``max_steps`` once the count reaches the limit and with ``too_many_errors``
once the tool errors (agent's and user's) reach theirs; both checks also run
after a user's stop message and then override ``user_stop``. ``tau2_ending``
replays exactly these rules over a transcript.

A tool result is an error when its message says so (``is_error``, what the
environment answered: tau2's ``ToolMessage.error``, or the harness's refusal of a
call it could not run). Records written before messages carried the flag fall
back to the text: tau2 reports every failing call as ``f"Error: {exception}"``
(banking_knowledge's discoverable-tool wrapper also returns such texts as plain
results, which is why the flag comes first).

Two kinds of message make tau2's own code raise mid-simulation, so that its
runner, not its orchestrator, decides what follows (task_sets.py): a message
with neither text nor tool calls (``validate()``), and a tool call whose
arguments are not a JSON object (``json.loads`` in its ``generate``; blank text
``""`` included, which the harness's parser reads as ``{}``).
``tau2_ending`` reports the first such message as ``ABORTED`` with its cause;
with ``malformed_calls_continue`` a malformed call is instead an error result the
agent sees, and the episode goes on (the harness's lenient option).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from harness.types import Message, ToolCall

from .environment import tau2_cannot_parse, unsafe_call_reason
from .package import Tau2Package

ERROR_PREFIX = "Error: "
# tau2.user.base STOP / TRANSFER / OUT_OF_SCOPE (the user's end-of-conversation tokens).
STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
# tau2's TerminationReason values.
USER_STOP = "user_stop"
AGENT_STOP = "agent_stop"
MAX_STEPS = "max_steps"
TOO_MANY_ERRORS = "too_many_errors"
AGENT_ERROR = "agent_error"
USER_ERROR = "user_error"
INFRASTRUCTURE_ERROR = "infrastructure_error"
SCORED_TERMINATIONS = (USER_STOP, AGENT_STOP)
# Not a tau2 TerminationReason: tau2's own code raised on this message.
ABORTED = "aborted"
EMPTY_MESSAGE = "empty_message"
MALFORMED_ARGUMENTS = "malformed_arguments"


@dataclass
class CallRecord:
    """One tool call of a message and what the environment answered."""

    call: ToolCall
    requestor: str  # "assistant" or "user"
    result: str | None = None  # None when the episode ended before the answer
    result_is_error: bool | None = None  # the result message's flag (None: not recorded)

    @property
    def executed(self) -> bool:
        """Whether the environment ran the call (else the error came from the harness)."""
        call = self.call
        return (
            call.parse_error is None
            and call.arguments is not None
            and bool(call.name)
            and unsafe_call_reason(call.name, call.arguments) is None
        )

    @property
    def error(self) -> bool:
        if self.result is None:
            return False
        if self.result_is_error is not None:
            return self.result_is_error
        return self.result.startswith(ERROR_PREFIX)

    @property
    def malformed(self) -> bool:
        """Arguments tau2's ``generate`` raises on: not a JSON object, or blank."""
        return tau2_cannot_parse(self.call)


@dataclass
class Turn:
    """One message of the agent or of the user, with its tool calls."""

    role: str  # "assistant" or "user"
    content: str | None
    calls: list[CallRecord] = field(default_factory=list)

    @property
    def has_text(self) -> bool:
        return isinstance(self.content, str) and self.content.strip() != ""

    @property
    def is_tool_call(self) -> bool:
        return bool(self.calls)


def has_stop_token(text: str | None) -> bool:
    return isinstance(text, str) and any(token in text for token in STOP_TOKENS)


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts
        return "".join(str(p.get("text", "")) for p in value if isinstance(p, dict))
    return str(value)


def parse_transcript(
    messages: Sequence[Message], parse_call: Callable[[Message], ToolCall] = ToolCall.from_openai
) -> list[Turn]:
    """Group a transcript into turns, attaching tool results to their calls
    (each raw call parsed by ``parse_call``)."""
    turns: list[Turn] = []
    pending: list[CallRecord] = []
    for message in messages:
        role = message.get("role")
        if role == "tool":
            if pending:
                record = pending.pop(0)
                record.result = _text(message.get("content")) or ""
                flag = message.get("is_error")
                record.result_is_error = flag if isinstance(flag, bool) else None
            continue
        if role not in ("assistant", "user"):
            continue
        requestor = "assistant" if role == "assistant" else "user"
        calls = [
            CallRecord(parse_call(raw), requestor)
            for raw in message.get("tool_calls") or []
            if isinstance(raw, dict)
        ]
        turns.append(Turn(role, _text(message.get("content")), calls))
        pending = list(calls)
    return turns


@dataclass(frozen=True)
class Ending:
    """Where and why tau2's orchestrator would have ended the episode."""

    reason: str | None  # a TerminationReason value or ABORTED, None if it would go on
    steps: int
    errors: int
    turns: int  # turns up to and including the one that ended it (all if none did)
    cause: str | None = None  # for ABORTED: EMPTY_MESSAGE or MALFORMED_ARGUMENTS
    role: str | None = None  # for ABORTED: who sent the message ("assistant", "user")


def tau2_ending(
    turns: Sequence[Turn],
    max_steps: int,
    max_errors: int,
    malformed_calls_continue: bool = False,
) -> Ending:
    """Replay tau2's step and error counting; stop at the first termination or
    at the first message tau2's code would raise on (``ABORTED``)."""
    steps = 0
    errors = 0
    for count, turn in enumerate(turns, start=1):
        steps += 1
        reason: str | None = None
        if turn.is_tool_call:
            if not malformed_calls_continue and any(r.malformed for r in turn.calls):
                return Ending(ABORTED, steps, errors, count, MALFORMED_ARGUMENTS, turn.role)
            steps += 1  # the environment's answer to all calls of the message
            errors += sum(record.error for record in turn.calls)
        elif not turn.has_text:
            # tau2 rejects an empty message (message.validate() raises).
            return Ending(ABORTED, steps, errors, count, EMPTY_MESSAGE, turn.role)
        elif turn.role == "user" and has_stop_token(turn.content):
            reason = USER_STOP
        if steps >= max_steps:
            reason = MAX_STEPS
        if errors >= max_errors:
            reason = TOO_MANY_ERRORS
        if reason is not None:
            return Ending(reason, steps, errors, count)
    return Ending(None, steps, errors, len(turns))


class Tau2Message(Protocol):
    """What the adapter reads and sets of a tau2 message (one of its pydantic models)."""

    role: str
    content: str | None
    timestamp: str | None
    turn_idx: int | None


def executed_calls(turns: Sequence[Turn]) -> list[CallRecord]:
    """Every call the environment ran, in transcript order."""
    return [record for turn in turns for record in turn.calls if record.executed]


def to_tau2_messages(
    package: Tau2Package, greeting: str, turns: Sequence[Turn]
) -> list[Tau2Message]:
    """The transcript as tau2 messages of ``package``, greeting first, stamped in order.

    Calls the environment never ran (unparseable arguments, refused expressions)
    and calls without an answer are left out: tau2 has no message for them and
    they changed nothing.
    """
    message_module = package.module("data_model.message")
    AssistantMessage = message_module.AssistantMessage
    ToolMessage = message_module.ToolMessage
    UserMessage = message_module.UserMessage
    Tau2ToolCall = message_module.ToolCall

    start = datetime(2025, 1, 1)
    messages: list[Tau2Message] = [AssistantMessage(role="assistant", content=greeting, cost=0.0)]
    for turn in turns:
        kept = [r for r in turn.calls if r.executed and r.result is not None]
        tool_calls = [
            Tau2ToolCall(
                id=r.call.id, name=r.call.name, arguments=r.call.arguments, requestor=r.requestor
            )
            for r in kept
        ]
        cls = AssistantMessage if turn.role == "assistant" else UserMessage
        messages.append(cls(role=turn.role, content=turn.content, tool_calls=tool_calls or None))
        for record in kept:
            messages.append(
                ToolMessage(
                    id=record.call.id,
                    role="tool",
                    content=record.result,
                    requestor=record.requestor,
                    error=record.error,
                )
            )
    for index, message in enumerate(messages):
        message.timestamp = (start + timedelta(milliseconds=index)).isoformat()
        message.turn_idx = index
    return messages
