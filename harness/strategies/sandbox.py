"""Keeping rehearsals away from the real environment.

Rehearsals run in the rehearsal *phase* (harness/strategies/monitor.py). While it
is active:

- the strategy never calls ``sample.make_environment``: the actor, and any user
  simulator, talk to a ``SimulatedEnvironment`` whose every answer comes from the
  rehearser model;
- ``RealEnvironmentMonitor`` refuses to build a real environment and refuses and
  records any call reaching one (so a leak cannot stay silent), and counts real
  calls per phase for the cost record.

``EnvironmentGuard`` is the same protection as a wrapper around any sample's
``make_environment``, for tests that prove no adapter's real world is touched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.boundary.json_value import JsonObject, JsonValue
from harness.episode.tap import ConversationTap
from harness.models.base import ModelError
from harness.strategies.monitor import SandboxViolation, rehearsal_active
from harness.strategies.prompts import render_call
from harness.strategies.rehearser import Prediction, Rehearser, call_dict, reply_text
from harness.task.contract import Environment
from harness.types import ToolCall, ToolResult, ToolSchema


class EnvironmentGuard:
    """Wraps a ``make_environment`` so that building or touching its environments
    while a rehearsal is active raises and is recorded (for sandbox tests).

    The environments it builds are ``GuardedEnvironment`` proxies: every attribute
    (execute, final_state, or an adapter's own methods used by its user simulator)
    goes through the phase check first.
    """

    def __init__(self, make_environment: Callable[[], Environment]):
        self.make_environment = make_environment
        self.violations: list[str] = []
        self.built = 0
        self.calls = 0

    def record(self, what: str) -> None:
        if rehearsal_active():
            self.violations.append(what)
            raise SandboxViolation(f"real environment touched during rehearsal: {what}")

    def __call__(self) -> Environment:
        self.record("make_environment")
        self.built += 1
        return GuardedEnvironment(self.make_environment(), self)


class GuardedEnvironment(Environment):
    def __init__(self, inner: Environment, guard: EnvironmentGuard):
        self._inner = inner
        self._guard = guard

    async def execute(self, call: ToolCall) -> ToolResult:
        self._guard.record(f"execute {call.name}")
        self._guard.calls += 1
        return await self._inner.execute(call)

    def execute_user_call(self, call: ToolCall) -> ToolResult:
        self._guard.record(f"user call {call.name}")
        self._guard.calls += 1
        return self._inner.execute_user_call(call)

    def final_state(self) -> JsonValue:
        self._guard.record("final_state")
        return self._inner.final_state()

    @property  # how to handle the world, not a touch of it
    def large_state(self) -> bool:  # type: ignore[override]
        return self._inner.large_state

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes this proxy does not define: the adapter's own.
        if name.startswith("_"):
            raise AttributeError(name)
        self._guard.record(name)
        return getattr(self._inner, name)


class SimulatedEnvironment(Environment):
    """An imagined environment: every tool call is answered by the rehearser.

    Holds no state of its own; the state of the imagined world is the conversation,
    which the rehearser reads through the actor's ``ConversationTap``. Results of
    earlier calls of the same reply (not yet in the actor's context) are added.
    """

    def __init__(self, rehearser: Rehearser, tap: ConversationTap, tools: list[ToolSchema]):
        self.rehearser = rehearser
        self.tap = tap
        self.default_tools = tools
        self.log: list[JsonObject] = []
        self.failure: BaseException | None = None
        self._reply_seen: object | None = None
        self._same_reply: list[str] = []

    def _latest_reply(self) -> str:
        """The actor's latest reply, followed by the imagined results already given
        to its earlier calls (they are not in the actor's context yet)."""
        if self.tap.reply is not self._reply_seen:
            self._reply_seen = self.tap.reply
            self._same_reply = []
        text = reply_text(self.tap.reply)
        if self._same_reply:
            text += "\n\nResults already returned for earlier calls of this reply:\n"
            text += "\n".join(self._same_reply)
        return text

    async def execute(self, call: ToolCall) -> ToolResult:
        latest = self._latest_reply()
        tools = self.tap.tools or self.default_tools
        try:
            prediction = await self.rehearser.predict(
                call, tools, self.tap.messages, latest, examples=[]
            )
        except ModelError as exc:
            # The rehearser model is down: end the rehearsal as an infrastructure error.
            self.failure = exc
            self.tap.abort = exc
            prediction = Prediction("format_error", f"Error: {exc}")
        self.log.append({"call": call_dict(call), "prediction": prediction.to_dict()})
        self._same_reply.append(f"{render_call(call)}\n=> {prediction.content}")
        return prediction.to_result()

    def execute_user_call(self, call: ToolCall) -> ToolResult:
        """A *user's* own tool call (``Environment.execute_user_call``, synchronous).
        The rehearser cannot be asked synchronously from inside the episode, so the
        user's action gets a neutral placeholder, recorded as such."""
        text = f"(imagined: {call.name} was performed; its exact result is not simulated)"
        self.log.append(
            {"call": call_dict(call), "requestor": "user", "prediction": {"kind": "placeholder"}}
        )
        return ToolResult(text)

    def final_state(self) -> JsonObject:
        return {"simulated": True, "calls": len(self.log)}
