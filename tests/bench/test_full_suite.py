"""The pure parts of bench/full_suite.py (the full-size bench), so that it cannot rot
unnoticed: the request key, the reply book and the replay server's handler, the
targets' verdicts, the suites it writes and its CPU meter."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import full_suite  # noqa: E402
from replay_book import (  # noqa: E402
    UNMATCHED_STATUS,
    ReplayHandler,
    ReplyBook,
    Target,
    exit_code,
    reply_of,
    request_key,
    target_table,
    wire_body,
)

from harness.config.suites import load_suite  # noqa: E402
from harness.models.openai_http import OpenAIHTTPClient  # noqa: E402
from harness.testing.fake_server import FakeServer  # noqa: E402
from harness.types import AssistantTurn, SamplingParams, ToolCall  # noqa: E402

TOOLS = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]


def conversation(call_id: str, arguments: str) -> list[dict]:
    return [
        {"role": "user", "content": "add 1 and 2"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "add", "arguments": arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": "3"},
    ]


def test_the_key_ignores_ids_seed_model_and_argument_spacing():
    recorded = wire_body(
        conversation("oracle_0", '{"a": 1, "b": 2}'), TOOLS, SamplingParams(seed=0)
    )
    sent = wire_body(conversation("call_9", '{"b":2,"a":1}'), TOOLS, SamplingParams(seed=3))
    sent["model"] = "another-name"
    assert request_key(recorded) == request_key(sent)


def test_the_key_tells_apart_what_decides_the_reply():
    base = wire_body(conversation("c", '{"a": 1}'), TOOLS, SamplingParams())
    other_result = conversation("c", '{"a": 1}')
    other_result[-1]["content"] = "4"
    other_arguments = conversation("c", '{"a": 2}')
    assert request_key(base) != request_key(wire_body(other_result, TOOLS, SamplingParams()))
    assert request_key(base) != request_key(wire_body(other_arguments, TOOLS, SamplingParams()))
    assert request_key(base) != request_key(
        wire_body(conversation("c", '{"a": 1}'), [], SamplingParams())
    )


def test_the_book_keeps_one_reply_a_key_notes_conflicts_and_reads_back(tmp_path):
    book = ReplyBook()
    book.add("k1", {"content": "a"})
    book.add("k1", {"content": "a"})
    book.add("k2", {"content": "b"})
    book.add("k2", {"content": "c"})
    assert book.conflicts == {"k2"}
    book.save(tmp_path / "book.jsonl")
    assert ReplyBook.load(tmp_path / "book.jsonl").replies == book.replies


def test_the_handler_answers_recorded_requests_and_counts_the_others():
    turn = AssistantTurn(tool_calls=[ToolCall(id="oracle_0", name="add", arguments={"a": 1})])
    body = wire_body(conversation("x", '{"a": 1}'), TOOLS, SamplingParams())
    book = ReplyBook()
    book.add(request_key(body), reply_of(turn))
    handler = ReplayHandler(book)
    reply = handler(body)
    assert reply.status == 200 and reply.tool_calls[0]["function"]["name"] == "add"
    missing = handler({"messages": [{"role": "user", "content": "never recorded"}]})
    assert missing.status == UNMATCHED_STATUS
    counts = handler.counts()
    assert (
        counts["served"] == 1
        and counts["unmatched"] == 1
        and "never recorded" in counts["examples"][0]
    )


def test_a_client_gets_the_recorded_turn_through_the_server():
    turn = AssistantTurn(
        content=None, tool_calls=[ToolCall(id="oracle_0", name="add", arguments={"a": 1, "b": 2})]
    )
    messages = conversation("x", '{"a": 1}')
    book = ReplyBook()
    book.add(request_key(wire_body(messages, TOOLS, SamplingParams())), reply_of(turn))
    handler = ReplayHandler(book)

    async def ask() -> AssistantTurn:
        client = OpenAIHTTPClient("openai/replay-oracle", server.url)
        try:
            return await client.complete(messages, TOOLS, SamplingParams(seed=7))
        finally:
            await client.aclose()

    with FakeServer(handler=handler) as server:
        got = asyncio.run(ask())
    assert [(c.id, c.name, c.arguments) for c in got.tool_calls] == [
        ("oracle_0", "add", {"a": 1, "b": 2})
    ]
    assert handler.counts()["unmatched"] == 0


def test_targets_verdicts_and_the_exit_code():
    low = Target("rate", 0.96, 0.95, at_most=False)
    high = Target("cpu", 2.5, 2.0)
    unmeasured = Target("open", None, 5.0)
    assert low.met and not high.met and not unmeasured.met
    table = target_table([low, high, unmeasured])
    assert table[1].endswith(" met") and table[2].endswith("NOT MET") and "not measured" in table[3]
    assert exit_code([low], 0, 0) == 0
    assert exit_code([low, high], 0, 0) == 1
    assert exit_code([low], 1, 0) == 1 and exit_code([low], 0, 1) == 1


def test_the_suites_it_writes_load(tmp_path):
    part = full_suite.PARTS["vitabench"]
    path = tmp_path / "vitabench.yaml"
    path.write_text(full_suite.suite_text(part, {"delivery": 3, "instore": None}))
    suite = load_suite(str(path))
    assert suite.trials == 4 and suite.user_model == "scripted" and suite.judge_model == "stub"
    assert [(e.subsets, e.limit, e.options) for e in suite.entries] == [
        (["delivery"], 3, {"language": "en"}),
        (["instore"], None, {"language": "en"}),
    ]


def test_the_meter_counts_a_coroutines_own_steps_not_the_wait():
    meter = full_suite.Meter()

    async def work() -> str:
        await asyncio.sleep(0.05)  # other tasks' time: not counted
        end = time.thread_time() + 0.02
        while time.thread_time() < end:
            pass
        return "done"

    async def busy_neighbour() -> None:
        end = time.thread_time() + 0.2
        while time.thread_time() < end:
            await asyncio.sleep(0)

    async def both() -> str:
        result, _ = await asyncio.gather(full_suite.stepped(work, meter)(), busy_neighbour())
        return result

    assert asyncio.run(both()) == "done"
    assert 0.02 <= meter.seconds < 0.1


def test_an_error_inside_a_metered_coroutine_is_raised_and_counted():
    meter = full_suite.Meter()

    async def fails() -> None:
        await asyncio.sleep(0)
        raise ValueError("bad tool call")

    with pytest.raises(ValueError, match="bad tool call"):
        asyncio.run(full_suite.stepped(fails, meter)())
    assert meter.seconds >= 0


def test_rss_growth_needs_both_marks():
    assert full_suite.growth({"0.1": 100.0, "1.0": 105.0}, 0.1) == pytest.approx(0.05)
    assert full_suite.growth({"1.0": 105.0}, 0.1) is None


@pytest.mark.slow
def test_the_bench_runs_end_to_end_on_a_tiny_slice(tmp_path):
    import subprocess

    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "full_suite.py"),
            "--limit",
            "1",
            "--concurrency",
            "4",
            "--benchmarks",
            "bfcl",
            "--latency",
            "0.01",
            "--keep",
            str(tmp_path / "work"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    out = done.stdout
    assert "scores differing from the oracle's: 0; unmatched requests: 0" in out, (
        out[-3000:] + done.stderr[-3000:]
    )
    assert "suite samples/s / sequential bare client's" in out
    assert "best possible schedules of the episodes" in out


def test_rss_growth_is_judged_once_the_in_flight_window_is_full():
    # 256 in flight over 656 records: 10% (66) is still filling it; 50% (328) is not.
    assert full_suite.growth_start(656, 256) == 0.5
    assert full_suite.growth_start(656, 64) == 0.1
    assert full_suite.growth_start(4416, 256) == 0.1
    assert full_suite.growth_start(78, 256) == 0.5  # no mark gets there: the last before the end
    marks = {"0.1": 200.0, "0.5": 250.0, "1.0": 260.0}
    assert full_suite.growth(marks, 0.5) == pytest.approx(0.04)
    assert full_suite.growth(marks, 0.1) == pytest.approx(0.3)
    assert full_suite.growth({"1.0": 260.0}, 0.5) is None


def test_a_metered_environment_holds_no_reference_cycle():
    """The run freezes a large world out of the collector once built: a cycle
    through the meters would keep each environment until the run ends."""
    import gc
    import weakref

    class World:
        large_state = True

        def final_state(self) -> dict:
            return {"total": 1}

    world = World()
    world.final_state = full_suite.unbound(world, "final_state")
    assert world.final_state() == {"total": 1}
    gone = weakref.ref(world)
    gc.disable()
    try:
        del world
        assert gone() is None
    finally:
        gc.enable()
