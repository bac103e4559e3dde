"""Published reference rows: the files load, agree with their own definitions, and show
beside a user's run."""

from __future__ import annotations

import csv
import io
import json

import pytest
from fake_runs import make_run, pass_fail_records

from harness.errors import ConfigError
from harness.report.leaderboard import render
from harness.results.reference import available, load_reference, load_references

EXPECTED = {"envace", "envace-rehearsal", "envace-finmcp", "finmcp", "tau2"}


def test_every_reference_file_loads_with_its_source_and_settings():
    assert EXPECTED <= set(available())
    for name in EXPECTED:
        table = load_reference(name)
        assert table.source and table.rows, name
        assert "user_model" in table.settings and "judge_model" in table.settings, name
        assert table.settings.get("metrics"), name
        for row in table.rows:
            for metrics in row.scores.values():
                assert all(0.0 <= v <= 1.0 for v in metrics.values()), (name, row.model)


def test_envace_main_table_overall_is_the_mean_of_its_three_columns():
    table = load_reference("envace")
    assert len(table.rows) == 13
    by_model = {row.model: row for row in table.rows}
    assert by_model["EnvACE-8B"].scores["bfcl"]["overall"] == pytest.approx(0.4604)
    assert by_model["ScaleEnv-8B"].overall is None and "bfcl" not in by_model["ScaleEnv-8B"].scores
    checked = 0
    for row in table.rows:
        if row.overall is None:
            continue
        parts = [
            row.scores["bfcl"]["overall"],
            row.scores["tau2"]["tau2_mean"],
            row.scores["vitabench"]["Avg"],
        ]
        # Published inputs are rounded to 0.1 or 0.01 points, so allow a third of 0.1.
        assert sum(parts) / 3 == pytest.approx(row.overall, abs=0.00035), row.model
        checked += 1
    assert checked == 10
    scenarios = by_model["EnvACE-8B"].scores["vitabench"]
    per_scenario = [scenarios[f"{s}/avg@4"] for s in ("cross", "delivery", "instore", "ota")]
    assert sum(per_scenario) / 4 == pytest.approx(scenarios["Avg"])


def test_finmcp_f1_is_the_harmonic_mean_of_precision_and_recall():
    for name in ("finmcp", "envace-finmcp"):
        for row in load_reference(name).rows:
            m = row.scores["finmcp"]
            f1 = 2 * m["micro_precision"] * m["micro_recall"]
            f1 /= m["micro_precision"] + m["micro_recall"]
            assert f1 == pytest.approx(m["micro_f1"], abs=0.0001), row.model


def test_rehearsal_and_tau2_means_match_their_columns():
    for row in load_reference("envace-rehearsal").rows:
        mean = (row.scores["tau2"]["tau2_mean"] + row.scores["bfcl"]["multi_turn"]) / 2
        # Published to 0.1 points: half a unit of the last digit.
        assert mean == pytest.approx(row.extra["tau2_bfcl_multi_turn_mean"], abs=0.0005 + 1e-9)
    for row in load_reference("tau2").rows:
        t = row.scores["tau2"]
        assert (
            t["pass^1/airline"] + t["pass^1/retail"] + t["pass^1/telecom"]
        ) / 3 == pytest.approx(t["tau2_mean"], abs=0.00005)


@pytest.fixture
def tau2_run(tmp_path):
    return make_run(
        tmp_path,
        "envace-8b__plain",
        pass_fail_records("tau2", "airline", [True, True, False, True]),
        {"tau2": {"airline": 0.75, "tau2_mean": 0.75}},
        model="Team-ACE/EnvACE-Qwen3-8B",
    )


def test_with_reference_envace_prints_the_papers_main_table_beside_a_run(tau2_run):
    out = render([tau2_run], "md", reference="envace", n_boot=100)
    summary = out.split("### ")[1]
    lines = summary.splitlines()
    run_line = next(line for line in lines if line.startswith("| envace-8b__plain |"))
    assert "75.00" in run_line
    # Every row of the paper's main table is there, with its published numbers.
    expected_rows = {
        "Qwen3-8B": ["44.04", "30.00", "11.40", "28.48"],
        "EnvACE-8B": ["46.04", "36.70", "16.00", "32.91"],
        "AWM-14B": ["47.32", "30.70", "19.60", "32.54"],
        "ScaleEnv-8B": ["-", "38.50", "15.00", "partial (no BFCL-v4)"],
    }
    header = [c.strip() for c in lines[2].strip("|").split("|")]
    for model, values in expected_rows.items():
        line = next(line for line in lines if line.startswith(f"| ref:envace | {model} |"))
        cells = dict(zip(header, [c.strip() for c in line.strip("|").split("|")], strict=True))
        shown = [
            cells["BFCL-v4 overall (%)"],
            cells["τ²-Bench (original) tau2_mean (%)"],
            cells["VitaBench Avg (%)"],
            cells["Overall (%)"],
        ]
        assert shown == values, model
    assert sum(1 for line in lines if line.startswith("| ref:envace |")) == 13
    # The conditions of the published numbers are printed with them.
    assert "Qwen3-30B-A3B" in out and "arXiv 2608.06197" in out


def test_reference_rows_in_csv_and_json(tau2_run):
    rows = list(csv.DictReader(io.StringIO(render([tau2_run], "csv", reference="tau2"))))
    gpt5 = [r for r in rows if r["model"] == "GPT-5" and r["metric"] == "pass^1/telecom"]
    assert gpt5[0]["source"] == "published:tau2" and float(gpt5[0]["value"]) == pytest.approx(0.958)
    data = json.loads(render([tau2_run], "json", reference="finmcp,envace-finmcp", n_boot=50))
    assert {r["reference"] for r in data["rows"]} == {None, "finmcp", "envace-finmcp"}
    assert [t["name"] for t in data["references"]] == ["finmcp", "envace-finmcp"]


def test_rehearsal_reference_shows_its_extra_column(tau2_run):
    out = render([tau2_run], "md", reference=["envace-rehearsal"], n_boot=50)
    assert "tau2_bfcl_multi_turn_mean" in out and "| 40.90 |" in out
    # BFCL multi-turn is a group score: it goes to its own column, never to Overall.
    bfcl = next(t for t in out.split("### ") if t.startswith("BFCL"))
    header = [c.strip() for c in bfcl.splitlines()[2].strip("|").split("|")]
    row = next(line for line in bfcl.splitlines() if "rehearsal-parallel:2, EnvACE" in line)
    cells = dict(zip(header, [c.strip() for c in row.strip("|").split("|")], strict=True))
    assert cells["multi_turn (%)"] == "43.90" and "overall (%)" not in cells
    summary = out.split("### ")[1]
    row = next(line for line in summary.splitlines() if "rehearsal-parallel:2, EnvACE" in line)
    assert "| 43.90 |" not in row and "| 38.00 |" in row


def test_unknown_reference_lists_the_known_ones_and_a_path_works(tmp_path):
    with pytest.raises(ConfigError, match="unknown reference 'nope'.*envace"):
        load_references("nope")
    path = tmp_path / "mine.yaml"
    path.write_text(
        "source: my notes\nrows:\n  - model: M\n    scores: {tau2: {tau2_mean: 12.5}}\n",
        encoding="utf-8",
    )
    table = load_reference(str(path))
    assert table.name == "mine" and table.rows[0].scores["tau2"]["tau2_mean"] == 0.125
    path.write_text("source: x\nrows:\n  - model: M\n    scores: {tau2: {m: high}}\n")
    with pytest.raises(ConfigError, match="expected a number"):
        load_reference(str(path))
