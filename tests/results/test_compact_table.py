"""The leaderboard read in a terminal: the compact table (one row per run, each
benchmark's headline with its interval and coverage mark, 100 columns for four
benchmarks), ``--columns``, the paper-column LaTeX table, zero-width intervals shown
as their n in every format, and the end of ``harness run`` (compact table on the
terminal, the full tables in the run folder's leaderboard.md)."""

from __future__ import annotations

import re

import pytest
from fake_runs import make_run, pass_fail_records
from test_leaderboard import BFCL_TASKS, all_benchmark_records, all_headlines

from harness.adapters.bfcl.aggregate import run_overall
from harness.cli import main
from harness.errors import ConfigError
from harness.report.leaderboard import load_run, render
from harness.report.paper_table import build_table, parse_columns
from harness.report.paper_table import render_latex as paper_latex
from harness.report.paper_table import render_markdown as paper_markdown

WIDTH = 100


def _headlines() -> dict:
    """The four benchmarks' headlines, with BFCL's overall over the categories run."""
    headlines = all_headlines()
    accuracy = {c: sum(outcomes) / len(outcomes) for c, outcomes in BFCL_TASKS.items()}
    entries = {c: len(outcomes) for c, outcomes in BFCL_TASKS.items()}
    headlines["bfcl"]["overall_run"] = run_overall(accuracy, entries)
    return headlines


def _full(tmp_path, name):
    return make_run(
        tmp_path,
        name,
        all_benchmark_records(),
        _headlines(),
        model="Qwen3-8B",
        not_run={"bfcl": {"web_search_no_snippet": "needs SERPAPI_API_KEY"}},
    )


def _all_passed(tmp_path, name="all-passed"):
    """A tau2 run whose two tasks both pass: its bootstrap interval has no width."""
    return make_run(
        tmp_path,
        name,
        pass_fail_records("tau2", "airline", [True, True]),
        {"tau2": {"pass^1/airline": 1.0, "tau2_mean": 1.0}},
    )


def test_four_benchmarks_fit_100_columns_with_headline_interval_and_mark(tmp_path):
    runs = [_full(tmp_path, "qwen3-8b-full"), _full(tmp_path, "qwen3-8b-with-a-long-run-name")]
    table = render(runs, "table", n_boot=200)
    lines = table.splitlines()
    assert max(map(len, lines)) <= WIDTH, table
    row = next(line for line in lines if line.startswith("qwen3-8b-full"))
    # Four benchmarks and the composite, each "value ±half-width" with the partial mark.
    assert len(re.findall(r"\d+\.\d ±\d+\.\d\*", row)) == 5, row
    for label in ("BFCL-v4", "τ²-Bench", "VitaBench", "FinMCP-Bench", "overall"):
        assert label in table
    # The coverage is said once, not once per benchmark table: here for both runs at
    # once, as they cover the same.
    coverage_lines = [line for line in lines if "11/5090 samples" in line]
    assert len(coverage_lines) == 1, table
    assert coverage_lines[0].startswith("  qwen3-8b-full, qwen3-8b-with-a-long-run-name: ")
    assert "--format md" in table and "|" not in table


def test_columns_pick_the_metrics_shown(tmp_path):
    run = _full(tmp_path, "qwen3-8b-full")
    table = render([run], "table", n_boot=100, columns="bfcl:overall_run,tau2:pass^1/airline")
    header = "\n".join(table.splitlines()[:4])
    assert "overall_run %" in header and "pass^1/airline %" in header
    assert "tau2_mean" not in table and "VitaBench" not in header
    with pytest.raises(ConfigError, match="--columns is for --format table or latex"):
        render([run], "md", columns="bfcl")
    with pytest.raises(ConfigError, match="no run has benchmark 'nope'"):
        render([run], "table", columns="nope")


