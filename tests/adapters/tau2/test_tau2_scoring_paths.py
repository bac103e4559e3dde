"""tau2 scoring's two fast paths: the live environment's final state and the
on-disk gold cache. Both must give tau2's reward; the live state is used only when
it ran exactly the calls tau2 would replay, and only by the first scoring."""

from __future__ import annotations

import asyncio
import gc
import json
import uuid
import weakref
from dataclasses import replace

import pytest

from harness.adapters.tau2 import (
    Tau2Adapter,
    cache_files,
    domains,
    evaluation,
    gold_cache,
    live_state,
    replay_memo,
)
from harness.adapters.tau2.environment import Tau2Environment
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Sample, Services
from harness.types import SamplingParams, ToolCall, Trajectory

ADAPTER = Tau2Adapter()
RETAIL = ADAPTER.domain("retail")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(cache_files.CACHE_ENV, str(tmp_path / "tau2-cache"))
    gold_cache.clear_memory()
    yield tmp_path / "tau2-cache"
    gold_cache.clear_memory()


@pytest.fixture(scope="module")
def retail() -> Sample:
    return ADAPTER.load("retail", ids=["0"])[0]


def oracle_run(sample: Sample) -> Trajectory:
    model = ADAPTER.oracle(sample)
    return asyncio.run(PlainStrategy().run(sample, model, Services(), SamplingParams()))


def stored(trajectory: Trajectory) -> Trajectory:
    return Trajectory.from_dict(json.loads(json.dumps(trajectory.to_dict())))


def test_gold_hashes_are_computed_once_per_tau2_version_and_kept_on_disk(
    retail, private_cache, monkeypatch
):
    task = ADAPTER.task_of(retail)
    hashes = evaluation.gold_hashes(RETAIL, task)
    files = list((private_cache / ADAPTER.package().cache_name / "retail" / "gold").glob("*.json"))
    assert len(files) == 1
    assert json.loads(files[0].read_text()) == {"agent_db": hashes[0], "user_db": hashes[1]}

    # A new process (nothing in memory) reads the disk and computes nothing.
    gold_cache.clear_memory()

    def refuse(*args):
        raise AssertionError("gold state recomputed")

    monkeypatch.setattr(evaluation, "_gold_environment_hashes", refuse)
    assert evaluation.gold_hashes(RETAIL, task) == hashes


def test_a_broken_cache_file_is_recomputed_and_other_tasks_have_other_entries(
    retail, private_cache
):
    task = ADAPTER.task_of(retail)
    hashes = evaluation.gold_hashes(RETAIL, task)
    (path,) = (private_cache / ADAPTER.package().cache_name / "retail" / "gold").glob("*.json")
    path.write_text('{"agent_db": 5')
    gold_cache.clear_memory()
    assert evaluation.gold_hashes(RETAIL, task) == hashes
    assert json.loads(path.read_text())["agent_db"] == hashes[0]
    # The key is the task's content: an edited task is a new entry.
    edited = task.model_copy(deep=True)
    edited.evaluation_criteria.actions = edited.evaluation_criteria.actions[:-1]
    assert gold_cache.entry_key("gold", RETAIL, edited) != gold_cache.entry_key(
        "gold", RETAIL, task
    )
    assert evaluation.gold_hashes(RETAIL, edited) != hashes


def test_first_scoring_uses_the_live_state_once_then_replays(retail):
    trajectory = oracle_run(retail)
    assert trajectory.final_state["kind"] == live_state.KIND
    first = ADAPTER.score_now(retail, trajectory, Services())
    again = ADAPTER.score_now(retail, trajectory, Services())  # the state is used once
    regraded = ADAPTER.score_now(retail, stored(trajectory), Services())
    assert first.details["state_source"] == "live"
    assert again.details["state_source"] == regraded.details["state_source"] == "replay"
    assert first.reward == again.reward == regraded.reward == 1.0


def fresh_copy(trajectory: Trajectory, **changes) -> Trajectory:
    """The trajectory with a fresh, altered live state."""
    state = live_state.LiveState.from_dict(trajectory.final_state)
    copy = stored(trajectory)
    copy.final_state = live_state.register(replace(state, token=uuid.uuid4().hex, **changes))
    return copy


