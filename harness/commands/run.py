"""``harness run --suite S --model M``: run a suite against a model (resumes an existing run).

Its flags are the fields of a ``RunConfig`` (``run_config`` is the one place
they become one); ``harness sweep`` takes them too. ``--parts K`` and
``--executor ray`` are not part of the run's config but of how it is carried
out: K shard jobs, on Ray at once, merged afterwards (harness/executors/parts.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.config import validate
from harness.config.run_config import (
    DEFAULT_JUDGE_MODEL,
    DEFAULT_USER_MODEL,
    RunConfig,
    ServeConfig,
)
from harness.errors import ConfigError

HELP = "run a suite against a model (resumes an existing run)"

DEFAULTS = RunConfig(suite="")  # the flags' defaults are the config's


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``harness run`` (``sweep`` takes them too); ``run_config``
    turns them into a RunConfig."""
    parser.add_argument("--suite", required=True, help="suite name (tasks/<name>.yaml) or path")
    parser.add_argument(
        "--model",
        help="oracle, null, or a litellm model name (with --serve: default from --checkpoint)",
    )
    parser.add_argument(
        "--api-base", help="OpenAI-compatible server URL (vLLM, SGLang, llama.cpp, Ollama)"
    )
    parser.add_argument(
        "--prompt-mode", action="store_true", help="tools in the prompt, calls parsed from text"
    )
    parser.add_argument(
        "--tool-choice",
        choices=["auto", "required", "none", "omit"],
        default="auto",
        help="tool_choice sent with requests that offer tools (omit: none sent; default auto)",
    )
    parser.add_argument(
        "--argument-max-length",
        type=int,
        metavar="N",
        help="offer the tools with every string parameter bounded to N characters (for "
        "servers that ignore --max-tokens while writing arguments, e.g. llama-cpp-python's "
        "chatml-function-calling; changes the prompt, recorded in the manifest)",
    )
    parser.add_argument(
        "--inline-reasoning",
        choices=["split", "keep"],
        default="split",
        help="<think>...</think> in reply text: set apart before decoding (split, the "
        "default) or decoded with the rest of the text (keep)",
    )
    parser.add_argument(
        "--local-server",
        choices=["auto", "yes", "no"],
        default="auto",
        help="wait for slow calls instead of re-sending them (auto: with --serve or a "
        "loopback --api-base)",
    )
    parser.add_argument(
        "--no-preflight",
        action="store_true",
        help="skip the one small request with tools sent to an --api-base/--serve server "
        "first, and the check of the first requests against its context window",
    )
    parser.add_argument(
        "--client",
        default="auto",
        help="auto (direct HTTP with --api-base, else litellm), litellm, or direct",
    )
    parser.add_argument("--trials", type=int, help="trials per sample (default: the suite's)")
    parser.add_argument("--limit", type=int, help="at most N samples per subset")
    parser.add_argument(
        "--ids",
        help="comma-separated sample ids to run: plain (looked up in every entry) or "
        "benchmark-qualified, BENCH/SUBSET:ID (e.g. tau3/retail:12)",
    )
    parser.add_argument(
        "--concurrency", type=int, default=DEFAULTS.concurrency, help="samples in flight at once"
    )
    parser.add_argument(
        "--out", type=Path, help="run folder (default: results/<suite>__<model>__<strategy>)"
    )
    parser.add_argument(
        "--strategy",
        default="plain",
        help="plain, rehearsal-parallel:N, rehearsal-sequential:N or self-consistency:K",
    )
    parser.add_argument(
        "--strategy-opt",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="strategy setting, e.g. rehearser_model=openai/Qwen3-8B (repeatable)",
    )
    parser.add_argument("--strategy-config", type=Path, help="YAML mapping of strategy settings")
    parser.add_argument(
        "--env-feedback",
        choices=["standard", "augmented"],
        default="standard",
        help="augmented: actionable error messages (non-standard, marked in every table)",
    )
    parser.add_argument(
        "--measure-world-model",
        action="store_true",
        help="the rehearser predicts every real tool result before it is known",
    )
    parser.add_argument("--temperature", type=float, default=DEFAULTS.temperature)
    parser.add_argument("--top-p", type=float)
    parser.add_argument("--max-tokens", type=int)
    parser.add_argument(
        "--seed", type=int, default=DEFAULTS.seed, help="base seed; trial t uses seed + t"
    )
    parser.add_argument(
        "--timeout", type=float, default=DEFAULTS.timeout, help="seconds per model call"
    )
    parser.add_argument(
        "--max-attempts",
        type=int,
        default=DEFAULTS.max_attempts,
        help="tries per model call on transient errors",
    )
    parser.add_argument(
        "--retry-delay",
        type=float,
        default=DEFAULTS.retry_delay,
        help="first backoff delay in seconds (doubles)",
    )
    parser.add_argument(
        "--episode-timeout",
        type=float,
        default=DEFAULTS.episode_timeout,
        help="seconds per episode",
    )
    parser.add_argument(
        "--user-model",
        help=f"user simulator model, or 'scripted' (default: the suite's, else {DEFAULT_USER_MODEL})",
    )
    parser.add_argument(
        "--judge-model",
        help="judge model, or 'stub' (default: the suite's, else the benchmark's own, "
        f"else {DEFAULT_JUDGE_MODEL})",
    )
    parser.add_argument(
        "--data-dir",
        action="append",
        metavar="PATH|NAME=PATH",
        help="local benchmark data not on PyPI: a root with one folder per benchmark "
        "(PATH/<benchmark>), or one benchmark's folder as NAME=PATH (repeatable)",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="do not reuse cached model responses"
    )
    parser.add_argument(
        "--cross-run-cache",
        action="store_true",
        help="share cached responses across runs (~/.cache/harness; default: the run folder only)",
    )
    parser.add_argument(
        "--cache-dir", type=Path, help="a response cache shared across runs, in this folder"
    )
    parser.add_argument(
        "--model-revision",
        help="what identifies the weights beyond what the server says (e.g. a training step)",
    )
    parser.add_argument(
        "--shard",
        help="I/N: run only part I of N of the (sample, trial) work (merge with 'harness merge')",
    )
    parser.add_argument(
        "--parts",
        type=int,
        default=1,
        metavar="K",
        help="split the run into K shards (--shard 1/K ... K/K), each a job of its own, merged "
        "into the run folder afterwards; a sweep: K jobs per checkpoint, each with its own server",
    )
    parser.add_argument(
        "--executor",
        choices=["local", "ray"],
        default="local",
        help="where the jobs run: here, one after another (local), or at once as tasks on a "
        "Ray cluster (ray, with pip install 'harness[ray]')",
    )
    parser.add_argument(
        "--ray-address", help="the Ray cluster to use (default: RAY_ADDRESS, else a local Ray)"
    )
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="no progress panel or lines, no first-seen error lines, no leaderboard",
    )
    parser.add_argument(
        "--progress-every",
        type=float,
        default=DEFAULTS.progress_interval,
        metavar="SECONDS",
        help="without a terminal: a progress line every SECONDS (and at each 10%% of the "
        f"work; default {DEFAULTS.progress_interval:g})",
    )
    parser.add_argument(
        "--adopt",
        action="store_true",
        help="resume a run folder that holds records but no manifest.json (its records are kept)",
    )
    # Local servers: replicas in a YAML file, or a server started for the run (harness/serving/).
    parser.add_argument("--model-config", type=Path, help="YAML naming the model and its replicas")
    from harness.serving.plan import add_serve_arguments

    add_serve_arguments(parser)


