"""BFCL single-turn categories: one reply, calls decoded and checked, never run."""

from __future__ import annotations

import asyncio
import json

import pytest

from harness.adapters.bfcl import BFCLAdapter
from harness.adapters.bfcl.categories import LIVE_AST, NON_LIVE_AST
from harness.adapters.bfcl.decode import DecodeError
from harness.adapters.bfcl.decode import decode_prompt_ast as decode_prompt_text
from harness.adapters.bfcl.oracle import ast_gold_calls
from harness.models.base import ScriptedClient
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Sample, Services
from harness.types import AssistantTurn, SamplingParams, ToolCall, Trajectory

ADAPTER = BFCLAdapter()
PER_CATEGORY = 6


def run(sample: Sample, model) -> Trajectory:
    trajectory = asyncio.run(PlainStrategy().run(sample, model, Services(), SamplingParams()))
    return Trajectory.from_dict(trajectory.to_dict())


def score(sample: Sample, trajectory: Trajectory):
    return asyncio.run(ADAPTER.score(sample, trajectory, Services()))


def reply_with(*calls: ToolCall, content: str | None = None) -> ScriptedClient:
    return ScriptedClient([AssistantTurn(content=content, tool_calls=list(calls))])


def call(name: str, arguments: dict | None = None, raw: str | None = None) -> ToolCall:
    if raw is not None:
        return ToolCall.from_openai({"id": "c1", "function": {"name": name, "arguments": raw}})
    return ToolCall("c1", name, arguments or {}, json.dumps(arguments or {}))


@pytest.mark.parametrize("category", NON_LIVE_AST + LIVE_AST)
def test_oracle_passes_ast_categories(category):
    for sample in ADAPTER.load(category)[:PER_CATEGORY]:
        assert sample.limits.single_step
        result = score(sample, run(sample, ADAPTER.oracle(sample)))
        assert result.passed, (sample.id, result.details)


@pytest.mark.parametrize("category", ["irrelevance", "live_irrelevance", "live_relevance"])
def test_oracle_passes_relevance_categories(category):
    for sample in ADAPTER.load(category)[:PER_CATEGORY]:
        assert score(sample, run(sample, ADAPTER.oracle(sample))).passed


def test_calls_are_recorded_not_executed_and_one_reply_only():
    sample = ADAPTER.load("simple_python")[0]
    model = ScriptedClient([AssistantTurn(tool_calls=ast_gold_calls(sample.gold))] * 3)
    trajectory = run(sample, model)
    assert len(model.calls) == 1
    assert trajectory.tool_calls == 0
    assert [m["role"] for m in trajectory.messages] == ["assistant"]


def test_wrong_answers_fail():
    sample = ADAPTER.load("simple_python")[
        0
    ]  # calculate_triangle_area(base=10, height=5, unit='units')
    gold = ast_gold_calls(sample.gold)[0]
    cases = {
        "no call": reply_with(content="The area is 25."),
        "wrong value": reply_with(call(gold.name, {**gold.arguments, "base": 11})),
        "missing required": reply_with(call(gold.name, {"base": 10})),
        "unexpected parameter": reply_with(call(gold.name, {**gold.arguments, "colour": "red"})),
        "wrong function": reply_with(call("calculate_circle_area", gold.arguments)),
        "two calls": reply_with(gold, gold),
        "bad JSON": reply_with(call(gold.name, raw='{"base": 10,')),
        "arguments not an object": reply_with(call(gold.name, raw="[10, 5]")),
    }
    for name, model in cases.items():
        result = score(sample, run(sample, model))
        assert not result.passed, name


def test_dotted_function_names_are_offered_and_checked_with_underscores():
    sample = next(s for s in ADAPTER.load("simple_python") if "." in s.gold.functions[0]["name"])
    dotted = sample.gold.functions[0]["name"]
    assert sample.tools[0]["function"]["name"] == dotted.replace(".", "_")
    gold = ast_gold_calls(sample.gold)[0]
    assert score(sample, run(sample, reply_with(gold))).passed
    as_written = ToolCall("c1", dotted, gold.arguments, json.dumps(gold.arguments))
    assert not score(sample, run(sample, reply_with(as_written))).passed


