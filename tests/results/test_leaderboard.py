"""Leaderboards on hand-made runs: official metrics with intervals, the composite,
errors and not-run subsets, cost columns, and the md/csv/json/latex formats."""

from __future__ import annotations

import csv
import io
import json

import pytest
from fake_runs import make_run, pass_fail_records, record

from harness.errors import ConfigError
from harness.report.leaderboard import load_run, render, training_step
from harness.store.manifest import Manifest

# BFCL-v4 categories run, with pass/fail per task (the rest count as 0 in Overall).
BFCL_TASKS = {
    "simple_python": [True, True],
    "multiple": [True, False],
    "live_simple": [True],
    "irrelevance": [True, False],
    "multi_turn_base": [False, True],
    "memory_kv": [True],
    "web_search_base": [False],
}
# By hand: NonLive = mean(mean(1, 0, 0), 0.5, 0, 0); Live = 1 * 1 / (1 + 1053 + 16 + 24)
# (weighted by entries evaluated, a category not run by its dataset size, as officially);
# Hallucination = mean(0.5, 0); MultiTurn = mean(0.5, 0, 0, 0); Agentic = mean(0, mean(1, 0, 0)).
BFCL_GROUPS = {
    "non_live": (1 / 3 + 0.5) / 4,
    "live": 1 / (1 + 1053 + 16 + 24),
    "hallucination": 0.25,
    "multi_turn": 0.125,
    "agentic": 1 / 6,
}
BFCL_OVERALL = (
    0.1 * BFCL_GROUPS["non_live"]
    + 0.1 * BFCL_GROUPS["live"]
    + 0.1 * BFCL_GROUPS["hallucination"]
    + 0.3 * BFCL_GROUPS["multi_turn"]
    + 0.4 * BFCL_GROUPS["agentic"]
)
# tau2: two trials per task; pass^1 per domain = mean over tasks of c/n.
TAU2_TASKS = {
    "airline": [[True, True], [True, False], [False, False], [True, True]],  # 5/8
    "retail": [[True, False], [False, False], [False, False], [True, True]],  # 3/8
}
TAU2_MEAN = (5 / 8 + 3 / 8) / 2
# VitaBench: rewards per task (one trial); Avg = mean over scenarios of avg@1.
VITA_REWARDS = {"cross": [1.0, 0.0, 0.0, 1.0], "delivery": [1.0, 1.0, 0.0]}
VITA_AVG = (0.5 + 2 / 3) / 2
# FinMCP: (tp, fp, fn) per item: ΣTP 3, ΣFP 1, ΣFN 3 -> P 0.75, R 0.5, F1 0.6.
FIN_COUNTS = [(2, 0, 1), (1, 1, 0), (0, 0, 2)]


def all_benchmark_records() -> list[dict]:
    records = []
    for category, outcomes in BFCL_TASKS.items():
        records += pass_fail_records("bfcl", category, outcomes, prefix=f"{category}_")
    for domain, outcomes in TAU2_TASKS.items():
        records += pass_fail_records("tau2", domain, outcomes, prefix=f"{domain}_")
    for scenario, rewards in VITA_REWARDS.items():
        records += [
            record("vitabench", scenario, f"{scenario}_{i}", passed=r == 1.0, reward=r)
            for i, r in enumerate(rewards)
        ]
    records += [
        record("finmcp", "single_tool", f"item{i}", passed=fp == fn == 0, tool_counts=(tp, fp, fn))
        for i, (tp, fp, fn) in enumerate(FIN_COUNTS)
    ]
    return records


def all_headlines(bfcl_overall: float = BFCL_OVERALL) -> dict[str, dict[str, float]]:
    return {
        "bfcl": {"overall": bfcl_overall, **BFCL_GROUPS},
        "tau2": {"pass^1/airline": 5 / 8, "pass^1/retail": 3 / 8, "tau2_mean": TAU2_MEAN},
        "vitabench": {"cross/avg@1": 0.5, "delivery/avg@1": 2 / 3, "Avg": VITA_AVG},
        "finmcp": {
            "micro_precision": 0.75,
            "micro_recall": 0.5,
            "micro_f1": 0.6,
            "exact_match_ordered": 1 / 3,
            "n_scored": 3,
        },
    }


