"""BFCL multi-turn: episodes, the safe checker, and parity with the official checker."""

from __future__ import annotations

import asyncio
import itertools
import random

import pytest

from harness.adapters.bfcl import BFCLAdapter, official
from harness.adapters.bfcl.adapter import MAX_STEPS_PER_TURN
from harness.adapters.bfcl.categories import MULTI_TURN
from harness.adapters.bfcl.data import Entry, load_entries
from harness.adapters.bfcl.multi_turn import (
    check_multi_turn,
    more_functions_message,
    parse_gold_call,
)
from harness.adapters.bfcl.simulators import Call
from harness.errors import ConfigError
from harness.models.base import ScriptedClient
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Sample, Services
from harness.types import AssistantTurn, SamplingParams, ToolCall, Trajectory

ADAPTER = BFCLAdapter()
PER_CATEGORY = 4


def run(sample: Sample, model) -> Trajectory:
    trajectory = asyncio.run(PlainStrategy().run(sample, model, Services(), SamplingParams()))
    # Scoring must work from the stored form alone.
    return Trajectory.from_dict(trajectory.to_dict())


def score(sample: Sample, trajectory: Trajectory):
    return asyncio.run(ADAPTER.score(sample, trajectory, Services()))


@pytest.mark.parametrize("category", MULTI_TURN)
def test_oracle_passes_every_turn(category):
    for sample in ADAPTER.load(category)[:PER_CATEGORY]:
        trajectory = run(sample, ADAPTER.oracle(sample))
        result = score(sample, trajectory)
        assert result.passed, (sample.id, result.details)
        assert result.progress == 1.0
        assert trajectory.termination == "completed"
        assert trajectory.tool_calls > 0


def test_a_model_that_never_calls_fails_with_partial_progress():
    sample = ADAPTER.load("multi_turn_miss_func")[0]
    result = score(sample, run(sample, ScriptedClient([])))
    assert not result.passed
    assert result.details["error_type"] == "multi_turn:empty_turn_model_response"
    # Only the turn whose gold is empty (the held-out turn's question) passes.
    empty_turns = sum(1 for calls in sample.gold.ground_truth if not calls)
    assert result.progress == pytest.approx(empty_turns / len(sample.gold.ground_truth))


def test_miss_func_withholds_functions_until_their_turn():
    sample = ADAPTER.load("multi_turn_miss_func")[0]
    entry: Entry = sample.gold
    ((held_turn, held_docs),) = entry.missed_function.items()
    held_names = {doc["name"] for doc in held_docs}
    offered = {tool["function"]["name"] for tool in sample.tools}
    assert not held_names & offered

    seen_tools: list[set[str]] = []

    class Recorder(ScriptedClient):
        async def complete(self, messages, tools, params):
            seen_tools.append({tool["function"]["name"] for tool in tools})
            return AssistantTurn(content="ok")

    trajectory = run(sample, Recorder([]))
    users = [m for m in trajectory.messages if m["role"] == "user"]
    assert users[held_turn]["content"] == more_functions_message()
    assert users[held_turn]["content"] == (
        "I have updated some more functions you can choose from. What about now?"
    )
    assert not held_names & seen_tools[held_turn - 1]
    assert held_names <= seen_tools[held_turn]


def test_step_cap_matches_bfcl():
    """BFCL lets a turn run 20 calling steps and still answer; the 21st calling
    step ends the entry."""
    sample = ADAPTER.load("multi_turn_base")[0]
    assert sample.limits.max_steps_per_turn == MAX_STEPS_PER_TURN == 21

    def calling(n):
        return [AssistantTurn(tool_calls=[ToolCall("", "pwd", {}, "{}")]) for _ in range(n)]

    ok = run(sample, ScriptedClient(calling(20) + [AssistantTurn(content="done")]))
    assert ok.termination == "completed"
    capped = run(sample, ScriptedClient(calling(21)))
    assert capped.termination == "max_steps_per_turn"
    result = score(sample, capped)
    assert not result.passed
    assert result.details["error_type"] == "multi_turn:force_terminated"


def test_a_lower_step_cap_is_an_option_that_ends_the_entry_sooner():
    sample = ADAPTER.load("multi_turn_base", options={"max_steps_per_turn": 2})[0]
    assert sample.limits.max_steps_per_turn == 2
    calls = [AssistantTurn(tool_calls=[ToolCall("", "pwd", {}, "{}")]) for _ in range(5)]
    capped = run(sample, ScriptedClient(calls))
    assert capped.termination == "max_steps_per_turn"
    assert len(capped.turns) == 2


