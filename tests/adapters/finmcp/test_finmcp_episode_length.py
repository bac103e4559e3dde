"""FinMCP-Bench's estimate of an episode's model calls in a row (the run starts the
longest first): the assistant messages of the item's recorded trajectory, which is
what the oracle's episode makes."""

from __future__ import annotations

import asyncio

from harness.adapters.finmcp import FinMCPAdapter
from harness.models.base import ModelClient
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Services
from harness.types import SamplingParams


class Counting(ModelClient):
    name = "counting"

    def __init__(self, inner: ModelClient):
        self.inner = inner
        self.calls = 0

    async def complete(self, messages, tools, params):
        self.calls += 1
        return await self.inner.complete(messages, tools, params)


def test_the_estimate_is_the_oracle_episodes_model_calls(shared_data):
    adapter = FinMCPAdapter()
    data_dir = shared_data / "finmcp"
    samples = adapter.load("multi_turn", data_dir=data_dir)[:40]
    samples += adapter.load("single_tool", data_dir=data_dir)[:20]
    samples += adapter.load("multi_tool", data_dir=data_dir)[:20]
    estimates = []
    for sample in samples:
        model = Counting(adapter.oracle(sample))
        asyncio.run(PlainStrategy().run(sample, model, Services(), SamplingParams()))
        estimates.append(adapter.expected_model_calls(sample))
        assert estimates[-1] == model.calls, sample.id
    assert max(estimates) > min(estimates)
