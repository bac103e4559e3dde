"""FinMCP-Bench end to end: replay, teacher forcing, oracle, null and scripted models."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from harness.adapters.finmcp import FinMCPAdapter
from harness.adapters.finmcp.gold import RecordedCall
from harness.adapters.finmcp.replay import ReplayEnvironment
from harness.errors import ConfigError
from harness.models.base import ModelClient, NullClient, ScriptedClient
from harness.strategies.plain import PlainStrategy
from harness.task.contract import RecordView, Sample, Services
from harness.types import AssistantTurn, SamplingParams, ToolCall, Trajectory


@pytest.fixture(scope="module")
def adapter() -> FinMCPAdapter:
    return FinMCPAdapter()


@pytest.fixture(scope="module")
def samples(adapter, shared_data: Path) -> dict[str, Sample]:
    return {s.id: s for s in adapter.load("all", data_dir=shared_data / "finmcp")}


def run(sample: Sample, model: ModelClient) -> Trajectory:
    trajectory = asyncio.run(PlainStrategy().run(sample, model, Services(), SamplingParams()))
    # Score what the runner stores: the JSON form of the trajectory.
    return Trajectory.from_dict(json.loads(json.dumps(trajectory.to_dict(), ensure_ascii=False)))


def score_all(adapter, items: list[tuple[Sample, Trajectory]]) -> list[RecordView]:
    records = []
    for sample, trajectory in items:
        score = asyncio.run(adapter.score(sample, trajectory, Services()))
        records.append(RecordView(sample.id, sample.subset, 0, "ok", score, sample.metadata))
    return records


def call(name: str, arguments: dict | str, call_id: str = "") -> ToolCall:
    if isinstance(arguments, str):
        return ToolCall.from_openai(
            {"id": call_id, "function": {"name": name, "arguments": arguments}}
        )
    return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=json.dumps(arguments))


def calls_turn(*calls: ToolCall) -> AssistantTurn:
    return AssistantTurn(content=None, tool_calls=list(calls), finish_reason="tool_calls")


def text(content: str) -> AssistantTurn:
    return AssistantTurn(content=content, finish_reason="stop")


def gold_arguments(sample: Sample, name: str) -> dict:
    for message in sample.gold:
        for entry in message.get("tool_calls") or []:
            if entry["function"]["name"] == name:
                return json.loads(entry["function"]["arguments"])
    raise KeyError(name)


# -- replay environment -----------------------------------------------------------


def recorded(index: int, name: str, arguments: dict | None, output: str) -> RecordedCall:
    return RecordedCall(index=index, name=name, arguments=arguments, output=output)


RECORDINGS = [
    recorded(0, "SearchFunds", {"keyword": "红利", "size": 10}, "funds-a"),
    recorded(1, "SearchFunds", {"keyword": "货币", "size": 5}, "funds-b"),
    recorded(2, "SearchFunds", {"keyword": "货币", "size": 10}, "funds-c"),
    recorded(3, "GetNews", {}, "news"),
]


def tool(name: str, properties: dict) -> dict:
    parameters = {"type": "object", "properties": properties}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


KNOWN = [
    tool("SearchFunds", {"keyword": {"type": "string"}, "size": {"type": "number"}}),
    tool("GetNews", {}),
    tool("GetUserAssetView", {"userId": {"type": ["string", "null"]}}),
]


def replay(environment: ReplayEnvironment, tool_call: ToolCall):
    return asyncio.run(environment.execute(tool_call))


def test_replay_exact_match_ignores_key_order_and_integral_floats():
    environment = ReplayEnvironment(RECORDINGS, KNOWN)
    result = replay(environment, call("SearchFunds", {"size": 10.0, "keyword": "货币"}))
    assert (result.content, result.is_error) == ("funds-c", False)
    assert environment.final_state()["replay_log"] == [
        {"turn": -1, "name": "SearchFunds", "match": "exact", "source": 2}
    ]


def test_replay_nearest_call_most_shared_pairs_then_gold_order():
    environment = ReplayEnvironment(RECORDINGS, KNOWN)
    # call 2 shares keyword and size (2 pairs), calls 0 and 1 one pair each
    assert (
        replay(environment, call("SearchFunds", {"keyword": "货币", "size": 10, "x": 1})).content
        == "funds-c"
    )
    # shares one pair with call 0 (size 10) and one with call 1 (keyword): tie -> first
    assert (
        replay(environment, call("SearchFunds", {"keyword": "货币", "size": 3})).content
        == "funds-b"
    )
    assert (
        replay(environment, call("SearchFunds", {"keyword": "债券", "size": 7})).content
        == "funds-a"
    )
    state = environment.final_state()
    assert state["replay_counts"]["approximate"] == 3
    assert state["replay_counts"]["exact"] == 0


def test_replay_unknown_tool_and_no_record_are_error_results():
    environment = ReplayEnvironment(RECORDINGS, KNOWN)
    unknown = replay(environment, call("rm_rf", {"path": "/"}))
    assert unknown.is_error and "unknown tool 'rm_rf'" in unknown.content
    no_record = replay(environment, call("GetUserAssetView", {"userId": "1"}))
    assert (
        no_record.is_error and "no recorded data for tool 'GetUserAssetView'" in no_record.content
    )
    # Wrong JSON types are refused as a validating server would; undeclared names pass.
    wrong = replay(environment, call("SearchFunds", {"keyword": ["a", {"b": None}], "size": 10}))
    assert wrong.is_error
    assert "argument 'keyword' must be of type string, got array" in wrong.content
    assert replay(environment, call("SearchFunds", {"size": 5, "extra": [1]})).content == "funds-b"
    null_ok = replay(environment, call("GetUserAssetView", {"userId": None}))
    assert "no recorded data" in null_ok.content
    counts = environment.final_state()["replay_counts"]
    assert (counts["unknown_tool"], counts["no_record"], counts["invalid_arguments"]) == (1, 2, 1)
    assert counts["approximate"] == 1
    json.dumps(environment.final_state())


def test_replay_refuses_calls_past_the_per_turn_cap():
    environment = ReplayEnvironment(RECORDINGS, KNOWN, cap=2)
    environment.begin_turn(0)
    results = [replay(environment, call("GetNews", {})) for _ in range(4)]
    assert [r.is_error for r in results] == [False, False, False, True]  # 3 = at most 2 before
    assert "limit of 2 tool calls per turn" in results[3].content
    environment.begin_turn(1)
    assert not replay(environment, call("GetNews", {})).is_error
    assert environment.final_state()["replay_counts"]["over_cap"] == 1


# -- whole items through the episode loop ------------------------------------------


def test_oracle_scores_one_hundred_percent_on_the_shared_data(adapter, samples):
    results = [(s, run(s, adapter.oracle(s))) for s in samples.values()]
    for sample, trajectory in results:
        assert (
            trajectory.final_state["replay_counts"]["exact"] == sample.metadata["gold_tool_count"]
        )
        assert trajectory.final_state["replay_counts"]["approximate"] == 0
    aggregate = adapter.aggregate(score_all(adapter, results))
    for key in ("micro_precision", "micro_recall", "micro_f1", "macro_f1"):
        assert aggregate.headline[key] == 1.0
    assert aggregate.headline["exact_match_ordered"] == 1.0
    assert aggregate.headline["exact_match_grouped"] == 1.0
    assert aggregate.subsets["all"].n_records == 78
    assert set(aggregate.headline) == {
        "micro_precision",
        "micro_recall",
        "micro_f1",
        "macro_precision",
        "macro_recall",
        "macro_f1",
        "exact_match_ordered",
        "exact_match_grouped",
        "n_dropped_malformed",
    }
    assert aggregate.headline["n_dropped_malformed"] == 0
    assert "dropped_items" not in aggregate.subsets
    assert aggregate.subsets["task:multi_turn"].n_records == 2
    assert aggregate.subsets["difficulty:medium"].metrics["micro_f1"] == 1.0


def test_oracle_transcript_reproduces_the_gold_turn_by_turn(adapter, samples):
    sample = samples["602"]
    trajectory = run(sample, adapter.oracle(sample))
    gold_users = [m for m in sample.gold if m["role"] == "user"]
    assert len(trajectory.context_resets) == len(gold_users) == 8
    # Each reset history is the gold up to that user message, tool outputs included.
    for n, history in enumerate(trajectory.reset_histories):
        cut = [i for i, m in enumerate(sample.gold) if m["role"] == "user"][n]
        assert history == sample.gold[:cut]
    outputs = [m["content"] for m in trajectory.messages if m["role"] == "tool"]
    assert outputs == [m["content"] for m in sample.gold if m["role"] == "tool"]


def test_null_model_scores_zero(adapter, samples):
    results = [(s, run(s, NullClient())) for s in samples.values()]
    aggregate = adapter.aggregate(score_all(adapter, results))
    assert all(value == 0 for key, value in aggregate.headline.items() if not key.startswith("n_"))
    assert aggregate.subsets["all"].metrics["fn"] == sum(
        s.metadata["gold_tool_count"] for s in samples.values()
    )


def imperfect_scripts(samples: dict[str, Sample]) -> dict[str, ScriptedClient]:
    s603, s201, s2 = samples["603"], samples["201"], samples["2"]
    return {
        # Turn 1: text. Turn 2: one right call, the same tool again with other arguments
        # (approximate replay), an unknown tool. Turn 3 ("###STOP###"): text.
        "603": ScriptedClient(
            [
                text("hello"),
                calls_turn(
                    call("BatchGetFundsDetail", gold_arguments(s603, "BatchGetFundsDetail"))
                ),
                calls_turn(call("BatchGetFundsDetail", {"fundCodes": ["000001"]})),
                calls_turn(call("MadeUpTool", {"q": 1})),
                text("answer"),
                text("bye"),
            ]
        ),
        # Two gold calls in one parallel message, then a malformed call, then text.
        "201": ScriptedClient(
            [
                calls_turn(
                    call("GetUserAssetView", gold_arguments(s201, "GetUserAssetView")),
                    call("GetUserAssetBrief", gold_arguments(s201, "GetUserAssetBrief")),
                ),
                calls_turn(call("BatchGetStrategiesComposition", '{"strategyCodes": [', "bad")),
                text("report"),
            ]
        ),
        "1": ScriptedClient([text("no tools")]),
        "2": ScriptedClient([calls_turn(call("SearchFunds", gold_arguments(s2, "SearchFunds")))]),
    }


@pytest.fixture(scope="module")
def counting_samples(adapter, shared_data: Path) -> dict[str, Sample]:
    options = {"malformed_arguments": "count"}
    return {s.id: s for s in adapter.load("all", data_dir=shared_data / "finmcp", options=options)}


def test_scripted_imperfect_model_gives_hand_computed_numbers(adapter, samples):
    """The official protocol: item 201's malformed call drops it from every sum."""
    scripts = imperfect_scripts(samples)
    chosen = [samples[i] for i in ("603", "201", "1", "2")]
    results = [(s, run(s, scripts[s.id])) for s in chosen]
    records = score_all(adapter, results)
    scores = {record.sample_id: record.score for record in records}

    # 603: gold BGFD, GFA, BGFNH; predicted BGFD, BGFD, MadeUpTool -> TP 1 FP 2 FN 2
    assert (scores["603"].tool_tp, scores["603"].tool_fp, scores["603"].tool_fn) == (1, 2, 2)
    assert scores["603"].details["replay"]["approximate"] == 1
    assert scores["603"].details["replay"]["unknown_tool"] == 1
    # 201: dropped (its counts as it ran kept apart: GUAV, GUAB, BGSC of 6 gold calls)
    assert (scores["201"].tool_tp, scores["201"].tool_fp, scores["201"].tool_fn) == (None,) * 3
    assert scores["201"].details["dropped"] and not scores["201"].passed
    assert "not JSON" in scores["201"].details["malformed_arguments"]
    assert scores["201"].details["tool_counts"] == {"tp": 3, "fp": 0, "fn": 3}
    # 1: nothing predicted; 2: exact
    assert (scores["1"].tool_tp, scores["1"].tool_fp, scores["1"].tool_fn) == (0, 0, 1)
    assert scores["2"].passed and scores["2"].details["exact_match_grouped"]

    result = adapter.aggregate(records)
    headline = result.headline
    # micro over 603, 1, 2: TP 2, FP 2, FN 3
    assert headline["micro_precision"] == pytest.approx(2 / 4)
    assert headline["micro_recall"] == pytest.approx(2 / 5)
    assert headline["micro_f1"] == pytest.approx(4 / 9)
    # macro: P, R and F1 all (1/3, 0, 1)
    for key in ("macro_precision", "macro_recall", "macro_f1"):
        assert headline[key] == pytest.approx(4 / 9)
    assert headline["exact_match_ordered"] == pytest.approx(1 / 3)
    assert headline["n_dropped_malformed"] == 1 and "n_malformed_counted" not in headline
    dropped = result.subsets["dropped_items"]
    assert dropped.n_records == 1 and dropped.metrics["tp"] == 3 and dropped.metrics["fn"] == 3
    assert result.subsets["all_incl_errors"].n_records == 4
    assert any("malformed_arguments=drop (the official protocol" in n for n in result.notes)


