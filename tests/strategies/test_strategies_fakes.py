"""Fakes shared by the strategy tests: a model that answers by the role its prompt
gives it (actor, rehearser, critic, distiller, rehearser-as-user), in process or
behind the fake OpenAI-compatible server, and a tiny benchmark whose orders need
an id prefix. The tests at the bottom check the fakes themselves."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from harness.models.base import ModelClient
from harness.strategies import prompts
from harness.task.contract import (
    Adapter,
    BenchmarkResult,
    Environment,
    EpisodeLimits,
    RecordView,
    Sample,
    ScriptedTurns,
    SubsetResult,
    UserSource,
    UserTurn,
)
from harness.task.registry import register_adapter
from harness.testing.fake_server import Reply
from harness.types import AssistantTurn, Message, Score, ToolCall, ToolResult, Usage

Handler = Callable[[list[Message], list[dict[str, Any]]], AssistantTurn | str] | ModelClient


def role_of(messages: list[Message]) -> str:
    """Which part a prompt asks the model to play."""
    first = messages[0] if messages else {}
    system = first.get("content") if first.get("role") == "system" else ""
    system = system if isinstance(system, str) else ""
    if system == prompts.SIMULATOR_SYSTEM:
        return "rehearser"
    if system == prompts.CRITIC_SYSTEM:
        return "critic"
    if system.startswith(prompts.DISTIL_SYSTEM.split("{")[0]):
        return "distil"
    if system == prompts.USER_ROLE_SYSTEM:
        return "user"
    return "actor"


def text_of(messages: list[Message]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages)


def fake_usage(messages: list[Message], turn: AssistantTurn) -> Usage:
    """Deterministic token counts: four characters a token."""
    completion = len(turn.content or "") + sum(len(c.raw_arguments) for c in turn.tool_calls)
    return Usage(
        calls=1, prompt_tokens=len(text_of(messages)) // 4, completion_tokens=completion // 4
    )


class RoleModel(ModelClient):
    """Answers through one handler per role; records every prompt by role."""

    def __init__(self, name: str = "role-model", **handlers: Handler):
        self.name = name
        self.handlers = handlers
        self.calls: dict[str, list[list[Message]]] = defaultdict(list)
        self.params: dict[str, list[Any]] = defaultdict(list)

    def answer(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantTurn:
        role = role_of(messages)
        self.calls[role].append(list(messages))
        handler = self.handlers.get(role)
        if handler is None:
            raise AssertionError(f"{self.name} was asked to play the {role}")
        out = handler(messages, tools)
        turn = AssistantTurn(content=out) if isinstance(out, str) else out
        turn.usage = fake_usage(messages, turn)
        return turn

    async def complete(self, messages, tools, params) -> AssistantTurn:
        role = role_of(messages)
        self.params[role].append(params)
        await asyncio.sleep(0)  # let concurrent rehearsals interleave
        handler = self.handlers.get(role)
        if isinstance(handler, ModelClient):  # e.g. an adapter's oracle as the actor
            self.calls[role].append(list(messages))
            turn = await handler.complete(messages, tools, params)
            turn.usage = fake_usage(messages, turn)
            return turn
        return self.answer(messages, tools)


def server_handler(model: RoleModel) -> Callable[[dict[str, Any]], Reply]:
    """The same role model behind the fake OpenAI-compatible server."""

    def handle(request: dict[str, Any]) -> Reply:
        turn = model.answer(request.get("messages") or [], request.get("tools") or [])
        if turn.tool_calls:
            calls = [
                (c.name, c.arguments if c.arguments is not None else c.raw_arguments)
                for c in turn.tool_calls
            ]
            return Reply.calls(*calls, content=turn.content)
        return Reply.text(turn.content or "")

    return handle


def result(value: Any) -> str:
    return f"{prompts.RESULT_OPEN}{json.dumps(value)}{prompts.RESULT_CLOSE}"


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id="", name=name, arguments=arguments, raw_arguments=json.dumps(arguments))


def tool_results(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.get("role") == "tool"]


# ---------------------------------------------------------------- the orders benchmark

ORDER = "#W100"
CANCEL_TOOL = {
    "type": "function",
    "function": {
        "name": "cancel_order",
        "description": "Cancel a pending order.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string", "description": "The order id."}},
            "required": ["order_id"],
        },
    },
}
MEMORY_HINT = "prefix"  # the distilled memory mentions it; the actor looks for it


class OrdersEnvironment(Environment):
    """One pending order, ``#W100``; cancelling it is the task."""

    def __init__(self) -> None:
        self.cancelled: list[str] = []
        self.calls = 0

    async def execute(self, call: ToolCall) -> ToolResult:
        self.calls += 1
        order_id = (call.arguments or {}).get("order_id")
        if call.name != "cancel_order":
            return ToolResult(f"Error: unknown tool {call.name}", True)
        if order_id != ORDER:
            return ToolResult(json.dumps({"error": f"Order {order_id} not found"}), True)
        self.cancelled.append(order_id)
        return ToolResult(json.dumps({"order_id": order_id, "status": "cancelled"}))

    def final_state(self) -> dict[str, Any]:
        return {"cancelled": list(self.cancelled)}


