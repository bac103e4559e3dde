"""Only runs are results: the commands that read run folders skip folders that hold
no run (naming them in one line), read a sweep folder as its runs, list a run that
never started apart, and the report leaves out comparisons that cannot be made."""

from __future__ import annotations

import shutil

import pytest
from fake_runs import make_run, pass_fail_records
from support import REPO

from harness.cli import main
from harness.errors import ConfigError
from harness.report.html import ReportOptions, build_report
from harness.results.coverage import LEGEND
from harness.results.selection import one_run, runs_or_error, select_runs
from harness.run.scoring import score_run


def _tau2_run(root, name, outcomes, manifest_extra=None):
    records = pass_fail_records("tau2", "airline", outcomes)
    run_dir = make_run(root, name, records, {}, manifest_extra=manifest_extra)
    score_run(run_dir, rescore=False)
    return run_dir


def _not_started(root, name="failed-preflight"):
    """What a run that failed its preflight used to leave: a manifest, no record."""
    run_dir = root / name
    run_dir.mkdir(parents=True)
    shutil.copy(next(root.glob("*/manifest.json")), run_dir / "manifest.json")
    (run_dir / "samples.jsonl").write_text("", encoding="utf-8")
    return run_dir


@pytest.fixture
def results_folder(tmp_path):
    """results/: a run, a sweep of two checkpoints, the published tables, a run that
    did not start, and a stray file."""
    results = tmp_path / "results"
    _tau2_run(results, "plain", [True, False, True])
    sweep = results / "sweep__tau2"
    _tau2_run(sweep, "step_100", [False, False, True])
    _tau2_run(sweep, "step_200", [True, False, True])
    shutil.copytree(REPO / "results" / "reference", results / "reference")
    _not_started(results)
    (results / "notes.txt").write_text("not a run\n", encoding="utf-8")
    return results


def test_a_glob_over_results_reads_the_runs_and_names_what_it_skipped(results_folder, capsys):
    given = sorted(results_folder.iterdir())  # what results/* expands to
    assert main(["leaderboard", *map(str, given), "--format", "md", "--n-boot", "50"]) == 0
    out, err = capsys.readouterr()
    for name in ("plain", "step_100", "step_200"):
        assert f"| {name} |" in out
    assert "failed-preflight" not in out
    lines = err.strip().splitlines()
    assert lines == [
        f"harness: skipped, not run folders: {results_folder / 'notes.txt'}, "
        f"{results_folder / 'reference'}",
        f"harness: not started (no record), left out: {results_folder / 'failed-preflight'}",
    ]


def test_selection_expands_a_sweep_in_name_order(results_folder):
    selection = select_runs([results_folder / "sweep__tau2", results_folder / "plain"])
    assert [p.name for p in selection.runs] == ["step_100", "step_200", "plain"]
    assert selection.skipped == [] and selection.not_started == []


def test_no_run_left_or_a_missing_path_is_one_clear_error(results_folder, capsys):
    with pytest.raises(ConfigError, match="no such file or folder"):
        select_runs([results_folder / "typo"])
    with pytest.raises(ConfigError, match="no run among"):
        runs_or_error([results_folder / "reference", results_folder / "failed-preflight"])
    assert main(["leaderboard", str(results_folder / "reference")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("harness: error: no run among")


def test_compare_wants_one_started_run_on_each_side(results_folder, capsys):
    assert one_run(results_folder / "plain") == results_folder / "plain"
    with pytest.raises(ConfigError, match="a folder of 2 runs; name one of them"):
        one_run(results_folder / "sweep__tau2")
    with pytest.raises(ConfigError, match="did not start"):
        one_run(results_folder / "failed-preflight")
    sweep = results_folder / "sweep__tau2"
    argv = ["compare", str(sweep / "step_100"), str(sweep / "step_200"), "--n-boot", "50"]
    assert main(argv) == 0


def test_plot_reads_a_sweep_folder_as_its_checkpoints(results_folder, tmp_path, capsys):
    out = tmp_path / "figures"
    argv = ["plot", str(results_folder / "sweep__tau2"), str(results_folder / "reference")]
    assert main([*argv, "--out", str(out), "--x", "step", "--format", "png", "--n-boot", "50"]) == 0
    assert (out / "step.png").is_file()
    assert "skipped, not run folders" in capsys.readouterr().err


def test_the_report_compares_only_runs_that_share_a_benchmark(tmp_path):
    tau = _tau2_run(tmp_path, "tau", [True, False, True, True])
    tau_other = _tau2_run(tmp_path, "tau-other", [True, True, False, True])
    tau_third = _tau2_run(tmp_path, "tau-third", [False, True, False, True])
    records = pass_fail_records("bfcl", "simple_python", [True, False])
    bfcl = make_run(tmp_path, "bfcl-only", records, {})
    score_run(bfcl, rescore=False)
    out = tmp_path / "report.html"
    build_report([tau, tau_other, tau_third, bfcl], out, ReportOptions(n_boot=50, plots=False))
    page = out.read_text(encoding="utf-8")
    assert "No shared tasks" not in page
    assert "Not compared with tau (no benchmark in common): bfcl-only" in page
    assert "B = tau-other against A = tau" in page and "B = bfcl-only against A" not in page
    # Coverage said once per baseline block, not once per comparison in it.
    legend = LEGEND.replace("'", "&#x27;")
    blocks = page.split('class="baseline"')[1:]
    assert len(blocks) == 4 and [block.count(legend) for block in blocks[:3]] == [1, 1, 1]


def test_the_table_of_a_sweep_shows_each_checkpoints_step(results_folder, capsys):
    argv = ["leaderboard", str(results_folder / "sweep__tau2"), "--format", "table"]
    assert main([*argv, "--n-boot", "50"]) == 0
    rows = [line.split()[:2] for line in capsys.readouterr().out.splitlines()]
    assert ["run", "step"] in rows and ["step_100", "100"] in rows and ["step_200", "200"] in rows
