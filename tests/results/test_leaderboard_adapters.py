"""The leaderboard's recomputation of each primary metric agrees with the adapters' own
aggregates, so intervals are shown for the official numbers (not for a look-alike).

Records are random but seeded, with errors, several trials and unequal subsets; the
official headline comes from ``harness.run.scoring.aggregate_records`` (the adapters).
"""

from __future__ import annotations

import random

import pytest
from fake_runs import make_run, record

from harness.report.leaderboard import load_run
from harness.run.scoring import aggregate_records
from harness.store.records import Record
from harness.task.registry import get_adapter

SUBSETS = {
    "bfcl": ["simple_python", "multiple", "live_simple", "live_multiple", "irrelevance"]
    + ["multi_turn_base", "multi_turn_miss_func", "memory_kv", "web_search_base"],
    "tau2": ["airline", "retail", "telecom", "telecom:test"],
    "vitabench": ["cross", "delivery", "instore", "ota"],
    "finmcp": ["single_tool", "multi_tool", "multi_turn"],
}
TRIALS = {"bfcl": 1, "tau2": 3, "vitabench": 2, "finmcp": 1}


def random_records(benchmark: str, rng: random.Random) -> list[dict]:
    records = []
    for subset in SUBSETS[benchmark]:
        for i in range(rng.randint(3, 9)):
            for trial in range(TRIALS[benchmark]):
                sample_id = f"{subset}-{i}"
                # The runner stores a sample's metadata with every record, errors included.
                metadata = {"language": "en"} if benchmark == "vitabench" else {}
                if rng.random() < 0.08:
                    item = record(benchmark, subset, sample_id, trial, status="infra_error")
                    records.append({**item, "metadata": metadata})
                    continue
                if benchmark == "finmcp":
                    counts = (rng.randint(0, 3), rng.randint(0, 2), rng.randint(0, 2))
                    metadata = {"task": subset, "error_flag": rng.random() < 0.1}
                    item = record(
                        benchmark,
                        subset,
                        sample_id,
                        trial,
                        passed=counts[1] == counts[2] == 0,
                        tool_counts=counts,
                        metadata=metadata,
                    )
                elif benchmark == "vitabench":
                    reward = rng.choice([0.0, 1.0, 1.0, 0.0, 0.0])
                    item = record(
                        benchmark, subset, sample_id, trial, passed=reward == 1.0, reward=reward
                    )
                    item["metadata"] = metadata
                else:
                    item = record(benchmark, subset, sample_id, trial, passed=rng.random() < 0.4)
                records.append(item)
    return records


def typed(records: list[dict]) -> list[Record]:
    return [Record.from_dict(record) for record in records]


@pytest.mark.parametrize("benchmark", sorted(SUBSETS))
def test_recomputed_primary_metric_matches_the_adapter(tmp_path, benchmark):
    for seed in range(3):
        records = random_records(benchmark, random.Random(seed))
        official = aggregate_records(typed(records))[benchmark]["headline"]
        run_dir = make_run(tmp_path, f"{benchmark}-{seed}", records, {benchmark: official})
        entry = load_run(run_dir, n_boot=100).benchmarks[benchmark]
        assert entry.primary == get_adapter(benchmark).reporting.primary_metric
        assert entry.ci_note == "", entry.ci_note
        assert entry.interval is not None


def test_composite_interval_on_adapter_aggregates(tmp_path):
    rng = random.Random(11)
    records = [r for b in ("bfcl", "tau2", "vitabench") for r in random_records(b, rng)]
    benchmarks = aggregate_records(typed(records))
    headlines = {b: benchmarks[b]["headline"] for b in benchmarks}
    run = load_run(make_run(tmp_path, "all", records, headlines), n_boot=300)
    expected = (
        sum(
            headlines[b][get_adapter(b).reporting.primary_metric]
            for b in ("bfcl", "tau2", "vitabench")
        )
        / 3
    )
    assert run.composite.value == pytest.approx(expected)
    assert run.composite.interval.low <= expected <= run.composite.interval.high


def test_tau2_table_shows_pass_k_for_every_k_up_to_the_trials(tmp_path):
    from fake_runs import pass_fail_records

    from harness.report.leaderboard import render

    outcomes = [[True, False, True], [True, True, True], [False, False, True]]
    records = pass_fail_records("tau2", "airline", outcomes)
    headline = aggregate_records(typed(records))["tau2"]["headline"]
    run_dir = make_run(tmp_path, "tau2", records, {"tau2": headline})
    table = next(t for t in render([run_dir], "md", n_boot=50).split("### ") if "(tau2;" in t)
    header = table.splitlines()[2]
    for k in (1, 2, 3):
        assert f"| pass^{k}/airline (%) |" in header, k
    assert "pass^4/" not in header