def test_the_live_state_counts_when_its_calls_are_the_transcripts(retail):
    trajectory = oracle_run(retail)
    # A live state that claims another database, with the transcript's calls: used
    # (this is what the first scoring trusts), so the reward follows it.
    lying = fresh_copy(trajectory, hashes=("not the gold hash", None))
    score = ADAPTER.score_now(retail, lying, Services())
    assert (score.details["state_source"], score.reward) == ("live", 0.0)


def test_a_live_state_of_other_calls_is_ignored(retail):
    trajectory = oracle_run(retail)
    # Same claim, but the state says it ran other calls: the transcript is replayed.
    other = fresh_copy(trajectory, hashes=("not the gold hash", None), calls_digest="0" * 64)
    score = ADAPTER.score_now(retail, other, Services())
    assert (score.details["state_source"], score.reward) == ("replay", 1.0)
    # Cut the transcript after the first tool result: tau2 would replay fewer calls
    # than the live environment ran, so the (true) live state does not apply either.
    cut = stored(trajectory)
    first_tool = next(i for i, m in enumerate(cut.messages) if m["role"] == "tool")
    cut.messages = cut.messages[: first_tool + 1] + [{"role": "user", "content": "###STOP###"}]
    cut.final_state = fresh_copy(trajectory).final_state
    score = ADAPTER.score_now(retail, cut, Services())
    assert (score.details["state_source"], score.reward) == ("replay", 0.0)


def test_policy_and_tools_are_planned_from_disk_without_loading_a_database(
    private_cache, monkeypatch
):
    """The first planning of a domain stores its policy and tool schemas; a new
    process plans from them and loads no database until an episode starts."""
    domains._facts.cache_clear()
    computed = (
        domains.policy(ADAPTER.domain("airline")),
        domains.agent_tools(ADAPTER.domain("airline")),
    )
    path = private_cache / ADAPTER.package().cache_name / "airline" / "facts.json"
    assert path.is_file()

    domains._facts.cache_clear()
    domains._pristine.cache_clear()

    def refuse(domain):
        raise AssertionError("a database was loaded to plan")

    with monkeypatch.context() as patched:
        patched.setattr(domains, "_pristine", refuse)
        assert (
            domains.policy(ADAPTER.domain("airline")),
            domains.agent_tools(ADAPTER.domain("airline")),
        ) == computed
        assert domains.user_tools(ADAPTER.domain("airline")) is None

    # A broken or older entry is recomputed.
    path.write_text('{"format": 0}')
    domains._facts.cache_clear()
    assert domains.policy(ADAPTER.domain("airline")) == computed[0]
    assert json.loads(path.read_text())["format"] == domains.FACTS_FORMAT
    domains._facts.cache_clear()


def test_a_regrade_replays_each_distinct_transcript_once(retail, monkeypatch):
    """Trials with the same calls and answers share one replay; a transcript that
    differs in one recorded answer is replayed, and scored on its own replay."""
    trajectory = oracle_run(retail)
    assert ADAPTER.score_now(retail, trajectory, Services()).details["state_source"] == "live"
    replays = []
    real_replay = evaluation.replay

    def counted(*args):
        replays.append(1)
        return real_replay(*args)

    monkeypatch.setattr(evaluation, "replay", counted)
    first = ADAPTER.score_now(retail, stored(trajectory), Services())
    second = ADAPTER.score_now(retail, stored(trajectory), Services())
    assert len(replays) == 1
    assert first.details == second.details and first.reward == second.reward == 1.0

    # The same calls with one answer recorded otherwise: its own replay, which
    # finds the answer differs from what tau2 gives now.
    altered = stored(trajectory)
    tool = next(m for m in altered.messages if m["role"] == "tool")
    tool["content"] = tool["content"] + " (edited)"
    score = ADAPTER.score_now(retail, altered, Services())
    assert len(replays) == 2
    assert score.details["replay_mismatches"] and not first.details["replay_mismatches"]

    # What is kept is forgotten on request: the next scoring replays again.
    replay_memo.clear()
    ADAPTER.score_now(retail, stored(trajectory), Services())
    assert len(replays) == 3


def read_only_calls(task) -> list[ToolCall]:
    """The task's gold agent calls of tools tau2 declares read-only."""
    unchanging = domains.unchanging_tools(RETAIL)
    return [
        ToolCall(id=str(n), name=action.name, arguments=action.arguments)
        for n, action in enumerate(task.evaluation_criteria.actions or [])
        if action.requestor == "assistant" and action.name in unchanging
    ]