def test_irrelevance_rules():
    sample = ADAPTER.load("irrelevance")[0]
    tool = sample.tools[0]["function"]["name"]
    assert score(sample, run(sample, reply_with(content="No suitable function."))).passed
    assert not score(sample, run(sample, reply_with(call(tool, {"x": 1})))).passed
    # As officially: a reply whose calls cannot be decoded counts as "no call".
    assert score(sample, run(sample, reply_with(call(tool, raw="{not json")))).passed


def test_relevance_needs_a_call():
    sample = ADAPTER.load("live_relevance")[0]
    tool = sample.tools[0]["function"]["name"]
    assert score(sample, run(sample, reply_with(call(tool, {})))).passed
    assert not score(sample, run(sample, reply_with(content="Here is an answer."))).passed


def test_java_and_javascript_take_arguments_as_source_text():
    java = ADAPTER.load("simple_java", ids=["simple_java_1"])[0]
    properties = java.tools[0]["function"]["parameters"]["properties"]
    assert all(p["type"] == "string" for p in properties.values())
    gold = ast_gold_calls(java.gold)[0]
    assert gold.arguments["useShortName"] == "true"
    assert score(java, run(java, reply_with(gold))).passed
    as_python = call(gold.name, {**gold.arguments, "useShortName": True})
    assert not score(java, run(java, reply_with(as_python))).passed


def test_prompt_decoding():
    assert decode_prompt_text("[f(a=1, b='x'), g()]") == [{"f": {"a": 1, "b": "x"}}, {"g": {}}]
    assert decode_prompt_text("```\nf(a=[1, 2])\n```") == [{"f": {"a": [1, 2]}}]
    # The official decoder drops positional arguments.
    assert decode_prompt_text("[sort('a.txt', reverse=True)]") == [{"sort": {"reverse": True}}]
    assert decode_prompt_text("[math.factorial(number=5)]") == [{"math.factorial": {"number": 5}}]
    assert decode_prompt_text("[]") == []
    # BFCL's own reading (bfcl_eval.model_handler.utils.resolve_ast_by_type), quirks
    # included: bare names as text, arithmetic computed, nested calls as dicts or
    # source text, "..." as text, any unary operator negates, tuples stay tuples.
    assert decode_prompt_text("[f(a=b, c=1+2*3, d=g(x=1), e=h(2), k=..., m=+5, n=(1, 2))]") == [
        {
            "f": {
                "a": "b",
                "c": 7,
                "d": {"g": {"x": 1}},
                "e": "h(2)",
                "k": "...",
                "m": -5,
                "n": (1, 2),
            }
        }
    ]
    assert decode_prompt_text("[f(**{'a': 1}), g(x=y[0])]") == [
        {"f": {None: {"a": 1}}},
        {"g": {"x": "y[0]"}},
    ]
    for text in [
        "I cannot help with that.",
        "[f(a=lambda: 1)]",
        "[f(a=x + 1)]",  # officially eval() fails on the unknown name too
        "[f(a=-x)]",
        "[f(a={1, 2})]",
        "[f(a=2**99999)]",  # refused: too large to compute safely
        None,
    ]:
        with pytest.raises(DecodeError):
            decode_prompt_text(text)
    java = decode_prompt_text('[Foo.bar(x="new int[]{1, 2}", y=true)]', "java")
    assert java == [{"Foo.bar": {"x": "new int[]{1, 2}", "y": "true"}}]


def test_prompt_mode_single_turn_scoring():
    sample = ADAPTER.load("simple_python", options={"mode": "prompt"})[0]
    gold = ast_gold_calls(sample.gold)[0]
    args = ", ".join(f"{k}={v!r}" for k, v in gold.arguments.items())
    good = ScriptedClient([AssistantTurn(content=f"[{gold.name}({args})]")])
    assert score(sample, run(sample, good)).passed
    unparseable = ScriptedClient([AssistantTurn(content=f"Call {gold.name} with {args}")])
    result = score(sample, run(sample, unparseable))
    assert not result.passed and "decode_error" in result.details


