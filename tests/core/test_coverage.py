"""Coverage: what a headline number covers of its benchmark's official set."""

from __future__ import annotations

import pytest

from harness.results.coverage import coverage_of, run_limit
from harness.store.manifest import Manifest
from harness.task.official_set import OfficialSet
from harness.task.registry import get_adapter

OFFICIAL = OfficialSet({"a": 3, "b": 2}, "toy data v1")


def _scored(**subsets: list[int]) -> dict[str, dict[str, int]]:
    """subset -> sample -> scored trials, from a list of scored-trial counts."""
    return {name: {f"s{i}": n for i, n in enumerate(counts)} for name, counts in subsets.items()}


def test_a_run_over_the_whole_official_set_is_not_partial():
    coverage = coverage_of(OFFICIAL, _scored(a=[2, 2, 2], b=[2, 2]), trials=2)
    assert not coverage.partial and coverage.reasons() == []
    assert (coverage.samples_scored, coverage.samples_official) == (5, 5)
    assert (coverage.pairs_scored, coverage.pairs_official) == (10, 10)
    assert coverage.summary() == "5/5 samples, 2/2 subsets, 2 trials, 10/10 pairs"


def test_fewer_samples_a_missing_subset_or_missing_trials_each_make_it_partial():
    fewer = coverage_of(OFFICIAL, _scored(a=[1, 1], b=[1, 1]), trials=1)
    assert fewer.partial and "4 of 5 samples scored" in fewer.reasons()
    missing = coverage_of(OFFICIAL, _scored(a=[1, 1, 1]), trials=1)
    assert missing.partial and missing.subsets_run == ("a",) and missing.subsets_missing == ("b",)
    assert "2/2 subsets" not in missing.summary() and "1/2 subsets" in missing.summary()
    # An interrupted run: every sample scored, but not every trial.
    interrupted = coverage_of(OFFICIAL, _scored(a=[4, 4, 1], b=[4, 0]), trials=4)
    assert interrupted.partial and interrupted.samples_scored == 4
    assert interrupted.pairs_scored == 13 and interrupted.pairs_official == 20
    assert "13/20 pairs" in interrupted.summary()
    assert any("not scored" in reason for reason in interrupted.reasons())


def test_a_sample_whose_trials_all_errored_is_not_scored():
    coverage = coverage_of(OFFICIAL, _scored(a=[1, 1, 0], b=[1, 1]), trials=1)
    assert coverage.samples_scored == 4 and coverage.partial


def test_subsets_outside_the_official_set_do_not_count_towards_it():
    coverage = coverage_of(OFFICIAL, _scored(a=[1, 1, 1], b=[1, 1], extra=[1] * 9), trials=1)
    assert coverage.samples_scored == 5 and not coverage.partial
    extra = coverage.restrict(["extra"])  # no official size: no denominator, never partial
    assert not extra.declared and not extra.partial and extra.samples_scored == 9


def test_a_run_of_only_a_subset_outside_the_official_set_says_what_it_scored():
    only_extra = coverage_of(OFFICIAL, _scored(extra=[1] * 16), trials=1)
    summary = only_extra.summary()
    assert summary.startswith("0/5 samples, 0/2 subsets")
    assert "+16 samples of extra (not in the official set)" in summary
    both = coverage_of(OFFICIAL, _scored(a=[1, 1, 1], b=[1, 1], x=[1], y=[1, 1]), trials=1)
    assert "+3 samples of x (1), y (2) (not in the official set)" in both.summary()
    inside = coverage_of(OFFICIAL, _scored(a=[1, 1, 1], b=[1, 1]), trials=1)
    assert "not in the official set" not in inside.summary()


def test_a_metric_named_after_a_subset_covers_that_subset_only():
    coverage = coverage_of(OFFICIAL, _scored(a=[1, 1, 1], b=[1]), trials=1)
    assert coverage.partial
    assert not coverage.for_metric("pass^1/a").partial
    assert coverage.for_metric("b/avg@1").partial
    assert coverage.for_metric("mean") is coverage


def test_no_declared_official_set_has_no_denominator_and_is_never_partial():
    coverage = coverage_of(None, _scored(a=[1]), trials=1)
    assert not coverage.declared and not coverage.partial
    assert coverage.samples_official is None
    assert coverage.summary() == "1/? samples (no official size declared), 1 trial"


def test_the_limit_a_run_started_with_is_named():
    manifest = Manifest(limit=5, suite={"entries": [{"benchmark": "x", "limit": 2}]})
    assert run_limit(manifest, "x") == 2 and run_limit(manifest, "y") == 5
    assert run_limit(Manifest(limit=None, suite={"entries": []}), "x") is None
    coverage = coverage_of(OFFICIAL, _scored(a=[1, 1]), trials=1, limit=2)
    assert "run with a limit of 2 sample(s) per subset" in coverage.describe()
    assert "toy data v1" in coverage.describe()


