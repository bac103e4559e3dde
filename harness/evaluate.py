"""``run_suite(config) -> RunSummary``: one evaluation run, from Python.

This is what ``harness run`` does once its flags are a ``RunConfig``: plan the
run (endpoint, clients, strategy, samples, manifest), run what is left of it
into its run folder, and score it. A training loop evaluates a checkpoint the
same way, in its own process::

    from harness import RunConfig, run_suite

    summary = run_suite(RunConfig(suite="smoke", model="oracle", out=Path("runs/step_100")))
    print(summary.scores["benchmarks"])

``run_suite_async`` is the same for a caller that already runs an event loop.
A rerun of the same config resumes the run folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.config import validate
from harness.config.run_config import (
    DEFAULT_JUDGE_MODEL,
    DEFAULT_USER_MODEL,
    MAX_WORK_ITEMS,
    RunConfig,
)
from harness.errors import ConfigError
from harness.models.redact import environment_read_once
from harness.run.run_counts import RunCounts
from harness.store.manifest import Manifest

if TYPE_CHECKING:  # imported where they are used: `import harness` stays cheap
    from harness.models.settings import ModelSettings
    from harness.run.runner import NotRun, Plan, Runner, WorkItem
    from harness.serving.plan import EndpointPlan
    from harness.store.run_store import RunStore


@dataclass
class RunSummary(RunCounts):
    """What one ``run_suite`` call did (the runner's counts: total, skipped, ran,
    ok, infra_errors, score_errors, elapsed_s), and the run's scores afterwards."""

    run_dir: Path
    command_s: float  # the whole call, planning and final scoring included
    cache_hits: int
    cache_calls: int | None  # model calls that asked the cache; None without a cache
    not_run: list[NotRun] = field(default_factory=list)  # subsets left out
    notes: list[str] = field(default_factory=list)  # e.g. local calls past the timeout
    scores: dict[str, Any] = field(default_factory=dict)  # the run's scores.json

    @property
    def succeeded(self) -> bool:
        """No infrastructure or scoring error (a model's failure is a score, not an error)."""
        return self.infra_errors == 0 and self.score_errors == 0

    @property
    def exit_code(self) -> int:
        return 0 if self.succeeded else 1

    def report_lines(self) -> list[str]:
        """What the command line prints to stderr after a run."""
        from harness.results.frames import partial_lines

        lines = [self.line(), *self.notes]
        lines += [f"not run: {n.benchmark}/{n.subset}: {n.reason}" for n in self.not_run]
        # Numbers over less than the benchmark's official set say so here too.
        return lines + partial_lines(self.run_dir)

    def line(self) -> str:
        cache = (
            "no response cache"
            if self.cache_calls is None
            else f"{self.cache_hits} of {self.cache_calls} model calls from the cache"
        )
        return (
            f"{self.run_dir}: {self.ran} ran, {self.skipped} already done, {self.ok} ok, "
            f"{self.infra_errors} infrastructure errors, {self.score_errors} scoring errors, "
            f"{cache} in {self.command_s:.1f}s"
        )


def run_suite(config: RunConfig) -> RunSummary:
    """Run (or resume) one suite; ConfigError for a config that cannot run."""
    started, started_at = time.monotonic(), _now_iso()
    with environment_read_once():
        run = _plan(config)
        with run.session(started, started_at) as session:
            asyncio.run(run.run_items(session))
        return run.finish(session.result(), started)


async def run_suite_async(config: RunConfig) -> RunSummary:
    """``run_suite`` inside a running event loop: the episodes run on the caller's
    loop; planning, a server's start and the final scoring block it meanwhile."""
    started, started_at = time.monotonic(), _now_iso()
    with environment_read_once():
        run = _plan(config)
        with run.session(started, started_at) as session:
            await run.run_items(session)
        return run.finish(session.result(), started)


def _now_iso() -> str:
    from harness.run.runner import now_iso

    return now_iso()


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


