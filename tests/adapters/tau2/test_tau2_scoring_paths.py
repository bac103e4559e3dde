"""tau2 scoring's two fast paths: the live environment's final state and the
on-disk gold cache. Both must give tau2's reward; the live state is used only when
it ran exactly the calls tau2 would replay, and only by the first scoring."""

from __future__ import annotations

import asyncio
import json
import uuid
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
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Sample, Services
from harness.types import SamplingParams, Trajectory

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