def orders_sample(
    user_in_source: bool = False, limits: EpisodeLimits | None = None, benchmark: str = "orders"
) -> Sample:
    """The task; with ``user_in_source`` the request arrives through the user side."""
    request = {"role": "user", "content": "Please cancel my order W100."}
    system = {"role": "system", "content": "You are a shop assistant."}
    if user_in_source:
        initial = [system]

        def make_user(env: Environment, services: Any) -> UserSource:
            return ScriptedTurns([UserTurn(messages=[request])])

    else:
        initial = [system, request]
        make_user = None
    return Sample(
        id="o1",
        benchmark=benchmark,
        subset="cancel",
        tools=[CANCEL_TOOL],
        initial_messages=initial,
        make_environment=OrdersEnvironment,
        make_user=make_user,
        limits=limits or EpisodeLimits(max_steps=6),
    )


def orders_actor(messages: list[Message], tools: list[dict[str, Any]]) -> AssistantTurn | str:
    """Cancels once, with the prefix only when its context carries the lesson."""
    if tool_results(messages):
        return "I have tried to cancel the order."
    knows = MEMORY_HINT in text_of([m for m in messages if m.get("role") in ("system", "user")])
    return AssistantTurn(tool_calls=[call("cancel_order", order_id=ORDER if knows else "W100")])


def orders_rehearser(messages: list[Message], tools: list[dict[str, Any]]) -> str:
    """Imagines the shop: ids without '#' are not found."""
    prompt = messages[-1]["content"]
    the_call = prompt.split("## The call to execute")[-1]
    if '"#W100"' in the_call:
        return result({"order_id": ORDER, "status": "cancelled"})
    return result({"error": "Order W100 not found"})


def orders_critic(messages: list[Message], tools: list[dict[str, Any]]) -> str:
    if "not found" in messages[-1]["content"]:
        return "cancel_order failed: order ids need the '#' prefix (write #W100, not W100)."
    return "The order was cancelled; keep the same steps."


def orders_distil(messages: list[Message], tools: list[dict[str, Any]]) -> str:
    """Keeps the lesson when a critique found one."""
    if "'#'" in messages[-1]["content"]:
        memory = f"Order ids need the '#' {MEMORY_HINT}: use #W100."
    else:
        memory = "Cancelling worked; keep the same steps."
    return f"{prompts.MEMORY_OPEN}{memory}{prompts.MEMORY_CLOSE}"


def orders_model(**overrides: Handler) -> RoleModel:
    handlers: dict[str, Handler] = {
        "actor": orders_actor,
        "rehearser": orders_rehearser,
        "critic": orders_critic,
        "distil": orders_distil,
    }
    handlers.update(overrides)
    return RoleModel(**handlers)


class OrdersAdapter(Adapter):
    """Registers the orders task as a benchmark (``simulated_user`` marks it as one
    with a user simulator, so the rehearser may play the user)."""

    name = "orders"
    needs_user_model = False

    def subsets(self) -> list[str]:
        return ["cancel"]

    def load(self, subset, *, limit=None, ids=None, data_dir=None, options=None) -> list[Sample]:
        return [orders_sample()][:limit]

    async def score(self, sample, trajectory, services) -> Score:
        passed = (trajectory.final_state or {}).get("cancelled") == [ORDER]
        return Score(passed=passed, reward=float(passed))

    def aggregate(self, records: list[RecordView]) -> BenchmarkResult:
        rate = sum(bool(r.score and r.score.passed) for r in records) / max(1, len(records))
        return BenchmarkResult(
            self.name, {"accuracy": rate}, {"cancel": SubsetResult({"accuracy": rate})}
        )

    def oracle(self, sample):
        raise NotImplementedError


class ChattyOrdersAdapter(OrdersAdapter):
    name = "orders-chatty"
    needs_user_model = True


register_adapter("orders", "test_strategies_fakes:OrdersAdapter")
register_adapter("orders-chatty", "test_strategies_fakes:ChattyOrdersAdapter")


# ---------------------------------------------------------------- tests of the fakes


def test_role_of_tells_every_prompt_apart():
    tool_call = call("cancel_order", order_id="W100")
    assert (
        role_of(prompts.simulate_prompt([CANCEL_TOOL], [], [], "", tool_call, "", 10_000))
        == "rehearser"
    )
    assert role_of(prompts.critique_prompt([], "completed", None, 10_000)) == "critic"
    assert role_of(prompts.distil_prompt(["x"], 100, 10_000)) == "distil"
    assert role_of(prompts.user_role_prompt([], 10_000)) == "user"
    assert role_of([{"role": "system", "content": "You are a shop assistant."}]) == "actor"


def test_the_orders_task_fails_without_the_prefix_and_passes_with_it():
    env = OrdersEnvironment()
    wrong = asyncio.run(env.execute(call("cancel_order", order_id="W100")))
    right = asyncio.run(env.execute(call("cancel_order", order_id=ORDER)))
    assert wrong.is_error and not right.is_error
    assert env.final_state() == {"cancelled": [ORDER]}