def test_to_dict_carries_every_count():
    data = coverage_of(OFFICIAL, _scored(a=[1, 1, 1]), trials=1).to_dict()
    assert data["partial"] is True
    assert (data["samples_scored"], data["samples_official"]) == (3, 5)
    assert data["subsets_run"] == ["a"] and data["subsets_official"] == ["a", "b"]
    assert data["by_subset"]["b"] == {"samples_scored": 0, "samples_official": 2, "pairs_scored": 0}


@pytest.mark.parametrize(
    ("benchmark", "samples", "subsets"),
    [("finmcp", 613, 3), ("tau2", 278, 3), ("vitabench", 400, 4), ("bfcl", 5090, 21)],
)
def test_adapters_declare_their_official_set_with_its_data_version(benchmark, samples, subsets):
    official = get_adapter(benchmark).official_set()
    assert official.samples == samples and len(official.subsets) == subsets
    assert official.version  # the data version the sizes are of


def test_bfcl_official_set_is_the_categories_of_overall():
    official = get_adapter("bfcl").official_set()
    assert "live_relevance" not in official.subsets  # reported, not part of Overall
    assert official.sizes["live_multiple"] == 1053


def test_tau2_official_sizes_match_the_installed_task_set():
    adapter = get_adapter("tau2")
    official = adapter.official_set()
    for domain, size in official.sizes.items():
        assert len(adapter.load(domain)) == size, domain


def _bfcl_run(root, categories: dict[str, list[bool]]):
    from fake_runs import make_run, pass_fail_records

    from harness.run.scoring import score_run

    records = []
    for category, outcomes in categories.items():
        records += pass_fail_records("bfcl", category, outcomes, prefix=f"{category}_")
    run_dir = make_run(root, "bfcl", records, {})
    score_run(run_dir, rescore=False)
    return run_dir


def test_a_group_score_covers_its_own_categories_and_is_dash_when_none_ran(tmp_path):
    from harness.adapters.bfcl.aggregate import GROUPS, categories_of
    from harness.adapters.bfcl.categories import CATEGORY_SIZES
    from harness.report.leaderboard import load_run, render

    # Every entry of the Hallucination categories, one of the simple ones, nothing agentic.
    hallucination = categories_of(GROUPS["hallucination"])
    run_dir = _bfcl_run(
        tmp_path,
        {
            **{name: [True] * CATEGORY_SIZES[name] for name in hallucination},
            "simple_python": [True, False],
        },
    )
    entry = load_run(run_dir, n_boot=50).benchmarks["bfcl"]
    assert entry.partial and entry.metric_partial("overall")
    assert not entry.metric_partial("hallucination")  # its categories ran in full
    assert entry.metric_partial("non_live")
    assert entry.headline["agentic"] is None and entry.why_none("agentic") == "not run"
    assert entry.headline["overall"] is not None  # official: a category not run counts 0
    table = next(
        c for c in render([run_dir], "md", n_boot=50).split("### ") if c.startswith("BFCL")
    )
    header, _, row = [line for line in table.splitlines() if line.startswith("|")][:3]
    columns = [c.strip() for c in header.strip("|").split("|")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[columns.index("agentic (%)")] == "-"
    assert "a group none of whose categories ran has no number" in table  # the note agrees
    assert cells[columns.index("hallucination (%)")] == "100.00"  # no mark
    assert cells[columns.index("non_live (%)")].endswith("*")
    assert "bfcl BFCL-v4 by scope, samples scored/official: non_live 2/1150" in table


def test_scoring_records_the_official_set_and_coverage_reads_it_back(tmp_path):
    import json

    from fake_runs import make_run, pass_fail_records

    from harness.report.leaderboard import load_run
    from harness.run.scoring import score_run

    run_dir = make_run(tmp_path, "r", pass_fail_records("tau2", "airline", [True] * 3), {})
    scores = score_run(run_dir, rescore=False).to_dict()
    recorded = scores["benchmarks"]["tau2"]["official_set"]
    assert recorded == get_adapter("tau2").official_set().to_dict()
    # A run scored against another data version keeps that version's sizes.
    recorded["sizes"]["airline"] = 3
    recorded["version"] = "an older task set"
    (run_dir / "scores.json").write_text(json.dumps(scores), encoding="utf-8")
    coverage = load_run(run_dir, n_boot=20).benchmarks["tau2"].coverage
    assert coverage.data_version == "an older task set"
    assert coverage.restrict(["airline"]).samples_official == 3
    assert not coverage.restrict(["airline"]).partial


def test_official_set_round_trips_and_rejects_other_shapes():
    assert OfficialSet.from_dict(OFFICIAL.to_dict()) == OFFICIAL
    assert OfficialSet.from_dict(None) is None
    assert OfficialSet.from_dict({"sizes": "613"}) is None
