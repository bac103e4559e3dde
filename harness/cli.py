"""The ``harness`` command line.

Imports stay inside the command functions: ``harness --help`` must not pay for
litellm, pandas or the benchmark packages.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from harness import validate
from harness.errors import ConfigError

DEFAULT_USER_MODEL = "gpt-4.1-2025-04-14"
DEFAULT_JUDGE_MODEL = "gpt-4.1-2025-04-14"
RESULTS_DIR = Path("results")


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad command as one line with exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise ConfigError(message)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "run"


def default_run_dir(suite: str, model: str, strategy: str) -> Path:
    """Deterministic, so that rerunning the same command resumes the same run."""
    return RESULTS_DIR / f"{_slug(Path(suite).stem)}__{_slug(model)}__{_slug(strategy)}"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="harness",
        description="Evaluate tool-using LLM agents on the benchmarks of its adapters "
        "(see `harness list`).",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = commands.add_parser("run", help="run a suite against a model (resumes an existing run)")
    run.add_argument("--suite", required=True, help="suite name (tasks/<name>.yaml) or path")
    run.add_argument(
        "--model",
        help="oracle, null, or a litellm model name (with --serve: default from --checkpoint)",
    )
    run.add_argument(
        "--api-base", help="OpenAI-compatible server URL (vLLM, SGLang, llama.cpp, Ollama)"
    )
    run.add_argument(
        "--prompt-mode", action="store_true", help="tools in the prompt, calls parsed from text"
    )
    run.add_argument(
        "--tool-choice",
        choices=["auto", "required", "none", "omit"],
        default="auto",
        help="tool_choice sent with requests that offer tools (omit: none sent; default auto)",
    )
    run.add_argument(
        "--local-server",
        choices=["auto", "yes", "no"],
        default="auto",
        help="wait for slow calls instead of re-sending them (auto: with --serve or a "
        "loopback --api-base)",
    )
    run.add_argument(
        "--no-preflight",
        action="store_true",
        help="skip the one small request with tools sent to an --api-base/--serve server first",
    )
    run.add_argument(
        "--client",
        default="auto",
        help="auto (direct HTTP with --api-base, else litellm), litellm, or direct",
    )
    run.add_argument("--trials", type=int, help="trials per sample (default: the suite's)")
    run.add_argument("--limit", type=int, help="at most N samples per subset")
    run.add_argument("--ids", help="comma-separated sample ids to run")
    run.add_argument("--concurrency", type=int, default=8, help="samples in flight at once")
    run.add_argument(
        "--out", type=Path, help="run folder (default: results/<suite>__<model>__<strategy>)"
    )
    run.add_argument(
        "--strategy",
        default="plain",
        help="plain, rehearsal-parallel:N, rehearsal-sequential:N or self-consistency:K",
    )
    run.add_argument(
        "--strategy-opt",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="strategy setting, e.g. rehearser_model=openai/Qwen3-8B (repeatable)",
    )
    run.add_argument("--strategy-config", type=Path, help="YAML mapping of strategy settings")
    run.add_argument(
        "--env-feedback",
        choices=["standard", "augmented"],
        default="standard",
        help="augmented: actionable error messages (non-standard, marked in every table)",
    )
    run.add_argument(
        "--measure-world-model",
        action="store_true",
        help="the rehearser predicts every real tool result before it is known",
    )
    run.add_argument("--temperature", type=float, default=0.0)
    run.add_argument("--top-p", type=float)
    run.add_argument("--max-tokens", type=int)
    run.add_argument("--seed", type=int, default=0, help="base seed; trial t uses seed + t")
    run.add_argument("--timeout", type=float, default=120.0, help="seconds per model call")
    run.add_argument(
        "--max-attempts", type=int, default=6, help="tries per model call on transient errors"
    )
    run.add_argument(
        "--retry-delay", type=float, default=1.0, help="first backoff delay in seconds (doubles)"
    )
    run.add_argument("--episode-timeout", type=float, default=3600.0, help="seconds per episode")
    run.add_argument(
        "--user-model",
        help=f"user simulator model, or 'scripted' (default: the suite's, else {DEFAULT_USER_MODEL})",
    )
    run.add_argument(
        "--judge-model",
        help="judge model, or 'stub' (default: the suite's, else the benchmark's own, "
        f"else {DEFAULT_JUDGE_MODEL})",
    )
    run.add_argument(
        "--data-dir",
        action="append",
        metavar="PATH|NAME=PATH",
        help="local benchmark data not on PyPI: a root with one folder per benchmark "
        "(PATH/<benchmark>), or one benchmark's folder as NAME=PATH (repeatable)",
    )
    run.add_argument("--no-cache", action="store_true", help="do not reuse cached model responses")
    run.add_argument(
        "--cross-run-cache",
        action="store_true",
        help="share cached responses across runs (~/.cache/harness; default: the run folder only)",
    )
    run.add_argument(
        "--cache-dir", type=Path, help="a response cache shared across runs, in this folder"
    )
    run.add_argument(
        "--model-revision",
        help="what identifies the weights beyond what the server says (e.g. a training step)",
    )
    run.add_argument(
        "--shard",
        help="I/N: run only part I of N of the (sample, trial) work (merge with 'harness merge')",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bar, no leaderboard")
    run.add_argument(
        "--adopt",
        action="store_true",
        help="resume a run folder that holds records but no manifest.json (its records are kept)",
    )
    # Local servers: replicas in a YAML file, or a server started for the run (harness/serve.py).
    run.add_argument("--model-config", type=Path, help="YAML naming the model and its replicas")
    from harness.serve import add_serve_arguments

    add_serve_arguments(run)

    score = commands.add_parser("score", help="regrade a run from its stored trajectories")
    score.add_argument("run_dir", type=Path)
    score.add_argument("--no-rescore", action="store_true", help="aggregate the stored scores only")

    from harness.reference import available as reference_names

    board = commands.add_parser("leaderboard", help="tables over one or more runs")
    board.add_argument("run_dirs", type=Path, nargs="+")
    board.add_argument("--format", choices=["md", "csv", "json", "latex"], default="md")
    board.add_argument(
        "--with-reference",
        action="append",
        metavar="NAME",
        help=f"published rows beside the runs: {', '.join(reference_names())}, "
        "or a YAML file (repeatable)",
    )
    board.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples for 95%% CIs")
    board.add_argument("--seed", type=int, default=0, help="bootstrap seed")

    commands.add_parser("list", help="benchmarks, subsets, suites and built-in models")
    for name, module_name in EXTRA_COMMANDS:
        module = _command_module(module_name)
        if module is not None:
            # A command that runs `harness run` once per job (sweep) takes all its flags.
            takes_run_flags = getattr(module, "TAKES_RUN_FLAGS", False)
            inherited = {"parents": [run], "conflict_handler": "resolve"} if takes_run_flags else {}
            module.add_arguments(commands.add_parser(name, help=module.HELP, **inherited))
    for name, module_name in adapter_commands().items():
        module = _command_module(module_name)
        if module is not None:
            module.add_arguments(commands.add_parser(name, help=module.HELP))
    return parser


# Commands that live in modules of their own under harness/commands/. Each module
# defines HELP, add_arguments(parser) and run(args) -> exit code, and imports
# nothing heavy at module level (the parser is built on every call).
EXTRA_COMMANDS = [
    ("compare", "harness.commands.compare"),
    ("plot", "harness.commands.plot"),
    ("report", "harness.commands.report"),
    ("sweep", "harness.commands.sweep"),
    ("merge", "harness.commands.merge"),
]


def adapter_commands() -> dict[str, str]:
    """Commands the registered adapters contribute (``Adapter.commands()``), by name.
    A core command keeps its name; a broken adapter contributes nothing."""
    from harness.registry import benchmark_names, get_adapter

    core = set(COMMANDS) | {name for name, _ in EXTRA_COMMANDS}
    found: dict[str, str] = {}
    for benchmark in benchmark_names():
        try:
            contributed = get_adapter(benchmark).commands()
        except Exception:  # `harness list` says why an adapter is unavailable
            continue
        for name, module_name in contributed.items():
            if name not in core:
                found.setdefault(name, module_name)
    return found


def _command_module(module_name: str) -> Any:
    import importlib
    import importlib.util

    if importlib.util.find_spec(module_name) is None:
        return None
    return importlib.import_module(module_name)


def _sampling(args: argparse.Namespace) -> Any:
    from harness.types import SamplingParams

    return SamplingParams(
        temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens, seed=args.seed
    )


def _strategy_options(args: argparse.Namespace) -> dict[str, Any]:
    """Strategy settings: the YAML file, then --strategy-opt pairs, then flags."""
    options: dict[str, Any] = {}
    if args.strategy_config is not None:
        loaded = validate.read_yaml(
            args.strategy_config, f"--strategy-config {args.strategy_config}"
        )
        if not isinstance(loaded, dict):
            raise ConfigError(f"--strategy-config {args.strategy_config}: not a mapping")
        from harness.models.redact import add_config_secrets

        add_config_secrets(loaded)  # a rehearser URL or key in the settings
        options.update(loaded)
    for pair in args.strategy_opt:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--strategy-opt '{pair}' is not KEY=VALUE")
        options[key.strip()] = value
    if args.env_feedback != "standard":
        options["env_feedback"] = args.env_feedback
    if args.measure_world_model:
        options["measure_world_model"] = True
    return options


def _strategy_slug(spec: str, options: dict[str, Any]) -> str:
    """Strategy plus its settings, so different settings get different run folders."""
    parts = [spec] + [f"{key}={options[key]}" for key in sorted(options)]
    return "+".join(parts)


def _cache_place(args: argparse.Namespace, run_dir: Path) -> tuple[Path | None, str | None]:
    """The response cache folder and its scope: the run folder unless a cache
    across runs is asked for (--cross-run-cache, --cache-dir)."""
    from harness.models.cache import RUN_CACHE_DIR

    if args.no_cache:
        if args.cross_run_cache or args.cache_dir:
            raise ConfigError("--no-cache goes with neither --cross-run-cache nor --cache-dir")
        return None, None
    if args.cache_dir is not None:
        return args.cache_dir, "cross-run"
    if args.cross_run_cache:
        return Path.home() / ".cache" / "harness" / "responses", "cross-run"
    return run_dir / RUN_CACHE_DIR, "run"


def _now_iso() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def add_active_span(manifest: dict[str, Any], started_at: str, seconds: float) -> None:
    """Add one invocation's time to the manifest: the leaderboard's wall time is
    the sum of these spans (a resume with nothing to do adds none)."""
    spans = manifest.setdefault("active_spans", [])
    spans.append({"started_at": started_at, "seconds": round(seconds, 3)})


def _preflight(settings: Any) -> None:
    """Stop before the run, in one line, when the server refuses what the run
    sends (tools, parallel calls in the history): models/preflight.py. Only for
    OpenAI-compatible servers (--api-base, --serve) in native tool-calling mode."""
    if not settings.api_base or settings.prompt_mode:
        return
    from harness.models.openai_http import served_name
    from harness.models.preflight import preflight
    from harness.models.settings import is_builtin

    if is_builtin(settings.name):
        return
    for url in settings.api_base.split(","):
        preflight(url.strip(), served_name(settings.name), settings.tool_choice, settings.timeout_s)


def _cache_line(settings: Any) -> str:
    stats = settings.cache_stats
    if settings.cache_dir is None:
        return "no response cache"
    return f"{stats.hits} of {stats.hits + stats.misses} model calls from the cache"


def _model_factory(base: Any) -> Any:
    """Builds rehearser / critic clients like the actor's (same timeouts, cache)."""
    from dataclasses import replace

    from harness.clients import build_remote_client
    from harness.models.settings import check_model

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


