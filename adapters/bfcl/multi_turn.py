"""Multi-turn categories: the environment, the scripted user, and the checker.

Running: the environment owns fresh simulator instances; the user side plays the
entry's question turns one after another. In miss_func the held-out functions
are withheld until their turn, which BFCL replaces by its fixed "more functions"
user message while adding the functions to the tool list. As in the official
executor, calls are not gated by the offered tool list.

Calls run as BFCL runs them: each reply's calls become BFCL's execution
strings (decode.py), which the safe executor (executor.py) interprets. In FC
mode the environment builds the strings from the call's arguments; in prompt
mode the prompt format hands over the strings it decoded (``PromptModeCall``).

Scoring repeats what the official ``multi_turn_checker`` does, without
evaluating text: the model's decoded calls and the gold calls are executed on two
separate sets of fresh instances (kept across turns), and after every turn whose
gold is not empty the two states must be equal (all public attributes) and every
gold execution result must appear among the model's results so far. A model turn
without any decodable call fails a turn that has gold calls. Turns whose gold is
empty are not checked: BFCL-v4 never calls its abstain check (so an extra call
there still passes). An entry whose run stopped before the last turn (the step
cap) fails. ``progress`` is the share of turns that pass both checks, an empty
gold turn counting as passed when nothing was called.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field

from harness.boundary import threadsafe_ast
from harness.boundary.json_value import JsonValue
from harness.boundary.tool_budget import ToolBudgetExceeded, run_tool_call
from harness.task.contract import Environment, ScriptedTurns, UserTurn
from harness.types import Message, Score, ToolCall, ToolResult, Trajectory

from . import official
from .data import Entry
from .decode import Reply, executable_calls, replies
from .executor import execute_string, execute_strings
from .simulators import Call, SimulatorSet, to_jsonable
from .tools import openai_tools


def more_functions_message() -> str:
    """BFCL's user message for a held-out turn in FC mode."""
    prompts = official.module("bfcl_eval.constants.default_prompts")
    return prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC


def is_long_context(category: str) -> bool:
    return "long_context" in category


class BFCLEnvironment(Environment):
    """The simulator instances of one entry; built on first use."""

    def __init__(self, entry: Entry):
        self._entry = entry
        self._simulators: SimulatorSet | None = None

    @property
    def simulators(self) -> SimulatorSet:
        if self._simulators is None:
            entry = self._entry
            self._simulators = SimulatorSet(
                entry.involved_classes, entry.initial_config, is_long_context(entry.category)
            )
        return self._simulators

    async def execute(self, call: ToolCall) -> ToolResult:
        # Off the event loop, within a time budget (harness.boundary.tool_budget); the
        # simulators are built there too, on first use.
        try:
            text, failed = await run_tool_call(self._execute, execution_string(call))
        except ToolBudgetExceeded as exc:
            return ToolResult(f"Error during execution: {exc}", True)
        return ToolResult(text, failed)

    def _execute(self, text: str) -> tuple[str, bool]:
        return execute_string(text, self.simulators)

    def final_state(self) -> JsonValue:
        if self._simulators is None:
            return None
        return to_jsonable(self._simulators.public_state())


@dataclass
class PromptModeCall(ToolCall):
    """A call read from prompt-mode text, with the execution string BFCL builds
    for it (dict arguments are written differently from FC mode's)."""

    execution: str = ""


def execution_string(call: ToolCall) -> str:
    """The official execution string of one call: as decoded in prompt mode, or
    built from the JSON arguments as the FC handler does."""
    if isinstance(call, PromptModeCall) and call.execution:
        return call.execution
    utils = official.module("bfcl_eval.model_handler.utils")
    return utils.convert_to_function_call([{call.name: dict(call.arguments or {})}])[0]


def user_turns(entry: Entry) -> list[UserTurn]:
    """The entry's question turns as scripted user turns (FC wording)."""
    offered = list(entry.functions)
    turns = []
    for index, messages in enumerate(entry.turns):
        if index in entry.missed_function:
            offered = offered + entry.missed_function[index]
            content = more_functions_message()
            turns.append(
                UserTurn(
                    messages=[{"role": "user", "content": content}], tools=openai_tools(offered)
                )
            )
        else:
            turns.append(UserTurn(messages=copy.deepcopy(messages)))
    return turns


def scripted_user(entry: Entry) -> ScriptedTurns:
    return ScriptedTurns(user_turns(entry))


# ---------------------------------------------------------------- transcript


def split_turns(messages: list[Message]) -> list[list[Message]]:
    """The assistant messages of each user turn, in order (hidden messages skipped)."""
    turns: list[list[Message]] = []
    for message in messages:
        if message.get("hidden"):
            continue
        role = message.get("role")
        if role == "user":
            turns.append([])
        elif role == "assistant" and turns:
            turns[-1].append(message)
    return turns