@pytest.fixture
def full_run(tmp_path):
    return make_run(
        tmp_path,
        "qwen3-8b-full",
        all_benchmark_records(),
        all_headlines(),
        model="Qwen3-8B",
        not_run={"bfcl": {"web_search_no_snippet": "needs SERPAPI_API_KEY"}},
    )


def test_each_benchmark_row_has_its_official_metric_with_an_interval(full_run):
    run = load_run(full_run, n_boot=300)
    expected = {"bfcl": BFCL_OVERALL, "tau2": TAU2_MEAN, "vitabench": VITA_AVG, "finmcp": 0.6}
    for bench, value in expected.items():
        entry = run.benchmarks[bench]
        assert entry.primary_value == pytest.approx(value), bench
        # The interval is shown only because recomputing from the records gave the same value.
        assert entry.interval is not None and entry.ci_note == "", bench
        assert entry.interval.low <= value <= entry.interval.high


def test_composite_is_the_mean_of_bfcl_tau2_and_vitabench(full_run):
    run = load_run(full_run, n_boot=300)
    assert run.composite.value == pytest.approx((BFCL_OVERALL + TAU2_MEAN + VITA_AVG) / 3)
    assert run.composite.interval is not None
    # Each component covers a few samples of its official set: the composite says so.
    labels = [caveat.split(":")[0] for caveat in run.composite.caveats]
    assert labels == ["BFCL-v4", "τ²-Bench (original)", "VitaBench"]
    assert "11/5090 samples" in run.composite.caveats[0]
    out = render([full_run], "md", n_boot=300)
    summary = out.split("### ")[1]
    composite = f"{100 * (BFCL_OVERALL + TAU2_MEAN + VITA_AVG) / 3:.2f}"
    assert composite in summary and "web_search_no_snippet" in summary


def test_composite_is_partial_when_a_benchmark_is_missing(tmp_path):
    run_dir = make_run(
        tmp_path,
        "tau2-only",
        pass_fail_records("tau2", "airline", [True, False]),
        {"tau2": {"airline": 0.5, "tau2_mean": 0.5}},
    )
    run = load_run(run_dir, n_boot=100)
    assert run.composite.value is None and run.composite.missing == ["bfcl", "vitabench"]
    # Beside published rows that have the composite, the run's cell says why it has none.
    board = render([run_dir], "md", reference="envace", n_boot=100)
    assert "partial (no BFCL-v4, VitaBench)" in board
    assert "the EnvACE paper's composite" in board


def test_composite_is_not_shown_where_its_definition_does_not_apply(tmp_path):
    # No row holds BFCL, tau2 and VitaBench together: no Overall column, no EnvACE note.
    run_dir = make_run(
        tmp_path,
        "tau2-only",
        pass_fail_records("tau2", "airline", [True, False]),
        {"tau2": {"airline": 0.5, "tau2_mean": 0.5}},
    )
    board = render([run_dir], "md", n_boot=100)
    summary = board.split("### ")[1]
    assert "Overall" not in summary and "EnvACE" not in board and "partial (no" not in board


def test_no_interval_when_the_official_value_cannot_be_recomputed(tmp_path):
    run_dir = make_run(tmp_path, "r", all_benchmark_records(), all_headlines(bfcl_overall=0.9))
    entry = load_run(run_dir, n_boot=100).benchmarks["bfcl"]
    assert entry.interval is None and "could not be recomputed" in entry.ci_note
    # Said in the summary (where the interval is missing) and in the benchmark's table.
    summary, *details = render([run_dir], "md", n_boot=100).split("### ")[1:]
    assert "r BFCL-v4: no CI: overall could not be recomputed" in summary
    assert "could not be recomputed" in next(t for t in details if t.startswith("BFCL-v4"))