def test_counting_malformed_items_is_a_labelled_option(adapter, counting_samples):
    """``malformed_arguments: count`` scores item 201 as it ran, and says so."""
    samples = counting_samples
    scripts = imperfect_scripts(samples)
    chosen = [samples[i] for i in ("603", "201", "1", "2")]
    results = [(s, run(s, scripts[s.id])) for s in chosen]
    records = score_all(adapter, results)
    scores = {record.sample_id: record.score for record in records}
    assert (scores["201"].tool_tp, scores["201"].tool_fp, scores["201"].tool_fn) == (3, 0, 3)
    assert scores["201"].progress == pytest.approx(2 / 3)
    assert not scores["201"].details["dropped"] and scores["201"].details["malformed_arguments"]

    result = adapter.aggregate(records)
    headline = result.headline
    # micro: TP 5, FP 2, FN 6
    assert headline["micro_precision"] == pytest.approx(5 / 7)
    assert headline["micro_recall"] == pytest.approx(5 / 11)
    assert headline["micro_f1"] == pytest.approx(5 / 9)
    # macro: P (1/3, 1, 0, 1), R (1/3, 1/2, 0, 1), F1 (1/3, 2/3, 0, 1)
    assert headline["macro_precision"] == pytest.approx(7 / 12)
    assert headline["macro_recall"] == pytest.approx(11 / 24)
    assert headline["macro_f1"] == pytest.approx(0.5)
    assert headline["exact_match_ordered"] == pytest.approx(0.25)
    assert headline["n_malformed_counted"] == 1 and headline["n_dropped_malformed"] == 0
    assert any(n.startswith("NOT the official protocol") for n in result.notes)
    assert "count" in adapter.versions()["malformed_arguments"].split(",")


