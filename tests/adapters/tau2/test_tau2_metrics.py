"""tau2 aggregation: pass^k, average reward, per-domain and cross-domain means."""

from __future__ import annotations

import pytest

from harness.adapters.tau2.metrics import aggregate, pass_hat_k
from harness.adapters.tau2.task_sets import ORIGINAL, V1_0_1
from harness.task.contract import RecordView
from harness.types import Score


def record(subset: str, task: str, trial: int, reward: float, status: str = "ok") -> RecordView:
    score = Score(passed=reward == 1.0, reward=reward) if status == "ok" else None
    return RecordView(sample_id=task, subset=subset, trial=trial, status=status, score=score)


def test_three_of_four_successes():
    assert [pass_hat_k(4, 3, k) for k in range(1, 5)] == [0.75, 0.5, 0.25, 0.0]


def test_pass_hat_k_rejects_k_above_trials():
    with pytest.raises(ValueError):
        pass_hat_k(2, 1, 3)


def test_subset_pass_k_averages_over_tasks():
    records = [record("airline", "a", t, r) for t, r in enumerate([1, 1, 1, 0])]
    records += [record("airline", "b", t, r) for t, r in enumerate([1, 0, 0, 0])]
    result = aggregate(ORIGINAL, records)
    metrics = result.subsets["airline"].metrics
    assert metrics["pass^1"] == pytest.approx((0.75 + 0.25) / 2)
    assert metrics["pass^2"] == pytest.approx((0.5 + 0.0) / 2)
    assert metrics["pass^4"] == 0.0
    assert metrics["avg_reward"] == pytest.approx(4 / 8)
    assert metrics["n_tasks"] == 2
    assert result.headline["pass^1/airline"] == pytest.approx(0.5)


def test_headline_holds_pass_k_for_every_k_up_to_the_trials():
    records = [record("airline", "a", t, r) for t, r in enumerate([1, 1, 1, 0])]
    records += [record("airline", "b", t, r) for t, r in enumerate([1, 0, 0, 0])]
    headline = aggregate(ORIGINAL, records).headline
    keys = [k for k in headline if k.endswith("/airline")]
    assert keys == ["pass^1/airline", "pass^2/airline", "pass^3/airline", "pass^4/airline"]
    assert headline["pass^2/airline"] == pytest.approx(0.25)
    assert headline["pass^3/airline"] == pytest.approx((0.25 + 0.0) / 2)


def test_k_stops_at_the_fewest_trials_and_errors_are_apart():
    records = [record("retail", "a", t, 1.0) for t in range(3)]
    records += [record("retail", "b", 0, 1.0), record("retail", "b", 1, 0.0)]
    records += [record("retail", "b", 2, 0.0, status="infra_error")]
    result = aggregate(ORIGINAL, records)
    metrics = result.subsets["retail"].metrics
    assert "pass^2" in metrics and "pass^3" not in metrics
    assert metrics["pass^1"] == pytest.approx((1.0 + 0.5) / 2)
    assert result.subsets["retail"].n_infra_errors == 1
    assert result.subsets["retail"].n_records == 6
    assert any("left out" in note for note in result.notes)


def test_partial_rewards_count_in_avg_reward_not_in_pass():
    result = aggregate(ORIGINAL, [record("telecom", "a", 0, 0.5)])
    assert result.subsets["telecom"].metrics["pass^1"] == 0.0
    assert result.subsets["telecom"].metrics["avg_reward"] == 0.5


def test_plain_and_task_weighted_means_over_domains():
    records = [record("airline", "a", 0, 1.0)]  # airline pass^1 = 1 (1 task)
    records += [record("retail", f"r{i}", 0, 1.0 if i == 0 else 0.0) for i in range(3)]
    records += [record("telecom:test", "t", 0, 1.0)]  # another split: its own mean
    result = aggregate(ORIGINAL, records)
    assert result.headline["tau2_mean"] == pytest.approx((1.0 + 1 / 3) / 2)
    assert result.headline["tau2_mean_task_weighted"] == pytest.approx(2 / 4)
    assert result.headline["tau2_mean:test"] == 1.0
    assert result.headline["pass^1/telecom:test"] == 1.0
    assert result.not_run == []