def test_bfcl_overall_run_has_an_interval(tmp_path):
    run = _full(tmp_path, "qwen3-8b-full")
    table = render([run], "table", n_boot=100, columns="bfcl:overall_run")
    row = next(line for line in table.splitlines() if line.startswith("qwen3-8b-full"))
    assert re.search(r"\d+\.\d ±\d+\.\d\*", row), row


def test_latex_is_one_table_for_a_paper_column(tmp_path):
    run = _full(tmp_path, "qwen3-8b-full")
    latex = render([run], "latex", n_boot=100)
    assert latex.count("\\toprule") == 1 and latex.count("\\begin{table}") == 1
    spec = re.search(r"\\begin\{tabular\}\{(\w+)\}", latex)
    assert spec is not None and spec.group(1) == "lrrrrr"  # run, four headlines, overall
    assert "$\\pm$" in latex and "\\scriptsize micro\\_f1" in latex
    body = [line for line in latex.splitlines() if not line.startswith("%")]
    assert not any("τ" in line for line in body)
    chosen = render([run], "latex", n_boot=100, columns="tau2")
    assert re.search(r"\\begin\{tabular\}\{lr\}", chosen)


def test_a_zero_width_interval_shows_its_n_in_every_format(tmp_path):
    run = _all_passed(tmp_path)
    outputs = {fmt: render([run], fmt, n_boot=100) for fmt in ("table", "md", "latex")}
    result = load_run(run, n_boot=100)
    table = build_table([result], result, parse_columns(None, [result]), {}, n_boot=100)
    outputs["paper md"] = paper_markdown(table)
    outputs["paper latex"] = paper_latex(table)
    for fmt, text in outputs.items():
        assert "n=2" in text, fmt
        assert "100.0–100.0" not in text and "[100.0, 100.0]" not in text, fmt
        assert "± 0.0" not in text and "$\\pm$ 0.0" not in text and "±0.0" not in text, fmt
    assert "| 100.00 (n=2)" in outputs["md"]


def test_the_default_format_is_md_when_not_a_terminal(tmp_path, capsys):
    run = _all_passed(tmp_path)
    assert main(["leaderboard", str(run), "--n-boot", "50"]) == 0
    assert "### Summary across benchmarks" in capsys.readouterr().out
    assert main(["leaderboard", str(run), "--n-boot", "50", "--format", "table"]) == 0
    out = capsys.readouterr().out
    assert "Summary across" not in out
    assert any(line.startswith("run ") for line in out.splitlines()[:3])


def test_a_run_ends_with_the_compact_table_and_keeps_the_full_ones(tmp_path, capsys, monkeypatch):
    # As `make demo` runs it: the run folder named relative to where the command runs
    # (the counts line starts with it and is never wrapped).
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "results" / "smoke-oracle"
    argv = ["run", "--suite", "smoke", "--model", "oracle", "--out", "results/smoke-oracle"]
    assert main(argv) == 0
    stdout, stderr = capsys.readouterr()
    printed = (stdout + stderr).splitlines()
    assert max(map(len, printed)) <= WIDTH, "\n".join(p for p in printed if len(p) > WIDTH)
    row = next(line for line in stdout.splitlines() if line.startswith("smoke-oracle"))
    # BFCL's and tau2's headlines, each with its interval (here of no width) and mark.
    assert re.search(r"73\.3 \(n=\d+\)\*\s+100\.0 \(n=6\)\*", row), row
    assert stdout.count("36/5090 samples") == 1 and "partial:" not in stderr
    full = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert full.startswith("\n### Summary across benchmarks")
    assert full == render([out], "md")


def test_published_rows_sit_beside_the_runs_and_say_they_have_no_interval(tmp_path):
    run = _full(tmp_path, "qwen3-8b-full")
    table = render([run], "table", reference="envace", n_boot=50)
    lines = table.splitlines()
    assert max(map(len, lines)) <= WIDTH, table
    assert any(line.startswith("EnvACE-8B (envace)") for line in lines)
    assert "(envace): published rows, without intervals" in table
