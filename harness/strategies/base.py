"""The strategy interface and the plain strategy (one real episode)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from harness.attempts import run_attempts
from harness.episode import EpisodeInput, run_episode
from harness.models.base import ModelClient
from harness.task import Sample, Services
from harness.types import SamplingParams, Trajectory


def episode_input(sample: Sample, services: Services, params: SamplingParams) -> EpisodeInput:
    """A fresh environment and user for one (sample, trial)."""
    environment = sample.make_environment()
    user = sample.make_user(environment, services) if sample.make_user is not None else None
    return EpisodeInput(
        initial_messages=sample.initial_messages,
        tools=sample.tools,
        environment=environment,
        user=user,
        limits=sample.limits,
        params=params,
    )


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


class PlainStrategy(Strategy):
    """One episode in the real environment: the benchmark as published."""

    name = "plain"

    async def run(self, sample, model, services, params) -> Trajectory:
        async def attempt(attempt_params: SamplingParams, attempt_services: Services):
            spec = episode_input(sample, attempt_services, attempt_params)
            return await run_episode(spec, model)

        return await run_attempts(sample.limits, params, services, attempt)