def test_errors_missing_not_run_feedback_and_cost_are_always_visible(tmp_path):
    records = pass_fail_records("tau2", "airline", [True, False, True])
    records.append(record("tau2", "airline", "broken", status="infra_error"))
    run_dir = make_run(
        tmp_path,
        "augmented",
        records,
        {"tau2": {"airline": 0.5, "tau2_mean": 0.5}},
        env_feedback="augmented",
        not_run={"tau2": {"telecom": "user tools unavailable"}},
        missing={"tau2": {"airline": 2}},
        judge_model="stub",
    )
    out = render([run_dir], "md", n_boot=100)
    summary, detail = out.split("### ")[1:3]
    header = summary.splitlines()[2]
    for column in ("infra/score errors", "missing", "not run", "model calls", "wall time"):
        assert column in header
    row = next(line for line in summary.splitlines() if line.startswith("| augmented"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert "augmented (NON-STANDARD)" in cells and "stub" in cells
    # records, errors, missing, not run, calls, prompt tokens, completion tokens, cost
    # (USD: "stub" has no price), GPU-s, rehearsal ×, cached calls, wall time
    assert cells[-12:] == [
        "4",
        "1",
        "2",
        "tau2/telecom",
        "8",
        "400",
        "40",
        "-",
        "-",
        "-",
        "0",
        "1h02m",
    ]
    assert "telecom (user tools unavailable)" in detail and "| 1 | 0 | 2 |" in detail


def test_every_headline_metric_appears_in_the_benchmark_table(full_run):
    out = render([full_run], "md", n_boot=100)
    bfcl = next(t for t in out.split("### ") if t.startswith("BFCL-v4"))
    header = bfcl.splitlines()[2]
    assert header.index("overall") < header.index("non_live") < header.index("agentic")
    fin = next(t for t in out.split("### ") if t.startswith("FinMCP"))
    assert "micro_precision" in fin and "| 75.00* |" in fin and "| 3 |" in fin  # n_scored


def test_csv_is_tidy_with_fractions_and_intervals(full_run):
    rows = list(csv.DictReader(io.StringIO(render([full_run], "csv", n_boot=100))))
    tau2 = next(r for r in rows if r["benchmark"] == "tau2" and r["metric"] == "tau2_mean")
    assert float(tau2["value"]) == pytest.approx(TAU2_MEAN) and tau2["unit"] == "fraction"
    assert float(tau2["ci_low"]) <= TAU2_MEAN <= float(tau2["ci_high"])
    composite = next(r for r in rows if r["benchmark"] == "composite")
    assert float(composite["value"]) == pytest.approx((BFCL_OVERALL + TAU2_MEAN + VITA_AVG) / 3)
    not_run = next(r for r in rows if r["benchmark"] == "bfcl" and r["metric"] == "not_run")
    assert not_run["value"] == "web_search_no_snippet"
    assert {r["metric"] for r in rows if r["benchmark"] == "run"} >= {"calls", "wall_s"}


def test_json_and_latex(full_run):
    data = json.loads(render([full_run], "json", n_boot=100))
    row = data["rows"][0]
    assert row["model"] == "Qwen3-8B" and row["benchmarks"]["finmcp"]["primary"] == "micro_f1"
    low, high = row["benchmarks"]["tau2"]["primary_ci"]
    assert low <= TAU2_MEAN <= high
    assert data["composite"]["benchmarks"] == ["bfcl", "tau2", "vitabench"]
    latex = render([full_run], "latex", n_boot=100)
    assert "micro\\_f1" in latex and "micro_f1" not in latex
    body = [line for line in latex.splitlines() if not line.startswith("%")]
    assert "$\\tau$$^2$-Bench" in latex and not any("τ" in line for line in body)


def test_several_runs_share_columns(full_run, tmp_path):
    other = make_run(
        tmp_path,
        "baseline",
        pass_fail_records("tau2", "airline", [True, False]),
        {"tau2": {"airline": 0.5, "tau2_mean": 0.5}},
    )
    out = render([full_run, other], "md", n_boot=100)
    tau2 = next(t for t in out.split("### ") if t.startswith("τ²"))
    assert "| qwen3-8b-full |" in tau2 and "| baseline |" in tau2
    bfcl = next(t for t in out.split("### ") if t.startswith("BFCL"))
    assert "| baseline |" not in bfcl


def test_training_step_from_manifest_checkpoint_or_run_name():
    assert training_step(Manifest(step=300), "anything") == 300
    assert training_step(Manifest.from_dict({"step": "300"}), "anything") == 300
    assert training_step(Manifest(checkpoint="/ckpt/global_step_150/actor"), "x") == 150
    assert training_step(Manifest(), "envace__step_200") == 200
    assert training_step(Manifest(), "qwen3-8b__plain") is None


def test_unknown_format_is_a_config_error(full_run):
    with pytest.raises(ConfigError, match="unknown leaderboard format"):
        render([full_run], "xlsx")
    with pytest.raises(ConfigError, match="not a run folder"):
        render([full_run.parent / "nope"], "md")


def test_tau2_mean_leaves_out_unscored_trials_and_other_splits(tmp_path):
    # As the tau2 adapter does: pass^1 over scored trials; tasks with none are left out;
    # a split such as airline:test is reported apart from the base-domain mean.
    records = pass_fail_records("tau2", "airline", [[True, True], [False, True], [False, False]])
    records.append(record("tau2", "airline", "t1", 2, status="infra_error"))
    records.append(record("tau2", "airline", "gone", 0, status="infra_error"))
    records += pass_fail_records("tau2", "retail", [True, False])
    records += pass_fail_records("tau2", "airline:test", [True, True, True])
    mean = ((1 + 0.5 + 0) / 3 + 0.5) / 2
    run_dir = make_run(
        tmp_path,
        "r",
        records,
        {"tau2": {"pass^1/airline": 0.5, "pass^1/retail": 0.5, "tau2_mean": mean}},
    )
    entry = load_run(run_dir, n_boot=200).benchmarks["tau2"]
    assert entry.ci_note == "" and entry.interval.low <= mean <= entry.interval.high


def test_finmcp_items_flagged_as_errors_are_left_out_of_micro_scores(tmp_path):
    records = [
        record("finmcp", "multi_tool", f"i{i}", tool_counts=counts)
        for i, counts in enumerate(FIN_COUNTS)
    ]
    flagged = record("finmcp", "multi_tool", "bad", tool_counts=(0, 5, 5))
    flagged["metadata"] = {"error_flag": True}
    headline = {"micro_precision": 0.75, "micro_recall": 0.5, "micro_f1": 0.6}
    run_dir = make_run(tmp_path, "fin", [*records, flagged], {"finmcp": headline})
    entry = load_run(run_dir, n_boot=200).benchmarks["finmcp"]
    assert entry.ci_note == "" and entry.interval is not None


def test_a_strategy_that_augments_feedback_is_marked_non_standard(tmp_path):
    run_dir = make_run(
        tmp_path,
        "aug",
        pass_fail_records("tau2", "airline", [True]),
        {"tau2": {"tau2_mean": 1.0}},
        strategy={"name": "plain", "env_feedback": "augmented"},
    )
    assert load_run(run_dir, n_boot=50).env_feedback == "augmented (NON-STANDARD)"


def test_a_benchmark_run_under_a_non_standard_setting_is_marked_in_every_format(tmp_path):
    """An adapter's ``nonstandard`` reasons mark every cell of that benchmark (md, csv,
    json, latex), explained once, and leave the other benchmarks unmarked."""
    records = pass_fail_records("tau2", "airline", [True, False]) + pass_fail_records(
        "bfcl", "simple_python", [True]
    )
    run_dir = make_run(
        tmp_path,
        "lenient",
        records,
        {"tau2": {"tau2_mean": 0.5, "pass^1/airline": 0.5}, "bfcl": {"overall": 1.0}},
    )
    scores = json.loads((run_dir / "scores.json").read_text())
    reason = "option malformed_calls: continue"
    scores["benchmarks"]["tau2"]["nonstandard"] = [reason]
    (run_dir / "scores.json").write_text(json.dumps(scores))
    markdown = render([run_dir], "md", n_boot=50)
    marked = [line for line in markdown.splitlines() if line.startswith("| lenient")]
    assert marked and all("§" in line for line in marked if "airline" in line or "50.00" in line)
    assert "100.00 (100.0–100.0)§" not in markdown  # bfcl stays unmarked
    assert markdown.count("§ = not the benchmark's standard configuration") == 3  # summary + 2 tau2
    assert f"§ lenient τ²-Bench (original): {reason}" in markdown
    rows = list(csv.DictReader(io.StringIO(render([run_dir], "csv", n_boot=50))))
    assert {r["nonstandard"] for r in rows if r["benchmark"] == "tau2"} == {reason}
    assert {r["nonstandard"] for r in rows if r["benchmark"] == "bfcl"} == {""}
    data = json.loads(render([run_dir], "json", n_boot=50))
    assert data["rows"][0]["benchmarks"]["tau2"]["nonstandard"] == [reason]
    assert data["rows"][0]["benchmarks"]["bfcl"]["nonstandard"] == []
    assert r"$^{\S}$" in render([run_dir], "latex", n_boot=50)
