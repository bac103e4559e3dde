"""A benchmark or subset with no scored record shows no number and no interval, only why."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from fake_runs import make_run, pass_fail_records, record

from harness.report.compare import render_json as compare_json
from harness.report.compare import render_markdown as compare_markdown
from harness.report.leaderboard import load_run, render
from harness.results.stats import compare_runs

WHY = "no scored record: 6 infrastructure errors"
FIN_ZERO = {
    "micro_precision": 0.0,
    "micro_recall": 0.0,
    "micro_f1": 0.0,
    "exact_match_ordered": 0.0,
    "n_scored": 0,
}


def _fin_records(status: str) -> list[dict]:
    return [
        record("finmcp", "single_tool", f"item{i}", status=status, tool_counts=(1, 0, 0))
        for i in range(6)
    ]


@pytest.fixture
def errored_run(tmp_path):
    """FinMCP: every record an infrastructure error; tau2: retail errored, airline scored."""
    tau2 = pass_fail_records("tau2", "airline", [True, False, True, True], prefix="a")
    tau2 += [record("tau2", "retail", f"r{i}", status="infra_error") for i in range(3)]
    headlines = {
        "finmcp": dict(FIN_ZERO),
        "tau2": {"pass^1/airline": 0.75, "pass^1/retail": 0.0, "tau2_mean": 0.375},
    }
    return make_run(tmp_path, "errored", _fin_records("infra_error") + tau2, headlines)


def _row(text: str, run: str, title: str) -> str:
    table = next(t for t in text.split("### ")[1:] if t.startswith(title))
    return next(line for line in table.splitlines() if line.startswith(f"| {run} "))


def test_no_value_and_no_interval_in_the_loaded_entry(errored_run):
    run = load_run(errored_run, n_boot=100)
    fin = run.benchmarks["finmcp"]
    assert fin.primary_value is None and fin.interval is None and fin.unscored == WHY
    assert fin.headline["n_scored"] == 0  # counts stay counts
    assert all(v is None for k, v in fin.headline.items() if not k.startswith("n_"))
    tau2 = run.benchmarks["tau2"]
    assert tau2.headline["pass^1/retail"] is None
    assert tau2.why_none("pass^1/retail") == "no scored record: 3 infrastructure errors"
    assert tau2.headline["pass^1/airline"] == 0.75 and tau2.interval is not None


def test_markdown_summary_and_tables_say_why_instead_of_a_number(errored_run):
    board = render([errored_run], "md", n_boot=100)
    summary = _row(board, "errored", "Summary")
    cells = [c.strip() for c in summary.strip("|").split("|")]
    assert WHY in cells
    fin = _row(board, "errored", "FinMCP")
    fin_cells = [c.strip() for c in fin.strip("|").split("|")]
    # micro P/R/F1 and exact match: the reason, never 0.00 or an interval.
    assert fin_cells.count(WHY) == 4
    assert not re.search(r"\d+\.\d\d", fin) and "–" not in fin
    tau2 = _row(board, "errored", "τ²")
    assert "no scored record: 3 infrastructure errors" in tau2 and "75.00" in tau2


def test_latex_says_why_instead_of_a_number(errored_run):
    latex = render([errored_run], "latex", n_boot=100, columns="finmcp")
    row = next(line for line in latex.splitlines() if line.startswith("errored"))
    assert row.split(" & ")[1].strip() == "-- \\\\" and "scriptsize" not in row
    notes = [line for line in latex.splitlines() if line.startswith("% errored")]
    assert any("no scored record: 6 infrastructure errors" in line for line in notes)


def test_csv_and_json_hold_no_value_and_the_reason(errored_run):
    rows = list(csv.DictReader(io.StringIO(render([errored_run], "csv", n_boot=100))))
    f1 = next(r for r in rows if r["benchmark"] == "finmcp" and r["metric"] == "micro_f1")
    assert f1["value"] == f1["ci_low"] == f1["ci_high"] == "" and f1["note"] == WHY
    retail = next(r for r in rows if r["metric"] == "pass^1/retail")
    assert retail["value"] == "" and retail["note"].startswith("no scored record")
    data = json.loads(render([errored_run], "json", n_boot=100))
    fin = data["rows"][0]["benchmarks"]["finmcp"]
    assert fin["headline"]["micro_f1"] is None and fin["primary_ci"] is None
    assert fin["unscored"] == WHY


def test_compare_shows_no_difference_where_a_run_scored_nothing(errored_run, tmp_path):
    scored = make_run(
        tmp_path,
        "scored",
        _fin_records("ok") + pass_fail_records("tau2", "airline", [True] * 4, prefix="a"),
        {"finmcp": {**FIN_ZERO, "micro_f1": 1.0}, "tau2": {"tau2_mean": 1.0}},
    )
    a, b = load_run(errored_run, n_boot=100), load_run(scored, n_boot=100)
    comparisons = compare_runs(a.tasks, b.tasks, n_boot=100)
    fin = next(c for c in comparisons if c.benchmark == "finmcp")
    assert fin.headline.unscored == f"A: {WHY}"
    assert fin.headline.value_a is None and fin.headline.interval is None
    assert fin.headline.diff is None and fin.headline.warnings == []
    text = compare_markdown(a, b, comparisons, max_flips=5)
    row = next(line for line in text.splitlines() if line.startswith("| finmcp "))
    assert f"A: {WHY}" in row and not re.search(r"[+-]\d+\.\d\d", row)
    data = json.loads(compare_json(a, b, comparisons))
    fin_json = next(c for c in data["benchmarks"] if c["benchmark"] == "finmcp")
    assert fin_json["headline"]["value_a"] is None and fin_json["headline"]["unscored"]
    # tau2 airline was scored in both runs: compared as before.
    tau2 = next(c for c in comparisons if c.benchmark == "tau2")
    airline = next(s for s in tau2.subsets if s.label == "tau2/airline")
    assert airline.unscored == "" and airline.diff == pytest.approx(0.25)
