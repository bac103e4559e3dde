"""Statistics: pass^k, McNemar, bootstrap coverage with clustered trials, paired comparisons."""

from __future__ import annotations

import json
import math
import random

import pytest

from harness.results import stats
from harness.results.headlines import estimator_for
from harness.results.stats import TaskOutcome
from harness.task.estimators import MEAN_PASS


def task(subset: str, sample_id: str, trials: list[bool], benchmark: str = "tau2") -> TaskOutcome:
    outcome = TaskOutcome(benchmark, subset, sample_id)
    for i, passed in enumerate(trials):
        outcome.trials[i] = {"passed": float(passed), "reward": float(passed)}
    return outcome


def test_pass_hat_k_on_hand_made_counts():
    # 3 successes out of 4 trials: C(3,k)/C(4,k).
    assert [stats.pass_hat_k(4, 3, k) for k in (1, 2, 3, 4)] == [0.75, 0.5, 0.25, 0.0]
    assert stats.pass_at_k(4, 3, 1) == 0.75 and stats.pass_at_k(4, 3, 2) == 1.0
    assert stats.pass_at_k(4, 1, 2) == 0.5  # 1 - C(3,2)/C(4,2)
    with pytest.raises(ValueError):
        stats.pass_hat_k(4, 3, 5)


def test_pass_hat_k_curve_averages_over_tasks_up_to_the_fewest_trials():
    tasks = [task("a", "x", [True, True, True, False]), task("a", "y", [True, False, False, False])]
    curve = stats.pass_hat_k_curve(tasks)
    assert curve == pytest.approx({1: 0.5, 2: 0.25, 3: 0.125, 4: 0.0})
    short = tasks + [task("a", "z", [True, True])]
    assert sorted(stats.pass_hat_k_curve(short)) == [1, 2]


def test_mcnemar_exact_on_hand_computed_tables():
    # 1 vs 9 discordant: P(X <= 1) for X ~ Bin(10, 1/2) is 11/1024; two-sided doubles it.
    assert stats.mcnemar_exact(1, 9) == pytest.approx(22 / 1024)
    assert stats.mcnemar_exact(9, 1) == pytest.approx(22 / 1024)
    assert stats.mcnemar_exact(0, 6) == pytest.approx(2 / 64)
    assert stats.mcnemar_exact(5, 5) == 1.0
    assert stats.mcnemar_exact(0, 0) == 1.0


def test_minimum_detectable_effect_is_z_sum_times_standard_error():
    assert stats.minimum_detectable_effect(0.1) == pytest.approx((1.959964 + 0.841621) * 0.1, 1e-5)


def test_record_keys_are_parsed_with_slashes_and_hashes_in_sample_ids():
    assert stats.parse_key("bfcl/live_simple/a/b#c#3") == ("bfcl", "live_simple", "a/b#c", 3)


def test_task_outcomes_group_trials_and_count_errors_as_failures():
    records = {
        "tau2/airline/1#0": {"status": "ok", "score": {"passed": True, "reward": 1.0}},
        "tau2/airline/1#1": {"status": "infra_error", "score": None},
        "tau2/airline/2#0": {"status": "ok", "score": {"passed": False, "reward": 0.4}},
    }
    tasks = stats.task_outcomes(records)
    assert set(tasks) == {"tau2/airline/1", "tau2/airline/2"}
    first = tasks["tau2/airline/1"]
    assert (first.n, first.successes, first.errors, first.pass_rate) == (2, 1, 1, 0.5)
    assert tasks["tau2/airline/2"].component("reward") == 0.4


def _simulated_coverage(datasets: int, make_tasks, truth: float, seed: int) -> float:
    covered = 0
    for i in range(datasets):
        tasks = make_tasks(random.Random(seed + i))
        result = stats.estimate({"s": tasks}, MEAN_PASS, n_boot=400, seed=i)
        covered += result.interval.contains(truth)
    return covered / datasets


