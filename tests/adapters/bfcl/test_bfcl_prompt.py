"""BFCL's own prompt mode: what a text-only model sees and how its text is read."""

from __future__ import annotations

import asyncio
import copy

from harness.adapters.bfcl import BFCLAdapter, official
from harness.adapters.bfcl.oracle import bind_gold_positional
from harness.adapters.bfcl.prompt_format import BFCLPromptFormat
from harness.models.base import ScriptedClient
from harness.models.calls import format_python_call
from harness.models.prompt_mode import PromptModeClient
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Sample, Services
from harness.types import AssistantTurn, SamplingParams, Trajectory

ADAPTER = BFCLAdapter()


def run(sample: Sample, model) -> Trajectory:
    trajectory = asyncio.run(PlainStrategy().run(sample, model, Services(), SamplingParams()))
    return Trajectory.from_dict(trajectory.to_dict())


def score(sample: Sample, trajectory: Trajectory):
    return asyncio.run(ADAPTER.score(sample, trajectory, Services()))


def gold_text_replies(sample: Sample) -> list[AssistantTurn]:
    """What a perfect prompt-mode model writes: per turn the gold calls as a
    Python list (keywords only), then a closing text; text alone for empty turns."""
    replies = []
    for turn in sample.gold.ground_truth:
        if turn:
            calls = [format_python_call(*bind_gold_positional(sample.gold, text)) for text in turn]
            replies.append(AssistantTurn(content="[" + ", ".join(calls) + "]"))
        replies.append(AssistantTurn(content="I have completed the request."))
    return replies


def prompt_client(
    sample: Sample, replies: list[AssistantTurn]
) -> tuple[PromptModeClient, ScriptedClient]:
    inner = ScriptedClient(replies)
    return PromptModeClient(inner, ADAPTER.prompt_format(sample)), inner


def test_prompt_format_is_bfcls_own():
    sample = ADAPTER.load("simple_python", options={"mode": "prompt"})[0]
    fmt = ADAPTER.prompt_format(sample)
    assert isinstance(fmt, BFCLPromptFormat)
    rendered = fmt.render(sample.initial_messages, sample.tools)
    utils = official.module("bfcl_eval.model_handler.utils")
    expected = utils.system_prompt_pre_processing_chat_model(
        copy.deepcopy(sample.initial_messages), copy.deepcopy(sample.gold.functions), sample.id
    )
    assert rendered == expected
    assert rendered[0]["role"] == "system"
    assert "[func_name1(params_name1=params_value1" in rendered[0]["content"]
    # Names as written (BFCL's prompt mode does not rename "a.b").
    dotted = next(s for s in ADAPTER.load("simple_python") if "." in s.gold.functions[0]["name"])
    text = ADAPTER.prompt_format(dotted).render(dotted.initial_messages, dotted.tools)[0]["content"]
    assert dotted.gold.functions[0]["name"] in text


def test_existing_system_message_is_kept_after_the_bfcl_prompt():
    sample = next(
        s for s in ADAPTER.load("live_simple") if s.initial_messages[0]["role"] == "system"
    )
    rendered = ADAPTER.prompt_format(sample).render(sample.initial_messages, sample.tools)
    assert rendered[0]["content"].endswith("\n\n" + sample.initial_messages[0]["content"])
    assert sum(m["role"] == "system" for m in rendered) == 1


def test_multi_turn_in_prompt_mode_passes_with_gold_text():
    for category in ["multi_turn_base", "multi_turn_miss_func"]:
        for sample in ADAPTER.load(category, options={"mode": "prompt"})[:3]:
            client, _ = prompt_client(sample, gold_text_replies(sample))
            result = score(sample, run(sample, client))
            assert result.passed, (sample.id, result.details)
            assert result.progress == 1.0


def test_execution_results_come_back_as_bfcls_user_message():
    sample = ADAPTER.load("multi_turn_base", options={"mode": "prompt"})[0]
    client, inner = prompt_client(sample, gold_text_replies(sample))
    trajectory = run(sample, client)
    second_request = inner.calls[1]  # after the first reply's calls ran
    results = [m for m in trajectory.messages if m["role"] == "tool"]
    first_reply_calls = trajectory.turns[0].tool_calls
    utils = official.module("bfcl_eval.model_handler.utils")
    names = [format_python_call(call.name, call.arguments) for call in first_reply_calls]
    expected = utils.format_execution_results_prompting(
        {}, [m["content"] for m in results[: len(names)]], {"model_responses_decoded": names}
    )
    assert second_request[-1] == {"role": "user", "content": expected}
    assert second_request[-2] == {"role": "assistant", "content": trajectory.turns[0].content}
    assert not any(m["role"] == "tool" for m in second_request)


def test_held_out_turn_lists_the_functions_in_prompt_mode():
    sample = ADAPTER.load("multi_turn_miss_func", options={"mode": "prompt"})[0]
    ((turn, docs),) = sample.gold.missed_function.items()
    client, inner = prompt_client(sample, gold_text_replies(sample))
    run(sample, client)
    prompts = official.module("bfcl_eval.constants.default_prompts")
    expected = prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING.format(functions=docs)
    user_texts = [m["content"] for request in inner.calls for m in request if m["role"] == "user"]
    assert expected in user_texts
    # The system prompt keeps listing only the initial functions.
    system = inner.calls[-1][0]["content"]
    assert f'"name": "{docs[0]["name"]}"' not in system


def test_unparseable_text_ends_the_turn_without_calls():
    sample = ADAPTER.load("multi_turn_base", options={"mode": "prompt"})[0]
    replies = [AssistantTurn(content="Sure, I will do cd(folder=document) now.")] * 10
    client, inner = prompt_client(sample, replies)
    trajectory = run(sample, client)
    assert trajectory.tool_calls == 0
    assert len(inner.calls) == len(sample.gold.turns)  # one reply per turn
    assert not score(sample, trajectory).passed


def test_prompt_mode_comes_from_the_run_not_the_transcript():
    """A ``--prompt-mode`` run whose suite did not set ``mode: prompt`` is read as
    text through the run's option (dotted names stay dotted, as BFCL's prompt
    mode writes them). The transcript never decides: an FC reply whose text
    repeats its calls is an FC reply, as BFCL's FC handler reads it."""
    sample = next(s for s in ADAPTER.load("simple_python") if "." in s.gold.functions[0]["name"])
    assert sample.metadata["mode"] == "fc"
    ((name, params),) = sample.gold.ground_truth[0].items()
    args = ", ".join(f"{k}={v[0]!r}" for k, v in params.items() if v[0] != "")
    client, _ = prompt_client(sample, [AssistantTurn(content=f"[{name}({args})]")])
    trajectory = run(sample, client)
    as_run = Services(options={"prompt_mode": True})
    result = asyncio.run(ADAPTER.score(sample, trajectory, as_run))
    assert result.passed and result.details["prompt_mode"] is True
    # Scored as FC, the same transcript holds calls named with "." (FC names use "_").
    fc_result = score(sample, trajectory)
    assert fc_result.details["prompt_mode"] is False and not fc_result.passed
    assert not ADAPTER.is_prompt_mode(sample, trajectory, Services())
    assert ADAPTER.is_prompt_mode(sample, Trajectory(), as_run)