def test_malformed_arguments_option_is_checked(adapter, shared_data):
    with pytest.raises(ConfigError, match="malformed_arguments"):
        adapter.load("all", data_dir=shared_data / "finmcp", options={"malformed_arguments": "x"})


def test_teacher_forcing_resets_the_model_context_to_the_gold_history(adapter, samples):
    sample = samples["603"]
    script = imperfect_scripts(samples)["603"]
    trajectory = run(sample, script)
    gold = sample.gold
    users = [i for i, m in enumerate(gold) if m["role"] == "user"]
    # The first request of turn 2 is the gold history up to and including the 2nd
    # user message: the model's own turn-1 reply ("hello") is gone.
    turn2_first = script.calls[1]
    assert turn2_first == gold[: users[1] + 1]
    assert not any(m.get("content") == "hello" for m in turn2_first)
    # Turn 3 starts again from gold, without the model's turn-2 calls.
    turn3_first = script.calls[5]
    assert turn3_first == gold[: users[2] + 1]
    assert trajectory.termination == "completed"


def test_bad_model_input_becomes_errors_the_model_sees(adapter, samples):
    trajectory = run(samples["201"], imperfect_scripts(samples)["201"])
    tool_messages = [m for m in trajectory.messages if m["role"] == "tool"]
    assert "could not parse the arguments" in tool_messages[-1]["content"]
    trajectory = run(samples["603"], imperfect_scripts(samples)["603"])
    assert any(
        "unknown tool 'MadeUpTool'" in m["content"]
        for m in trajectory.messages
        if m["role"] == "tool"
    )


