"""The committed episode every strategy ends with, and the bookkeeping around it.

One real episode on a fresh environment: the only one the benchmark scores. Around
the real environment, in this order (innermost first): the monitor (counts real
calls per phase, refuses them during rehearsal), the world-model probe (when
measured), the augmented feedback (when asked for). Around the actor: cost
metering, any strategy wrapper (self-consistency voting), the rehearsal memory,
and the tap that lets the world-model probe see the conversation.

``SampleRun`` carries what one (sample, trial) run of a strategy shares between its
phases; ``finish`` writes costs and usage totals into the returned trajectory.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from harness.boundary.tool_budget import ENVIRONMENT_BUILD_TIMEOUT_S, run_tool_call
from harness.models.base import ModelClient
from harness.strategies.attempts import run_attempts
from harness.strategies.base import Strategy
from harness.strategies.costs import CostLedger, MeteredClient
from harness.strategies.episode import EpisodeInput, run_episode
from harness.strategies.feedback import wrap_environment
from harness.strategies.memory import MemoryInjectingClient
from harness.strategies.prompts import PROMPT_VERSION, memory_block
from harness.strategies.rehearser import ConversationTap, Rehearser, RehearserConfig
from harness.strategies.sandbox import (
    COMMITTED,
    REHEARSAL,
    RealEnvironmentMonitor,
    SandboxViolation,
    phase,
)
from harness.strategies.settings import StrategySettings
from harness.strategies.world_model import PredictingEnvironment
from harness.task.contract import NoEnvironment, Sample, Services
from harness.types import SamplingParams, Trajectory

ActorWrapper = Callable[[ModelClient], ModelClient]
T = TypeVar("T")


async def gather_all(jobs: list[Coroutine[Any, Any, T]]) -> list[T]:
    """Run jobs concurrently; if one fails, cancel the others before raising, so no
    orphaned rehearsal keeps calling models after its sample has failed."""
    tasks = [asyncio.ensure_future(job) for job in jobs]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


@dataclass
class SampleRun:
    """One strategy run of one (sample, trial)."""

    sample: Sample
    model: ModelClient
    services: Services
    params: SamplingParams
    settings: StrategySettings
    # The rehearser's model: a configured one, else the model under test.
    rehearser_model: ModelClient
    ledger: CostLedger = field(default_factory=CostLedger)
    monitor: RealEnvironmentMonitor = field(default_factory=RealEnvironmentMonitor)

    def rehearser_config(self) -> RehearserConfig:
        return RehearserConfig(
            think_switch=self.settings.think_switch,
            max_examples=self.settings.max_examples,
            max_prompt_chars=self.settings.max_prompt_chars,
        )

    def rehearser(self, ledger: CostLedger, params: SamplingParams) -> Rehearser:
        client = MeteredClient(self.rehearser_model, "rehearser", ledger)
        return Rehearser(client, params, self.rehearser_config())


async def run_committed(
    run: SampleRun,
    memory: str | None = None,
    wrap_actor: ActorWrapper | None = None,
) -> tuple[Trajectory, dict[str, Any]]:
    """The real episode; returns its trajectory and the strategy's notes about it.
    A benchmark that runs an aborted simulation again gets more attempts of it
    (harness/strategies/attempts.py); the notes are the last attempt's."""
    notes: dict[str, Any] = {}

    async def attempt(params: SamplingParams, services: Services) -> Trajectory:
        attempt_run = dataclasses.replace(run, params=params, services=services)
        trajectory, attempt_notes = await _committed_attempt(attempt_run, memory, wrap_actor)
        notes.clear()
        notes.update(attempt_notes)
        return trajectory

    trajectory = await run_attempts(run.sample.limits, run.params, run.services, attempt)
    return trajectory, notes


