"""Score conditions: two runs of one benchmark made under different conditions (a
benchmark package version, a user model, ...) are said to differ in one line by
``compare`` and marked in every leaderboard format; alike runs read as before."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from fake_runs import make_run, pass_fail_records

from harness.cli import main
from harness.report.leaderboard import render
from harness.results.conditions import DRIFT_MARK, column_drift, score_conditions

BFCL = {"overall": 0.5, "non_live": 0.5}


def _bfcl_run(root: Path, name: str, outcomes: list[bool]) -> Path:
    records = pass_fail_records("bfcl", "simple_python", outcomes)
    versions = {"harness": "0.1.0", "bfcl.bfcl-eval": "2025.10.1", "bfcl.data": "BFCL_v4"}
    return make_run(root, name, records, {"bfcl": BFCL}, manifest_extra={"versions": versions})


def _set_bfcl_eval(run_dir: Path, version: str) -> None:
    """Edit a run's manifest as if it had been made with another bfcl-eval."""
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["versions"]["bfcl.bfcl-eval"] = version
    path.write_text(json.dumps(manifest))


def _pair(tmp_path: Path, drift: bool) -> tuple[Path, Path]:
    a = _bfcl_run(tmp_path, "old", [True, False, True, True])
    b = _bfcl_run(tmp_path, "new", [True, True, False, True])
    if drift:
        _set_bfcl_eval(b, "2025.12.17")
    return a, b


