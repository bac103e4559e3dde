"""Plots: a two-run comparison and a three-checkpoint series produce valid PNG and PDF files."""

from __future__ import annotations

import pytest
from fake_runs import make_run, pass_fail_records, record

from harness.cli import main
from harness.report.leaderboard import load_run
from harness.report.plots import bars_plot, build_plots, rehearsal_budget

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PDF_MAGIC = b"%PDF-"


def tau2_bfcl_run(root, name, airline, strategy="plain", tokens=100, manifest_extra=None):
    """tau2 airline with two trials per task, plus one BFCL category."""
    records = pass_fail_records("tau2", "airline", airline)
    records += pass_fail_records("bfcl", "multi_turn_base", [True, False, True, False])
    usage = {"actor": {"calls": 1, "prompt_tokens": tokens, "completion_tokens": 10}}
    for item in records:
        item["trajectory"]["usage"] = usage
    passes = sum(sum(t) / len(t) for t in airline) / len(airline)
    return make_run(
        root,
        name,
        records,
        {
            "tau2": {"airline": passes, "tau2_mean": passes},
            "bfcl": {"overall": 0.3 * 0.25 * 0.5, "multi_turn": 0.125},
        },
        strategy=strategy,
        manifest_extra=manifest_extra,
    )


def assert_valid_files(out, stems):
    for stem in stems:
        png = (out / f"{stem}.png").read_bytes()
        pdf = (out / f"{stem}.pdf").read_bytes()
        assert png.startswith(PNG_MAGIC) and len(png) > 5000, stem
        assert pdf.startswith(PDF_MAGIC) and len(pdf) > 1000, stem


def test_two_run_comparison_plots(tmp_path, capsys):
    base = tau2_bfcl_run(tmp_path, "qwen3-8b__plain", [[True, False], [False, False]] * 4)
    rehearsal = tau2_bfcl_run(
        tmp_path,
        "qwen3-8b__rehearsal",
        [[True, True], [True, False]] * 4,
        strategy="rehearsal-parallel:2",
        tokens=300,
    )
    out = tmp_path / "plots"
    assert main(["plot", str(base), str(rehearsal), "--out", str(out), "--n-boot", "200"]) == 0
    assert_valid_files(out, ["bars", "budget", "passk", "cost"])
    assert not (out / "step.png").exists()  # no checkpoint series here
    printed = capsys.readouterr().out.split()
    assert sorted(printed) == sorted(str(p) for p in out.iterdir())


def test_bar_heights_are_the_primary_metrics(tmp_path):
    run = tau2_bfcl_run(tmp_path, "r", [[True, True], [True, False], [False, False], [True, True]])
    plot = bars_plot([load_run(run, n_boot=100)])
    heights = sorted(round(p.get_height(), 6) for p in plot.figure.axes[0].patches)
    assert heights == sorted([round(100 * 0.3 * 0.25 * 0.5, 6), round(100 * 5 / 8, 6)])


def test_three_checkpoint_series_plots_score_against_step(tmp_path, capsys):
    runs = [
        tau2_bfcl_run(tmp_path, "envace__step_100", [[False, False], [True, False]] * 3),
        tau2_bfcl_run(tmp_path, "envace__step_200", [[True, False], [True, False]] * 3),
        # The manifest's step wins over the name.
        tau2_bfcl_run(
            tmp_path,
            "envace__last",
            [[True, True], [True, False]] * 3,
            manifest_extra={"checkpoint": "/ckpt/global_step_300"},
        ),
    ]
    out = tmp_path / "series"
    argv = ["plot", *map(str, runs), "--out", str(out), "--x", "step", "--n-boot", "200"]
    assert main(argv) == 0
    assert_valid_files(out, ["step"])
    results = [load_run(r, n_boot=50) for r in runs]
    assert [r.step for r in results] == [100, 200, 300]
    plot = build_plots(results, ["step"])[0]
    # The benchmarks' lines (labelled; the points' own markers are not).
    lines = [line for line in plot.figure.axes[0].get_lines() if line.get_label()[0] != "_"]
    assert [list(line.get_xdata()) for line in lines] == [[100, 200, 300]] * 2  # bfcl, tau2


def test_a_plot_without_data_is_a_clear_error(tmp_path, capsys):
    run = tau2_bfcl_run(tmp_path, "single", [[True, False]])
    assert main(["plot", str(run), "--out", str(tmp_path / "o"), "--kind", "step"]) == 2
    assert "no run has a training step" in capsys.readouterr().err
    assert main(["plot", str(run), "--out", str(tmp_path / "o"), "--kind", "pie"]) == 2


def test_pass_k_plot_needs_only_one_run(tmp_path):
    records = [record("tau2", "retail", "a", t, passed=t < 3) for t in range(4)]
    run = make_run(tmp_path, "r", records, {"tau2": {"retail": 0.75, "tau2_mean": 0.75}})
    plot = build_plots([load_run(run, n_boot=50)], ["passk"])[0]
    line = plot.figure.axes[0].get_lines()[0]
    assert list(line.get_ydata()) == pytest.approx([75.0, 50.0, 25.0, 0.0])
    # Read in a report at page width: text larger than matplotlib's defaults (12/10/10).
    ax = plot.figure.axes[0]
    assert ax.title.get_fontsize() > 12 and ax.xaxis.label.get_fontsize() > 10
    assert all(t.get_fontsize() > 10 for t in ax.get_yticklabels())