# (sample, trial) pairs one run may hold: more is a typo (and its work list would
# not fit in memory).
MAX_WORK_ITEMS = 10_000_000


def check_run_values(args: argparse.Namespace) -> None:
    """The numeric flags of ``harness run``, before anything is loaded."""
    if args.trials is not None:
        validate.positive("--trials", args.trials)
        validate.at_most("--trials", args.trials, validate.MAX_TRIALS)
    validate.positive("--concurrency", args.concurrency)
    validate.at_most("--concurrency", args.concurrency, validate.MAX_CONCURRENCY)
    validate.positive("--limit", args.limit)
    validate.positive("--timeout", args.timeout)
    validate.positive("--episode-timeout", args.episode_timeout)
    validate.positive("--max-attempts", args.max_attempts)
    validate.not_negative("--retry-delay", args.retry_delay)
    validate.not_negative("--temperature", args.temperature)
    validate.in_unit_interval("--top-p", args.top_p)
    validate.positive("--max-tokens", args.max_tokens)
    if args.model is not None and not args.model.strip():
        raise ConfigError("--model is empty")
    if args.ids is not None and not [i for i in args.ids.split(",") if i.strip()]:
        raise ConfigError("--ids names no sample")


def check_run_folder(run_dir: Path, adopt: bool, flag: str = "--out") -> None:
    """The run folder can be written, and holds a run we may resume (or nothing)."""
    from harness.store import RunStore

    validate.writable_folder(run_dir, flag)
    store = RunStore(run_dir)
    if store.exists():
        store.read_manifest()  # one line if it is not a manifest
        store.records()  # one line if samples.jsonl holds something that is not a record
    elif store.records() and not adopt:
        raise ConfigError(
            f"{run_dir} holds records but no manifest.json, so it cannot be checked to be "
            "this run; add --adopt to resume it anyway, or use another --out folder"
        )


