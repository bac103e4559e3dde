"""The VitaBench adapter: tasks in, scored episodes and per-scenario metrics out.

Subsets are the benchmark's four task sets: ``delivery``, ``instore``, ``ota`` and
``cross`` (the cross-domain set, with all 66 tools). The language is chosen with
the load option ``language`` (``zh`` or ``en``); like the benchmark, the default
is Chinese. Sample ids are ``<language>-<task id>``; ``load(ids=...)`` accepts
those or the bare task ids.

Services: ``user_client`` is the user simulator (``user_model == "scripted"``
selects the deterministic offline user instead) and ``judge_client`` the rubric
judge (``OrdersStubJudge`` in judge.py is an offline stand-in, not the benchmark's
judge). The default judge is the benchmark's own, Claude 3.7 Sonnet.

Load options: ``language``, ``max_steps``, ``prompts`` (``auto``: the benchmark's
own templates when its ``vita`` package is installed, else this project's wording;
``official`` or ``harness`` to insist on one) and ``judge_attempts`` (judge calls
per window when a reply cannot be read; 1, as in the benchmark). The prompt source
is recorded as ``prompt_source`` in the sample metadata, every score's details,
the manifest's versions and the aggregate's notes.

Where this differs from the benchmark's code:

- an episode whose run fails is never dropped: it is scored 0 and counted
  (see metrics.py); a judge call that fails (ModelError) propagates, so the
  runner records the scoring failure and can grade the stored episode again;
- a judge reply the benchmark's code would crash on leaves the window's rubric
  states as they were (judge.py), and a final ``meetExpectation`` that is not a
  boolean counts as unmet;
- the step limit and the stop token in a message that also calls tools are
  handled as described in episode.py (same termination and judged conversation);
- task files are read as raw JSON from the Hub (see data.py), and sample ids
  carry the language.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from harness.boundary.json_value import JsonMapping, JsonObject
from harness.models.base import ModelClient
from harness.task.contract import (
    Adapter,
    BenchmarkResult,
    Environment,
    RecordView,
    Reporting,
    Sample,
    Services,
    UserSource,
)
from harness.task.estimators import MEAN_REWARD, Estimator
from harness.task.official_set import OfficialSet
from harness.types import Message, Score, ToolSchema, Trajectory

from . import official
from .data import (
    HF_DATASET,
    SCENARIOS,
    TASKS_PER_SET,
    Downloader,
    VitaTask,
    download_from_hub,
    locate_task_file,
    normalise_language,
    read_task_file,
)
from .episode import (
    JUDGED_TERMINATIONS,
    MAX_STEPS,
    VitaUserSource,
    conversation_messages,
    vita_limits,
)
from .judge import JUDGE_ATTEMPTS, judge_conversation
from .metrics import ESTIMATORS, aggregate_records, orders_diagnostic
from .prompts import GREETING, PromptSet, prompt_set
from .user import LLMUser, ScriptedUser

SPEC_SNAPSHOT = "96f3b85"  # the benchmark revision this implementation follows
SCRIPTED_USER_MODEL = "scripted"
# The benchmark's default judge (its config names it anthropic.claude-3.7-sonnet,
# an id of its own model gateway); this is the same model's provider id.
DEFAULT_JUDGE_MODEL = "anthropic/claude-3-7-sonnet-20250219"


class EnvironmentFactory(Protocol):
    """What makes one episode's world from a task record, its scenario and language
    (the VitaEnvironment class; a stand-in in tests)."""

    def __call__(self, task: JsonMapping, scenario: str, language: str, /) -> Environment: ...


def sample_id(task: VitaTask) -> str:
    return f"{task.language}-{task.task_id}"


class VitaBenchAdapter(Adapter):
    name = "vitabench"
    reporting = Reporting(
        label="VitaBench",
        primary_metric="Avg",
        primary_quantity="pass rate",
        table_order=30,
        pass_hat_k_trials="all",  # a trial without a score counts as reward 0, as in Avg
    )
    needs_user_model = True
    needs_judge_model = True
    default_judge_model = DEFAULT_JUDGE_MODEL

    def __init__(
        self,
        environment_factory: EnvironmentFactory | None = None,
        downloader: Downloader | None = None,
    ):
        # Both are replaceable so tests can run without the real tools or the Hub.
        self._environment_factory = environment_factory
        self._downloader = downloader or download_from_hub
        self._tool_schemas: dict[tuple[str, str], list[ToolSchema]] = {}
        self._data_sources: dict[str, str] = {}
        self._prompt_sources: set[str] = set()
        self._prompt_origins: set[str] = set()

    # ------------------------------------------------------------ loading

    def subsets(self) -> list[str]:
        return list(SCENARIOS)

    def known_options(self) -> dict[str, str]:
        return {
            "language": "zh (default, as the benchmark) or en",
            "data_dir": "a folder of the official layout or a checkout (else --data-dir, the Hub)",
            "max_steps": f"steps per episode (the benchmark's: {MAX_STEPS})",
            "prompts": "auto (default), official (the benchmark's templates) or harness",
            "judge_attempts": f"judge calls per window on an unreadable reply ({JUDGE_ATTEMPTS})",
        }

    def environment_factory(self) -> EnvironmentFactory:
        if self._environment_factory is not None:
            return self._environment_factory
        from .environment import VitaEnvironment  # the tools are only needed to run

        return VitaEnvironment

    def load(
        self,
        subset: str,
        *,
        limit: int | None = None,
        ids: list[str] | None = None,
        data_dir: Path | None = None,
        options: dict[str, Any] | None = None,
    ) -> list[Sample]:
        options = dict(options or {})
        self.check_options(options)
        language = normalise_language(options.get("language"))
        folder = data_dir if data_dir is not None else options.get("data_dir")
        path = locate_task_file(
            subset, language, Path(folder) if folder else None, self._downloader
        )
        self._data_sources[f"{subset}-{language}"] = str(path)
        max_steps = int(options.get("max_steps", MAX_STEPS))
        wanted_prompts = str(options.get("prompts", "auto"))
        prompts = prompt_set(language, wanted_prompts, Path(folder) if folder else None)
        self._prompt_sources.add(prompts.source)
        if prompts.origin:
            self._prompt_origins.add(prompts.origin)
        attempts = int(options.get("judge_attempts", JUDGE_ATTEMPTS))
        wanted = set(ids) if ids else None
        samples = []
        for record in read_task_file(path):
            task = VitaTask(record=record, scenario=subset, language=language)
            if wanted is not None and not wanted & {sample_id(task), task.task_id}:
                continue
            sample = self.make_sample(task, max_steps, prompts, attempts)
            sample.metadata["prompt_origin"] = prompt_origin_text(prompts, wanted_prompts)
            if (
                prompts.source == "official"
                and folder
                and official.checkout_prompt_dir(Path(folder))
            ):
                sample.metadata["prompt_checkout"] = str(Path(folder).expanduser().resolve())
            samples.append(sample)
        return samples if limit is None else samples[:limit]

    def tool_schemas(self, task: VitaTask) -> list[ToolSchema]:
        """The agent's tools; they depend only on scenario and language."""
        key = (task.scenario, task.language)
        if key not in self._tool_schemas:
            environment = self.environment_factory()(task.record, task.scenario, task.language)
            self._tool_schemas[key] = environment.tool_schemas()  # type: ignore[attr-defined]
        return self._tool_schemas[key]

    def make_sample(
        self,
        task: VitaTask,
        max_steps: int = MAX_STEPS,
        prompts: PromptSet | None = None,
        judge_attempts: int = JUDGE_ATTEMPTS,
    ) -> Sample:
        factory = self.environment_factory()
        prompts = prompts or prompt_set(task.language)
        system = {"role": "system", "content": prompts.agent_system(task.time)}
        initial_messages = [system]

        def make_environment() -> Environment:
            # The environment builds its database from a deep copy of the record.
            return factory(task.record, task.scenario, task.language)

        def make_user(environment: Environment, services: Services) -> UserSource:
            return build_user(task, environment, services, initial_messages, max_steps, prompts)

        return Sample(
            id=sample_id(task),
            benchmark=self.name,
            subset=task.scenario,
            tools=self.tool_schemas(task),
            initial_messages=initial_messages,
            make_environment=make_environment,
            make_user=make_user,
            limits=vita_limits(max_steps),
            gold=task,
            metadata={
                "task_id": task.task_id,
                "scenario": task.scenario,
                "language": task.language,
                "domain": task.record.get("domain"),
                "num_rubrics": len(task.rubrics),
                "prompt_source": prompts.source,
                "judge_attempts": judge_attempts,
            },
        )

    # ------------------------------------------------------------ scoring

    def expected_model_calls(self, sample: Sample) -> float:
        from .episode_length import expected_model_calls

        return expected_model_calls(sample.gold)

    def gold_view(self, sample: Sample) -> JsonObject:
        from .explain import gold_view

        return gold_view(sample.gold)

    def explain_failure(self, sample: Sample, trajectory: Trajectory, score: Score) -> str:
        from .explain import explain_failure

        return explain_failure(trajectory, score)

    async def score(self, sample: Sample, trajectory: Trajectory, services: Services) -> Score:
        task: VitaTask = sample.gold
        diagnostic = orders_diagnostic(trajectory.final_state, task)
        details: dict[str, object] = {
            "termination": trajectory.termination,
            "orders_match": diagnostic,
            "judge_model": services.judge_model,
            "prompt_source": sample.metadata.get("prompt_source"),
        }
        if trajectory.termination not in JUDGED_TERMINATIONS:
            details["note"] = (
                f"Simulation terminated prematurely. Termination reason: {trajectory.termination}"
            )
            return Score(passed=False, reward=0.0, progress=None, details=details)
        if task.rubrics and services.judge_client is None:
            raise ValueError(
                "VitaBench scoring needs a judge model (set the judge model; "
                "'stub' gives an offline stand-in that is not the benchmark's judge)"
            )
        # The judge reads the prompts the run was made with (auto when not recorded).
        checkout = sample.metadata.get("prompt_checkout")
        prompts = prompt_set(
            task.language,
            sample.metadata.get("prompt_source") or "auto",
            Path(checkout) if checkout else None,
        )
        details["prompt_source"] = prompts.source
        details["prompt_origin"] = sample.metadata.get("prompt_origin") or prompts.origin
        judgement = await judge_conversation(
            task,
            conversation_messages(trajectory.messages),
            services.judge_client,  # type: ignore[arg-type]  # unused when there are no rubrics
            prompts,
            orders_match=bool(diagnostic["match"]),
            attempts=int(sample.metadata.get("judge_attempts") or JUDGE_ATTEMPTS),
        )
        details.update(judgement.details())
        return Score(
            passed=judgement.reward == 1.0,
            reward=judgement.reward,
            progress=judgement.progress,
            details=details,
        )

    def recorded_options(self, metadata: dict[str, object]) -> dict[str, object]:
        # A regrade judges with the prompts the run used, not what this machine has.
        source = metadata.get("prompt_source")
        return {"prompts": source} if source in ("official", "harness") else {}

    def aggregate(self, records: list[RecordView]) -> BenchmarkResult:
        return aggregate_records(self.name, records)

    def estimators(self) -> dict[str, Estimator]:
        return ESTIMATORS

    def subset_estimator(self) -> Estimator:
        # VitaBench grades with partial reward: compare mean rewards per task set.
        return MEAN_REWARD

    def builtin_client(self, role: str, name: str) -> ModelClient | None:
        if role == "judge" and name == "stub":
            from .judge import OrdersStubJudge

            return OrdersStubJudge()
        return None

    def oracle(self, sample: Sample) -> ModelClient:
        from .oracle import VitaOracle
        from .orders import plan_required_orders  # the planner lives with the tools

        task: VitaTask = sample.gold
        calls, reason = plan_required_orders(task.record, task.scenario)
        return VitaOracle(calls, reason, task.language)

    def official_set(self) -> OfficialSet:
        return OfficialSet(
            {name: TASKS_PER_SET for name in SCENARIOS},
            f"{HF_DATASET} at benchmark revision {SPEC_SNAPSHOT}",
        )

    def versions(self) -> dict[str, str]:
        versions = {"vitabench": SPEC_SNAPSHOT, "dataset": HF_DATASET}
        versions.update({f"data:{key}": source for key, source in self._data_sources.items()})
        if self._prompt_sources:
            versions["prompt_source"] = "+".join(sorted(self._prompt_sources))
        if self._prompt_origins:
            versions["prompts_from"] = " + ".join(sorted(self._prompt_origins))
        return versions


def prompt_origin_text(prompts: PromptSet, wanted: str) -> str:
    """Where the run's prompts came from, true for every way they were chosen."""
    if prompts.source == "official":
        return prompts.origin
    if wanted == "harness":
        return "this project's wording, chosen with the option prompts: harness"
    return "this project's wording: no VitaBench checkout as the data folder, no vita package"


def build_user(
    task: VitaTask,
    environment: Environment,
    services: Services,
    agent_initial_messages: list[Message],
    max_steps: int = MAX_STEPS,
    prompts: PromptSet | None = None,
) -> VitaUserSource:
    """The user side of one episode: the LLM simulator, or the scripted user."""
    greeting = GREETING[task.language]
    speaker: LLMUser | ScriptedUser
    if services.user_model == SCRIPTED_USER_MODEL:
        speaker = ScriptedUser(task, environment)
    elif services.user_client is not None:
        speaker = LLMUser(services.user_client, task, greeting, prompts)
    else:
        raise ValueError(
            "VitaBench needs a user simulator model (set the user model; "
            f"'{SCRIPTED_USER_MODEL}' gives the offline scripted user)"
        )
    return VitaUserSource(speaker, greeting, agent_initial_messages, max_steps)
