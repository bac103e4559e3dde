"""One tau2 domain environment behind the harness's Environment interface.

Tool calls go to tau2's own ``Environment.get_response``, so results and error
texts (``Error: <exception>``) are exactly tau2's. The user's tool calls
(telecom's dual control) run on the same environment with requestor ``user``.

One guard sits in front of tau2: its ``calculate`` tool (airline, retail) runs the
expression through Python's ``eval`` after checking that only digits, ``+-*/().``
and spaces occur. ``**`` passes that check, so ``9**9**9**9`` would compute for
ever; a power whose operands are not small number literals is refused with an
error instead, and so is an expression longer than MAX_EXPRESSION_CHARS or one
whose integer values could grow past MAX_INTEGER_BITS (a product of many powers,
a long chain of multiplications). Such a call never reaches tau2, and scoring
leaves it out of the replay the same way.

Building the environment and its final state run in harness.boundary.tool_budget's
worker thread, off the event loop, within a time budget (``large_state``). So do
banking_knowledge's calls, whose retrieval tools search a document index. The
other domains' tools look up and update the domain's tables, ~0.2 ms a call
(``calculate``, the one whose cost the model's text drives, is bounded by the
guard above): they run on the loop, as the user's calls do. A call's trip through
the worker thread cost more than the call: at 256 episodes in flight, the
thread and the loop waited for each other's turn with the interpreter lock, and
the τ² replay took ~7% longer (bench/full_suite.py, 6.5 s against 6.0 s).

At the end of the episode ``final_state`` hashes the databases and runs the
task's assertions on this live environment, once, for the first scoring
(live_state.py), which then needs no replay. An episode whose calls changed
nothing (only tools tau2 declares read-only ran: ``domains.unchanging_tools``)
takes the initial databases' cached hashes instead of hashing them again.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

from harness.boundary import threadsafe_ast
from harness.boundary.json_value import JsonObject
from harness.boundary.tool_budget import ToolBudgetExceeded, run_tool_call
from harness.task.contract import Environment
from harness.types import ToolCall, ToolResult

from .domains import (
    Domain,
    initialized_environment,
    replayed_tools,
    syncs_tools,
    toolkits,
    unchanging_tools,
)
from .gold_cache import environment_hashes, initial_hashes
from .live_state import CallDigest, LiveState, register
from .shared_rows import lending

if TYPE_CHECKING:
    from tau2.data_model.tasks import Task

MAX_POWER_BASE = 1e6
MAX_POWER_EXPONENT = 100
# No price or total a domain tool computes comes near these.
MAX_EXPRESSION_CHARS = 10_000
MAX_INTEGER_BITS = 20_000
_FLOAT = -1  # "this value is a float": float arithmetic is fast whatever the size


def _integer_bits(node: ast.AST) -> int:
    """An upper bound on the bit length of an integer value of ``node`` (``_FLOAT``
    when it is a float), raising OverflowError once it passes MAX_INTEGER_BITS."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int):
            return _FLOAT
        return node.value.bit_length()
    if isinstance(node, ast.UnaryOp):
        return _integer_bits(node.operand)
    if not isinstance(node, ast.BinOp):
        return _FLOAT  # anything else fails in tau2's own check or eval, quickly
    left, right = _integer_bits(node.left), _integer_bits(node.right)
    if isinstance(node.op, ast.Div) or left == _FLOAT or right == _FLOAT:
        return _FLOAT
    if isinstance(node.op, (ast.Add, ast.Sub)):
        bits = max(left, right) + 1
    elif isinstance(node.op, ast.Mult):
        bits = left + right
    elif isinstance(node.op, ast.Pow):
        # exponent < 2**right; a negative exponent gives a float, counted as huge anyway
        bits = left * (1 << min(right, 64)) if right else left
    else:  # floor division and the rest never grow a value
        bits = left
    if bits > MAX_INTEGER_BITS:
        raise OverflowError
    return bits


def _number(node: ast.AST) -> float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _number(node.operand)
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def tau2_cannot_parse(call: ToolCall) -> bool:
    """Whether tau2's ``generate`` raises on these arguments (its ``json.loads`` of the
    text, then its ``ToolCall`` model): not a JSON object, or blank text, which the
    harness reads as ``{}`` (some servers send ``""`` for calls without arguments)."""
    if call.parse_error is not None or call.arguments is None:
        return True
    return call.raw_verbatim and call.raw_arguments.strip() == ""