def cmd_run(args: argparse.Namespace) -> int:
    import time

    started, started_at = time.monotonic(), _now_iso()
    from harness.clients import ModelProvider, aux_client
    from harness.leaderboard import render
    from harness.manifest import base_versions, check_resumable
    from harness.models.fingerprint import check_same_weights, run_fingerprint
    from harness.models.settings import ModelSettings, check_model, is_builtin
    from harness.registry import get_adapter
    from harness.runner import Runner, Shard, now_iso, plan_suite
    from harness.scoring import score_run
    from harness.serve import plan_endpoint
    from harness.store import RunStore
    from harness.strategies.registry import build_strategy
    from harness.suites import load_suite
    from harness.task import Services

    check_run_values(args)
    suite = load_suite(args.suite)
    trials = args.trials if args.trials is not None else suite.trials
    endpoint = plan_endpoint(args)  # --serve / --model-config: sets args.model and args.api_base
    if args.api_base and not endpoint.spec:
        for url in args.api_base.split(","):
            validate.check_url(url.strip())
    shard = Shard.parse(args.shard) if args.shard else Shard()
    strategy_options = _strategy_options(args)
    run_dir = args.out or default_run_dir(
        args.suite, args.model, _strategy_slug(args.strategy, strategy_options)
    )
    if args.out is None and shard.count > 1:
        run_dir = run_dir.with_name(f"{run_dir.name}__shard-{shard.index + 1}of{shard.count}")
    check_run_folder(run_dir, args.adopt, "--out" if args.out else "the run folder (in results/)")
    cache_dir, cache_scope = _cache_place(args, run_dir)
    if cache_dir is not None:
        validate.writable_folder(cache_dir, "--cache-dir")
    settings = ModelSettings(
        name=args.model,
        api_base=args.api_base,
        prompt_mode=args.prompt_mode,
        timeout_s=args.timeout,
        max_attempts=args.max_attempts,
        concurrency=args.concurrency,
        cache_dir=cache_dir,
        client=args.client,
        retry_base_delay=args.retry_delay,
        tool_choice=args.tool_choice,
        local={"auto": None, "yes": True, "no": False}[args.local_server],
    )
    endpoint.configure(settings)
    check_model(settings)
    # Which weights answer (and, with --api-base, refuse a model the server does not serve).
    fingerprint = run_fingerprint(
        args.model,
        args.api_base,
        spec=endpoint.spec,
        revision=args.model_revision,
        builtin=is_builtin(args.model),
    )
    settings.fingerprint = fingerprint["id"]
    strategy = build_strategy(
        args.strategy, strategy_options, model_factory=_model_factory(settings)
    )
    ids = [i.strip() for i in args.ids.split(",")] if args.ids else None
    from harness.data_dirs import DataDirs
    from harness.registry import benchmark_names

    data_dirs = DataDirs.parse(args.data_dir, known=benchmark_names())
    for folder in [data_dirs.root, *data_dirs.per_benchmark.values()]:
        if folder is not None and folder.exists() and not folder.is_dir():
            raise ConfigError(f"--data-dir {folder} is a file, not a folder")
    plan = plan_suite(suite, limit=args.limit, data_dir=data_dirs, ids=ids)
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
    wanted_user = args.user_model or suite.user_model or DEFAULT_USER_MODEL
    benchmark_judges = [get_adapter(b).default_judge_model for b in benchmarks]
    wanted_judge = (
        args.judge_model
        or suite.judge_model
        or next((name for name in benchmark_judges if name), DEFAULT_JUDGE_MODEL)
    )
    user_model = wanted_user if any(get_adapter(b).needs_user_model for b in benchmarks) else None
    judge_model = (
        wanted_judge if any(get_adapter(b).needs_judge_model for b in benchmarks) else None
    )
    services = Services(
        user_client=aux_client(user_model, "user", benchmarks, settings),
        user_model=user_model,
        judge_client=aux_client(judge_model, "judge", benchmarks, settings),
        judge_model=judge_model,
        seed=args.seed,
        options={"prompt_mode": args.prompt_mode},
    )
    store = RunStore(run_dir)
    versions = base_versions()
    for name in benchmarks:
        for key, value in get_adapter(name).versions().items():
            versions[f"{name}.{key}"] = value
    manifest = {
        "run_id": run_dir.name,
        "created_at": now_iso(),
        "model": {
            "name": args.model,
            "api_base": provider.describe().get("api_base"),
            "prompt_mode": args.prompt_mode,
            "tool_choice": args.tool_choice,
        },
        "model_client": provider.describe(),
        "sampling": _sampling(args).to_dict(),
        "strategy": strategy.describe(),
        "env_feedback": strategy.describe().get("env_feedback", "standard"),
        "suite_name": suite.name,
        "suite": suite.to_dict(),
        "trials": trials,
        "limit": args.limit,
        "seed": args.seed,
        "user_model": user_model,
        "judge_model": judge_model,
        "data_dir": data_dirs.to_manifest(),
        "versions": versions,
        "planned": plan.planned_counts(
            owned=lambda key: any(shard.owns(f"{key}#{t}") for t in range(trials))
        ),
        "planned_full": plan.planned_counts(),
        "not_run": [n.__dict__ for n in plan.not_run],
        "cache": str(cache_dir) if cache_dir else None,
        "cache_scope": cache_scope,
        "fingerprint": fingerprint,
        "shard": shard.label(),
        **endpoint.manifest_entries(),  # server, checkpoint, step (with --serve)
    }
    if store.exists():
        old = store.read_manifest()
        check_resumable(old, manifest, run_dir)
        check_same_weights(old, manifest, run_dir)
        manifest["created_at"] = old.get("created_at", manifest["created_at"])
        manifest["active_spans"] = list(old.get("active_spans") or [])
        manifest["resumed_at"] = now_iso()
    store.open_for_append()
    try:
        store.write_manifest(manifest)
        runner = Runner(
            store=store,
            strategy=strategy,
            model_provider=provider,
            services=services,
            params=_sampling(args),
            concurrency=args.concurrency,
            base_seed=args.seed,
            episode_timeout_s=args.episode_timeout,
            load_options=plan.load_options,
            shard=shard,
        )
        # samples.jsonl is read once here for what is left to do.
        todo, skipped = runner.pending(plan.samples, trials)
        try:
            # The server (with --serve) runs for this block only, if there is work left.
            with endpoint.serving(run_dir, needed=bool(todo)):
                if todo and not args.no_preflight:
                    _preflight(settings)
                summary = _run_with_progress(
                    runner,
                    todo,
                    skipped,
                    quiet=args.quiet,
                    clients=[provider, services.user_client, services.judge_client],
                )
        except BaseException:
            if todo:  # an interrupted run still spent this time on the run
                add_active_span(manifest, started_at, time.monotonic() - started)
                store.write_manifest(manifest)
            raise
        manifest["finished_at"] = now_iso()
        if todo:
            add_active_span(manifest, started_at, time.monotonic() - started)
        manifest["last_summary"] = {
            **summary.__dict__,  # elapsed_s: the episodes, scoring and records only
            "command_s": round(time.monotonic() - started, 3),  # the whole command
            "cache_hits": settings.cache_stats.hits,
        }
        store.write_manifest(manifest)
    finally:
        store.close()
    score_run(run_dir, rescore=False)
    print(
        f"{run_dir}: {summary.ran} ran, {summary.skipped} already done, {summary.ok} ok, "
        f"{summary.infra_errors} infrastructure errors, {summary.score_errors} scoring errors, "
        f"{_cache_line(settings)} in {time.monotonic() - started:.1f}s",
        file=sys.stderr,
    )
    for line in settings.fit_report.lines(args.timeout):
        print(line, file=sys.stderr)
    for item in plan.not_run:
        print(f"not run: {item.benchmark}/{item.subset}: {item.reason}", file=sys.stderr)
    if not args.quiet:
        print(render([run_dir], "md"))
    return 0 if summary.infra_errors == 0 and summary.score_errors == 0 else 1


