"""A planned run's manifest: everything that affects its numbers, written before
the first sample (the fields are ``harness.store.manifest.Manifest``'s)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.boundary.json_value import JsonObject
from harness.config.run_config import RunConfig, object_label
from harness.store.manifest import Manifest

if TYPE_CHECKING:
    from harness.config.shard import Shard
    from harness.config.suites import Suite
    from harness.evaluate.model import PlannedModel
    from harness.run.clients import ModelProvider
    from harness.run.suite_samples import SuiteSamples
    from harness.serving.plan import EndpointPlan
    from harness.strategies.base import Strategy
    from harness.task.contract import Adapter, Services
    from harness.types import SamplingParams


@dataclass
class ManifestInputs:
    """What a run's manifest is made of, as planned."""

    config: RunConfig
    run_id: str
    suite: Suite
    trials: int
    plan: SuiteSamples
    shard: Shard
    model: PlannedModel
    provider: ModelProvider
    endpoint: EndpointPlan
    strategy: Strategy
    services: Services
    sampling: SamplingParams


def benchmark_versions(adapters: list[Adapter]) -> dict[str, str]:
    """The harness's and the platform's versions, then each benchmark's own
    (``<benchmark>.<key>``)."""
    from harness.store.manifest import base_versions

    versions = base_versions()
    for adapter in adapters:
        for key, value in adapter.versions().items():
            versions[f"{adapter.name}.{key}"] = value
    return versions


def model_entry(config: RunConfig, model_name: str, provider: ModelProvider) -> JsonObject:
    """The manifest's ``model``: what the run asked for (part of a run's identity)."""
    return {
        "name": model_name,
        "api_base": provider.describe().get("api_base"),
        "prompt_mode": config.prompt_mode,
        "tool_choice": config.tool_choice,
        "argument_max_length": config.argument_max_length,
    }


def strategy_entry(strategy: Strategy) -> JsonObject:
    """The manifest's ``strategy``: what it describes of itself, and its class
    when it is not one the harness builds from a ``--strategy`` value."""
    entry = dict(strategy.describe())
    if not type(strategy).__module__.startswith("harness."):
        entry["object"] = object_label(strategy)
    return entry


def build_manifest(given: ManifestInputs, created_at: str) -> Manifest:
    """The manifest of a planned run (``created_at`` is kept from the first
    invocation when the run is resumed)."""
    from harness.evaluate.services import planned_adapters

    config, plan, shard, trials = given.config, given.plan, given.shard, given.trials
    settings = given.model.settings
    cache_dir = settings.cache_dir
    return Manifest(
        run_id=given.run_id,
        created_at=created_at,
        model=model_entry(config, settings.name, given.provider),
        model_client=given.provider.describe(),
        sampling=given.sampling.to_dict(),
        strategy=strategy_entry(given.strategy),
        env_feedback=given.strategy.describe().get("env_feedback", "standard"),
        suite_name=given.suite.name,
        suite=given.suite.to_dict(),
        trials=trials,
        limit=config.limit,
        seed=config.seed,
        user_model=given.services.user_model,
        judge_model=given.services.judge_model,
        data_dir=config.data_dirs.to_manifest(),
        versions=benchmark_versions(planned_adapters(plan)),
        planned=plan.planned_counts(
            owned=lambda key: any(shard.owns(f"{key}#{t}") for t in range(trials))
        ),
        planned_full=plan.planned_counts(),
        not_run=[n.__dict__ for n in plan.not_run],
        cache=str(cache_dir) if cache_dir else None,
        cache_scope=given.model.cache_scope,
        fingerprint=given.model.fingerprint,
        shard=shard.label(),
        **given.endpoint.manifest_entries(),  # server, checkpoint, step (with a served checkpoint)
    )
