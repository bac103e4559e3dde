"""What a run stores judges as the run judged: the oracle on every single-turn
BFCL category (AST, live included, irrelevance and relevance), run as ``harness
run`` runs it; its records regraded by ``harness score`` and exported by ``harness
export-bfcl`` for the official evaluator give every entry the live verdict and
every number the run printed. (Masking that rewrote a credential BFCL's data
gives the model failed 23 of the 2,501 AST entries on regrade.)"""

from __future__ import annotations

import json
import sys

import pytest
from support import REPO

from harness.adapters.bfcl.categories import CATEGORY_SIZES, LIVE_AST, NON_LIVE_AST
from harness.cli import main
from harness.store.run_store import read_records

sys.path.insert(0, str(REPO / "scripts"))
from bfcl_official_parity import run_official  # noqa: E402

SINGLE_TURN = [*NON_LIVE_AST, "irrelevance", *LIVE_AST, "live_irrelevance", "live_relevance"]
HEADLINES = ("overall", "non_live", "live", "hallucination")


def printed_bfcl_row(stdout: str) -> dict[str, str]:
    """The run's printed BFCL-v4 table (one run: one row): column -> number as printed."""
    after = stdout[stdout.index("### BFCL-v4 (bfcl") :].splitlines()[1:]
    table = [line for line in after if line.strip()]
    header, rule, row = table[:3]
    assert rule.startswith("|---")
    names = [cell.strip().removesuffix(" (%)") for cell in header.strip("|").split("|")]
    values = [cell.strip().split(" ")[0].rstrip("*") for cell in row.strip("|").split("|")]
    return dict(zip(names, values, strict=True))


def official_percent(value: object) -> str:
    if isinstance(value, str):
        return f"{float(value.strip().rstrip('%')):.2f}"
    return f"{100 * float(str(value)):.2f}"


@pytest.mark.slow
def test_oracle_single_turn_regrade_and_official_export_equal_the_live_verdicts(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    suite = tmp_path / "single-turn.yaml"
    suite.write_text(
        "name: single-turn\nentries:\n  - benchmark: bfcl\n"
        f"    subsets: [{', '.join(SINGLE_TURN)}]\n    options: {{mode: fc}}\n"
    )
    assert main(["run", "--suite", str(suite), "--model", "oracle", "--concurrency", "16",
                 "--no-cache", "--out", "run"]) == 0  # fmt: skip
    # The terminal gets the compact table; the full tables the run wrote are its leaderboard.md.
    printed = printed_bfcl_row((tmp_path / "run" / "leaderboard.md").read_text(encoding="utf-8"))
    records = list(read_records(tmp_path / "run" / "samples.jsonl").latest.values())
    assert len(records) == sum(CATEGORY_SIZES[category] for category in SINGLE_TURN)
    live = {record["key"]: record["score"]["passed"] for record in records}
    live_failed = {category: [] for category in SINGLE_TURN}
    for record in sorted(records, key=lambda r: r["sample_id"]):
        if not record["score"]["passed"]:
            live_failed[record["subset"]].append(record["sample_id"])

    # harness score: every stored record regrades to its live verdict.
    assert main(["score", "run"]) == 0
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert scores["regrade"] == {"regraded": len(records), "changed": 0, "failed": 0}
    assert {key: entry["score"]["passed"] for key, entry in scores["records"].items()} == live

    # harness export-bfcl + the official evaluator: the live verdicts, the printed numbers.
    assert main(["export-bfcl", "run", "export"]) == 0
    model = next((tmp_path / "export" / "result").iterdir()).name
    official, headline = run_official(tmp_path / "export", model, SINGLE_TURN, python=None)
    for category in SINGLE_TURN:
        assert official[category]["total_count"] == CATEGORY_SIZES[category], category
        assert official[category]["failed_ids"] == live_failed[category], category
        assert official_percent(official[category]["accuracy"]) == printed[category], category
    for name in HEADLINES:
        assert official_percent(headline[name]) == printed[name], name
    # The oracle's live failures are the entries no answer can pass (a few in
    # live_simple, live_multiple and simple_java), not credentials it sent back.
    assert printed["live_multiple"] == "99.72" and printed["simple_java"] == "98.00"