def test_bootstrap_interval_covers_a_binomial_rate_about_95_percent_of_the_time():
    p, n_tasks = 0.3, 80

    def make(rng: random.Random) -> list[TaskOutcome]:
        return [task("s", str(j), [rng.random() < p]) for j in range(n_tasks)]

    coverage = _simulated_coverage(300, make, p, seed=1000)
    # 300 datasets: the binomial spread of the estimate around 0.95 is about ±0.013.
    assert 0.91 <= coverage <= 0.985


def test_resampling_whole_tasks_keeps_coverage_when_trials_are_correlated():
    # Each task either always or never passes (trials perfectly correlated), p = 0.4.
    p, n_tasks, n_trials = 0.4, 60, 4

    def clustered(rng: random.Random) -> list[TaskOutcome]:
        return [task("s", str(j), [rng.random() < p] * n_trials) for j in range(n_tasks)]

    def trials_as_tasks(rng: random.Random) -> list[TaskOutcome]:
        # The mistake the cluster bootstrap avoids: each trial resampled on its own.
        return [
            task("s", f"{t.sample_id}-{i}", [bool(v["passed"])])
            for t in clustered(rng)
            for i, v in t.trials.items()
        ]

    assert 0.91 <= _simulated_coverage(300, clustered, p, seed=5000) <= 0.985
    assert _simulated_coverage(300, trials_as_tasks, p, seed=5000) < 0.85


def test_bootstrap_is_deterministic_for_a_seed():
    rng = random.Random(3)
    tasks = [task("s", str(j), [rng.random() < 0.5, rng.random() < 0.5]) for j in range(50)]
    first = stats.estimate({"s": tasks}, MEAN_PASS, n_boot=500, seed=7)
    again = stats.estimate({"s": tasks}, MEAN_PASS, n_boot=500, seed=7)
    other = stats.estimate({"s": tasks}, MEAN_PASS, n_boot=500, seed=8)
    assert first.interval == again.interval and first.value == again.value
    assert first.interval != other.interval
    assert (
        stats.derive_seed(0, "tau2") == stats.derive_seed(0, "tau2") != stats.derive_seed(0, "bfcl")
    )


def test_micro_f1_interval_resamples_items_with_their_tool_counts():
    tasks = []
    for j in range(40):
        outcome = TaskOutcome("finmcp", "single_tool", str(j))
        tp, fp, fn = (2, 0, 1) if j % 2 else (1, 1, 0)
        outcome.trials[0] = {"passed": 0.0, "reward": 0.0, "tool_tp": tp, "tool_fp": fp}
        outcome.trials[0]["tool_fn"] = fn
        tasks.append(outcome)
    result = stats.estimate({"single_tool": tasks}, estimator_for("finmcp"), n_boot=300)
    precision, recall = 60 / 80, 60 / 80  # ΣTP 60, ΣFP 20, ΣFN 20
    assert result.value == pytest.approx(2 * precision * recall / (precision + recall))
    assert result.interval.low < result.value < result.interval.high


def _pairs(a: list[bool], b: list[bool]) -> dict[str, list[tuple[TaskOutcome, TaskOutcome]]]:
    return {
        "airline": [
            (task("airline", str(i), [x]), task("airline", str(i), [y]))
            for i, (x, y) in enumerate(zip(a, b, strict=True))
        ]
    }


def test_paired_comparison_lists_flips_and_warns_when_underpowered():
    # 20 tasks: B wins 6 that A lost, loses 1 that A won, 13 agree.
    a = [False] * 6 + [True] + [True] * 7 + [False] * 6
    b = [True] * 6 + [False] + [True] * 7 + [False] * 6
    result = stats.compare_paired("tau2/airline", _pairs(a, b), MEAN_PASS, n_boot=1000)
    assert result.n_tasks == 20
    assert result.value_a == pytest.approx(8 / 20) and result.value_b == pytest.approx(13 / 20)
    assert result.diff == pytest.approx(0.25)
    assert result.b_only == sorted(f"tau2/airline/{i}" for i in range(6))
    assert result.a_only == ["tau2/airline/6"]
    assert result.p_value == pytest.approx(stats.mcnemar_exact(1, 6)) == pytest.approx(16 / 128)
    # The design's SE under no difference: sqrt(7 flipped tasks) / 20, so MDE ~ 0.37.
    assert result.mde == pytest.approx(stats.minimum_detectable_effect(math.sqrt(7) / 20))
    assert result.interval.contains(0.25)
    assert "below_mde" in [w.kind for w in result.warnings]


