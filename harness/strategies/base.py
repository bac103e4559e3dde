"""The strategy interface. The plain strategy (one real episode, the benchmark as
published) is ``committed.PlainStrategy``: every strategy ends with that episode."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from harness.models.base import ModelClient
from harness.task.contract import Sample, Services
from harness.types import SamplingParams, Trajectory


class Strategy(ABC):
    """Drives a model through one sample and returns the scored (committed) trajectory."""

    name: str = "strategy"

    @abstractmethod
    async def run(
        self, sample: Sample, model: ModelClient, services: Services, params: SamplingParams
    ) -> Trajectory:
        """Run the sample once."""

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}
