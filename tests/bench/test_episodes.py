"""The recorded episodes and the ambiguous samples (bench/episodes.py), the suite
the replay runs without them, and the sequential bare client (bench/full_suite.py)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import full_suite  # noqa: E402
from episodes import (  # noqa: E402
    Episode,
    ambiguous_samples,
    call_line,
    kept_ids,
    leave_out,
    read_episodes,
)

from harness.config.suites import load_suite  # noqa: E402
from harness.testing.fake_server import FakeServer  # noqa: E402


def body(text: str) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": text}]}


def test_calls_are_grouped_by_episode_in_the_runners_order(tmp_path):
    path = tmp_path / "episodes.jsonl"
    # Episodes interleave in the file (they ran at once); 2 started before 3.
    lines = [
        call_line(3, "tau2/retail/7", body("r1")),
        call_line(2, "tau2/airline/1", body("a1")),
        call_line(3, "tau2/retail/7", body("r2")),
        call_line(2, "tau2/airline/1", body("a2")),
        call_line(2, "tau2/airline/1", body("a3")),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    episodes = read_episodes(path)
    assert [(e.number, e.sample, len(e.bodies)) for e in episodes] == [
        (2, "tau2/airline/1", 3),
        (3, "tau2/retail/7", 2),
    ]
    assert [json.loads(b)["messages"][0]["content"] for b in episodes[0].bodies] == [
        "a1",
        "a2",
        "a3",
    ]


def test_samples_that_asked_a_request_answered_two_ways_are_ambiguous():
    askers = {"k1": {"a/s/1", "a/s/2"}, "k2": {"a/s/3"}, "k3": {"a/s/1"}}
    assert ambiguous_samples({"k1"}, askers) == {"a/s/1", "a/s/2"}
    assert ambiguous_samples(set(), askers) == set()


def test_ambiguous_samples_are_left_out_and_counted_with_all_their_trials():
    episodes = [
        Episode(1, "tau2/airline/1", [b"x"] * 3),
        Episode(2, "tau2/airline/2", [b"x"] * 5),
        Episode(3, "tau2/airline/1", [b"x"] * 3),  # the second trial
        Episode(4, "tau2/retail/9", [b"x"] * 2),
    ]
    split = leave_out(episodes, {"tau2/airline/1"})
    assert [e.number for e in split.kept] == [2, 4]
    assert [e.number for e in split.left_out] == [1, 3]
    assert split.left_out_samples == 1 and split.kept_calls == 7


def test_kept_ids_follow_the_order_given_without_repeats():
    order = ["t/airline/3", "t/airline/1", "t/retail/a/b", "t/airline/3", "t/airline/2"]
    assert kept_ids(order, {"t/airline/1"}) == {"airline": ["3", "2"], "retail": ["a/b"]}
    assert kept_ids(order, {"t/retail/a/b"})["retail"] == []


def test_the_replay_suite_leaves_out_the_ambiguous_samples(tmp_path):
    expected = {
        f"tau2/{subset}/{i}#{t}": ["ok", True, 1.0]
        for subset in ("airline", "retail")
        for i in range(3)
        for t in range(2)
    }
    (tmp_path / "oracle").mkdir()
    (tmp_path / "oracle" / "tau2.expected.json").write_text(json.dumps(expected))
    (tmp_path / "episodes").mkdir()
    (tmp_path / "suites").mkdir()
    # The runner started airline 2 before airline 0 (and airline 1 made no call).
    lines, number = [], 0
    for key in sorted(expected, key=lambda k: (k.rsplit("#")[-1], k != "tau2/airline/2#0")):
        number += 1
        sample = key.rsplit("#", 1)[0]
        if sample != "tau2/airline/1":
            lines += [call_line(number, sample, body(sample))] * 2
    (tmp_path / "episodes" / "tau2.jsonl").write_text("\n".join(lines) + "\n")
    part = full_suite.Part("tau2", ("airline", "retail", "telecom"), 2)
    ambiguous = {"tau2/airline/0", "tau2/retail/0", "tau2/retail/1", "tau2/retail/2"}
    counts = full_suite.leave_out_ambiguous(tmp_path, part, ambiguous)
    assert counts == {
        "ambiguous": sorted(ambiguous),
        "left_out_records": 8,
        "left_out_calls": 16,
        "replay_records": 4,
        "replay_calls": 4,
    }
    suite = load_suite(str(tmp_path / "suites" / "tau2.replay.yaml"))
    # retail has no sample left: no entry (an entry without ids would run them all).
    assert suite.trials == 2
    # In the runner's order; the sample that made no call last.
    assert [(e.subsets, e.ids) for e in suite.entries] == [(["airline"], ["2", "1"])]


def test_every_sample_ambiguous_is_one_clear_line(tmp_path):
    (tmp_path / "oracle").mkdir()
    (tmp_path / "oracle" / "tau2.expected.json").write_text(json.dumps({"tau2/airline/1#0": []}))
    (tmp_path / "episodes").mkdir()
    (tmp_path / "episodes" / "tau2.jsonl").write_text(call_line(1, "tau2/airline/1", {}) + "\n")
    part = full_suite.Part("tau2", ("airline",), 1)
    with pytest.raises(SystemExit, match="every tau2 sample is ambiguous"):
        full_suite.leave_out_ambiguous(tmp_path, part, {"tau2/airline/1"})


def test_the_bare_client_posts_an_episodes_calls_one_after_another():
    # One episode of 4 calls and four of 1 call, 0.1 s a call, 4 in flight: the
    # long episode cannot finish before its 4 calls in a row (0.4 s); posted
    # independently, all 8 calls would take 0.2 s.
    long = Episode(1, "b/s/long", [json.dumps(body(f"long {i}")).encode() for i in range(4)])
    short = [Episode(n, f"b/s/{n}", [json.dumps(body(str(n))).encode()]) for n in range(2, 6)]
    with FakeServer(latency=0.1) as server:
        run = asyncio.run(full_suite.sequential_bare_client(server.url, [long, *short], 4))
        asked = [r.body["messages"][0]["content"] for r in server.chat_requests]
    assert run.calls == 8 and run.failed == 0
    assert [len(calls) for calls in run.latencies] == [4, 1, 1, 1, 1]
    assert all(latency >= 0.09 for calls in run.latencies for latency in calls)
    assert run.seconds >= 0.39
    longs = [text for text in asked if text.startswith("long")]
    assert longs == ["long 0", "long 1", "long 2", "long 3"]
    # The schedule from these latencies says the same.
    schedule = full_suite.best_schedule(run.latencies, 4)
    assert schedule.in_order >= 0.39 and schedule.independent < schedule.in_order
