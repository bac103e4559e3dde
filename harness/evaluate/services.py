"""The models beside the one under test: the simulated user and the judge.

Only benchmarks with a simulated user or a judge need (and record) those models;
a run of the others names neither in its manifest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.config.run_config import DEFAULT_JUDGE_MODEL, DEFAULT_USER_MODEL, RunConfig
from harness.errors import ConfigError

if TYPE_CHECKING:
    from harness.config.suites import Suite
    from harness.models.settings import ModelSettings
    from harness.run.suite_samples import SuiteSamples
    from harness.task.contract import Adapter, Services


def planned_benchmarks(plan: SuiteSamples) -> list[str]:
    """The benchmarks of a plan: those with samples to run and those left out."""
    return sorted({s.benchmark for s in plan.samples} | {n.benchmark for n in plan.not_run})


def planned_adapters(plan: SuiteSamples) -> list[Adapter]:
    """The adapters of the plan's benchmarks (``planned_benchmarks``), in that order."""
    return [plan.adapters[name] for name in planned_benchmarks(plan)]


def user_model_name(config: RunConfig, suite: Suite, adapters: list[Adapter]) -> str | None:
    """The simulated user's model: the config's, the suite's, else the default;
    None when no benchmark of the run has a simulated user."""
    wanted = config.user_model or suite.user_model or DEFAULT_USER_MODEL
    return wanted if any(adapter.needs_user_model for adapter in adapters) else None


def judge_model_name(config: RunConfig, suite: Suite, plan: SuiteSamples) -> str | None:
    """The judge's model: the config's, the suite's, the first benchmark's own,
    else the default; None when no sample the run holds is judged."""
    from harness.task.registry import adapter_of

    benchmark_judges = [adapter.default_judge_model for adapter in planned_adapters(plan)]
    wanted = (
        config.judge_model
        or suite.judge_model
        or next((name for name in benchmark_judges if name), DEFAULT_JUDGE_MODEL)
    )
    judged = any(adapter_of(s).needs_judge_for_sample(s) for s in plan.samples)
    return wanted if judged else None


def plan_services(
    config: RunConfig, suite: Suite, plan: SuiteSamples, settings: ModelSettings
) -> Services:
    """The services an episode gets: user and judge clients (built like the
    actor's, or an adapter's stand-in), the seed and the prompt mode."""
    from harness.run.clients import aux_client
    from harness.task.contract import Services

    adapters = planned_adapters(plan)
    user_model = user_model_name(config, suite, adapters)
    judge_model = judge_model_name(config, suite, plan)
    judge_client = aux_client(judge_model, "judge", adapters, settings)
    if judge_model is not None and judge_client is None:
        # Refused before any episode: otherwise every judged sample ends as a score error.
        raise ConfigError(
            f"this run has samples graded by a judge model, and '{judge_model}' is none: "
            "give one (--judge-model)"
        )
    return Services(
        user_client=aux_client(user_model, "user", adapters, settings),
        user_model=user_model,
        judge_client=judge_client,
        judge_model=judge_model,
        seed=config.seed,
        options={"prompt_mode": config.prompt_mode},
    )
