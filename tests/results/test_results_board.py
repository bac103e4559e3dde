"""The leaderboard is built on harness.results.frames: its numbers are those a notebook
computes from the same DataFrames (``results.records`` and ``results.aggregates``)."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from fake_runs import make_run, record

from harness.report.leaderboard import load_run, render
from harness.results import frames as results
from harness.run.scoring import score_run

N_BOOT = 200


@pytest.fixture
def tau_run(tmp_path):
    """τ² records over two subsets, three trials each; one trial an infrastructure
    error and one trial whose regrade failed after the run (a score error)."""
    outcomes = {
        "airline": [[True, True, False], [False, False, False], [True, True, True]],
        "retail": [[True, False, True], [True, True, True]],
    }
    records = [
        record("tau2", subset, f"{subset[0]}{i}", trial, passed=passed)
        for subset, tasks in outcomes.items()
        for i, trials in enumerate(tasks)
        for trial, passed in enumerate(trials)
    ]
    records[1] = record("tau2", "airline", "a0", 1, status="infra_error")
    spans = [{"started_at": "2026-01-01T00:00:00+00:00", "seconds": 12.3456}, {"seconds": 1.0}]
    run_dir = make_run(
        tmp_path, "tau", records, {}, manifest_extra={"trials": 3, "active_spans": spans}
    )
    scores = score_run(run_dir, rescore=False).to_dict()
    scores["records"]["tau2/retail/r1#2"]["score_error"] = "sample no longer in the benchmark data"
    (run_dir / "scores.json").write_text(json.dumps(scores), encoding="utf-8")
    return run_dir


def test_the_rows_tasks_are_those_of_the_record_table(tau_run):
    row = load_run(tau_run, n_boot=N_BOOT)
    table = results.records(tau_run)
    assert row.tasks == results.task_outcomes(table)
    assert row.records is not None and row.records.equals(table)


def test_the_record_table_says_which_trials_are_scored(tau_run):
    table = results.records(tau_run).set_index("key")
    assert not table.loc["tau2/airline/a0#1", "scored"]  # infrastructure error
    assert not table.loc["tau2/retail/r1#2", "scored"]  # its regrade failed
    assert pd.isna(table.loc["tau2/retail/r1#2", "passed"])  # empty, never a zero
    assert table["scored"].sum() == len(table) - 2
    task = load_run(tau_run, n_boot=N_BOOT).tasks["tau2/retail/r1"]
    assert task.errors == 1 and task.infra_errors == 0


def test_headline_numbers_are_the_aggregate_tables(tau_run):
    row = load_run(tau_run, n_boot=N_BOOT)
    aggregates = results.aggregates(tau_run)
    headline = aggregates[aggregates["subset"] == results.HEADLINE].set_index("metric")["value"]
    entry = row.benchmarks["tau2"]
    shown = {k: v for k, v in entry.headline.items() if v is not None}
    assert shown and shown == pytest.approx(headline.dropna().to_dict())


def test_pass_hat_k_is_what_a_notebook_computes_from_the_records(tau_run):
    """pass^k per subset as a researcher writes it over the record table: per task
    C(c, k) / C(n, k) over its scored trials (τ² leaves an errored trial out)."""
    table = results.records(tau_run)
    scored = table[table["scored"]].astype({"passed": bool})
    per_task = scored.groupby(["subset", "sample_id"])["passed"].agg(["size", "sum"])
    entry = load_run(tau_run, n_boot=N_BOOT).benchmarks["tau2"]
    assert sorted(entry.pass_hat_k) == ["airline", "retail"]
    for subset, curve in entry.pass_hat_k.items():
        tasks = per_task.loc[subset]
        for k, found in curve.items():
            by_hand = sum(math.comb(int(c), k) / math.comb(int(n), k) for n, c in tasks.values)
            assert found.value == pytest.approx(by_hand / len(tasks)), (subset, k)
    assert entry.pass_hat_k["airline"][1].value == pytest.approx((1 / 2 + 0 + 1) / 3)


def test_the_leaderboards_counts_are_the_record_tables(tau_run):
    table = results.records(tau_run)
    data = json.loads(render([tau_run], "json", n_boot=N_BOOT))
    counts = data["rows"][0]["benchmarks"]["tau2"]["counts"]
    assert counts["records"] == len(table)
    assert counts["infra_errors"] == int((table["status"] == "infra_error").sum())


def test_the_run_tables_wall_time_is_the_leaderboards(tau_run, tmp_path):
    assert results.runs(tau_run)["wall_s"].tolist() == [13.346]
    assert load_run(tau_run, n_boot=N_BOOT).cost.wall_s == 13.346
    # Without spans: finished minus created, in both.
    manifest = {"finished_at": "2026-01-01T00:01:30+00:00"}
    plain = make_run(
        tmp_path / "b", "plain", [record("tau2", "airline", "a0")], {}, manifest_extra=manifest
    )
    assert results.runs(plain)["wall_s"].tolist() == [90.0] == [load_run(plain).cost.wall_s]


def test_task_outcomes_take_one_run(tau_run, tmp_path):
    other = make_run(tmp_path / "b", "other", [record("tau2", "airline", "a0")], {})
    with pytest.raises(ValueError, match="one run"):
        results.task_outcomes(results.records([tau_run, other]))


def test_the_cost_plot_reads_tokens_of_every_role_from_the_record_table(tmp_path):
    from harness.report.plots import tokens_per_episode

    usage = {
        "actor": {"calls": 2, "prompt_tokens": 100, "completion_tokens": 10},
        "user": {"calls": 1, "prompt_tokens": 40, "completion_tokens": 5},
    }
    records = [
        record("tau2", "airline", "a0", usage=usage),
        record("tau2", "airline", "a1"),  # the actor's 110 tokens only
    ]
    run_dir = make_run(tmp_path, "tokens", records, {})
    table = results.records(run_dir)
    assert table["all_roles_tokens"].tolist() == [155, 110]
    assert table["prompt_tokens"].tolist() == [100, 100]  # the model under test's own
    assert tokens_per_episode(table) == {"tau2": (155 + 110) / 2}
    assert tokens_per_episode(load_run(run_dir, n_boot=N_BOOT).records) == {"tau2": 132.5}


def test_the_tasks_built_from_records_are_those_of_the_record_table(tmp_path):
    """The end of a run builds its tasks from the records, without the table
    (run_outcomes): the same tasks, for every kind of record."""
    excluded = record("bfcl", "simple", "s2", passed=False)
    excluded["score"]["excluded"] = "binned by the benchmark's own rule"
    records = [
        record("bfcl", "simple", "s0", passed=True, tool_counts=(2, 1, 0)),
        record("bfcl", "simple", "s1", passed=False, reward=0.5),
        excluded,
        record("bfcl", "simple", "s3", status="infra_error"),
        record("bfcl", "multi", "m0", trial=0, passed=True, reward=0.25),
        record("bfcl", "multi", "m0", trial=1, status="score_error"),
    ]
    run_dir = make_run(tmp_path, "mixed", records, {})
    score_run(run_dir, rescore=False)
    loaded = results.load(run_dir, conversation=False)
    outcomes = results.run_outcomes(loaded)
    table = results.records_of([loaded])
    assert outcomes.tasks == results.task_outcomes(table)
    assert outcomes.tasks["bfcl/simple/s2"].excluded == 1
    assert outcomes.tasks["bfcl/simple/s3"].infra_errors == 1
    assert outcomes.tasks["bfcl/simple/s1"].trials[0]["reward"] == 0.5
    assert outcomes.tasks["bfcl/simple/s0"].trials[0]["tool_fp"] == 1.0
    assert outcomes.records.equals(table)  # built when read


def test_the_end_of_a_run_does_not_load_pandas(tmp_path):
    """pandas takes ~0.8 s to load; a run's end (scores, results, its tables) needs
    no table of records. (τ²'s deepdiff loads it for its own use: a BFCL run here.)"""
    import subprocess
    import sys

    suite = tmp_path / "bfcl.yaml"
    suite.write_text(
        "name: bfcl-two\nentries:\n  - benchmark: bfcl\n"
        "    subsets: [simple_python, multi_turn_base]\n    limit: 1\n"
    )
    code = (
        "import sys\n"
        "from harness.cli import main\n"
        f"code = main(['run', '--suite', {str(suite)!r}, '--model', 'oracle', '--quiet', "
        f"'--out', {str(tmp_path / 'run')!r}])\n"
        "print(code, 'pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["0", "False"], done.stderr[-2000:]
    assert (tmp_path / "run" / "leaderboard.md").is_file()
