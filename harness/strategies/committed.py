"""The committed episode every strategy ends with, and the bookkeeping around it.

One real episode on a fresh environment: the only one the benchmark scores. Around
the real environment, in this order (innermost first): the monitor (counts real
calls per phase, refuses them during rehearsal), each layer's environment wrapper
(the world-model probe), the augmented feedback (when asked for). Around the
actor: cost metering, each layer's actor wrapper (self-consistency voting, the
rehearsal memory), and the tap that lets an environment see the conversation.

A ``CommittedLayer`` is what a strategy adds around the episode, made fresh for
each attempt by a ``LayerFactory``; this module knows no particular layer, so the
plain strategy (harness/strategies/plain.py) loads no rehearsal code.

``SampleRun`` carries what one (sample, trial) run of a strategy shares between its
phases; ``finish`` writes costs and usage totals into the returned trajectory.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypedDict, TypeVar

from harness.boundary.collector import build_world
from harness.boundary.json_value import JsonObject
from harness.boundary.tool_budget import ENVIRONMENT_BUILD_TIMEOUT_S, run_tool_call
from harness.episode.attempts import run_attempts
from harness.episode.loop import EpisodeInput, run_episode
from harness.episode.tap import ConversationTap
from harness.models.base import ModelClient
from harness.strategies.costs import CostLedger, MeteredClient
from harness.strategies.feedback import wrap_environment
from harness.strategies.monitor import (
    COMMITTED,
    REHEARSAL,
    RealEnvironmentMonitor,
    SandboxViolation,
    phase,
)
from harness.strategies.settings import StrategySettings
from harness.task.contract import Environment, NoEnvironment, Sample, Services
from harness.types import SamplingParams, Trajectory

T = TypeVar("T")


async def gather_all(jobs: Sequence[Awaitable[T]]) -> list[T]:
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


class LayerNotes(TypedDict, total=False):
    """What the committed episode's layers note about it (``CommittedLayer.notes``);
    each key is there only when a layer wrote it."""

    world_model: list[JsonObject]  # {call, predicted, actual} (strategies/world_model.py)
    env_feedback: JsonObject  # how tool results were rewritten
    memory_placements: JsonObject  # where the memory went, by place (strategies/memory.py)


class CommittedLayer:
    """What a strategy adds around one attempt of the committed episode; the base
    class adds nothing. ``notes`` go back to the strategy (``run_committed``)."""

    def actor(self, actor: ModelClient) -> ModelClient:
        return actor

    def environment(self, environment: Environment, tap: ConversationTap) -> Environment:
        return environment

    def notes(self) -> LayerNotes:
        return {}


class Layer(Protocol):
    """A strategy's addition to the committed episode: built afresh for each attempt
    of a sample run, and said in the strategy's description."""

    def __call__(self, run: SampleRun) -> CommittedLayer: ...

    def describe(self) -> JsonObject: ...


LayerFactory = Callable[[SampleRun], CommittedLayer]


async def run_committed(
    run: SampleRun, layers: Sequence[LayerFactory] = ()
) -> tuple[Trajectory, LayerNotes]:
    """The real episode with the strategy's layers around it (first innermost);
    returns its trajectory and the layers' notes about it. A benchmark that runs an
    aborted simulation again gets more attempts of it (harness/episode/attempts.py);
    the notes are the last attempt's."""
    notes: LayerNotes = {}

    async def attempt(params: SamplingParams, services: Services) -> Trajectory:
        attempt_run = dataclasses.replace(run, params=params, services=services)
        nonlocal notes
        trajectory, notes = await _committed_attempt(attempt_run, layers)
        return trajectory

    trajectory = await run_attempts(run.sample.limits, run.params, run.services, attempt)
    return trajectory, notes


async def _committed_attempt(
    run: SampleRun, layer_factories: Sequence[LayerFactory]
) -> tuple[Trajectory, LayerNotes]:
    sample, settings = run.sample, run.settings
    layers = [make(run) for make in layer_factories]
    with phase(COMMITTED), run.ledger.timed(COMMITTED):
        if sample.make_environment is NoEnvironment:
            # Nothing to build: a hop to the tool worker would only cost the loop.
            real = run.monitor.build(sample.make_environment)
        else:
            # Built in the tool worker: a domain database copy must not hold the loop.
            real = await run_tool_call(
                build_world,
                run.monitor.build,
                sample.make_environment,
                timeout_s=ENVIRONMENT_BUILD_TIMEOUT_S,
            )
        # The user side gets the environment itself (a user simulator may act on it).
        user = sample.make_user(real, run.services) if sample.make_user is not None else None
        monitored = run.monitor.wrap(real)
        actor: ModelClient = MeteredClient(run.model, "actor", run.ledger)
        for layer in layers:
            actor = layer.actor(actor)
        tap = ConversationTap(actor)
        environment: Environment = monitored
        for layer in layers:
            environment = layer.environment(environment, tap)
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
    notes: LayerNotes = {}
    for layer in layers:
        notes.update(layer.notes())
    if feedback is not None:
        notes["env_feedback"] = {"mode": "augmented", "rewrites": list(feedback.rewrites)}
    return trajectory, notes


def finish(trajectory: Trajectory, run: SampleRun, notes: LayerNotes) -> Trajectory:
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
    if "world_model" in notes:
        trajectory.extra["world_model"] = notes["world_model"]
    if "env_feedback" in notes:
        trajectory.extra["env_feedback"] = notes["env_feedback"]
    return trajectory
