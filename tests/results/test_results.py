"""harness.results.frames: run folders as tidy DataFrames (one row per record; one per
benchmark/subset aggregate), the notebook API."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from fake_runs import make_run, pass_fail_records, record

from harness.errors import ConfigError
from harness.results import frames as results


@pytest.fixture
def sweep(tmp_path):
    """Two checkpoints of one training run, the second better; one record of the
    first is an infrastructure error and one was regraded after the run."""
    folder = tmp_path / "sweep"
    early = pass_fail_records("toy", "easy", [True, False, False, False])
    early.append(record("toy", "hard", "h0", status="infra_error"))
    run = make_run(folder, "step_100", early, {"toy": {"accuracy": 0.25}}, model="m")
    scores = json.loads((run / "scores.json").read_text())
    scores["records"]["toy/easy/t1#0"]["score"] = {"passed": True, "reward": 1.0}
    scores["benchmarks"]["toy"]["subsets"] = {
        "easy": {"metrics": {"accuracy": 0.5}, "n_samples": 4, "n_records": 4, "n_infra_errors": 0}
    }
    (run / "scores.json").write_text(json.dumps(scores))
    late = pass_fail_records("toy", "easy", [True, True, True, [True, False]])
    make_run(folder, "step_200", late, {"toy": {"accuracy": 0.875}}, model="m")
    return folder


def test_one_row_per_record_with_current_scores(sweep):
    table = results.records(sweep)  # a folder of run folders
    assert len(table) == 5 + 5
    assert list(table.columns[:4]) == ["run_id", "model", "strategy", "step"]
    assert sorted(table["step"].unique()) == [100, 200]
    broken = table[table["status"] == "infra_error"]
    assert len(broken) == 1 and pd.isna(broken["passed"].iloc[0])
    assert broken["error_type"].iloc[0] == "ModelError"
    # The regraded score in scores.json wins over the one in samples.jsonl.
    regraded = table[table["key"] == "toy/easy/t1#0"].set_index("step")["passed"]
    assert bool(regraded[100]) is True
    # Pass rate per checkpoint over scored records, as a notebook computes it.
    rate = table.dropna(subset=["passed"]).groupby("step")["passed"].mean()
    assert rate[100] == pytest.approx(2 / 4) and rate[200] == pytest.approx(4 / 5)
    assert table.loc[table["trial"] == 1, "sample_id"].tolist() == ["t3"]


def test_one_row_per_benchmark_subset_metric(sweep):
    table = results.aggregates([sweep / "step_100", sweep / "step_200"])
    headline = table[table["subset"] == results.HEADLINE]
    assert headline.set_index("step")["value"].to_dict() == {100: 0.25, 200: 0.875}
    assert headline.set_index("step")["n_infra_errors"].to_dict() == {100: 1, 200: 0}
    easy = table[(table["subset"] == "easy") & (table["step"] == 100)]
    assert easy[["metric", "value", "n_samples"]].values.tolist() == [["accuracy", 0.5, 4]]


def test_one_row_per_run(sweep):
    table = results.runs(sweep)
    assert table["run_id"].tolist() == ["step_100", "step_200"]
    assert table["records"].tolist() == [5, 5] and set(table["model"]) == {"m"}


def test_an_older_run_folder_loads(tmp_path):
    """A folder written before seeds, load options and fingerprints were recorded,
    with a key this version does not know."""
    old = record("toy", "easy", "a")
    for key in ("seed", "load_options", "metadata"):
        del old[key]
    old["written_by"] = "0.0.9"
    run = make_run(tmp_path, "old", [old], {"toy": {"accuracy": 1.0}})
    table = results.records(run)
    assert table["passed"].tolist() == [True] and pd.isna(table["seed"].iloc[0])


def test_a_path_that_holds_no_run_is_one_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="not a run folder"):
        results.records(tmp_path)


def test_records_a_benchmark_s_rule_left_out_have_their_own_column(tmp_path):
    run = make_run(tmp_path, "binned", pass_fail_records("toy", "easy", [True, False]), {})
    scores = json.loads((run / "scores.json").read_text())
    toy = scores["benchmarks"].setdefault("toy", {})
    toy["headline"] = {"overall": 0.5}
    toy["counts"] = {"records": 3, "ok": 3, "infra_errors": 0, "score_errors": 0, "excluded": 1}
    toy["subsets"] = {
        "easy": {"metrics": {"accuracy": 0.5}, "n_records": 3, "n_infra_errors": 0, "n_excluded": 1}
    }
    (run / "scores.json").write_text(json.dumps(scores))
    table = results.aggregates(run)
    assert table["n_excluded"].tolist() == [1, 1] and table["n_infra_errors"].tolist() == [0, 0]
