"""BFCL aggregate (official formula), export to BFCL result files, and the
official evaluator's verdicts on an export."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from support import REPO

from harness.adapters.bfcl import BFCLAdapter, export_bfcl
from harness.adapters.bfcl.categories import ALL_CATEGORIES
from harness.errors import ConfigError
from harness.models.base import NullClient
from harness.strategies.plain import PlainStrategy
from harness.task.contract import RecordView, Services
from harness.types import SamplingParams, Score

sys.path.insert(0, str(REPO / "scripts"))
from bfcl_official_parity import run_official  # noqa: E402

ADAPTER = BFCLAdapter()


def view(category: str, index: int, passed: bool, trial: int = 0, status: str = "ok") -> RecordView:
    score = Score(passed=passed, reward=float(passed)) if status == "ok" else None
    return RecordView(f"{category}_{index}", category, trial, status, score)


def records_with_accuracy(accuracy: dict[str, float], n: int = 4) -> list[RecordView]:
    out = []
    for category, value in accuracy.items():
        passed = round(value * n)
        out += [view(category, i, i < passed) for i in range(n)]
    return out


def test_official_formula():
    accuracy = {category: 0.0 for category in ALL_CATEGORIES}
    accuracy.update(
        simple_python=1.0, simple_java=0.5, simple_javascript=0.25, multiple=0.75,
        parallel=0.5, parallel_multiple=0.25, irrelevance=1.0, live_irrelevance=0.5,
        live_simple=1.0, live_multiple=0.5, live_parallel=0.25, live_parallel_multiple=0.75,
        live_relevance=0.25, multi_turn_base=1.0, multi_turn_miss_func=0.5,
        multi_turn_miss_param=0.25, multi_turn_long_context=0.75, memory_kv=1.0,
        memory_vector=0.5, memory_rec_sum=0.75, web_search_base=0.25, web_search_no_snippet=0.5,
    )  # fmt: skip
    result = ADAPTER.aggregate(records_with_accuracy(accuracy))
    h = result.headline
    non_live = ((1.0 + 0.5 + 0.25) / 3 + 0.75 + 0.5 + 0.25) / 4
    # Officially weighted by the entries evaluated (here 4 per category).
    live = (4 * 1.0 + 4 * 0.5 + 4 * 0.25 + 4 * 0.75) / 16
    hallucination = (1.0 + 0.5) / 2
    multi_turn = (1.0 + 0.5 + 0.25 + 0.75) / 4
    agentic = ((0.25 + 0.5) / 2 + (1.0 + 0.5 + 0.75) / 3) / 2
    overall = 0.1 * non_live + 0.1 * live + 0.1 * hallucination + 0.3 * multi_turn + 0.4 * agentic
    assert h["non_live"] == pytest.approx(non_live)
    assert h["live"] == pytest.approx(live)
    assert h["hallucination"] == pytest.approx(hallucination)
    assert h["multi_turn"] == pytest.approx(multi_turn)
    assert h["agentic"] == pytest.approx(agentic)
    assert h["overall"] == pytest.approx(overall)
    assert h["overall_run"] == pytest.approx(overall)  # everything was run
    assert h["live_relevance"] == 0.25
    assert result.not_run == []


def test_missing_categories_count_zero_in_overall_but_not_in_overall_run():
    result = ADAPTER.aggregate(
        records_with_accuracy({"multi_turn_base": 0.5, "simple_python": 1.0})
    )
    h = result.headline
    assert h["multi_turn"] == pytest.approx(0.5 / 4)
    assert h["non_live"] == pytest.approx((1.0 / 3) / 4)
    assert h["overall"] == pytest.approx(0.3 * 0.5 / 4 + 0.1 * (1.0 / 3) / 4)
    # overall_run: non_live = simple_python only, multi_turn = base only.
    assert h["overall_run"] == pytest.approx((0.1 * 1.0 + 0.3 * 0.5) / 0.4)
    assert "memory_vector" in result.not_run and "simple_python" not in result.not_run


def test_live_weights_partial_categories_by_entries_evaluated():
    """As eval_runner_helper.calculate_weighted_accuracy: each Live category weighs
    its entries evaluated; a category not run weighs its dataset size at 0."""
    records = [view("live_simple", i, True) for i in range(2)]
    records += [view("live_multiple", i, i < 2) for i in range(4)]
    h = ADAPTER.aggregate(records).headline
    assert h["live"] == pytest.approx((2 * 1.0 + 4 * 0.5) / (2 + 4 + 16 + 24))


def test_trials_errors_and_progress():
    records = [
        view("simple_python", 0, True, trial=0),
        view("simple_python", 1, True, trial=0),
        view("simple_python", 0, True, trial=1),
        view("simple_python", 1, False, trial=1, status="infra_error"),
    ]
    result = ADAPTER.aggregate(records)
    subset = result.subsets["simple_python"]
    assert subset.metrics["accuracy"] == pytest.approx((1.0 + 0.5) / 2)
    assert (subset.n_samples, subset.n_records, subset.n_infra_errors) == (2, 4, 1)
    multi = [
        RecordView("a", "multi_turn_base", 0, "ok", Score(False, 0.0, progress=0.5)),
        RecordView("b", "multi_turn_base", 0, "ok", Score(True, 1.0, progress=1.0)),
    ]
    metrics = ADAPTER.aggregate(multi).subsets["multi_turn_base"].metrics
    assert metrics == {"accuracy": 0.5, "progress": 0.75}


# ------------------------------------------------------------------ export


def make_records(per_category: int = 4) -> list[dict]:
    """Oracle answers for even entries, a model that never calls for odd ones."""
    categories = [
        "simple_python", "simple_java", "multiple", "parallel", "irrelevance", "live_simple",
        "live_relevance", "multi_turn_base", "multi_turn_miss_func", "memory_rec_sum",
    ]  # fmt: skip
    records = []
    for category in categories:
        for index, sample in enumerate(ADAPTER.load(category)[:per_category]):
            model = ADAPTER.oracle(sample) if index % 2 == 0 else NullClient()
            trajectory = asyncio.run(
                PlainStrategy().run(sample, model, Services(), SamplingParams())
            )
            score = asyncio.run(ADAPTER.score(sample, trajectory, Services()))
            records.append(
                {
                    "key": f"bfcl/{category}/{sample.id}#0",
                    "benchmark": "bfcl",
                    "subset": category,
                    "sample_id": sample.id,
                    "trial": 0,
                    "status": "ok",
                    "score": score.to_dict(),
                    "metadata": sample.metadata,
                    "trajectory": trajectory.to_dict(),
                }
            )
    return records


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return make_records()


def test_export_layout_and_format(records, tmp_path):
    paths = export_bfcl(records, tmp_path)
    base = tmp_path / "result" / "gpt-4o-2024-11-20-FC"
    assert base / "non_live" / "BFCL_v4_simple_python_result.json" in paths
    assert base / "agentic" / "memory" / "rec_sum" / "BFCL_v4_memory_rec_sum_result.json" in paths
    rows = [
        json.loads(line)
        for line in (base / "non_live" / "BFCL_v4_simple_python_result.json").open()
    ]
    assert [row["id"] for row in rows] == [f"simple_python_{i}" for i in range(4)]
    ((name, arguments),) = rows[0]["result"][0].items()
    assert name == "calculate_triangle_area" and json.loads(arguments)["base"] == 10
    assert isinstance(rows[1]["result"], str)  # a text reply
    multi = [
        json.loads(line)
        for line in (base / "multi_turn" / "BFCL_v4_multi_turn_base_result.json").open()
    ]
    assert len(multi[0]["result"]) == len(ADAPTER.load("multi_turn_base")[0].gold.turns)
    memory = [json.loads(line) for line in paths[-1].open()] if "memory" in str(paths[-1]) else []
    for row in memory:
        assert isinstance(row["result"], list) and len(row["result"]) == 1

    errored = dict(records[0], status="infra_error", error={"message": "timeout"}, trajectory=None)
    export_bfcl([errored], tmp_path / "errored")
    path = tmp_path / "errored" / "result" / "gpt-4o-2024-11-20-FC" / "non_live"
    row = json.loads((path / "BFCL_v4_simple_python_result.json").read_text())
    assert row["result"] == "Error during inference: timeout"
    with pytest.raises(ConfigError):
        export_bfcl(records, tmp_path / "x", model_name="my_model")


@pytest.mark.slow
def test_official_evaluator_agrees_on_an_export(records, tmp_path):
    export_bfcl(records, tmp_path)
    categories = sorted({record["subset"] for record in records})
    official, headline = run_official(tmp_path, "gpt-4o-2024-11-20-FC", categories, python=None)
    views = [
        RecordView(r["sample_id"], r["subset"], 0, "ok", Score.from_dict(r["score"]))
        for r in records
    ]
    ours = ADAPTER.aggregate(views)
    for category in categories:
        failed = sorted(
            r["sample_id"] for r in records if r["subset"] == category and not r["score"]["passed"]
        )
        assert official[category]["failed_ids"] == failed, category
        assert official[category]["accuracy"] == pytest.approx(
            ours.subsets[category].metrics["accuracy"]
        )
    # Unweighted group scores agree even on a partial run (the official Live
    # summary weighs by the entries present, ours by the published sizes; the
    # official table shows "N/A" for a summary with a category missing).
    compared = 0
    for group in ("non_live", "hallucination", "multi_turn", "agentic"):
        if headline[group] != "N/A":
            official_value = float(headline[group].rstrip("%"))
            assert official_value == pytest.approx(100 * ours.headline[group], abs=0.01), group
            compared += 1
    assert compared >= 3