def test_the_agents_calls_run_on_the_loop_with_the_results_tau2_gives(retail, monkeypatch):
    from harness.adapters.tau2 import environment

    task = ADAPTER.task_of(retail)
    calls = read_only_calls(task) + [
        ToolCall(id="w", name="cancel_pending_order", arguments={"order_id": "#nope"}),
        ToolCall(id="c", name="calculate", arguments={"expression": "9**9**9**9"}),
    ]
    direct = Tau2Environment(RETAIL, task)
    expected = [direct.run(call, "assistant") for call in calls]

    def thread(*args, **kwargs):
        raise AssertionError("an original domain's call went to the tool thread")

    monkeypatch.setattr(environment, "run_tool_call", thread)
    env = Tau2Environment(RETAIL, task)

    async def play():
        return [await env.execute(call) for call in calls]

    assert asyncio.run(play()) == expected
    assert expected[-1].is_error and "too expensive" in expected[-1].content  # still guarded
    # (the token names each live state registered for scoring)
    ours, theirs = env.final_state(), direct.final_state()
    assert env.changed_state and {**ours, "token": None} == {**theirs, "token": None}


def test_a_final_state_after_read_only_calls_takes_the_initial_hashes_without_hashing(
    retail, monkeypatch
):
    task = ADAPTER.task_of(retail)
    reads = read_only_calls(task)
    assert reads  # the task looks things up before it changes them
    env = Tau2Environment(RETAIL, task)
    for call in reads:
        assert not env.run(call, "assistant").is_error
    computed = (env.env.get_db_hash(), env.env.get_user_db_hash())

    def no_hashing():
        raise AssertionError("the live database was hashed again")

    monkeypatch.setattr(env.env, "get_db_hash", no_hashing)
    assert not env.changed_state
    state = env.final_state()
    assert tuple(state["db_hashes"]) == computed == evaluation.initial_hashes(RETAIL, task)


def test_a_call_that_may_change_the_databases_makes_the_final_state_hash_them(retail):
    task = ADAPTER.task_of(retail)
    env = Tau2Environment(RETAIL, task)
    # A write that fails still counts: a failing tool may have changed something first.
    failing = ToolCall(id="w", name="cancel_pending_order", arguments={"order_id": "#nope"})
    assert env.run(failing, "assistant").is_error and env.changed_state
    env = Tau2Environment(RETAIL, task)
    unknown = ToolCall(id="u", name="no_such_tool", arguments={})
    env.run(unknown, "assistant")
    assert env.changed_state  # only tools tau2 declares read-only are trusted
    writes = [a for a in task.evaluation_criteria.actions if a.name in domains.write_tools(RETAIL)]
    env = Tau2Environment(RETAIL, task)
    for action in writes:
        env.run(ToolCall(id="x", name=action.name, arguments=action.arguments), "assistant")
    state = env.final_state()
    assert tuple(state["db_hashes"]) == (env.env.get_db_hash(), env.env.get_user_db_hash())
    assert tuple(state["db_hashes"]) == evaluation.gold_hashes(RETAIL, task)
    assert tuple(state["db_hashes"]) != evaluation.initial_hashes(RETAIL, task)


def test_an_environment_is_freed_when_dropped_without_the_collector(retail):
    # Its world is frozen out of the collector's passes in a run: it must hold no
    # reference cycle, or it would stay until the run ends.
    assert Tau2Environment.large_state
    task = ADAPTER.task_of(retail)
    env = Tau2Environment(RETAIL, task)
    for call in read_only_calls(task):
        env.run(call, "assistant")
    env.final_state()
    database = weakref.ref(env.env.tools)
    gc.disable()
    try:
        del env
        assert database() is None
    finally:
        gc.enable()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["airline", "retail", "telecom"])
def test_read_only_tools_leave_every_tasks_databases_as_they_were(name):
    """What the final state's shortcut rests on: tau2's read-only tools, run with
    every task's gold arguments, change no database hash."""
    domain = ADAPTER.domain(name)
    unchanging = domains.unchanging_tools(domain)
    for sample in ADAPTER.load(name):
        task = ADAPTER.task_of(sample)
        env = domains.initialized_environment(domain, task)
        before = (env.get_db_hash(), env.get_user_db_hash())
        for action in task.evaluation_criteria.actions or []:
            if action.name in unchanging:
                try:
                    env.make_tool_call(action.name, action.requestor, **action.arguments)
                except Exception:
                    pass
        env.sync_tools()
        assert (env.get_db_hash(), env.get_user_db_hash()) == before, (name, task.id)