def executed_steps(trajectory: Trajectory, prompt_mode: bool) -> list[list[list[str]]]:
    """Per user turn, the execution strings of each step that decodes to at least
    one call (as the official evaluator keeps them: undecodable and empty steps
    are dropped)."""
    turns: list[list[list[str]]] = []
    for turn in turn_replies(trajectory):
        steps = []
        for reply in turn:
            execution = executable_calls(reply.result(prompt_mode), prompt_mode)
            if execution is not None:
                steps.append(execution)
        turns.append(steps)
    return turns


def turn_replies(trajectory: Trajectory) -> list[list[Reply]]:
    """The assistant replies of each user turn, in order (hidden messages skipped)."""
    all_replies = iter(replies(trajectory))
    turns: list[list[Reply]] = []
    for message in trajectory.messages:
        role = message.get("role")
        if role == "assistant":
            reply = next(all_replies)
            if turns:
                turns[-1].append(reply)
        elif role == "user" and not message.get("hidden"):
            turns.append([])
    return turns


# ---------------------------------------------------------------- gold calls


def parse_gold_call(text: str) -> Call:
    """A gold call string such as ``sort('report.pdf')`` or ``cd(folder='doc')``.
    Gold strings come with the package; still, only literal arguments are read."""
    node = threadsafe_ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a plain call: {text}")
    args = [ast.literal_eval(arg) for arg in node.args]
    kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg is not None}
    return Call(node.func.id, kwargs, args)


# ---------------------------------------------------------------- checking


@dataclass
class TurnCheck:
    index: int
    passed: bool
    reason: str | None = None
    gold_empty: bool = False


@dataclass
class MultiTurnVerdict:
    passed: bool
    turns: list[TurnCheck] = field(default_factory=list)
    error_type: str | None = None
    error_turn: int | None = None

    @property
    def progress(self) -> float:
        if not self.turns:
            return 0.0
        return sum(turn.passed for turn in self.turns) / len(self.turns)


def _state_and_response(
    model: SimulatorSet,
    gold: SimulatorSet,
    model_results: list[str],
    gold_results: list[str],
    turn: int,
) -> str | None:
    """None when both official sub-checks pass, else the failing check's error type."""
    checker = official.module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker")
    state = checker.state_checker(model.instances, gold.instances)
    if not state["valid"]:
        return state["error_type"]
    response = checker.response_checker(model_results, gold_results, turn)
    if not response["valid"]:
        return response["error_type"]
    return None


def check_multi_turn(entry: Entry, model_turns: list[list[list[str]]]) -> MultiTurnVerdict:
    """The official verdict plus per-turn results for ``model_turns`` (execution
    strings per step per turn, as many turns as the run reached)."""
    gold_turns = entry.gold_turns()
    long_context = is_long_context(entry.category)
    model = SimulatorSet(entry.involved_classes, entry.initial_config, long_context)
    gold = SimulatorSet(entry.involved_classes, entry.initial_config, long_context)
    verdict = MultiTurnVerdict(passed=True)
    if len(model_turns) != len(gold_turns):
        verdict.passed = False
        verdict.error_type = "multi_turn:force_terminated"

    model_results: list[str] = []
    for index, gold_calls in enumerate(gold_turns):
        if index >= len(model_turns):
            verdict.turns.append(TurnCheck(index, False, "not reached", not gold_calls))
            continue
        steps = model_turns[index]
        for step in steps:
            model_results.extend(execute_strings(step, model))
        gold_results = execute_strings(gold_calls, gold)

        if not gold_calls:
            verdict.turns.append(
                TurnCheck(index, not steps, None if not steps else "calls made", True)
            )
            continue
        reason: str | None
        if not steps:
            reason = "multi_turn:empty_turn_model_response"
        else:
            reason = _state_and_response(model, gold, model_results, gold_results, index)
        verdict.turns.append(TurnCheck(index, reason is None, reason))
        if reason is not None and verdict.passed:
            verdict.passed = False
            verdict.error_type = reason
            verdict.error_turn = index
    return verdict


def score_multi_turn(entry: Entry, trajectory: Trajectory, prompt_mode: bool) -> Score:
    model_turns = executed_steps(trajectory, prompt_mode)
    verdict = check_multi_turn(entry, model_turns)
    details = {
        "turns": [
            {"turn": t.index, "passed": t.passed, "reason": t.reason, "gold_empty": t.gold_empty}
            for t in verdict.turns
        ],
        "error_type": verdict.error_type,
        "error_turn": verdict.error_turn,
        "turns_reached": len(model_turns),
        "termination": trajectory.termination,
    }
    return Score(
        passed=verdict.passed,
        reward=float(verdict.passed),
        progress=verdict.progress,
        details=details,
    )