def test_compare_names_a_different_bfcl_eval_version_in_one_line(tmp_path, capsys):
    a, b = _pair(tmp_path, drift=True)
    assert main(["compare", str(a), str(b), "--n-boot", "200"]) == 0
    captured = capsys.readouterr()
    said = [line for line in captured.err.splitlines() if "comparable" in line]
    assert said == [
        "harness: bfcl: bfcl-eval 2025.10.1 vs 2025.12.17 — scores may not be comparable"
    ]
    assert "| bfcl" in captured.out  # the comparison still goes on
    assert main(["compare", str(a), str(b), "--format", "json", "--n-boot", "200"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert "bfcl: bfcl-eval 2025.10.1 vs 2025.12.17 — scores may not be comparable" in warnings


def test_alike_runs_compare_and_rank_as_before(tmp_path, capsys):
    a, b = _pair(tmp_path, drift=False)
    assert main(["compare", str(a), str(b), "--n-boot", "200"]) == 0
    assert "comparable" not in capsys.readouterr().err
    for fmt in ("table", "md", "latex", "csv", "json"):
        text = render([a, b], fmt, n_boot=50)
        assert DRIFT_MARK not in text and "ddag" not in text and "drift" not in text, fmt


def test_the_leaderboard_marks_the_cell_made_with_another_version(tmp_path):
    a, b = _pair(tmp_path, drift=True)
    footnote = f"{DRIFT_MARK} new BFCL-v4: bfcl-eval 2025.12.17 (others: 2025.10.1)"
    compact = render([a, b], "table", n_boot=50)
    lines = compact.splitlines()
    assert DRIFT_MARK in next(line for line in lines if line.startswith("new"))
    assert DRIFT_MARK not in next(line for line in lines if line.startswith("old"))
    assert compact.count(f"{DRIFT_MARK} = made under other score conditions") == 1
    assert footnote in " ".join(compact.split())
    markdown = render([a, b], "md", n_boot=50)
    marked = [line for line in markdown.splitlines() if line.startswith("| new")]
    assert marked and all(DRIFT_MARK in line for line in marked)
    assert not any(DRIFT_MARK in line for line in markdown.splitlines() if line.startswith("| old"))
    assert footnote in markdown
    assert r"$^{\ddagger}$" in render([a, b], "latex", n_boot=50)
    rows = list(csv.DictReader(io.StringIO(render([a, b], "csv", n_boot=50))))
    assert {r["drift"] for r in rows if r["run"] == "new" and r["benchmark"] == "bfcl"} == {
        "bfcl-eval 2025.12.17 (others: 2025.10.1)"
    }
    assert {r["drift"] for r in rows if r["run"] == "old"} == {""}
    data = json.loads(render([a, b], "json", n_boot=50))
    assert data["drift_mark"]["symbol"] == DRIFT_MARK
    new = next(r for r in data["rows"] if r["run"] == "new")
    assert new["benchmarks"]["bfcl"]["drift"] == "bfcl-eval 2025.12.17 (others: 2025.10.1)"


def test_the_most_common_conditions_of_a_column_are_its_own(tmp_path):
    """Of three runs, the one alone with another version is marked, not the other two."""
    runs = [_bfcl_run(tmp_path, name, [True, False]) for name in ("one", "two", "three")]
    _set_bfcl_eval(runs[0], "2025.12.17")
    compact = render(runs, "table", n_boot=50)
    marked = {line.split()[0] for line in compact.splitlines() if DRIFT_MARK in line}
    assert "one" in marked and not {"two", "three"} & marked


def test_a_published_row_made_with_another_version_is_marked(tmp_path):
    run = _bfcl_run(tmp_path, "mine", [True, False])
    table = tmp_path / "published.yaml"
    table.write_text(
        "name: pub\ntitle: t\nsource: a paper\nversions: {bfcl: {bfcl-eval: 2025.6.1}}\n"
        "rows:\n  - model: A\n    scores: {bfcl: {overall: 40.0}}\n"
        "  - model: B\n    versions: {bfcl: {bfcl-eval: 2025.10.1}}\n"
        "    scores: {bfcl: {overall: 41.0}}\n",
        encoding="utf-8",
    )
    markdown = render([run], "md", reference=str(table), n_boot=50)
    assert f"{DRIFT_MARK} A (pub) BFCL-v4: bfcl-eval 2025.6.1 (others: 2025.10.1)" in markdown
    assert "B (pub) BFCL-v4" not in markdown  # made with the run's version
    assert not any(DRIFT_MARK in line for line in markdown.splitlines() if "| mine" in line)


def test_conditions_name_versions_options_and_the_models_the_benchmark_uses():
    suite = {"entries": [{"benchmark": "tau2", "options": {"prompts": "official"}}]}
    found = score_conditions(
        "tau2",
        {"harness": "1", "tau2.task_set": "original", "bfcl.bfcl-eval": "x"},
        suite,
        {"name": "gpt-4.1"},
        None,
        ["retrieval bm25"],
    )
    assert found == {
        "task_set": "original",
        "option prompts": "official",
        "user model": "gpt-4.1",
        "retrieval": "bm25",
    }
    bfcl = score_conditions("bfcl", {"bfcl.bfcl-eval": "1"}, None, "gpt-4.1", "judge", [])
    assert bfcl == {"bfcl-eval": "1"}  # bfcl has no user or judge: they do not count
    assert column_drift([(found, False), (found, False), ({"task_set": "x"}, True)]) == [
        "",
        "",
        "task_set x (others: original)",
    ]


def test_report_and_paper_mark_the_same_cell(tmp_path, capsys):
    from harness.report.html import ReportOptions, build_report

    a, b = _pair(tmp_path, drift=True)
    page = tmp_path / "r.html"
    build_report([a, b], page, ReportOptions(n_boot=50, plots=False))
    text = page.read_text(encoding="utf-8")
    assert "new BFCL-v4: bfcl-eval 2025.12.17 (others: 2025.10.1)" in text
    assert f"{DRIFT_MARK}</td>" in text
    # the paired comparison says it too
    assert "<li>bfcl: bfcl-eval 2025.10.1 vs 2025.12.17 — scores may not be comparable</li>" in text
    out = tmp_path / "pack"
    argv = ["paper", str(a), str(b), "--baseline", str(a), "--out", str(out), "--n-boot", "50"]
    assert main([*argv, "--format", "png"]) == 0
    table = (out / "table.md").read_text(encoding="utf-8").splitlines()
    assert DRIFT_MARK in next(line for line in table if line.startswith("| new"))
    assert DRIFT_MARK not in next(line for line in table if line.startswith("| old"))
    assert f"{DRIFT_MARK} new BFCL-v4: bfcl-eval 2025.12.17 (others: 2025.10.1)" in table
    assert r"\ddag" in (out / "table.tex").read_text(encoding="utf-8")


def test_the_tau2_published_rows_carry_their_task_set():
    from harness.results.reference import load_reference

    table = load_reference("tau2")
    assert {row.versions.get("tau2", {}).get("task_set") for row in table.rows} == {"original"}
