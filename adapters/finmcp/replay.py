"""Offline tool execution: the recorded outputs of the item's gold calls.

The live MCP server answered with market data of mid-August 2025, which cannot be
reproduced, so a call is answered from the item's recorded calls (all turns):

1. a tool not in the tool list -> an error result;
2. exact: same name and same canonical JSON arguments as a recorded call -> that
   call's output (the first such call in gold order);
3. an argument whose JSON type contradicts the tool's schema -> an error result,
   as a schema-validating server would answer (integers pass for numbers; argument
   names the schema does not list, and missing arguments, are not checked, since
   the reconstructed schema only knows what the gold calls used);
4. approximate: same name, other arguments -> the output of the NEAREST recorded
   call of that tool: the one sharing the most (argument name, canonical value)
   pairs with the request; ties go to the first in gold order;
5. no recorded call of that tool in this item -> an error result.

Only tool names are scored, so replay fidelity only changes which later calls the
model makes. Every answer is logged with its match kind in ``final_state()`` so the
score can report how many calls were approximate.

Per-turn cap (the official inference script's 20 tool calls per turn): the script
executes a reply's whole batch of calls while the calls made earlier in the turn
number at most 20. This environment sees single calls, not batches, so it executes
a call while at most 20 calls of the turn came before it and refuses the rest with
an error result; scoring applies the script's exact batch rule (see scoring.py).
"""

from __future__ import annotations

from collections import Counter

from harness.boundary.json_value import JsonMapping, JsonObject
from harness.task.contract import Environment
from harness.types import ToolCall, ToolResult, ToolSchema

from .gold import RecordedCall, canonical_arguments, normalize_arguments
from .schemas import json_type

TOOL_CALL_CAP = 20
MATCH_KINDS = ("exact", "approximate", "unknown_tool", "invalid_arguments", "no_record", "over_cap")


def shared_pairs(requested: JsonMapping, recorded: JsonMapping | None) -> int:
    """How many (argument name, value) pairs two argument objects have in common."""
    if recorded is None:
        return 0
    left, right = normalize_arguments(requested), normalize_arguments(recorded)
    return sum(1 for key, value in left.items() if key in right and right[key] == value)


def nearest_call(requested: JsonMapping, candidates: list[RecordedCall]) -> RecordedCall:
    """The candidate sharing the most argument pairs; the first in gold order on ties."""
    best = candidates[0]
    best_shared = shared_pairs(requested, best.arguments)
    for candidate in candidates[1:]:
        shared = shared_pairs(requested, candidate.arguments)
        if shared > best_shared:
            best, best_shared = candidate, shared
    return best


def argument_type_problem(arguments: JsonMapping, parameters: object) -> str | None:
    """Why an argument's JSON type contradicts the declared one, or None."""
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    if not isinstance(properties, dict):
        return None
    for key, value in arguments.items():
        spec = properties.get(key)
        if not isinstance(spec, dict) or "type" not in spec:
            continue
        allowed = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
        actual = json_type(value)
        if actual in allowed or (actual == "integer" and "number" in allowed):
            continue
        return f"argument '{key}' must be of type {' or '.join(map(str, allowed))}, got {actual}"
    return None


class ReplayEnvironment(Environment):
    """Answers tool calls from one item's recorded calls; never touches the network."""

    def __init__(
        self, calls: list[RecordedCall], tools: list[ToolSchema], cap: int = TOOL_CALL_CAP
    ):
        self._calls = list(calls)
        # tool name -> its JSON-schema "parameters"
        self._parameters = {
            tool["function"]["name"]: tool["function"].get("parameters") for tool in tools
        }
        self._cap = cap
        self._turn = -1
        self._calls_this_turn = 0
        self._log: list[JsonObject] = []

    def begin_turn(self, turn: int) -> None:
        """A new gold user turn starts: the per-turn call count restarts."""
        self._turn = turn
        self._calls_this_turn = 0

    async def execute(self, call: ToolCall) -> ToolResult:
        before = self._calls_this_turn
        self._calls_this_turn += 1
        if before > self._cap:
            return self._answer(call, "over_cap", None, self._over_cap_message())
        if call.name not in self._parameters:
            message = f"Error: unknown tool '{call.name}'. Only the listed tools can be called."
            return self._answer(call, "unknown_tool", None, message)
        requested = call.arguments or {}
        candidates = [recorded for recorded in self._calls if recorded.name == call.name]
        wanted = canonical_arguments(requested)
        exact = next((c for c in candidates if c.canonical == wanted), None)
        if exact is not None:
            return self._answer(call, "exact", exact, exact.output)
        problem = argument_type_problem(requested, self._parameters[call.name])
        if problem is not None:
            message = f"Error: invalid arguments for tool '{call.name}': {problem}."
            return self._answer(call, "invalid_arguments", None, message)
        if not candidates:
            message = (
                f"Error: no recorded data for tool '{call.name}' in this task "
                "(tool outputs are replayed from the benchmark's recordings)."
            )
            return self._answer(call, "no_record", None, message)
        nearest = nearest_call(requested, candidates)
        return self._answer(call, "approximate", nearest, nearest.output)

    def _over_cap_message(self) -> str:
        return (
            f"Error: the limit of {self._cap} tool calls per turn is reached; this call was "
            "not executed. Answer the user without calling more tools."
        )

    def _answer(
        self, call: ToolCall, kind: str, source: RecordedCall | None, content: str
    ) -> ToolResult:
        self._log.append(
            {
                "turn": self._turn,
                "name": call.name,
                "match": kind,
                "source": None if source is None else source.index,
            }
        )
        return ToolResult(content=content, is_error=source is None)

    def final_state(self) -> JsonObject:
        counts = Counter(str(entry["match"]) for entry in self._log)
        return {
            "tool_call_cap": self._cap,
            "replay_counts": {kind: counts.get(kind, 0) for kind in MATCH_KINDS},
            "replay_log": list(self._log),
        }
