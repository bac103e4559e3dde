"""The whole FinMCP-Bench (613 items) with the oracle and the null model.

Needs the official data: HARNESS_FINMCP_DATA (a folder with test/benchmark_*.json)
or the Hugging Face Hub (dataset DianJin/FinMCP-Bench, or its local cache).
Run with ``pytest -m full tests/adapters/finmcp/test_finmcp_full.py``.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from pathlib import Path

import pytest

from harness.adapters.finmcp import FinMCPAdapter
from harness.models.base import NullClient
from harness.strategies.plain import PlainStrategy
from harness.task.contract import RecordView, Services
from harness.types import SamplingParams

pytestmark = pytest.mark.full


def data_dir() -> Path | None:
    location = os.environ.get("HARNESS_FINMCP_DATA")
    return Path(location) if location else None


def run_all(adapter: FinMCPAdapter, samples, model_of) -> dict[str, float]:
    async def one(sample):
        trajectory = await PlainStrategy().run(
            sample, model_of(sample), Services(), SamplingParams()
        )
        score = await adapter.score(sample, trajectory, Services())
        return RecordView(sample.id, sample.subset, 0, "ok", score, sample.metadata)

    records = [asyncio.run(one(sample)) for sample in samples]
    return adapter.aggregate(records).headline


def test_full_benchmark_counts_oracle_and_null():
    adapter = FinMCPAdapter()
    samples = [s for subset in adapter.subsets() for s in adapter.load(subset, data_dir=data_dir())]
    assert Counter(s.subset for s in samples) == {
        "single_tool": 145,
        "multi_tool": 249,
        "multi_turn": 219,
    }
    assert Counter(s.metadata["difficulty"] for s in samples) == {
        "easy": 343,
        "medium": 245,
        "hard": 25,
    }
    assert len(adapter.load("all", data_dir=data_dir())) == 613
    oracle = run_all(adapter, samples, adapter.oracle)
    for key in (
        "micro_precision",
        "micro_recall",
        "micro_f1",
        "exact_match_ordered",
        "exact_match_grouped",
    ):
        assert oracle[key] == 1.0, key
    null = run_all(adapter, samples, lambda sample: NullClient())
    assert null["micro_f1"] == 0.0 and null["micro_precision"] == 0.0
