"""A run planned from its config before any sample runs: ``plan_run(config)``.

The plan puts together the model (``model``), the user and judge (``services``),
the strategy, the samples and the manifest (``manifest``); ``PlannedRun`` then
opens the run folder, runs what is left and scores it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from harness.config import validate
from harness.config.run_config import MAX_WORK_ITEMS, RunConfig
from harness.errors import ConfigError
from harness.evaluate import model as planned_model
from harness.run.run_counts import RunCounts
from harness.store.manifest import Manifest

if TYPE_CHECKING:  # imported where they are used: `import harness` stays cheap
    from harness.config.suites import Suite
    from harness.models.settings import ModelSettings
    from harness.run.progress import RunProgress
    from harness.run.runner import Runner, WorkItem
    from harness.run.suite_samples import SuiteSamples
    from harness.serving.plan import EndpointPlan
    from harness.store.run_store import RunStore
    from harness.strategies.base import Strategy


def check_run_folder(run_dir: Path, adopt: bool, flag: str = "--out") -> None:
    """The run folder can be written, and holds a run we may resume (or nothing)."""
    from harness.store.run_store import RunStore

    validate.writable_folder(run_dir, flag)
    store = RunStore(run_dir)
    store.check_files()
    if store.exists():
        store.read_manifest()  # one line if it is not a manifest
        store.records()  # one line if samples.jsonl holds something that is not a record
    elif store.records() and not adopt:
        raise ConfigError(
            f"{run_dir} holds records but no manifest.json, so it cannot be checked to be "
            "this run; add --adopt to resume it anyway, or use another --out folder"
        )


def check_data_dirs(config: RunConfig) -> None:
    from harness.task.registry import benchmark_names

    known = benchmark_names()
    for name in config.data_dirs.per_benchmark:
        if name not in known:
            raise ConfigError(f"--data-dir {name}=...: unknown benchmark '{name}'")
    for folder in [config.data_dirs.root, *config.data_dirs.per_benchmark.values()]:
        if folder is not None and folder.exists() and not folder.is_dir():
            raise ConfigError(f"--data-dir {folder} is a file, not a folder")


def plan_samples(config: RunConfig, suite: Suite, trials: int) -> SuiteSamples:
    """The suite's samples that can run here (ConfigError when none can, or too many)."""
    from harness.run.suite_samples import load_suite_samples, not_run_lines

    ids = [i.strip() for i in config.ids] if config.ids else None
    plan = load_suite_samples(suite, limit=config.limit, data_dir=config.data_dirs, ids=ids)
    if not plan.samples:
        reasons = "; ".join(not_run_lines(plan.not_run)[:3])
        raise ConfigError(f"suite '{suite.name}' selects no samples that can run here. {reasons}")
    if len(plan.samples) * trials > MAX_WORK_ITEMS:
        raise ConfigError(
            f"{len(plan.samples)} samples x {trials} trials is more than "
            f"{MAX_WORK_ITEMS:,} (sample, trial) pairs in one run; use --shard or fewer trials"
        )
    return plan


def plan_strategy(config: RunConfig, settings: ModelSettings) -> Strategy:
    """The strategy named by ``config.strategy``, or the strategy object it is."""
    from harness.config.run_config import object_label
    from harness.strategies.base import Strategy
    from harness.strategies.registry import build_strategy

    if isinstance(config.strategy, str):
        return build_strategy(
            config.strategy,
            config.all_strategy_options(),
            model_factory=planned_model.model_factory(settings),
        )
    if not isinstance(config.strategy, Strategy):
        raise ConfigError(
            f"strategy {object_label(config.strategy)} is neither a --strategy value nor "
            "a strategy object (a subclass of harness.strategies.base.Strategy)"
        )
    return config.strategy


@dataclass
class Session:
    todo: list[WorkItem]  # what is left to run
    skipped: int  # already done
    counts: RunCounts | None = None  # once run

    def result(self) -> RunCounts:
        if self.counts is None:
            raise RuntimeError("the session's items were never run")
        return self.counts


class Closable(Protocol):
    """A client that holds connections until closed (a model provider or client)."""

    async def aclose(self) -> None: ...