async def _committed_attempt(
    run: SampleRun,
    memory: str | None,
    wrap_actor: ActorWrapper | None,
) -> tuple[Trajectory, dict[str, Any]]:
    sample, settings = run.sample, run.settings
    notes: dict[str, Any] = {}
    with phase(COMMITTED), run.ledger.timed(COMMITTED):
        if sample.make_environment is NoEnvironment:
            # Nothing to build: a hop to the tool worker would only cost the loop.
            real = run.monitor.build(sample.make_environment)
        else:
            # Built in the tool worker: a domain database copy must not hold the loop.
            real = await run_tool_call(
                run.monitor.build, sample.make_environment, timeout_s=ENVIRONMENT_BUILD_TIMEOUT_S
            )
        # The user side gets the environment itself (a user simulator may act on it).
        user = sample.make_user(real, run.services) if sample.make_user is not None else None
        monitored = run.monitor.wrap(real)
        actor: ModelClient = MeteredClient(run.model, "actor", run.ledger)
        if wrap_actor is not None:
            actor = wrap_actor(actor)
        injector = None
        if memory:
            injector = MemoryInjectingClient(actor, memory_block(memory), settings.memory_position)
            actor = injector
        tap = ConversationTap(actor)
        environment = monitored
        predictor = None
        if settings.measure_world_model:
            predictor = PredictingEnvironment(
                environment, run.rehearser(run.ledger, run.params), tap, sample.tools
            )
            environment = predictor
        feedback = None
        if settings.augmented_feedback:
            feedback = wrap_environment(environment, sample, probe=monitored)
            environment = feedback
        spec = EpisodeInput(
            initial_messages=sample.initial_messages,
            tools=sample.tools,
            environment=environment,
            user=user,
            limits=sample.limits,
            params=run.params,
        )
        trajectory = await run_episode(spec, tap)
        if tap.abort is not None:
            raise tap.abort
    run.ledger.add_trajectory_roles(COMMITTED, trajectory.usage, ("user",))
    if predictor is not None:
        notes["world_model"] = predictor.records
    if feedback is not None:
        notes["env_feedback"] = {"mode": "augmented", "rewrites": feedback.rewrites}
    if injector is not None:
        notes["memory_placements"] = dict(injector.placements)
    return trajectory, notes


def finish(trajectory: Trajectory, run: SampleRun, notes: dict[str, Any]) -> Trajectory:
    """Costs by phase and role into ``extra``; usage by role becomes the run's total."""
    for name in (REHEARSAL, COMMITTED):
        run.ledger.env_calls[name] = run.monitor.calls.get(name, 0)
    if run.monitor.violations:
        # A rehearsal that reached the real world invalidates the sample.
        raise SandboxViolation(
            f"real environment reached during rehearsal: {run.monitor.violations}"
        )
    trajectory.usage = run.ledger.total_by_role()
    trajectory.extra["costs"] = run.ledger.record()
    for key in ("world_model", "env_feedback"):
        if key in notes:
            trajectory.extra[key] = notes[key]
    return trajectory


class PlainStrategy(Strategy):
    """``--strategy plain``: one episode in the real environment, the benchmark as
    published, with costs recorded; optionally augmented feedback and the
    world-model probe. With no settings it is exactly the published benchmark."""

    name = "plain"

    def __init__(
        self, settings: StrategySettings | None = None, rehearser: ModelClient | None = None
    ):
        self.settings = settings if settings is not None else StrategySettings()
        self.rehearser = rehearser

    def describe(self) -> dict[str, Any]:
        s = self.settings
        if s == StrategySettings():
            # Exactly what the published benchmark runs: nothing else to record.
            return {"name": self.name}
        info: dict[str, Any] = {"name": self.name, "env_feedback": s.env_feedback}
        if s.measure_world_model:
            info["label"] = f"plain world-model={s.rehearser_model or 'self'}"
            info["measure_world_model"] = True
            info["prompt_version"] = PROMPT_VERSION
            info["rehearser_model"] = s.rehearser_model
            info["rehearser_api_base"] = s.rehearser_api_base
            info["think_switch"] = s.think_switch
            info["max_examples"] = s.max_examples
            info["max_prompt_chars"] = s.max_prompt_chars
        return info

    async def run(
        self, sample: Sample, model: ModelClient, services: Services, params: SamplingParams
    ) -> Trajectory:
        run = SampleRun(sample, model, services, params, self.settings, self.rehearser or model)
        trajectory, notes = await run_committed(run)
        return finish(trajectory, run, notes)