def _preflight(settings: ModelSettings) -> None:
    """Stop before the run, in one line, when the server refuses what the run
    sends (tools, parallel calls in the history): models/preflight.py. Only for
    OpenAI-compatible servers (api_base, serve) in native tool-calling mode."""
    if not settings.api_base or settings.prompt_mode:
        return
    from harness.models.openai_http import served_name
    from harness.models.preflight import preflight
    from harness.models.redact import redact_url
    from harness.models.settings import is_builtin

    if is_builtin(settings.name):
        return
    for url in settings.api_base.split(","):
        findings = preflight(
            url.strip(), served_name(settings.name), settings.tool_choice, settings.timeout_s
        )
        if findings.tools_need_system_message and not settings.tool_placement.system_message:
            settings.tool_placement.system_message = True
            print(
                f"{redact_url(url.strip())} shows the model its tools only inside a system "
                "message (llama-cpp-python's chatml-function-calling does): conversations "
                "without one get an empty system message",
                file=sys.stderr,
            )
            if settings.argument_max_length is None:
                # Same chat format: its argument step ignores max_tokens (argument_bounds.py).
                print(
                    f"{redact_url(url.strip())} may write a tool argument until its context "
                    "window is full (chatml-function-calling ignores --max-tokens there); "
                    "--argument-max-length N bounds string arguments",
                    file=sys.stderr,
                )


def _say(line: str) -> None:
    print(line, file=sys.stderr)


def _say_what_cannot_fit(
    settings: ModelSettings, endpoint: EndpointPlan, todo: list[WorkItem]
) -> None:
    """One line before the run when some samples' first requests are longer than
    the server's context window (where it is known): context_fit.py."""
    from harness.models.openai_http import served_name
    from harness.models.settings import is_builtin
    from harness.run.context_fit import fit_line, server_window, unique_samples

    if not settings.api_base or is_builtin(settings.name):
        return

    spec = endpoint.spec
    arguments = None
    if spec is not None and endpoint.port is not None:
        arguments = [*spec.arguments(endpoint.host, endpoint.port), *spec.extra_args]
    window = server_window(settings.api_base, served_name(settings.name), arguments)
    if window is not None:
        line = fit_line(unique_samples(item.sample for item in todo), window)
        if line is not None:
            _say(line)


def _model_factory(base: Any) -> Any:
    """Builds rehearser / critic clients like the actor's (same timeouts, cache)."""
    from harness.models.settings import check_model
    from harness.run.clients import build_remote_client

    def build(name: str, api_base: str | None) -> Any:
        same_endpoint = name == base.name and api_base == base.api_base
        settings = replace(
            base,
            name=name,
            api_base=api_base,
            prompt_mode=False,
            # The actor's weights' fingerprint says nothing about another endpoint.
            fingerprint=base.fingerprint if same_endpoint else None,
        )
        check_model(settings)
        return build_remote_client(settings)

    return build


def _check_data_dirs(config: RunConfig) -> None:
    from harness.task.registry import benchmark_names

    known = benchmark_names()
    for name in config.data_dirs.per_benchmark:
        if name not in known:
            raise ConfigError(f"--data-dir {name}=...: unknown benchmark '{name}'")
    for folder in [config.data_dirs.root, *config.data_dirs.per_benchmark.values()]:
        if folder is not None and folder.exists() and not folder.is_dir():
            raise ConfigError(f"--data-dir {folder} is a file, not a folder")


@dataclass
class _Session:
    todo: list[WorkItem]  # what is left to run
    skipped: int  # already done
    counts: RunCounts | None = None  # once run

    def result(self) -> RunCounts:
        if self.counts is None:
            raise RuntimeError("the session's items were never run")
        return self.counts