# Entries no reply can pass: the official evaluator scores them wrong for every
# model (verified with the official evaluator in tests/adapters/bfcl/test_bfcl_full.py).
UNANSWERABLE = {
    "simple_java_36",  # ArrayList of "any": items become strings, gold items are int/bool
    "simple_java_65",
    "live_simple_106-63-0",  # a required parameter whose only accepted value is "omit"
    "live_simple_112-68-0",
    "live_multiple_507-149-4",
    "live_multiple_862-181-3",  # gold requires a parameter the function does not have
    "live_multiple_964-207-0",  # gold names a parameter the function does not have
}


def contradictions(entry) -> list[str]:
    """Why no call can match the entry's possible answer (empty if one can)."""
    problems = []
    docs = {doc["name"]: doc["parameters"] for doc in entry.checker_functions}
    for gold in entry.ground_truth:
        ((name, params),) = gold.items()
        doc = docs[name]
        properties, required = doc["properties"], set(doc.get("required", []))
        for param, choices in params.items():
            if param in required and all(choice == "" for choice in choices):
                problems.append(f"{param}: required but may only be omitted")
            if param not in properties and "" not in choices:
                problems.append(f"{param}: expected but not a parameter")
            schema = properties.get(param, {})
            nested = (schema.get("items") or {}).get("type")
            if entry.category == "simple_java" and nested == "any":
                lists = [c for c in choices if isinstance(c, list)]
                if lists and all(any(not isinstance(x, str) for x in c) for c in lists):
                    problems.append(f"{param}: items of type any are strings, gold items are not")
        problems += [f"{p}: required but not accepted" for p in required - set(params)]
    return problems


def test_the_unanswerable_entries_are_exactly_the_contradictory_ones():
    found = set()
    for category in NON_LIVE_AST + LIVE_AST:
        for sample in ADAPTER.load(category):
            if contradictions(sample.gold):
                found.add(sample.id)
    assert found == UNANSWERABLE


def test_a_failure_is_explained_in_plain_words_next_to_the_checker_code():
    sample = ADAPTER.load("parallel")[0]  # two spotify.play calls expected
    one_call = call("spotify_play", {"artist": "Taylor Swift", "duration": 25})
    trajectory = run(sample, reply_with(one_call))
    result = score(sample, trajectory)
    assert not result.passed and result.details["error_type"]
    text = ADAPTER.explain_failure(sample, trajectory, result)
    assert text.startswith("expected 2 call(s), got 1: `spotify_play` missing")
    assert "`spotify_play`: argument `duration` is 25, expected one of [20]" in text
    view = ADAPTER.gold_view(sample)
    assert view["ground truth"] == sample.gold.ground_truth
    assert view["expected calls"] == [
        "spotify_play(artist=Taylor Swift, duration=20)",
        "spotify_play(artist=Maroon 5, duration=15)",
    ]


def test_a_text_reply_is_explained_without_the_decoder_exception():
    sample = ADAPTER.load("simple_python")[0]
    trajectory = run(sample, ScriptedClient([], name="null"))
    result = score(sample, trajectory)
    assert "AttributeError" in result.details["decode_error"]  # the official decoder's
    text = ADAPTER.explain_failure(sample, trajectory, result)
    assert "AttributeError" not in text
    assert text.startswith("no function call could be read from the reply")
    assert "expected 1 call(s): `calculate_triangle_area`" in text


def test_irrelevance_and_relevance_failures_name_what_was_expected():
    irrelevant = ADAPTER.load("irrelevance")[0]
    made = run(irrelevant, reply_with(call(irrelevant.tools[0]["function"]["name"], {})))
    failed = score(irrelevant, made)
    assert not failed.passed
    assert ADAPTER.explain_failure(irrelevant, made, failed).startswith(
        "expected no function call, got 1"
    )
    relevant = ADAPTER.load("live_relevance")[0]
    silent = run(relevant, reply_with(content="No."))
    assert ADAPTER.explain_failure(relevant, silent, score(relevant, silent)) == (
        'expected at least one function call; it answered with text only: "No."'
    )