def test_domains_not_run_are_listed():
    result = aggregate(ORIGINAL, [record("airline", "a", 0, 1.0)])
    assert result.not_run == ["retail", "telecom"]
    assert "tau2_mean" in result.headline


def test_simulations_tau2_bins_as_infrastructure_errors_are_left_out_and_counted():
    """tau2-bench v1.0.1's compute_metrics leaves INFRASTRUCTURE_ERROR simulations
    out of pass^k and the average reward; k stops at the fewest remaining trials."""
    binned = Score(passed=False, reward=0.0, excluded="infrastructure_error: malformed")
    records = [record("banking_knowledge", "a", t, r) for t, r in enumerate([1, 1, 0])]
    records.append(RecordView("a", "banking_knowledge", 3, "ok", binned))
    records += [record("banking_knowledge", "b", t, 1) for t in range(4)]
    result = aggregate(V1_0_1, records)
    metrics = result.subsets["banking_knowledge"].metrics
    assert metrics["pass^1"] == pytest.approx((2 / 3 + 1) / 2)
    assert "pass^4" not in metrics and metrics["pass^3"] == pytest.approx((0 + 1) / 2)
    assert metrics["avg_reward"] == pytest.approx(6 / 7)
    assert any("1 simulation(s) binned as infrastructure errors" in n for n in result.notes)
    assert result.benchmark == "tau3" and "airline" in result.not_run


def test_the_lenient_malformed_call_option_is_marked_non_standard():
    lenient = RecordView("a", "airline", 0, "ok", Score(True, 1.0), {"malformed_calls": "continue"})
    result = aggregate(ORIGINAL, [lenient])
    assert result.nonstandard and "malformed_calls: continue" in result.nonstandard[0]
    assert "nonstandard" in result.to_dict()
    standard = aggregate(ORIGINAL, [record("airline", "a", 0, 1.0)])
    assert standard.nonstandard == [] and "nonstandard" not in standard.to_dict()


def test_tau3_numbers_name_their_user_model_and_retrieval():
    def scored(subset: str, user: str, metadata: dict) -> RecordView:
        return RecordView("a", subset, 0, "ok", Score(True, 1.0, details={"user": user}), metadata)

    records = [
        scored("airline", "gpt-5.2", {}),
        scored("banking_knowledge", "gpt-5.2", {"retrieval": "alltools"}),
    ]
    result = aggregate(V1_0_1, records)
    assert result.conditions == ["user gpt-5.2", "retrieval alltools"]
    assert result.to_dict()["conditions"] == result.conditions
    assert result.subsets["airline"].n_excluded == 0
    assert "n_excluded" not in result.to_dict()["subsets"]["airline"]
    # The original task set's results read as they did.
    original = aggregate(ORIGINAL, [scored("airline", "gpt-4.1-2025-04-14", {})])
    assert original.conditions == [] and "conditions" not in original.to_dict()


def test_the_leaderboard_suites_hold_the_published_configurations():
    from harness.config.suites import load_suite

    leaderboard = load_suite("tau3-leaderboard")
    assert (leaderboard.user_model, leaderboard.trials) == ("gpt-5.2", 4)
    (entry,) = leaderboard.entries
    assert entry.options == {"retrieval": "alltools"}
    assert set(entry.subsets) == {"airline", "retail", "telecom", "banking_knowledge"}
    assert "gpt-5.2" in leaderboard.description and "v1.0.1" in leaderboard.description
    default = load_suite("tau3")
    assert default.user_model == "gpt-4.1-2025-04-14"
    assert "tau3-leaderboard" in default.description
