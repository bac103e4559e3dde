"""Typed results: ``run_suite``'s summary holds the leaderboard's per-benchmark
entries, and ``harness.results.read_scores`` reads the same back from scores.json."""

from __future__ import annotations

import dataclasses
import json

import pytest

from harness import RunConfig, results, run_suite
from harness.errors import ConfigError
from harness.report.leaderboard import RUN_TABLES, load_run, write_run_tables
from harness.results.entries import BenchmarkCounts


@pytest.fixture(scope="module")
def summary(tmp_path_factory):
    out = tmp_path_factory.mktemp("typed") / "run"
    return run_suite(RunConfig(suite="smoke", model="oracle", out=out, limit=1, progress=False))


def test_the_summary_holds_typed_entries_equal_to_what_the_reader_reads(summary):
    assert set(summary.benchmarks) == {"bfcl", "tau2"}
    assert results.read_scores(summary.run_dir) == summary.results
    assert results.read_scores(summary.run_dir / "scores.json") == summary.results
    # The same objects the leaderboard renders.
    assert load_run(summary.run_dir).benchmarks == summary.benchmarks
    written = summary.scores["benchmarks"]
    for name, entry in summary.benchmarks.items():
        assert entry.counts == BenchmarkCounts.from_dict(written[name]["counts"])
        assert entry.counts.records == entry.counts.ok > 0 and entry.errors == 0
        assert entry.headline == written[name]["headline"]
        assert entry.primary_value is not None and entry.interval is not None
        assert entry.interval.contains(entry.primary_value)
        assert entry.coverage is not None and entry.partial  # one sample a subset
        with pytest.raises(dataclasses.FrozenInstanceError):
            entry.primary = "other"  # type: ignore[misc]


def test_the_command_lines_partial_lines_come_from_the_typed_coverage(summary):
    from harness.results.frames import partial_lines

    lines = summary.report_lines()
    assert [line for line in lines if line.startswith("partial: ")] == partial_lines(
        summary.run_dir
    )


def test_a_missing_or_garbled_scores_file_is_one_line(summary, tmp_path):
    def refused(path, match):
        with pytest.raises(ConfigError, match=match) as caught:
            results.read_scores(path)
        assert "\n" not in str(caught.value)

    refused(tmp_path / "nothing", "no such run folder")
    refused(tmp_path, "has no scores.json; score the run first")
    run = tmp_path / "run"
    run.mkdir()
    for name in ("manifest.json", "samples.jsonl"):
        (run / name).write_bytes((summary.run_dir / name).read_bytes())
    (run / "scores.json").write_text("{not json", encoding="utf-8")
    refused(run, "is not readable JSON")
    (run / "scores.json").write_text(json.dumps({"benchmarks": [1]}), encoding="utf-8")
    refused(run / "scores.json", "scores.json")
    good = json.loads((summary.run_dir / "scores.json").read_text(encoding="utf-8"))
    good["benchmarks"]["tau2"]["counts"]["records"] = "three"
    (run / "scores.json").write_text(json.dumps(good), encoding="utf-8")
    refused(run, "count 'records' is not a whole number")
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "scores.json").write_bytes((summary.run_dir / "scores.json").read_bytes())
    refused(alone / "scores.json", "not a run folder")


def test_counts_round_trip_as_scores_json_writes_them():
    written = {"records": 3, "ok": 2, "infra_errors": 1, "score_errors": 0}
    counts = BenchmarkCounts.from_dict(written)
    assert counts is not None and counts.to_dict() == written and counts.errors == 1
    assert BenchmarkCounts.from_dict({**written, "excluded": 2}).to_dict()["excluded"] == 2
    assert BenchmarkCounts.from_dict({}) is None


def test_numbers_are_read_without_the_conversation_and_equal_a_whole_read(summary, monkeypatch):
    """Aggregating, the typed results, the leaderboard's row and the record table
    read each record without its conversation (messages, turns, earlier contexts,
    final state), and give what a read of the whole records gives."""
    from harness.results import frames
    from harness.store.run_store import CONVERSATION, RunStore

    store = RunStore(summary.run_dir)
    whole = store.records()
    slim = store.records(conversation=False)
    assert slim.keys() == whole.keys()
    for key, record in whole.items():
        assert record["trajectory"]["messages"]  # there was a conversation to leave out
        kept = slim[key]["trajectory"]
        assert not set(CONVERSATION) & set(kept)
        assert {k: v for k, v in record["trajectory"].items() if k not in CONVERSATION} == kept
        assert {k: v for k, v in record.items() if k != "trajectory"} == {
            k: v for k, v in slim[key].items() if k != "trajectory"
        }
    full_table = frames.records_of([frames.load(summary.run_dir)])
    assert frames.records(summary.run_dir).equals(full_table)
    assert load_run(summary.run_dir).records.equals(full_table)
    # A scoring that only aggregates writes what one that read every message writes.
    from harness.run.scoring import score_run

    slim_scores = score_run(summary.run_dir, rescore=False).to_dict()
    real_read = RunStore.load_records
    monkeypatch.setattr(RunStore, "load_records", lambda self, conversation=True: real_read(self))
    whole_scores = score_run(summary.run_dir, rescore=False).to_dict()
    assert {k: v for k, v in slim_scores.items() if k != "scored_at"} == {
        k: v for k, v in whole_scores.items() if k != "scored_at"
    }


def test_the_run_tables_from_the_end_of_a_run_are_those_of_the_folder(summary):
    """The end of a run reads its records once; the tables written from what it
    read are those written from the folder read again."""
    again = results.frames.load(summary.run_dir, conversation=False)
    assert summary.run.records == again.records
    # (an earlier test here scores the folder again: a later scored_at)
    assert {**summary.run.scores, "scored_at": None} == {**again.scores, "scored_at": None}
    entries = summary.results.benchmarks
    before = dict(entries)
    outcomes = summary.outcomes
    fresh = results.frames.run_outcomes(again)
    assert outcomes.records.equals(fresh.records) and outcomes.tasks == fresh.tasks
    shared = write_run_tables(
        summary.run_dir, loaded=summary.run, entries=entries, outcomes=outcomes
    )
    tables = (summary.run_dir / RUN_TABLES).read_text()
    assert write_run_tables(summary.run_dir) == shared
    assert (summary.run_dir / RUN_TABLES).read_text() == tables
    assert summary.results.benchmarks == before  # the results are not marked in place


def test_a_run_plans_and_scores_with_the_collector_paused_and_resumes_it(tmp_path, monkeypatch):
    """Both make many objects and hardly any garbage; the run itself collects."""
    import gc

    from harness.evaluate import plan
    from harness.run import scoring

    seen = []

    def spy(module, name):
        real = getattr(module, name)

        def call(*args, **kwargs):
            seen.append((name, gc.isenabled()))
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, call)

    spy(plan, "plan_samples")
    spy(scoring, "score_run_records")
    assert gc.isenabled()
    config = RunConfig(suite="smoke", model="oracle", out=tmp_path / "run", limit=1)
    summary = run_suite(dataclasses.replace(config, progress=False))
    assert seen == [("plan_samples", False), ("score_run_records", False)]
    assert gc.isenabled() and summary.benchmarks