def unsafe_call_reason(name: str, arguments: Mapping[str, object]) -> str | None:
    """Why a call must not reach tau2 (see the module docstring), or None."""
    if name != "calculate":
        return None
    expression = arguments.get("expression")
    if not isinstance(expression, str):
        return None
    if len(expression) > MAX_EXPRESSION_CHARS:
        return "the expression is too long to evaluate"
    if "*" not in expression:
        return None  # sums and quotients of literals this short are cheap
    try:
        tree = threadsafe_ast.parse(expression, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # tau2 rejects it itself, quickly
    try:
        _integer_bits(tree.body)
    except (OverflowError, RecursionError):
        return "the expression is too expensive to evaluate"
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            base, exponent = _number(node.left), _number(node.right)
            if (
                base is None
                or exponent is None
                or abs(base) > MAX_POWER_BASE
                or abs(exponent) > MAX_POWER_EXPONENT
            ):
                return "the expression is too expensive to evaluate"
    return None


class Tau2Environment(Environment):
    """A fresh tau2 environment in one task's initial state."""

    # Built and hashed off the event loop, and out of the collector's passes: the
    # first environment of a domain loads its pristine rows (an airline database is
    # ~66,000 objects, ~1 s), and a domain that cannot share rows copies it whole.
    large_state = True

    def __init__(self, domain: Domain, task: Task, runs_blank_arguments: bool = False):
        """``runs_blank_arguments``: run a call with blank arguments as ``{}`` (option
        ``malformed_calls: continue``); by tau2's rule it never reaches the tools."""
        self.domain = domain
        self.task = task
        self.runs_blank_arguments = runs_blank_arguments
        self.env = initialized_environment(domain, task)
        self._tool_call = domain.package.module("data_model.message").ToolCall
        # The calls that reached tau2 and that its replay would run again, in order.
        self.calls = CallDigest()
        self._replayed = replayed_tools(domain)  # None: every call
        self._unchanging = unchanging_tools(domain)
        # tau2 syncs a domain's tools after a call (telecom); a sync may write.
        self._syncs = syncs_tools(domain, self.env)
        # A call that may have changed the databases reached tau2 (see final_state).
        self.changed_state = False
        self.abandoned_call = False  # a call ran over budget and may still be running

    async def execute(self, call: ToolCall) -> ToolResult:
        if not self.domain.is_banking:  # its tools are quick: see the module docstring
            return self.run(call, "assistant")
        try:
            return await run_tool_call(self.run, call, "assistant")
        except ToolBudgetExceeded as exc:
            self.abandoned_call = True
            return ToolResult(f"Error: {exc}", True)

    def execute_user_call(self, call: ToolCall) -> ToolResult:
        return self.run(call, "user")

    def run(self, call: ToolCall, requestor: str) -> ToolResult:
        """Run one call for the agent (``assistant``) or the user (``user``)."""
        if call.parse_error is not None or call.arguments is None:
            return ToolResult(f"Error: the arguments of '{call.name}' are not a JSON object", True)
        if not self.runs_blank_arguments and tau2_cannot_parse(call):
            return ToolResult(f"Error: the arguments of '{call.name}' are blank, not JSON", True)
        reason = unsafe_call_reason(call.name, call.arguments)
        if reason is not None:
            return ToolResult(f"Error: {reason}", True)
        request = self._tool_call(
            id=call.id, name=call.name, arguments=call.arguments, requestor=requestor
        )
        if self._replayed is None or call.name in self._replayed:
            self.calls.add(requestor, call.name, call.arguments)
        if call.name not in self._unchanging:
            self.changed_state = True
        try:
            with self._lending(call.name):
                message = self.env.get_response(request)
        except Exception as exc:  # e.g. a result tau2 cannot serialise
            return ToolResult(f"Error: {exc}", True)
        if message.error:
            self._sync()
        return ToolResult(message.content or "", message.error)

    def _lending(self, name: str) -> contextlib.AbstractContextManager[None]:
        """While a tool tau2 declares changes nothing runs, shared tables lend their
        rows uncopied (shared_rows.py); while anything else runs, a row read is the
        environment's own copy."""
        if name not in self._unchanging or self._syncs:
            return contextlib.nullcontext()
        return lending(kit.db for kit in toolkits(self.env))

    def _sync(self) -> None:
        # tau2's orchestrator syncs the environment after every step; get_response
        # only does so after a successful call.
        try:
            self.env.sync_tools()
        except Exception:  # a broken sync must not end the episode; scoring replays
            pass

    def final_state(self) -> JsonObject | None:
        """The databases' hashes (when the reward compares them) and the task's
        assertions on this environment, as tau2's evaluator would get them by replay."""
        reward_type = self.domain.package.module("data_model.tasks").RewardType
        criteria = self.task.evaluation_criteria
        if criteria is None or (criteria.actions is None and criteria.env_assertions is None):
            return None  # the evaluator compares nothing
        if self.abandoned_call:
            return None  # its state is not the calls' final state: scoring replays
        self.env.sync_tools()  # as tau2's replay (set_state) ends
        hashes = None
        if reward_type.DB in criteria.reward_basis:
            hashes = self._database_hashes()
        assertions = [
            self.env.run_env_assertion(assertion, raise_assertion_error=False)
            for assertion in criteria.env_assertions or []
        ]
        state = LiveState(self.calls.hexdigest(), self.calls.count, hashes, assertions)
        return register(state)

    def _database_hashes(self) -> tuple[str | None, str | None]:
        """The databases' hashes. When no call that may change them reached tau2,
        the databases are the task's initial ones, whose hashes are computed once
        per task and tau2 version (gold_cache.py): hashing a whole airline
        database again took ~100 ms, the largest part of an episode's CPU."""
        if not self.changed_state:
            return initial_hashes(self.domain, self.task)
        return environment_hashes(self.env)