def _run_with_progress(
    runner: Any, todo: list[Any], skipped: int, quiet: bool, clients: list[Any]
) -> Any:
    import asyncio

    from harness.progress import ProgressDisplay

    display = ProgressDisplay(total=len(todo) + skipped, enabled=not quiet)
    runner.progress = display.advance
    display.start(already_done=skipped)

    async def run_then_close() -> Any:
        try:
            return await runner.run_items(todo, skipped)
        finally:
            for client in clients:
                if client is not None:
                    await client.aclose()

    try:
        return asyncio.run(run_then_close())
    finally:
        display.stop()


def cmd_score(args: argparse.Namespace) -> int:
    from harness.leaderboard import render
    from harness.scoring import score_run

    scores = score_run(args.run_dir, rescore=not args.no_rescore)
    regrade = scores["regrade"]
    print(
        f"{args.run_dir}: regraded {regrade['regraded']} records ({regrade['changed']} changed, "
        f"{regrade['failed']} failed); wrote {args.run_dir / 'scores.json'}",
        file=sys.stderr,
    )
    print(render([args.run_dir], "md"))
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from harness.leaderboard import render

    validate.n_boot(args.n_boot)
    print(
        render(
            args.run_dirs,
            args.format,
            reference=args.with_reference,
            n_boot=args.n_boot,
            seed=args.seed,
        )
    )
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from harness.models.settings import BUILTIN_MODELS
    from harness.registry import benchmark_names, get_adapter
    from harness.suites import available_suites

    print("benchmarks:")
    for name in benchmark_names():
        try:
            adapter = get_adapter(name)
        except Exception as exc:  # a broken third-party adapter must not hide the others
            print(f"  {name}: unavailable ({type(exc).__name__}: {exc})")
            continue
        subsets = adapter.subsets()
        print(f"  {name}: {', '.join(subsets)}")
    print("suites: " + ", ".join(available_suites()))
    print("built-in models:")
    for name, about in BUILTIN_MODELS.items():
        print(f"  {name}: {about}")
    print(
        "other models: any litellm model name (e.g. openai/gpt-4.1), or with --api-base a local server"
    )
    return 0


