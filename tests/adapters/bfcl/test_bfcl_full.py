"""Full BFCL sweeps (opt in with ``-m full``): the oracle over every offline entry,
the official evaluator on its export, and the checkers over every entry."""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import random
import sys
from pathlib import Path

import pytest
from support import REPO

from harness.adapters.bfcl import BFCLAdapter, export_bfcl
from harness.adapters.bfcl.categories import ALL_CATEGORIES, CATEGORY_SIZES, MULTI_TURN
from harness.adapters.bfcl.data import load_entries
from harness.adapters.bfcl.multi_turn import check_multi_turn
from harness.adapters.bfcl.tools import official_tools, openai_tools
from harness.config.suites import load_suite
from harness.run.runner import Runner
from harness.run.scoring import aggregate_records, regrade
from harness.run.suite_samples import load_suite_samples
from harness.store.records import Record
from harness.store.run_store import RunStore
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Services
from harness.types import SamplingParams

sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bfcl_official_parity import run_official  # noqa: E402
from test_bfcl_multi_turn import _official_verdict, _perturbations  # noqa: E402
from test_bfcl_single_turn import UNANSWERABLE  # noqa: E402

pytestmark = pytest.mark.full
ADAPTER = BFCLAdapter()


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("bfcl-oracle")
    plan = load_suite_samples(load_suite("bfcl-v4-offline"))
    store = RunStore(run_dir)
    store.open_for_append()
    runner = Runner(
        store,
        PlainStrategy(),
        ADAPTER.oracle,
        Services(),
        SamplingParams(),
        concurrency=16,
        load_options=plan.load_options,
    )
    summary = asyncio.run(runner.run(plan.samples, trials=1))
    store.close()
    assert summary.infra_errors == 0 and summary.score_errors == 0
    return plan, list(store.records().values()), run_dir


def test_oracle_scores_on_every_offline_entry(oracle_run):
    plan, records, _ = oracle_run
    if importlib.util.find_spec("rank_bm25") is None:
        assert [n.subset for n in plan.not_run] == ["memory_kv"]
    expected_categories = {r["subset"] for r in records}
    failed = {r["sample_id"] for r in records if not r["score"]["passed"]}
    assert failed == UNANSWERABLE
    passed = {
        c: sum(r["score"]["passed"] for r in records if r["subset"] == c)
        for c in expected_categories
    }
    for category in expected_categories:
        size = CATEGORY_SIZES[category]
        wrong = sum(1 for entry_id in UNANSWERABLE if entry_id.rsplit("_", 1)[0] == category)
        assert passed[category] == size - wrong, category
    assert passed.get("live_simple") == 256 and passed.get("live_multiple") == 1050
    assert passed.get("simple_java") == 98
    multi = [r for r in records if r["subset"] in MULTI_TURN]
    assert len(multi) == 800 and all(r["score"]["progress"] == 1.0 for r in multi)


def test_regrading_stored_records_changes_nothing(oracle_run):
    _, records, _ = oracle_run
    copies = [Record.from_dict(dict(record)) for record in records]
    stats = asyncio.run(regrade(copies, Services()))
    assert stats.regraded == len(records) and stats.changed == 0 and stats.failed == 0


def test_official_evaluator_agrees_on_the_full_export(oracle_run, tmp_path):
    plan, records, _ = oracle_run
    export_bfcl(records, tmp_path)
    categories = sorted({r["subset"] for r in records})
    official, headline = run_official(tmp_path, "gpt-4o-2024-11-20-FC", categories, python=None)
    not_run = [
        {"benchmark": n.benchmark, "subset": n.subset, "reason": n.reason} for n in plan.not_run
    ]
    ours = aggregate_records([Record.from_dict(r) for r in records], not_run)["bfcl"]
    for category in categories:
        failed = sorted(
            r["sample_id"] for r in records if r["subset"] == category and not r["score"]["passed"]
        )
        assert official[category]["failed_ids"] == failed, category
        assert official[category]["total_count"] == CATEGORY_SIZES[category]
        assert official[category]["accuracy"] == pytest.approx(
            ours["subsets"][category]["metrics"]["accuracy"]
        )
    for name in ("overall", "non_live", "live", "multi_turn", "agentic"):
        official_value = float(headline[name].rstrip("%"))
        assert official_value == pytest.approx(100 * ours["headline"][name], abs=0.005), name


def test_tool_schemas_match_the_package_on_every_entry():
    for category in ALL_CATEGORIES:
        if (
            category == "memory_vector"
            and importlib.util.find_spec("sentence_transformers") is None
        ):
            continue
        for entry in load_entries(category):
            assert openai_tools(entry.functions) == official_tools(entry.functions), entry.id
            for docs in entry.missed_function.values():
                offered = entry.functions + docs
                assert openai_tools(offered) == official_tools(offered), entry.id


@pytest.mark.parametrize("category", MULTI_TURN)
def test_checker_agrees_with_official_on_many_perturbations(category):
    rng = random.Random(f"full-{category}")
    counter = itertools.count()
    for entry in load_entries(category)[:40]:
        for name, turns in _perturbations(entry, rng).items():
            strings = [[[call.text() for call in step] for step in turn] for turn in turns]
            ours = check_multi_turn(entry, strings).passed
            theirs = _official_verdict(entry, turns, f"fullparity{category}{next(counter)}")
            assert ours == theirs, (entry.id, name)
