"""pass^k for every k up to the trials, with intervals, computed once in the core."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest
from fake_runs import make_run, record

from harness.report.leaderboard import load_run, render
from harness.results import stats
from harness.results.stats import TaskOutcome
from harness.run.scoring import score_run

N_BOOT = 200


def _task(subset: str, sample_id: str, trials: list[bool | None]) -> TaskOutcome:
    """None: a trial that ended in an error (no score)."""
    task = TaskOutcome("bench", subset, sample_id)
    for trial, passed in enumerate(trials):
        ok = passed is not None
        task.trials[trial] = {"ok": float(ok), "passed": float(bool(passed)), "reward": 0.0}
        task.errors += 0 if ok else 1
    return task


def _by_hand(outcomes: list[list[bool]], k: int) -> float:
    values = [math.comb(sum(t), k) / math.comb(len(t), k) for t in outcomes]
    return sum(values) / len(values)


def test_every_k_up_to_the_fewest_trials_with_an_interval_around_the_value():
    outcomes = [[True, True, True, False], [True, False, True, False], [False] * 4, [True] * 4]
    tasks = [_task("s", f"t{i}", trials) for i, trials in enumerate(outcomes)]
    curve = stats.pass_hat_k_estimates(tasks, scored_only=False, n_boot=N_BOOT)["s"]
    assert sorted(curve) == [1, 2, 3, 4]
    for k, found in curve.items():
        assert found.value == pytest.approx(_by_hand(outcomes, k)), k
        assert found.interval.low <= found.value <= found.interval.high
        assert found.interval.low < found.interval.high  # mixed tasks: not degenerate
        assert found.n_tasks == 4
    assert curve[1].value > curve[4].value  # pass^k falls with k here


def test_scored_only_leaves_errored_trials_out_and_all_counts_them_as_failures():
    tasks = [_task("s", "a", [True, True, None]), _task("s", "b", [True, False, True])]
    scored = stats.pass_hat_k_estimates(tasks, scored_only=True, n_boot=N_BOOT)["s"]
    every = stats.pass_hat_k_estimates(tasks, scored_only=False, n_boot=N_BOOT)["s"]
    # scored: a has 2/2, b 2/3 -> k up to 2; pass^2 = mean(1, 1/3)
    assert sorted(scored) == [1, 2]
    assert scored[2].value == pytest.approx((1 + 1 / 3) / 2)
    # all: a is 2 of 3 -> k up to 3; pass^3 = 0 for both
    assert sorted(every) == [1, 2, 3]
    assert every[1].value == pytest.approx((2 / 3 + 2 / 3) / 2)
    assert every[3].value == 0.0


def test_a_task_with_no_scored_trial_is_not_in_a_scored_pass_hat_k():
    tasks = [_task("s", "a", [True, True]), _task("s", "b", [None, None])]
    curve = stats.pass_hat_k_estimates(tasks, scored_only=True, n_boot=N_BOOT)["s"]
    assert curve[1].value == 1.0 and curve[2].value == 1.0


# tau2 with 4 trials (scored trials only; one errored trial in retail).
AIRLINE = [[True, True, True, False], [True, False, False, False], [True] * 4, [False] * 4]
RETAIL = [[True, True, None, True], [False, True, True, True], [True, False, True, False]]


def _tau2_run(root):
    records = []
    for subset, outcomes in (("airline", AIRLINE), ("retail", RETAIL)):
        for i, trials in enumerate(outcomes):
            for trial, passed in enumerate(trials):
                status = "ok" if passed is not None else "infra_error"
                records.append(
                    record("tau2", subset, f"{subset}{i}", trial, bool(passed), status=status)
                )
    run_dir = make_run(root, "tau", records, {}, manifest_extra={"trials": 4})
    score_run(run_dir, rescore=False)
    return run_dir


def _md_table(board: str, starts: str) -> tuple[list[str], list[list[str]]]:
    chunk = next(c for c in board.split("### ") if c.startswith(starts))
    lines = [line for line in chunk.splitlines() if line.startswith("|")]
    split = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    return split[0], split[2:]


def test_tau2_table_shows_pass_hat_k_for_every_k_with_intervals(tmp_path):
    run_dir = _tau2_run(tmp_path)
    headers, rows = _md_table(render([run_dir], "md", n_boot=N_BOOT), "τ²-Bench (original) pass^k")
    assert headers[-4:] == ["pass^1 (%)", "pass^2 (%)", "pass^3 (%)", "pass^4 (%)"]
    airline = next(r for r in rows if r[3] == "airline")
    for k in range(1, 5):
        cell = airline[headers.index(f"pass^{k} (%)")]
        assert cell.startswith(f"{100 * _by_hand(AIRLINE, k):.2f} (") and "–" in cell, (k, cell)
    retail = next(r for r in rows if r[3] == "retail")
    # retail's first task has 3 scored trials: k stops at 3 there.
    assert retail[headers.index("pass^4 (%)")] == "-"
    assert retail[headers.index("pass^3 (%)")] != "-"


def test_core_pass_hat_k_equals_the_adapters_own_and_reaches_json_and_csv(tmp_path):
    run_dir = _tau2_run(tmp_path)
    entry = load_run(run_dir, n_boot=N_BOOT).benchmarks["tau2"]
    for subset, curve in entry.pass_hat_k.items():
        for k, found in curve.items():
            assert found.value == pytest.approx(entry.headline[f"pass^{k}/{subset}"]), (subset, k)
    data = json.loads(render([run_dir], "json", n_boot=N_BOOT))["rows"][0]["benchmarks"]["tau2"]
    assert sorted(data["pass_hat_k"]["airline"]) == ["1", "2", "3", "4"]
    low, high = data["pass_hat_k"]["airline"]["2"]["ci"]
    assert low <= data["pass_hat_k"]["airline"]["2"]["value"] <= high
    rows = list(csv.DictReader(io.StringIO(render([run_dir], "csv", n_boot=N_BOOT))))
    airline = [
        r for r in rows if r["metric"].startswith("pass^") and r["metric"].endswith("/airline")
    ]
    assert sorted(r["metric"] for r in airline) == [f"pass^{k}/airline" for k in range(1, 5)]
    assert all(r["ci_low"] != "" and r["ci_high"] != "" for r in airline)
    # The detail table's adapter columns carry the same intervals.
    headers, rows_md = _md_table(
        render([run_dir], "md", n_boot=N_BOOT), "τ²-Bench (original) (tau2"
    )
    assert "(" in rows_md[0][headers.index("pass^3/airline (%)")]


def test_vitabench_pass_hat_k_counts_an_errored_trial_as_a_failure(tmp_path):
    records = [
        record("vitabench", "delivery", "d0", 0, True, reward=1.0),
        record("vitabench", "delivery", "d0", 1, False, status="infra_error"),
        record("vitabench", "delivery", "d1", 0, True, reward=1.0),
        record("vitabench", "delivery", "d1", 1, True, reward=1.0),
    ]
    run_dir = make_run(tmp_path, "vita", records, {}, manifest_extra={"trials": 2})
    score_run(run_dir, rescore=False)
    entry = load_run(run_dir, n_boot=N_BOOT).benchmarks["vitabench"]
    curve = entry.pass_hat_k["delivery"]
    assert sorted(curve) == [1, 2]
    assert curve[1].value == pytest.approx(0.75) and curve[2].value == pytest.approx(0.5)
    # The adapter's own pass^2 of the set is the same number.
    assert entry.headline["delivery/pass^2"] == pytest.approx(curve[2].value)
    headers, rows = _md_table(render([run_dir], "md", n_boot=N_BOOT), "VitaBench pass^k")
    assert rows[0][headers.index("pass^2 (%)")].startswith("50.00 (")


def test_benchmarks_without_pass_hat_k_get_no_table(tmp_path):
    records = [record("finmcp", "single_tool", "i0", tool_counts=(1, 0, 0))]
    run_dir = make_run(tmp_path, "fin", records, {})
    score_run(run_dir, rescore=False)
    assert load_run(run_dir, n_boot=N_BOOT).benchmarks["finmcp"].pass_hat_k == {}
    assert "pass^k by subset" not in render([run_dir], "md", n_boot=N_BOOT)