COMMANDS = {
    "run": cmd_run,
    "score": cmd_score,
    "leaderboard": cmd_leaderboard,
    "list": cmd_list,
}


def register_secrets(args: argparse.Namespace) -> None:
    """Tell the masker every credential the command line carries: URL userinfo
    and credential query values in any flag (``--api-base``, strategy options),
    and credential flags of the server command (``--serve-arg``, ``--serve-command``).
    Model configs and strategy configs register theirs when they are read."""
    import shlex

    from harness.models.redact import add_argument_secrets, add_url_secrets

    for value in vars(args).values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                add_url_secrets(item.partition("=")[2] if "=" in item.split("://")[0] else item)
    add_argument_secrets(getattr(args, "serve_arg", None) or [])
    add_argument_secrets(getattr(args, "strategy_opt", None) or [])
    command = getattr(args, "serve_command", None)
    if command:
        try:
            add_argument_secrets(shlex.split(command))
        except ValueError as exc:  # an unbalanced quote; the text may hold a key: not quoted
            raise ConfigError(f"--serve-command cannot be split into arguments: {exc}") from None


SIGPIPE_EXIT = 141  # 128 + SIGPIPE, what a shell reports for a reader that left


def _closed_pipe() -> int:
    """The reader of our output left (``harness leaderboard | head``): end quietly.

    Whatever is still buffered for stdout cannot be delivered; pointing stdout at
    the null device keeps the interpreter's final flush from printing a traceback.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass  # stdout is not a real file (a test's capture): nothing will flush to a pipe
    return SIGPIPE_EXIT


def main(argv: list[str] | None = None) -> int:
    from harness import interrupts
    from harness.errors import one_line
    from harness.models.redact import scrub_secrets, secret_scope

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    interrupts.forget()
    with secret_scope(), interrupts.sigterm_as_interrupt():
        try:
            args = build_parser().parse_args(argv)
            register_secrets(args)
            if args.command in COMMANDS:
                code = COMMANDS[args.command](args)
            else:
                modules = {**adapter_commands(), **dict(EXTRA_COMMANDS)}
                code = _command_module(modules[args.command]).run(args)
            # Flush here, not at interpreter exit, so a closed pipe is caught below.
            sys.stdout.flush()
            return code
        except BrokenPipeError:
            return _closed_pipe()
        except SystemExit:
            # --help exits from inside the parser, before the flush above.
            try:
                sys.stdout.flush()
            except BrokenPipeError:
                return _closed_pipe()
            raise
        except ConfigError as exc:
            from harness.serve import ServerError

            # A server's error carries the end of its log on purpose; others are one line.
            text = str(exc) if isinstance(exc, ServerError) else one_line(str(exc))
            print(f"harness: error: {scrub_secrets(text)}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            if interrupts.was_terminated():
                print("harness: terminated; rerun the same command to resume", file=sys.stderr)
                return 143
            print("harness: interrupted; rerun the same command to resume", file=sys.stderr)
            return 130
        except OSError as exc:
            # The machine failed the command (disk full, a folder removed): what was
            # written stays written, and a rerun resumes.
            where = f" ({exc.filename})" if exc.filename else ""
            reason = exc.strerror or type(exc).__name__
            print(
                f"harness: error: {scrub_secrets(one_line(reason + where))}; "
                "rerun the same command to resume",
                file=sys.stderr,
            )
            return 1
        except MemoryError:
            print("harness: error: out of memory", file=sys.stderr)
            return 1


if __name__ == "__main__":
    sys.exit(main())