@pytest.mark.parametrize(
    "settings, expected",
    [
        ({"name": "rehearsal-parallel:2"}, ("rehearsal-parallel", 2)),
        ({"name": "rehearsal", "mode": "sequential", "n": 3}, ("rehearsal-sequential", 3)),
        ({"name": "plain"}, ("plain", 0)),
        ({"name": "best-of-n"}, None),
    ],
)
def test_rehearsal_budget_from_strategy_settings(settings, expected):
    assert rehearsal_budget(settings) == expected


def bfcl_checkpoint(root, name, passed, manifest_extra=None):
    """A BFCL checkpoint that ran two of its categories (the rest count as 0 in
    the official Overall): per category, pass/fail per task."""
    from harness.adapters.bfcl.aggregate import official_overall, run_overall

    records = []
    accuracy, entries = {}, {}
    for category, outcomes in passed.items():
        records += pass_fail_records("bfcl", category, outcomes, prefix=f"{category}_")
        accuracy[category] = sum(outcomes) / len(outcomes)
        entries[category] = len(outcomes)
    headline = {
        "overall": official_overall(accuracy, entries),
        "overall_run": run_overall(accuracy, entries),
        **accuracy,
    }
    return make_run(root, name, records, {"bfcl": headline}, manifest_extra=manifest_extra)


STEP_100 = {"simple_python": [True] * 6 + [False] * 4, "multiple": [True] * 4 + [False] * 6}
STEP_200 = {"simple_python": [True] * 8 + [False] * 2, "multiple": [True] * 5 + [False] * 5}


def _step_lines(plot):
    return [
        line
        for ax in plot.figure.axes
        for line in ax.get_lines()
        if line.get_label()[0] != "_" and len(line.get_xdata()) > 1
    ]


def test_the_step_plot_draws_the_metric_over_the_subsets_run_on_a_scaled_axis(tmp_path, capsys):
    from harness.report.plots import step_figure

    runs = [
        bfcl_checkpoint(tmp_path, "ckpt/step_100", STEP_100),
        # The step from --model-revision (the manifest's fingerprint), not the name.
        bfcl_checkpoint(
            tmp_path, "ckpt/latest", STEP_200, {"fingerprint": {"id": "x", "revision": "step-200"}}
        ),
    ]
    results = [load_run(r, n_boot=200) for r in runs]
    assert [r.step for r in results] == [100, 200]
    plot = step_figure(results, n_boot=200)
    (line,) = _step_lines(plot)
    # Default: BFCL's overall over the categories run (the official one is near 0).
    assert "overall_run" in line.get_label() and "official: overall" in line.get_label()
    assert list(line.get_xdata()) == [100, 200]
    ys = [round(y, 6) for y in line.get_ydata()]
    assert ys == [round(100 * (0.6 * 0.5 + 0.4 * 0.5), 6), round(100 * 0.65, 6)]
    bottom, top = plot.figure.axes[0].get_ylim()
    assert bottom > 0 and top < 100  # scaled to the data, not 0-100
    # Intervals drawn: error bars around the points.
    assert plot.figure.axes[0].collections, "no error bars"
    out = tmp_path / "fig"
    argv = ["plot", *map(str, runs), "--out", str(out), "--x", "step", "--metric", "overall_run"]
    assert main([*argv, "--n-boot", "200", "--format", "png"]) == 0
    assert (out / "step.png").read_bytes().startswith(PNG_MAGIC)


def test_the_step_plot_takes_any_headline_metric_and_draws_subsets(tmp_path, capsys):
    from harness.report.plots import step_figure

    runs = [
        load_run(bfcl_checkpoint(tmp_path, "step_100", STEP_100), n_boot=100),
        load_run(bfcl_checkpoint(tmp_path, "checkpoint-200", STEP_200), n_boot=100),
    ]
    official = step_figure(runs, metric="bfcl:overall", n_boot=100)
    (line,) = _step_lines(official)
    assert "official" not in line.get_label()
    assert [round(y, 4) for y in line.get_ydata()] == [
        round(100 * r.benchmarks["bfcl"].headline["overall"], 4) for r in runs
    ]
    subsets = step_figure(runs, subsets=True, n_boot=100)
    titles = [ax.get_title() for ax in subsets.figure.axes if ax.get_visible()]
    assert titles == ["BFCL-v4 multiple", "BFCL-v4 simple_python"]
    python = [list(line.get_ydata()) for line in subsets.figure.axes[1].get_lines()][0]
    assert [round(y, 6) for y in python] == [60.0, 80.0]
    out = tmp_path / "o"
    argv = ["plot", str(runs[0].run_dir), str(runs[1].run_dir), "--out", str(out)]
    assert main([*argv, "--x", "step", "--metric", "nope", "--n-boot", "50"]) == 2
    assert "--metric nope: no run with a step has it" in capsys.readouterr().err


def test_no_run_with_a_step_is_one_line(tmp_path, capsys):
    runs = [bfcl_checkpoint(tmp_path, "a", STEP_100), bfcl_checkpoint(tmp_path, "b", STEP_200)]
    argv = ["plot", *map(str, runs), "--out", str(tmp_path / "o"), "--x", "step"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no run has a training step" in err[0] and "--model-revision" in err[0]
