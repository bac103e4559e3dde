"""``--strategy plain``: the benchmark as published.

One committed episode in the real environment (harness/strategies/committed.py),
with costs recorded; optionally augmented feedback, and the world-model probe as a
layer the registry gives it. It imports no rehearsal code: regrading or running a
plain evaluation loads none of it (tests/package/test_layers.py checks that).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.boundary.json_value import JsonObject
from harness.models.base import ModelClient
from harness.strategies.base import Strategy
from harness.strategies.committed import Layer, SampleRun, finish, run_committed
from harness.strategies.settings import StrategySettings
from harness.task.contract import Sample, Services
from harness.types import SamplingParams, Trajectory


class PlainStrategy(Strategy):
    """``--strategy plain``: one episode in the real environment, the benchmark as
    published, with costs recorded; optionally augmented feedback and the layers
    the registry gives (the world-model probe). With no settings and no layers it
    is exactly the published benchmark."""

    name = "plain"

    def __init__(
        self,
        settings: StrategySettings | None = None,
        rehearser: ModelClient | None = None,
        layers: Sequence[Layer] = (),
    ):
        self.settings = settings if settings is not None else StrategySettings()
        self.rehearser = rehearser
        self.layers = tuple(layers)

    def describe(self) -> JsonObject:
        s = self.settings
        if s == StrategySettings():
            # Exactly what the published benchmark runs: nothing else to record.
            return {"name": self.name}
        info: JsonObject = {"name": self.name, "env_feedback": s.env_feedback}
        if s.measure_world_model:
            info["label"] = f"plain world-model={s.rehearser_model or 'self'}"
        for layer in self.layers:
            info.update(layer.describe())
        return info

    async def run(
        self, sample: Sample, model: ModelClient, services: Services, params: SamplingParams
    ) -> Trajectory:
        run = SampleRun(sample, model, services, params, self.settings, self.rehearser or model)
        trajectory, notes = await run_committed(run, self.layers)
        return finish(trajectory, run, notes)
