"""One unit per output: human tables in percent with the unit in every metric header,
CSV and JSON in fractions with their unit named, and notes that state no unit."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from fake_runs import make_run, pass_fail_records
from test_leaderboard import all_benchmark_records, all_headlines

from harness.report.compare import render_json as compare_json
from harness.report.compare import render_markdown as compare_markdown
from harness.report.leaderboard import PERCENT_HEADER, load_run, render
from harness.results.stats import compare_runs
from harness.task.registry import benchmark_names, get_adapter

# A note that names a unit can contradict the cells above it.
UNIT_WORDS = re.compile(r"fraction|\[0, ?1\]|percent|\bin %|\b0\s?[-–]\s?1\b", re.IGNORECASE)
NUMBER = re.compile(r"^-?\d+\.\d+")


def _adapter_notes() -> dict[str, list[str]]:
    return {name: get_adapter(name).aggregate([]).notes for name in benchmark_names()}


@pytest.fixture
def run_dir(tmp_path):
    # The adapters' own notes go under their tables, as scoring puts them there.
    return make_run(
        tmp_path, "full", all_benchmark_records(), all_headlines(), notes=_adapter_notes()
    )


def _fractions(run_dir) -> dict[str, dict[str, float]]:
    """benchmark -> metric -> value, from the JSON output (fractions)."""
    data = json.loads(render([run_dir], "json", n_boot=100))
    assert data["unit"] == "fraction"
    row = data["rows"][0]
    out = {}
    for bench, entry in row["benchmarks"].items():
        out[bench] = {k: v for k, v in entry["headline"].items() if entry["units"][k] == "fraction"}
        assert all(0.0 <= v <= 1.0 for v in out[bench].values())
    return out


def _md_tables(text: str) -> dict[str, tuple[list[str], list[list[str]], str]]:
    """title -> (headers, rows, the text after the table: its notes)."""
    tables = {}
    for chunk in text.split("### ")[1:]:
        title, _, body = chunk.partition("\n")
        lines = [line for line in body.splitlines() if line.startswith("|")]
        split = [[c.strip() for c in line.strip("|").split(" | ")] for line in lines]
        notes = "\n".join(line for line in body.splitlines() if line.startswith("- "))
        tables[title] = (split[0], split[2:], notes)
    return tables


def test_adapter_notes_state_no_unit():
    for name, notes in _adapter_notes().items():
        for note in notes:
            assert not UNIT_WORDS.search(note), (name, note)


def test_markdown_tables_are_in_percent_and_say_so_in_each_metric_header(run_dir):
    fractions = _fractions(run_dir)
    tables = _md_tables(render([run_dir], "md", n_boot=100))
    checked = 0
    for title, (headers, rows, notes) in tables.items():
        assert not UNIT_WORDS.search(notes), title
        bench = next((b for b in fractions if f"({b};" in title), None)
        for column, header in enumerate(headers):
            for row in rows:
                number = NUMBER.match(row[column])
                if number is None:
                    continue
                # A decimal number only ever stands in a column that says "(%)" ...
                assert header.endswith(PERCENT_HEADER), (title, header, row[column])
                if bench is None:
                    continue
                metric = header.removesuffix(PERCENT_HEADER)
                # ... and it is the JSON fraction times 100 (never the fraction itself).
                assert float(number.group()) == pytest.approx(
                    100 * fractions[bench][metric], abs=0.006
                ), (bench, metric)
                checked += 1
    assert checked >= 15  # every benchmark's metrics were compared


def test_latex_tables_are_in_percent_and_say_so_in_each_metric_header(run_dir):
    fractions = _fractions(run_dir)
    latex = render([run_dir], "latex", n_boot=100)
    # One table for a paper column: benchmark over metric in the header, the unit in
    # the caption, values in percent to one decimal.
    lines = [line for line in latex.splitlines() if line.endswith("\\\\")]
    headers = [h.strip() for h in lines[1].removesuffix("\\\\").split(" & ")]
    cells = [c.strip() for c in lines[2].removesuffix("\\\\").split(" & ")]
    f1 = headers.index("{\\scriptsize micro\\_f1}")
    assert float(NUMBER.match(cells[f1]).group()) == pytest.approx(
        100 * fractions["finmcp"]["micro_f1"], abs=0.06
    )
    assert "\\caption{Values in \\%" in latex
    comments = "\n".join(line for line in latex.splitlines() if line.startswith("%"))
    assert not UNIT_WORDS.search(comments)


def test_csv_names_the_unit_of_every_value_and_keeps_fractions(run_dir):
    fractions = _fractions(run_dir)
    rows = list(csv.DictReader(io.StringIO(render([run_dir], "csv", n_boot=100))))
    assert all(r["unit"] for r in rows if r["value"] != "")
    for bench, metrics in fractions.items():
        for metric, value in metrics.items():
            row = next(r for r in rows if r["benchmark"] == bench and r["metric"] == metric)
            assert row["unit"] == "fraction" and float(row["value"]) == pytest.approx(value)


def test_compare_shows_percent_and_points_and_its_json_fractions(tmp_path):
    a_dir = make_run(tmp_path, "a", pass_fail_records("tau2", "airline", [True, False] * 3), {})
    b_dir = make_run(tmp_path, "b", pass_fail_records("tau2", "airline", [True] * 6), {})
    a, b = load_run(a_dir, n_boot=100), load_run(b_dir, n_boot=100)
    comparisons = compare_runs(a.tasks, b.tasks, n_boot=100)
    text = compare_markdown(a, b, comparisons, max_flips=5)
    table = [
        [c.strip() for c in line.strip(" |").split("|")]
        for line in text.splitlines()
        if line.startswith("| ")
    ]
    header, row = table[0], next(cells for cells in table if cells[0] == "tau2")
    assert header[3:6] == ["A (%)", "B (%)", "Δ (pts)"]
    assert all(name.endswith("(pts)") for name in header[6:9])  # two CIs and the MDE
    assert row[3:6] == ["50.00", "100.00", "+50.00"]
    data = json.loads(compare_json(a, b, comparisons))
    assert data["unit"] == "fraction"
    head = data["benchmarks"][0]["headline"]
    assert head["value_a"] == pytest.approx(0.5) and head["value_b"] == pytest.approx(1.0)


def test_compare_never_pairs_two_task_sets_of_one_benchmark(tmp_path, capsys):
    """tau2 (original) and tau3 (v1.0.1) share task ids (airline "0" in both) but
    not tasks: compare refuses in one line, or says so beside the benchmarks it pairs."""
    from harness.cli import main

    a_dir = make_run(tmp_path, "a", pass_fail_records("tau2", "airline", [True, False] * 3), {})
    b_dir = make_run(tmp_path, "b", pass_fail_records("tau3", "airline", [True] * 6), {})
    assert main(["compare", str(a_dir), str(b_dir)]) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line
    assert "τ²-Bench (original) (tau2)" in line and "τ³-Bench (v1.0.1) (tau3)" in line
    assert "different task sets of one benchmark are never paired" in line
    both = pass_fail_records("bfcl", "simple_python", [True, True, False])
    c_dir = make_run(tmp_path, "c", both + pass_fail_records("tau2", "airline", [True] * 6), {})
    d_dir = make_run(tmp_path, "d", both + pass_fail_records("tau3", "airline", [True] * 6), {})
    assert main(["compare", str(c_dir), str(d_dir)]) == 0
    captured = capsys.readouterr()
    assert "never paired" in captured.err
    assert "| bfcl" in captured.out and "| tau2" not in captured.out


def test_compare_warns_when_the_runs_differ_in_non_standard_settings(tmp_path):
    """E.g. VitaBench with its own prompts in one run and this project's wording in the
    other: compare says so beside the numbers (markdown and JSON)."""
    records = pass_fail_records("vitabench", "delivery", [True, False] * 3)
    a_dir = make_run(tmp_path, "a", records, {"vitabench": {"Avg": 0.5}})
    b_dir = make_run(tmp_path, "b", records, {"vitabench": {"Avg": 0.5}})
    scores = json.loads((b_dir / "scores.json").read_text())
    scores["benchmarks"]["vitabench"]["nonstandard"] = ["this project's prompts"]
    (b_dir / "scores.json").write_text(json.dumps(scores))
    a, b = load_run(a_dir, n_boot=50), load_run(b_dir, n_boot=50)
    comparisons = compare_runs(a.tasks, b.tasks, n_boot=50)
    text = compare_markdown(a, b, comparisons, max_flips=5)
    assert (
        "WARNING: VitaBench: the runs differ in settings that are not the benchmark's own" in text
    )
    assert "A: standard; B: this project's prompts" in text
    warnings = json.loads(compare_json(a, b, comparisons))["warnings"]
    assert any("this project's prompts" in w for w in warnings)
    same = compare_markdown(a, a, compare_runs(a.tasks, a.tasks, n_boot=50), max_flips=5)
    assert "settings that are not the benchmark's own" not in same