@pytest.mark.parametrize("bad", [0, -1, True, "3", 2.5])
def test_a_step_cap_that_is_not_a_positive_integer_is_a_config_error(bad):
    with pytest.raises(ConfigError, match="max_steps_per_turn"):
        ADAPTER.load("multi_turn_base", options={"max_steps_per_turn": bad})


def test_gold_calls_with_positional_arguments_parse():
    call = parse_gold_call("sort('final_report.pdf')")
    assert call == Call("sort", {}, ["final_report.pdf"])
    call = parse_gold_call("cd(folder='document')")
    assert call == Call("cd", {"folder": "document"}, [])
    with pytest.raises(ValueError):
        parse_gold_call("__import__('os').system('true')")


# ------------------------------------------------------------ official parity


def _gold_turns(entry: Entry) -> list[list[Call]]:
    return [[parse_gold_call(text) for text in turn] for turn in entry.ground_truth]


def _perturbations(entry: Entry, rng: random.Random) -> dict[str, list[list[list[Call]]]]:
    """Model turns (steps of calls) derived from the gold: right and wrong ones."""
    gold = _gold_turns(entry)
    non_empty = [i for i, turn in enumerate(gold) if turn]
    k = rng.choice(non_empty)
    out: dict[str, list[list[list[Call]]]] = {
        "gold, one step per turn": [[turn] if turn else [] for turn in gold],
        "gold, one step per call": [[[call] for call in turn] for turn in gold],
    }

    def with_turn(new_turn: list[Call]) -> list[list[list[Call]]]:
        turns = [[turn] if turn else [] for turn in gold]
        turns[k] = [new_turn] if new_turn else []
        return turns

    out["last call of a turn dropped"] = with_turn(gold[k][:-1])
    out["first call of a turn dropped"] = with_turn(gold[k][1:])
    out["a call repeated"] = with_turn(gold[k] + [gold[k][-1]])
    out["turn left empty"] = with_turn([])
    out["unknown function added"] = with_turn(gold[k] + [Call("no_such_function", {"x": 1})])
    changed = [Call(c.name, dict(c.kwargs), list(c.args)) for c in gold[k]]
    target = changed[-1]
    for key, value in target.kwargs.items():
        if isinstance(value, str):
            target.kwargs[key] = value + "_x"
            break
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            target.kwargs[key] = value + 1
            break
    else:
        if target.args and isinstance(target.args[0], str):
            target.args[0] = target.args[0] + "_x"
    out["an argument changed"] = with_turn(changed)
    other = [t for t in non_empty if t != k]
    if other:
        out["a call from another turn added"] = with_turn(gold[k] + gold[other[0]][:1])
    if k + 1 < len(gold):
        delayed = [[turn] if turn else [] for turn in gold]
        delayed[k] = []
        delayed[k + 1] = [gold[k] + gold[k + 1]]
        out["a turn's calls made one turn late"] = delayed
    out["stopped after the first turn"] = [[gold[0]] if gold[0] else []]
    out["turn order swapped"] = [[gold[i]] if gold[i] else [] for i in [1, 0, *range(2, len(gold))]]
    return out


def _official_verdict(entry: Entry, turns: list[list[list[Call]]], run_id: str) -> bool:
    """The official checker on trusted, gold-derived call strings (it eval()s them)."""
    checker = official.module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker")
    decoded = [[[call.text() for call in step] for step in turn] for turn in turns]
    if len(decoded) != len(entry.ground_truth):
        return False  # the official runner fails force-terminated entries before checking
    test_entry = {
        "id": entry.id,
        "initial_config": entry.initial_config,
        "involved_classes": entry.involved_classes,
    }
    # A fresh model name per call: the official executor caches instances by name.
    result = checker.multi_turn_checker(
        decoded, entry.ground_truth, test_entry, entry.category, run_id
    )
    return bool(result["valid"])


@pytest.mark.parametrize("category", MULTI_TURN)
def test_checker_agrees_with_official_on_perturbed_trajectories(category):
    rng = random.Random(category)
    counter = itertools.count()
    verdicts = {True: 0, False: 0}
    for entry in load_entries(category)[:3]:
        for name, turns in _perturbations(entry, rng).items():
            strings = [[[call.text() for call in step] for step in turn] for turn in turns]
            ours = check_multi_turn(entry, strings).passed
            theirs = _official_verdict(entry, turns, f"paritytest{category}{next(counter)}")
            assert ours == theirs, (entry.id, name, ours, theirs)
            verdicts[ours] += 1
    # The perturbations exercise both outcomes.
    assert verdicts[True] >= 6 and verdicts[False] >= 12