@dataclass
class PlannedRun:
    """Everything a run needs, planned from its config before any sample runs."""

    config: RunConfig
    run_dir: Path
    settings: ModelSettings
    endpoint: EndpointPlan
    plan: SuiteSamples
    runner: Runner
    store: RunStore
    manifest: Manifest
    trials: int
    clients: list[Closable | None]  # closed once the run ends
    progress: RunProgress | None = None  # what the run did, once it has run

    @contextlib.contextmanager
    def session(self, started: float, started_at: str) -> Iterator[Session]:
        """The run folder open for appending (and the server up, if the run starts
        one and has work left) for the ``with`` block, which runs ``todo`` and sets
        ``counts``; the manifest records the time spent, also when interrupted."""
        from harness.models.fingerprint import check_same_weights
        from harness.store.manifest import check_resumable
        from harness.store.records import now_iso

        store, manifest = self.store, self.manifest
        # A new run that fails before its first sample (its preflight, its
        # server's start) leaves nothing that reads as a run.
        new_run, folder_was_there = not store.exists(), self.run_dir.exists()
        started_samples = False
        if store.exists():
            old = store.load_manifest()
            check_resumable(old.to_dict(), manifest.to_dict(), self.run_dir)
            check_same_weights(old.to_dict(), manifest.to_dict(), self.run_dir)
            manifest.created_at = old.created_at or manifest.created_at
            manifest.active_spans = list(old.active_spans or [])
            manifest.server_spans = old.server_spans
            manifest.resumed_at = now_iso()
        store.open_for_append()
        try:
            store.write_manifest(manifest)
            # samples.jsonl is read once here for what is left to do.
            todo, skipped = self.runner.pending(self.plan.samples, self.trials)
            session = Session(todo, skipped)
            try:
                with self.endpoint.serving(self.run_dir, needed=bool(todo)):
                    if todo:
                        self.settings.fit_report.say = planned_model.say
                    if todo and self.config.preflight:
                        planned_model.preflight(self.settings)
                        planned_model.say_what_cannot_fit(self.settings, self.endpoint, todo)
                    started_samples = True
                    yield session
            except BaseException:
                if todo and started_samples:  # an interrupted run still spent this time on it
                    manifest.add_active_span(started_at, time.monotonic() - started)
                    self.endpoint.record_server_spans(manifest)
                    store.write_manifest(manifest)
                raise
            manifest.finished_at = now_iso()
            if todo:
                manifest.add_active_span(started_at, time.monotonic() - started)
            self.endpoint.record_server_spans(manifest)
            manifest.last_summary = {
                **session.result().__dict__,  # elapsed_s: the episodes, scoring and records
                "command_s": round(time.monotonic() - started, 3),  # the whole command
                "cache_hits": self.settings.cache_stats.hits,
            }
            store.write_manifest(manifest)
        finally:
            store.close()
            if new_run and not started_samples:
                store.discard_unstarted(folder_was_there)

    async def run_items(self, session: Session) -> None:
        session.counts = await self._run_items(session.todo, session.skipped)

    async def _run_items(self, todo: list[WorkItem], skipped: int) -> RunCounts:
        from harness.run.progress import ProgressReporter, RunProgress

        self.progress = RunProgress(
            total=len(todo) + skipped,
            already_done=skipped,
            calls=self.settings.calls,
            api_base=self.settings.api_base,
        )
        reporter = ProgressReporter(
            self.progress, enabled=self.config.progress, interval_s=self.config.progress_interval
        )
        self.runner.progress = reporter
        reporter.start()
        try:
            return await self.runner.run_items(todo, skipped)
        finally:
            reporter.stop()
            for client in self.clients:
                if client is not None:
                    await client.aclose()


def plan_run(config: RunConfig) -> PlannedRun:
    """SuiteSamples the run; nothing is written yet. The config is not changed.

    Planned with the collector paused: loading the samples makes many objects
    and hardly any garbage (~700 cyclic objects for a suite of 5,000 samples),
    and the collector's full passes over them took more than the rest of
    planning (that suite's: ~2.6-3.4 s with them, ~1.3 s without)."""
    from harness.boundary.collector import collector_paused

    with collector_paused():
        return _plan_run(config)


def _plan_run(config: RunConfig) -> PlannedRun:
    from harness.config.shard import Shard
    from harness.config.suites import load_suite
    from harness.evaluate.manifest import ManifestInputs, build_manifest
    from harness.evaluate.services import plan_services
    from harness.models.redact import add_config_secrets, add_url_secrets
    from harness.run.clients import ModelProvider
    from harness.run.runner import Runner
    from harness.store.records import now_iso
    from harness.store.run_store import RunStore
    from harness.types import SamplingParams

    config.check()
    add_url_secrets(config.api_base)  # a key in the URL never reaches the run folder
    add_config_secrets(config.strategy_options)  # a rehearser's key or URL password
    suite = load_suite(config.suite)
    trials = config.trials if config.trials is not None else suite.trials
    endpoint = planned_model.plan_model_endpoint(config)
    assert endpoint.model is not None  # plan_model_endpoint checked it
    shard = Shard.parse(config.shard) if config.shard else Shard()
    run_dir = config.run_dir(endpoint.model)
    check_run_folder(
        run_dir, config.adopt, "--out" if config.out else "the run folder (in results/)"
    )
    model = planned_model.plan_model(config, endpoint, run_dir)
    settings = model.settings
    strategy = plan_strategy(config, settings)
    check_data_dirs(config)
    plan = plan_samples(config, suite, trials)
    provider = ModelProvider(settings, given=config.model_object)
    services = plan_services(config, suite, plan, settings)
    sampling = SamplingParams(
        temperature=config.temperature,
        top_p=config.top_p,
        max_tokens=config.max_tokens,
        seed=config.seed,
    )
    manifest = build_manifest(
        ManifestInputs(
            config=config,
            run_id=run_dir.name,
            suite=suite,
            trials=trials,
            plan=plan,
            shard=shard,
            model=model,
            provider=provider,
            endpoint=endpoint,
            strategy=strategy,
            services=services,
            sampling=sampling,
        ),
        created_at=now_iso(),
    )
    store = RunStore(run_dir)
    runner = Runner(
        store=store,
        strategy=strategy,
        model_provider=provider,
        services=services,
        params=sampling,
        concurrency=config.concurrency,
        base_seed=config.seed,
        episode_timeout_s=config.episode_timeout,
        load_options=plan.load_options,
        shard=shard,
        longest_first=config.start_order == "longest",
    )
    return PlannedRun(
        config=config,
        run_dir=run_dir,
        settings=settings,
        endpoint=endpoint,
        plan=plan,
        runner=runner,
        store=store,
        manifest=manifest,
        trials=trials,
        clients=[provider, services.user_client, services.judge_client],
    )