def run_never_stopping(sample: Sample) -> Trajectory:
    """The episode of a model that calls item 1's gold tool on every reply."""
    arguments = gold_arguments(sample, "SearchFinancialNews")
    return run(sample, ScriptedClient([calls_turn(call("SearchFinancialNews", arguments))] * 40))


def test_per_turn_cap_counts_what_the_official_loop_keeps(adapter, samples):
    sample = samples["1"]
    # 21 calls run, the 22nd reply is recorded unexecuted and ends the turn (not
    # the episode), as in the official loop.
    trajectory = run_never_stopping(sample)
    assert trajectory.termination == "completed"
    assert len(trajectory.turns) == 22 and trajectory.tool_calls == 21
    score = asyncio.run(adapter.score(sample, trajectory, Services()))
    assert score.tool_tp == 1 and score.tool_fp == 21
    assert score.details["uncounted_calls_after_cap"] == 0
    assert trajectory.final_state["replay_counts"]["exact"] == 21
    assert trajectory.final_state["replay_counts"]["over_cap"] == 0


def test_error_items_and_unscored_records_are_reported_apart(adapter, samples):
    results = [(s, run(s, adapter.oracle(s))) for s in (samples["1"], samples["2"], samples["201"])]
    records = score_all(adapter, results)
    records[1].metadata = {**records[1].metadata, "error_flag": True}
    broken = samples["202"]
    records.append(RecordView("202", "all", 0, "infra_error", None, broken.metadata))
    records.append(RecordView("1", "single_tool", 0, "ok", records[0].score, records[0].metadata))
    result = adapter.aggregate(records)
    assert result.subsets["all"].n_records == 2  # items 1 and 201
    assert result.subsets["error_items"].n_records == 1
    assert result.subsets["error_items"].metrics["tp"] == 1
    assert result.headline["micro_f1"] == 1.0
    incl = result.subsets["all_incl_errors"]
    # 1 + 1 + 6 gold calls found, the 6 of the unscored item 202 all missed.
    assert incl.metrics["tp"] == 8 and incl.metrics["fn"] == 6 and incl.n_infra_errors == 1
    assert incl.n_records == 4
    assert any("duplicate" in note for note in result.notes)
    assert any("flagged error=true" in note for note in result.notes)