@dataclass
class _PlannedRun:
    """Everything a run needs, planned from its config before any sample runs."""

    config: RunConfig
    run_dir: Path
    settings: ModelSettings
    endpoint: EndpointPlan
    plan: Plan
    runner: Runner
    store: RunStore
    manifest: Manifest
    trials: int
    clients: list[Any]

    @contextlib.contextmanager
    def session(self, started: float, started_at: str) -> Iterator[_Session]:
        """The run folder open for appending (and the server up, if the run starts
        one and has work left) for the ``with`` block, which runs ``todo`` and sets
        ``counts``; the manifest records the time spent, also when interrupted."""
        from harness.models.fingerprint import check_same_weights
        from harness.run.runner import now_iso
        from harness.store.manifest import check_resumable

        store, manifest = self.store, self.manifest
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
            session = _Session(todo, skipped)
            try:
                with self.endpoint.serving(self.run_dir, needed=bool(todo)):
                    if todo:
                        self.settings.fit_report.say = _say
                    if todo and self.config.preflight:
                        _preflight(self.settings)
                        _say_what_cannot_fit(self.settings, self.endpoint, todo)
                    yield session
            except BaseException:
                if todo:  # an interrupted run still spent this time on the run
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

    async def run_items(self, session: _Session) -> None:
        session.counts = await self._run_items(session.todo, session.skipped)

    async def _run_items(self, todo: list[WorkItem], skipped: int) -> RunCounts:
        from harness.run.progress import ProgressDisplay

        display = ProgressDisplay(total=len(todo) + skipped, enabled=self.config.progress)
        self.runner.progress = display.advance
        display.start(already_done=skipped)
        try:
            return await self.runner.run_items(todo, skipped)
        finally:
            display.stop()
            for client in self.clients:
                if client is not None:
                    await client.aclose()

    def finish(self, counts: RunCounts, started: float) -> RunSummary:
        from harness.run.scoring import score_run

        scores = score_run(self.run_dir, rescore=False)
        stats = self.settings.cache_stats
        return RunSummary(
            **vars(counts),
            run_dir=self.run_dir,
            command_s=round(time.monotonic() - started, 3),
            cache_hits=stats.hits,
            cache_calls=None if self.settings.cache_dir is None else stats.hits + stats.misses,
            not_run=list(self.plan.not_run),
            notes=list(self.settings.fit_report.lines(self.config.timeout)),
            scores=scores,
        )