def test_a_large_clear_difference_raises_no_warning():
    a = [False] * 300 + [True] * 100
    b = [True] * 250 + [False] * 50 + [True] * 100
    result = stats.compare_paired("x", _pairs(a, b), MEAN_PASS, n_boot=500)
    assert result.diff == pytest.approx(250 / 400)
    assert not result.interval.includes_zero() and result.warnings == []
    assert result.p_value < 1e-6


def test_identical_runs_warn_that_the_interval_includes_zero():
    outcomes = [True, False] * 10
    result = stats.compare_paired("x", _pairs(outcomes, outcomes), MEAN_PASS, n_boot=200)
    assert result.diff == 0 and result.a_only == [] and result.b_only == []
    assert result.p_value == 1.0
    assert "includes_zero" in [w.kind for w in result.warnings]


def test_majority_outcome_with_several_trials():
    assert task("s", "1", [True, True, False]).majority_passed
    assert not task("s", "2", [True, False]).majority_passed  # a tie is not a majority


def test_compare_command_pairs_shared_tasks_per_benchmark_and_subset(tmp_path, capsys):
    from fake_runs import make_run, pass_fail_records

    from harness.cli import main

    a_airline = [True, False, False, True, False, False, True, False]
    b_airline = [True, True, True, True, False, False, False, False]
    a = make_run(
        tmp_path,
        "base",
        pass_fail_records("tau2", "airline", a_airline)
        + pass_fail_records("tau2", "retail", [True, False, True]),
        {"tau2": {"airline": 3 / 8, "retail": 2 / 3, "tau2_mean": (3 / 8 + 2 / 3) / 2}},
    )
    b = make_run(
        tmp_path,
        "trained",
        pass_fail_records("tau2", "airline", b_airline)
        + pass_fail_records("tau2", "retail", [True, True, True, True]),
        {"tau2": {"airline": 0.5, "retail": 1.0, "tau2_mean": 0.75}},
        user_model="gpt-5.2",
    )
    assert main(["compare", str(a), str(b), "--n-boot", "300"]) == 0
    out = capsys.readouterr().out
    rows = {
        cells[0]: cells
        for line in out.splitlines()
        if line.startswith("| ")
        for cells in [[c.strip() for c in line.strip(" |").split("|")]]
    }
    # airline: 8 shared tasks, A 3/8, B 4/8; retail: 3 shared (t3 only in B), A 2/3, B 3/3.
    # 8 of 50 airline tasks: both values are marked partial.
    assert rows["tau2/airline"][2:6] == ["8", "37.50*", "50.00*", "+12.50"]
    assert rows["tau2/retail"][2:6] == ["3", "66.67*", "100.00*", "+33.33"]
    assert rows["tau2"][2] == "11"
    assert "0 task(s) only in A and 1 only in B are left out" in out
    assert "B passed, A failed (3): tau2/airline/t1, tau2/airline/t2, tau2/retail/t1" in out
    assert "A passed, B failed (1): tau2/airline/t6" in out
    assert "different user/judge models" in out  # gpt-4.1 user against gpt-5.2
    assert "< MDE" in out and "CI include(s) 0" in out

    assert main(["compare", str(a), str(b), "--format", "json", "--n-boot", "100"]) == 0
    data = json.loads(capsys.readouterr().out)
    headline = data["benchmarks"][0]["headline"]
    assert headline["n_tasks"] == 11 and headline["b_only"][0] == "tau2/airline/t1"
    assert headline["p_value"] == pytest.approx(stats.mcnemar_exact(1, 3))