@pytest.mark.slow  # ~7 s: litellm's first import and a real HTTP server
def test_through_an_openai_compatible_server_with_litellm(adapter, samples):
    from harness.models.litellm_client import LiteLLMClient
    from harness.testing.fake_server import FakeServer, Reply

    sample = samples["603"]
    with FakeServer() as server:
        server.enqueue(
            Reply.text("Which fund?"),
            Reply.calls(
                ("BatchGetFundsDetail", gold_arguments(sample, "BatchGetFundsDetail")),
                ("GetFundAnnouncements", gold_arguments(sample, "GetFundAnnouncements")),
            ),
            Reply.text("Here is the analysis."),
            Reply.text("Goodbye."),
        )
        client = LiteLLMClient("openai/fake-model", api_base=server.url)
        trajectory = run(sample, client)
        requests = [r.body for r in server.chat_requests]
    score = asyncio.run(adapter.score(sample, trajectory, Services()))
    # gold BGFD, GFA, BGFNH; predicted BGFD, GFA in one parallel message
    assert (score.tool_tp, score.tool_fp, score.tool_fn) == (2, 0, 1)
    assert score.progress == pytest.approx(0.8)
    assert not score.passed and not score.details["exact_match_grouped"]
    assert trajectory.final_state["replay_counts"]["exact"] == 2
    assert len(requests) == 4
    # Turn 2 was sent the gold history, not the model's own "Which fund?" reply.
    sent = [(m["role"], m.get("content")) for m in requests[1]["messages"]]
    users = [i for i, m in enumerate(sample.gold) if m["role"] == "user"]
    assert sent == [(m["role"], m.get("content")) for m in sample.gold[: users[1] + 1]]
    assert {t["function"]["name"] for t in requests[0]["tools"]} >= {"BatchGetFundNavHistory"}


