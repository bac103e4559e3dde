"""Partial runs are marked partial everywhere a number is shown.

Three runs that each look complete without coverage: FinMCP on the 78 shared
items (official set 613), an interrupted tau2 run (58 of 1,112 (task, trial)
pairs, airline and retail only) and VitaBench on two of its four task sets with
``--limit``. Each must carry the partial mark, explained once, in the
leaderboard (md, csv, json, latex), compare and the report; a complete run must
not.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil

import pytest
from fake_runs import make_run, record

from harness.cli import main
from harness.report.compare import render_json as compare_json
from harness.report.compare import render_markdown as compare_markdown
from harness.report.html import ReportOptions, build_report
from harness.report.leaderboard import load_run, render
from harness.results.coverage import LEGEND, PARTIAL_MARK
from harness.results.frames import partial_lines
from harness.results.stats import compare_runs
from harness.run.scoring import score_run

N_BOOT = 100
# a number with the mark (its interval a range, or its n when it has no width)
MARKED = re.compile(r"\d+\.\d{2}(?: \((?:[\d.]+–[\d.]+|n=\d+)\))?\*")


def _cli_run(args: list[str]) -> None:
    assert main([*args, "--quiet"]) == 0


@pytest.fixture(scope="module")
def fin_run(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("partial") / "fin"
    _cli_run(["run", "--suite", "finmcp", "--model", "oracle"] + [
        "--data-dir", str(shared_data / "finmcp"), "--out", str(out)])  # fmt: skip
    return out


@pytest.fixture(scope="module")
def vita_run(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("partial") / "vita"
    _cli_run(["run", "--suite", "vitabench-en", "--model", "oracle", "--user-model", "scripted",
              "--judge-model", "stub", "--data-dir", str(shared_data / "vitabench"),
              "--limit", "2", "--trials", "2", "--out", str(out)])  # fmt: skip
    return out


# The interrupted tau2 run: 4 trials asked for; airline's 10 tasks have all 4, retail's
# first 4 tasks all 4 and its last two only their first; telecom never started.
AIRLINE = [[True, True, True, False]] * 5 + [[True, False, False, False]] * 5
RETAIL = [[True, True, True, True]] * 4 + [[False], [True]]


def _tau2_records(tasks: dict[str, list[list[bool]]]) -> list[dict]:
    return [
        record("tau2", subset, f"{subset}_{i}", trial, passed=passed)
        for subset, outcomes in tasks.items()
        for i, trials in enumerate(outcomes)
        for trial, passed in enumerate(trials)
    ]


@pytest.fixture(scope="module")
def tau_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("partial")
    records = _tau2_records({"airline": AIRLINE, "retail": RETAIL})
    assert len(records) == 58
    run_dir = make_run(root, "tau", records, {}, manifest_extra={"trials": 4})
    score_run(run_dir, rescore=False)  # the adapter's own aggregate, as after a run
    return run_dir


def _summary_row(board: str, run: str) -> str:
    summary = board.split("### ")[1]
    return next(line for line in summary.splitlines() if line.startswith(f"| {run} |"))


def _tables(board: str) -> list[tuple[list[str], str]]:
    """(table lines, notes) of each Markdown table."""
    out = []
    for chunk in board.split("### ")[1:]:
        lines = chunk.splitlines()
        rows = [line for line in lines if line.startswith("|")]
        notes = "\n".join(line for line in lines if line.startswith("- "))
        out.append((rows, notes))
    return out


CASES = [
    ("fin", "fin_run", "finmcp", "78/613 samples, 3/3 subsets, 1 trial"),
    ("tau", "tau_run", "tau2", "16/278 samples, 2/3 subsets, 4 trials, 58/1112 pairs"),
    ("vita", "vita_run", "vitabench", "4/400 samples, 2/4 subsets, 2 trials, 8/800 pairs"),
]


@pytest.mark.parametrize(("name", "fixture", "bench", "coverage"), CASES)
def test_markdown_marks_the_headline_partial_and_says_what_it_covers(
    name, fixture, bench, coverage, request
):
    board = render([request.getfixturevalue(fixture)], "md", n_boot=N_BOOT)
    assert MARKED.search(_summary_row(board, name)), name
    assert coverage in board
    for rows, notes in _tables(board):
        marked = any(MARKED.search(row) for row in rows)
        # The mark is explained exactly once under every table that uses it, and a
        # table without a marked cell does not carry the explanation.
        assert notes.count(LEGEND) == (1 if marked else 0), rows[0]


@pytest.mark.parametrize(("name", "fixture", "bench", "coverage"), CASES)
def test_csv_and_json_say_partial_with_the_counts_behind_it(
    name, fixture, bench, coverage, request
):
    run_dir = request.getfixturevalue(fixture)
    entry = json.loads(render([run_dir], "json", n_boot=N_BOOT))["rows"][0]["benchmarks"][bench]
    assert entry["partial"] is True and entry["coverage"]["partial"] is True
    assert entry["metric_partial"][entry["primary"]] is True
    scored, official = coverage.split(" ")[0].split("/")
    assert entry["coverage"]["samples_scored"] == int(scored)
    assert entry["coverage"]["samples_official"] == int(official)
    assert entry["coverage"]["data_version"]
    rows = list(csv.DictReader(io.StringIO(render([run_dir], "csv", n_boot=N_BOOT))))
    primary = next(r for r in rows if r["benchmark"] == bench and r["metric"] == entry["primary"])
    assert primary["partial"] == "true" and primary["unit"] == "fraction"
    assert (primary["samples_scored"], primary["samples_official"]) == (scored, official)
    assert primary["note"]  # why it is partial
    assert 0.0 <= float(primary["value"]) <= 1.0


@pytest.mark.parametrize(("name", "fixture", "bench", "coverage"), CASES)
def test_latex_marks_the_cell_and_explains_the_mark_once(name, fixture, bench, coverage, request):
    latex = render([request.getfixturevalue(fixture)], "latex", n_boot=N_BOOT)
    row = next(line for line in latex.splitlines() if line.startswith(f"{name} &"))
    assert "$^{*}$" in row
    caption = next(line for line in latex.splitlines() if line.startswith("\\caption"))
    assert caption.count("*: over less than the benchmark's official set") == 1
    comments = [line for line in latex.splitlines() if line.startswith("%")]
    assert sum(coverage in line for line in comments) == 1


@pytest.mark.parametrize(("name", "fixture", "bench", "coverage"), CASES)
def test_compare_marks_both_values_and_names_each_runs_coverage(
    name, fixture, bench, coverage, request
):
    run_dir = request.getfixturevalue(fixture)
    a = load_run(run_dir, n_boot=N_BOOT)
    b = load_run(run_dir, n_boot=N_BOOT)
    comparisons = compare_runs(a.tasks, b.tasks, n_boot=N_BOOT)
    text = compare_markdown(a, b, comparisons, max_flips=3)
    table = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("|")
    ]
    header, cells = table[0], next(row for row in table if row[0] == bench)
    for column in ("A (%)", "B (%)"):
        assert cells[header.index(column)].endswith(PARTIAL_MARK), column
    assert text.count(LEGEND) == 1 and coverage in text
    data = json.loads(compare_json(a, b, comparisons))
    assert data["benchmarks"][0]["partial"][bench] is True
    assert data["benchmarks"][0]["coverage"]["a"]["partial"] is True


def test_report_cells_are_marked(fin_run, tau_run, vita_run, tmp_path):
    again = tmp_path / "tau-again"  # the report compares the later runs with the first
    shutil.copytree(tau_run, again)
    out = tmp_path / "report.html"
    runs = [tau_run, fin_run, vita_run, again]
    build_report(runs, out, ReportOptions(n_boot=N_BOOT, plots=False))
    html = out.read_text(encoding="utf-8")
    leaderboard = html.split('<section id="leaderboard">')[1].split("</section>")[0]
    summary = leaderboard.split("</table>")[0]
    for name in ("fin", "tau", "vita"):
        row = next(r for r in summary.split("<tr") if f"<td>{name}</td>" in r)
        assert MARKED.search(row), name
    assert LEGEND.replace("'", "&#x27;") in leaderboard
    comparison = html.split('<section id="comparison">')[1].split("</section>")[0]
    assert re.search(r"<td>\d+\.\d{2}\*</td>", comparison)  # A and B values, marked


def test_limit_runs_say_so(vita_run, fin_run):
    assert "run with a limit of 2 sample(s) per subset" in render([vita_run], "md", n_boot=N_BOOT)
    assert "limit" not in render([fin_run], "md", n_boot=N_BOOT)
    coverage = load_run(vita_run, n_boot=N_BOOT).benchmarks["vitabench"].coverage
    assert coverage.limit == 2 and coverage.to_dict()["limit"] == 2


def test_the_interrupted_run_names_its_missing_trials_and_domain(tau_run):
    coverage = load_run(tau_run, n_boot=N_BOOT).benchmarks["tau2"].coverage
    assert coverage.subsets_missing == ("telecom",)
    assert coverage.pairs_scored == 58 and coverage.pairs_official == 1112
    text = coverage.describe()
    assert "not run or nothing scored: telecom" in text
    assert "6 trial(s) of scored samples not scored" in text  # retail's last two tasks


def test_a_complete_run_carries_no_mark(tmp_path):
    # Every task of tau2's base split, one trial each: the official set, whole.
    tasks = {"airline": [[True]] * 50, "retail": [[False]] * 114, "telecom": [[True]] * 114}
    run_dir = make_run(tmp_path, "whole", _tau2_records(tasks), {})
    score_run(run_dir, rescore=False)
    entry = load_run(run_dir, n_boot=N_BOOT).benchmarks["tau2"]
    assert not entry.partial and entry.coverage.summary() == "278/278 samples, 3/3 subsets, 1 trial"
    board = render([run_dir], "md", n_boot=N_BOOT)
    assert "| 66.67 (" in _summary_row(board, "whole")  # mean(1, 0, 1)
    assert not MARKED.search(board) and LEGEND not in board
    rows = list(csv.DictReader(io.StringIO(render([run_dir], "csv", n_boot=N_BOOT))))
    assert {r["partial"] for r in rows if r["metric"] == "tau2_mean"} == {"false"}


def test_a_subset_not_run_shows_a_dash_not_a_zero(tau_run, tmp_path):
    other = make_run(tmp_path, "other", _tau2_records({"telecom": [[True]] * 3}), {})
    score_run(other, rescore=False)
    board = render([tau_run, other], "md", n_boot=N_BOOT)
    table = next(
        chunk for chunk in board.split("### ") if chunk.startswith("τ²-Bench (original) (tau2")
    )
    header, _, *rows = [line for line in table.splitlines() if line.startswith("|")]
    columns = [c.strip() for c in header.strip("|").split("|")]
    row = next(r for r in rows if r.startswith("| tau |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[columns.index("pass^1/telecom (%)")] == "-"
    other_row = next(r for r in rows if r.startswith("| other |"))
    other_cells = [c.strip() for c in other_row.strip("|").split("|")]
    assert other_cells[columns.index("pass^1/airline (%)")] == "-"


def test_the_lines_after_a_run_say_which_numbers_are_partial(shared_data, tmp_path, capsys):
    out = tmp_path / "fin-limit"
    _cli_run(["run", "--suite", "finmcp", "--model", "oracle", "--limit", "1"] + [
        "--data-dir", str(shared_data / "finmcp"), "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err.splitlines()
    start = next(i for i, line in enumerate(err) if line.startswith("partial: "))
    # Printed wrapped to 100 columns, its continuation lines indented.
    assert all(len(line) <= 100 for line in err[start:])
    rest = [line[2:] for line in err[start + 1 :] if line.startswith("  ")]
    line = " ".join([err[start], *rest])
    assert line.startswith("partial: FinMCP-Bench: 3/613 samples, 3/3 subsets, 1 trial")
    assert "run with a limit of 1 sample(s) per subset" in line
    assert partial_lines(out) == [line]


def test_no_partial_line_for_a_complete_run(tmp_path):
    tasks = {"airline": [[True]] * 50, "retail": [[True]] * 114, "telecom": [[True]] * 114}
    run_dir = make_run(tmp_path, "whole", _tau2_records(tasks), {})
    score_run(run_dir, rescore=False)
    assert partial_lines(run_dir) == []


def test_the_aggregates_frame_says_what_each_value_covers(tau_run):
    from harness.results import frames as results

    table = results.aggregates(tau_run)
    headline = table[(table["subset"] == results.HEADLINE) & (table["metric"] == "tau2_mean")]
    assert headline["partial"].tolist() == [True]
    assert (headline["samples_scored"].iloc[0], headline["samples_official"].iloc[0]) == (16, 278)
    airline = table[(table["subset"] == "airline") & (table["metric"] == "pass^1")]
    assert airline["partial"].tolist() == [True] and airline["samples_official"].tolist() == [50]


def test_figures_mark_every_partial_number(fin_run, tau_run, vita_run):
    from matplotlib.container import BarContainer

    from harness.report.plots import PARTIAL_HATCH, build_plots

    results = [load_run(r, n_boot=N_BOOT) for r in (fin_run, tau_run, vita_run)]
    bars, passk = build_plots(results, ["bars", "passk"])
    hatches = {
        container.get_label(): {patch.get_hatch() for patch in container.patches}
        for ax in bars.figure.axes
        for container in ax.containers
        if isinstance(container, BarContainer)
    }
    assert hatches == {"fin": {PARTIAL_HATCH}, "tau": {PARTIAL_HATCH}, "vita": {PARTIAL_HATCH}}
    # pass^k of the interrupted tau2 run (and of VitaBench's two sets): open markers.
    faces = {line.get_markerfacecolor() for ax in passk.figure.axes for line in ax.lines}
    assert faces == {"white"}
