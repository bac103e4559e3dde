"""The one episode loop every benchmark and strategy runs through.

user turn -> model reply -> tool calls executed -> model reply ... -> next user turn.
Benchmark rules (step caps, single-step scoring, message caps) come from the
sample's ``EpisodeLimits``; who speaks for the user from its ``UserSource``.
Bad model output never raises here: unparseable or failing tool calls become
error results the model sees. Only a model call that keeps failing (ModelError)
leaves the loop, and the runner records it as an infrastructure error.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass

from harness.boundary.tool_budget import ENVIRONMENT_BUILD_TIMEOUT_S, run_tool_call
from harness.models.base import CONTEXT_OVERFLOW, ModelClient, ModelError
from harness.task.contract import Environment, EpisodeLimits, UserSource, UserTurn
from harness.types import (
    AssistantTurn,
    Message,
    SamplingParams,
    TerminationReason,
    ToolCall,
    ToolResult,
    ToolSchema,
    Trajectory,
)

# Tool outputs larger than this are cut (with a note) before the model sees them,
# so one runaway tool cannot blow the context or the record.
MAX_TOOL_OUTPUT_CHARS = 100_000


def sanitize_tool_output(content: object) -> str:
    """Any tool output as bounded, valid text."""
    if isinstance(content, bytes):
        text = content.decode("utf-8", errors="replace")
    elif isinstance(content, str):
        text = content
    else:
        text = str(content)
    # Lone surrogates cannot be encoded to UTF-8 (and so not stored); replace them.
    text = text.encode("utf-8", errors="replace").decode("utf-8")
    if len(text) > MAX_TOOL_OUTPUT_CHARS:
        cut = len(text) - MAX_TOOL_OUTPUT_CHARS
        text = text[:MAX_TOOL_OUTPUT_CHARS] + f"\n[output truncated: {cut} more characters]"
    return text


async def execute_call(env: Environment, call: ToolCall) -> ToolResult:
    """Run one tool call, turning every failure into an error result."""
    if call.parse_error is not None or call.arguments is None:
        reason = call.parse_error or "arguments are missing"
        return ToolResult(f"Error: could not parse the arguments of '{call.name}': {reason}", True)
    if not call.name:
        return ToolResult("Error: the tool call has no function name.", True)
    try:
        result = await env.execute(call)
    except Exception as exc:  # the environment must survive any model input
        return ToolResult(f"Error: {type(exc).__name__}: {exc}", True)
    return ToolResult(sanitize_tool_output(result.content), result.is_error)


@dataclass
class EpisodeInput:
    """What one episode runs on."""

    initial_messages: list[Message]
    tools: list[ToolSchema]
    environment: Environment
    user: UserSource | None
    limits: EpisodeLimits
    params: SamplingParams


class _Episode:
    def __init__(self, spec: EpisodeInput, model: ModelClient, role: str):
        self.spec = spec
        self.model = model
        self.role = role
        self.context: list[Message] = copy.deepcopy(spec.initial_messages)
        self.tools = spec.tools
        self.trajectory = Trajectory()
        self.started = time.monotonic()
        self.total_steps = 0

    def record(self, message: Message, visible: bool = True) -> None:
        self.trajectory.messages.append(message)
        if visible:
            self.context.append(message)

    def apply_user_turn(self, turn: UserTurn) -> None:
        if turn.usage is not None:
            self.trajectory.add_usage("user", turn.usage)
        if turn.tools is not None:
            self.tools = turn.tools
        if turn.history is not None:
            self.trajectory.context_resets.append(len(self.trajectory.messages))
            self.trajectory.reset_histories.append(copy.deepcopy(turn.history))
            self.context = copy.deepcopy(turn.history)
        for message in turn.hidden:
            self.record({**message, "hidden": True}, visible=False)
        for message in turn.messages:
            self.record(message)

    def limit_reached(self) -> str | None:
        limits = self.spec.limits
        if limits.max_steps is not None and self.total_steps >= limits.max_steps:
            return TerminationReason.MAX_STEPS
        if limits.max_messages is not None and len(self.trajectory.messages) >= limits.max_messages:
            return TerminationReason.MAX_MESSAGES
        if limits.wall_time_s is not None and time.monotonic() - self.started > limits.wall_time_s:
            return TerminationReason.WALL_TIME
        actor = self.trajectory.usage.get(self.role)
        if (
            limits.max_completion_tokens is not None
            and actor is not None
            and actor.completion_tokens >= limits.max_completion_tokens
        ):
            return TerminationReason.MAX_TOKENS
        if limits.stop_rule is not None:
            return limits.stop_rule(self.trajectory.messages)
        return None

    async def model_reply(self) -> AssistantTurn:
        turn = await self.model.complete(self.context, self.tools, self.spec.params)
        self.total_steps += 1
        for index, call in enumerate(turn.tool_calls):
            if not call.id:
                call.id = f"call_{self.total_steps}_{index}"
        self.trajectory.turns.append(turn)
        self.trajectory.add_usage(self.role, turn.usage)
        self.record(turn.to_message())
        return turn

    async def agent_turn(self) -> str | None:
        """Let the model act until it answers without tool calls. Returns a
        termination reason when a limit ends the episode, else None."""
        limits = self.spec.limits
        steps_this_turn = 0
        calls_this_turn = 0
        while True:
            reason = self.limit_reached()
            if reason:
                return reason
            try:
                turn = await self.model_reply()
            except ModelError as exc:
                if exc.kind == CONTEXT_OVERFLOW:
                    return TerminationReason.CONTEXT_OVERFLOW  # the model's limit: a scored failure
                raise
            steps_this_turn += 1
            if not turn.tool_calls or limits.single_step:
                return None
            if limits.reply_ends_turn is not None and limits.reply_ends_turn(turn):
                return None  # recorded, not executed; the turn (not the episode) ends
            cap = limits.max_tool_calls_per_turn
            if cap is not None and calls_this_turn > cap:
                return None  # over the per-turn cap: recorded, not executed; the turn ends
            calls_this_turn += len(turn.tool_calls)
            for call in turn.tool_calls:
                result = await execute_call(self.spec.environment, call)
                self.trajectory.tool_calls += 1
                self.trajectory.tool_errors += int(result.is_error)
                self.record(
                    {
                        "role": "tool",
                        "tool_call_id": call.id,
                        "name": call.name,
                        "content": result.content,
                        # What the environment said, for scoring that counts errors
                        # (never sent: the wire keeps only the protocol's keys).
                        "is_error": result.is_error,
                    }
                )
                if (
                    limits.max_tool_errors is not None
                    and self.trajectory.tool_errors >= limits.max_tool_errors
                ):
                    return TerminationReason.MAX_TOOL_ERRORS
            if (
                limits.max_steps_per_turn is not None
                and steps_this_turn >= limits.max_steps_per_turn
            ):
                return (
                    TerminationReason.MAX_STEPS_PER_TURN if limits.step_cap_ends_episode else None
                )

    async def run(self) -> Trajectory:
        user = self.spec.user
        if user is None:
            reason = await self.agent_turn()
            self.trajectory.termination = str(reason or TerminationReason.COMPLETED)
            return await self.finish()
        while True:
            reason = self.limit_reached()
            if reason:
                self.trajectory.termination = str(reason)
                break
            turn = await user.next_turn(self.trajectory.messages)
            if turn is None:
                self.trajectory.termination = TerminationReason.COMPLETED.value
                break
            self.apply_user_turn(turn)
            if turn.stop:
                self.trajectory.termination = turn.stop
                break
            reason = await self.agent_turn()
            if reason:
                self.trajectory.termination = str(reason)
                break
        return await self.finish()

    async def finish(self) -> Trajectory:
        self.trajectory.extra["wall_time_s"] = round(time.monotonic() - self.started, 4)
        environment = self.spec.environment
        try:
            if environment.large_state:  # hashing a whole database must not hold the loop
                self.trajectory.final_state = await run_tool_call(
                    environment.final_state, timeout_s=ENVIRONMENT_BUILD_TIMEOUT_S
                )
            else:
                self.trajectory.final_state = environment.final_state()
        except Exception as exc:  # a broken state view must not lose the episode
            self.trajectory.extra["final_state_error"] = f"{type(exc).__name__}: {exc}"
        return self.trajectory


async def run_episode(spec: EpisodeInput, model: ModelClient, role: str = "actor") -> Trajectory:
    """Run one episode to its end and return its trajectory."""
    return await _Episode(spec, model, role).run()