def test_a_smaller_tool_call_cap_ends_turns_sooner_and_is_said(adapter, shared_data):
    # Option tool_call_cap (the tier uses it to keep a small model's turns short).
    (sample,) = adapter.load(
        "single_tool", ids=["1"], data_dir=shared_data / "finmcp", options={"tool_call_cap": 2}
    )
    trajectory = run_never_stopping(sample)
    # 3 calls run, the 4th reply is recorded unexecuted and ends the turn, as the
    # official loop does with its cap of 20 (21 run, the 22nd ends the turn).
    assert trajectory.termination == "completed"
    assert len(trajectory.turns) == 4 and trajectory.tool_calls == 3
    score = asyncio.run(adapter.score(sample, trajectory, Services()))
    assert score.tool_tp == 1 and score.tool_fp == 3
    assert score.details["uncounted_calls_after_cap"] == 0
    [record] = score_all(adapter, [(sample, trajectory)])
    notes = adapter.aggregate([record]).notes
    assert any("NOT the official protocol: tool_call_cap=2" in note for note in notes)
    assert adapter.versions()["tool_call_cap_per_turn"].split(",")[0] == "2"


def test_the_default_cap_is_the_official_loops_and_not_flagged(adapter, samples):
    sample = samples["1"]
    trajectory = run(sample, ScriptedClient([text("done")]))
    [record] = score_all(adapter, [(sample, trajectory)])
    assert not any("tool_call_cap" in note for note in adapter.aggregate([record]).notes)


@pytest.mark.parametrize("value", [0, -1, "3", True, 1.5])
def test_a_bad_tool_call_cap_is_a_config_error(adapter, shared_data, value):
    with pytest.raises(ConfigError, match="option tool_call_cap must be a whole number"):
        adapter.load(
            "single_tool", data_dir=shared_data / "finmcp", options={"tool_call_cap": value}
        )


def test_a_failure_names_the_gold_calls_missed_and_the_extra_ones(adapter, samples):
    sample = samples["603"]
    script = imperfect_scripts(samples)["603"]
    trajectory = run(sample, script)
    score = asyncio.run(adapter.score(sample, trajectory, Services()))
    assert not score.passed
    text = adapter.explain_failure(sample, trajectory, score)
    gold = score.details["gold_tools"]
    assert text.splitlines()[0] == (
        f"expected {len(gold)} gold call(s), got {len(score.details['predicted_tools'])}"
    )
    assert "calls not in the gold: `BatchGetFundsDetail`, `MadeUpTool`" in text
    view = adapter.gold_view(sample)
    assert [c.split("(")[0] for c in view["gold calls (in order)"]] == gold
    null = run(sample, NullClient())
    null_text = adapter.explain_failure(
        sample, null, asyncio.run(adapter.score(sample, null, Services()))
    )
    assert f"gold calls missed: `{gold[0]}`" in null_text