def _plan(config: RunConfig) -> _PlannedRun:
    """Plan the run; nothing is written yet. The config is not changed."""
    from harness.config.shard import Shard
    from harness.config.suites import load_suite
    from harness.models.fingerprint import run_fingerprint
    from harness.models.redact import add_config_secrets, add_url_secrets
    from harness.models.settings import ModelSettings, check_model, is_builtin
    from harness.run.clients import ModelProvider, aux_client
    from harness.run.runner import Runner, now_iso, plan_suite
    from harness.serving.plan import plan_endpoint
    from harness.store.manifest import base_versions
    from harness.store.run_store import RunStore
    from harness.strategies.registry import build_strategy
    from harness.task.contract import Services
    from harness.task.registry import get_adapter
    from harness.types import SamplingParams

    config.check()
    add_url_secrets(config.api_base)  # a key in the URL never reaches the run folder
    add_config_secrets(config.strategy_options)  # a rehearser's key or URL password
    suite = load_suite(config.suite)
    trials = config.trials if config.trials is not None else suite.trials
    endpoint = plan_endpoint(config)
    model, api_base = endpoint.model, endpoint.api_base
    assert model is not None  # plan_endpoint names the model or raises
    if api_base and not endpoint.spec:
        for url in api_base.split(","):
            validate.check_url(url.strip())
    shard = Shard.parse(config.shard) if config.shard else Shard()
    strategy_options = config.all_strategy_options()
    run_dir = config.run_dir(model)
    check_run_folder(
        run_dir, config.adopt, "--out" if config.out else "the run folder (in results/)"
    )
    cache_dir, cache_scope = config.cache_place(run_dir)
    if cache_dir is not None:
        validate.writable_folder(cache_dir, "--cache-dir")
    settings = ModelSettings(
        name=model,
        api_base=api_base,
        prompt_mode=config.prompt_mode,
        timeout_s=config.timeout,
        max_attempts=config.max_attempts,
        concurrency=config.concurrency,
        cache_dir=cache_dir,
        client=config.client,
        retry_base_delay=config.retry_delay,
        tool_choice=config.tool_choice,
        argument_max_length=config.argument_max_length,
        local=config.local_server,
    )
    endpoint.configure(settings)
    check_model(settings)
    # Which weights answer (and, with api_base, refuse a model the server does not serve).
    fingerprint = run_fingerprint(
        model,
        api_base,
        spec=endpoint.spec,
        revision=config.model_revision,
        builtin=is_builtin(model),
    )
    settings.fingerprint = fingerprint["id"]
    strategy = build_strategy(
        config.strategy, strategy_options, model_factory=_model_factory(settings)
    )
    _check_data_dirs(config)
    ids = [i.strip() for i in config.ids] if config.ids else None
    plan = plan_suite(suite, limit=config.limit, data_dir=config.data_dirs, ids=ids)
    if not plan.samples:
        reasons = "; ".join(f"{n.benchmark}/{n.subset}: {n.reason}" for n in plan.not_run[:3])
        raise ConfigError(f"suite '{suite.name}' selects no samples that can run here. {reasons}")
    if len(plan.samples) * trials > MAX_WORK_ITEMS:
        raise ConfigError(
            f"{len(plan.samples)} samples x {trials} trials is more than "
            f"{MAX_WORK_ITEMS:,} (sample, trial) pairs in one run; use --shard or fewer trials"
        )
    provider = ModelProvider(settings)
    benchmarks = sorted({s.benchmark for s in plan.samples} | {n.benchmark for n in plan.not_run})
    # Only benchmarks with a simulated user or a judge need (and record) those models.
    wanted_user = config.user_model or suite.user_model or DEFAULT_USER_MODEL
    benchmark_judges = [get_adapter(b).default_judge_model for b in benchmarks]
    wanted_judge = (
        config.judge_model
        or suite.judge_model
        or next((name for name in benchmark_judges if name), DEFAULT_JUDGE_MODEL)
    )
    user_model = wanted_user if any(get_adapter(b).needs_user_model for b in benchmarks) else None
    subsets_of = {
        b: sorted({s.subset for s in plan.samples if s.benchmark == b}) for b in benchmarks
    }
    judge_model = (
        wanted_judge
        if any(get_adapter(b).needs_judge_for(subsets_of[b]) for b in benchmarks)
        else None
    )
    services = Services(
        user_client=aux_client(user_model, "user", benchmarks, settings),
        user_model=user_model,
        judge_client=aux_client(judge_model, "judge", benchmarks, settings),
        judge_model=judge_model,
        seed=config.seed,
        options={"prompt_mode": config.prompt_mode},
    )
    sampling = SamplingParams(
        temperature=config.temperature,
        top_p=config.top_p,
        max_tokens=config.max_tokens,
        seed=config.seed,
    )
    versions = base_versions()
    for name in benchmarks:
        for key, value in get_adapter(name).versions().items():
            versions[f"{name}.{key}"] = value
    manifest = Manifest(
        run_id=run_dir.name,
        created_at=now_iso(),
        model={
            "name": model,
            "api_base": provider.describe().get("api_base"),
            "prompt_mode": config.prompt_mode,
            "tool_choice": config.tool_choice,
            "argument_max_length": config.argument_max_length,
        },
        model_client=provider.describe(),
        sampling=sampling.to_dict(),
        strategy=strategy.describe(),
        env_feedback=strategy.describe().get("env_feedback", "standard"),
        suite_name=suite.name,
        suite=suite.to_dict(),
        trials=trials,
        limit=config.limit,
        seed=config.seed,
        user_model=user_model,
        judge_model=judge_model,
        data_dir=config.data_dirs.to_manifest(),
        versions=versions,
        planned=plan.planned_counts(
            owned=lambda key: any(shard.owns(f"{key}#{t}") for t in range(trials))
        ),
        planned_full=plan.planned_counts(),
        not_run=[n.__dict__ for n in plan.not_run],
        cache=str(cache_dir) if cache_dir else None,
        cache_scope=cache_scope,
        fingerprint=fingerprint,
        shard=shard.label(),
        **endpoint.manifest_entries(),  # server, checkpoint, step (with a served checkpoint)
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
    )
    return _PlannedRun(
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