def _strategy_options(args: argparse.Namespace) -> dict[str, Any]:
    """Strategy settings: the YAML file, then --strategy-opt pairs."""
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
    return options


def serve_config(args: argparse.Namespace) -> ServeConfig:
    """The ``--serve`` flags as a ServeConfig."""
    return ServeConfig(
        serve=args.serve,
        checkpoint=args.checkpoint,
        tool_parser=args.tool_parser,
        reasoning_parser=args.reasoning_parser,
        lora=tuple(args.lora),
        tensor_parallel_size=args.tensor_parallel_size,
        data_parallel_size=args.data_parallel_size,
        serve_arg=tuple(args.serve_arg),
        serve_command=args.serve_command,
        serve_timeout=args.serve_timeout,
        quiet=args.quiet,
    )


def run_config(args: argparse.Namespace) -> RunConfig:
    """The one place ``harness run`` flags become a RunConfig (checked: ConfigError)."""
    from harness.config.data_dirs import DataDirs
    from harness.task.registry import benchmark_names

    config = RunConfig(
        suite=args.suite,
        model=args.model,
        api_base=args.api_base,
        model_config=args.model_config,
        serve=serve_config(args),
        client=args.client,
        prompt_mode=args.prompt_mode,
        tool_choice=args.tool_choice,
        argument_max_length=args.argument_max_length,
        inline_reasoning=args.inline_reasoning,
        local_server={"auto": None, "yes": True, "no": False}[args.local_server],
        preflight=not args.no_preflight,
        model_revision=args.model_revision,
        trials=args.trials,
        limit=args.limit,
        ids=tuple(args.ids.split(",")) if args.ids is not None else None,
        shard=args.shard,
        data_dirs=DataDirs.parse(args.data_dir, known=benchmark_names()),
        strategy=args.strategy,
        strategy_options=_strategy_options(args),
        env_feedback=args.env_feedback,
        measure_world_model=args.measure_world_model,
        temperature=args.temperature,
        top_p=args.top_p,
        max_tokens=args.max_tokens,
        seed=args.seed,
        concurrency=args.concurrency,
        timeout=args.timeout,
        max_attempts=args.max_attempts,
        retry_delay=args.retry_delay,
        episode_timeout=args.episode_timeout,
        user_model=args.user_model,
        judge_model=args.judge_model,
        out=args.out,
        cache=not args.no_cache,
        cross_run_cache=args.cross_run_cache,
        cache_dir=args.cache_dir,
        adopt=args.adopt,
        progress=not args.quiet,
        progress_interval=args.progress_every,
    )
    config.check()
    return config


def print_wrapped(line: str, width: int = 100) -> None:
    """One summary line on stderr, wrapped to the width the tables keep (a path stays whole)."""
    from harness.boundary.terminal import wrap_line

    print("\n".join(wrap_line(line, width)), file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from harness.report.leaderboard import write_run_tables

    config = run_config(args)
    if args.executor == "local" and args.parts == 1:
        from harness.evaluate import run_suite

        summary = run_suite(config)
        for line in summary.printed_lines(with_coverage=args.quiet):
            print(line, file=sys.stderr)
        run_dir, exit_code = summary.run_dir, summary.exit_code
    else:
        # K shards as jobs (on Ray, at once), merged: harness/executors/parts.py.
        from harness.executors.parts import run_in_parts

        outcome = run_in_parts(config, args.executor, args.parts, args.ray_address)
        run_dir, exit_code = outcome.run_dir, outcome.exit_code
    # The full tables stay in the run folder; the terminal gets the compact one.
    compact = write_run_tables(run_dir)
    if not args.quiet and compact:
        print(compact, end="")
    return exit_code
