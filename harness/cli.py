"""The ``harness`` command line.

Imports stay inside the command functions: ``harness --help`` must not pay for
litellm, pandas or the benchmark packages.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from harness import validate
from harness.config import DEFAULT_JUDGE_MODEL, DEFAULT_USER_MODEL, RunConfig, ServeConfig
from harness.errors import ConfigError

DEFAULTS = RunConfig(suite="")  # the flags' defaults are the config's


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad command as one line with exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise ConfigError(message)


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
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
        "--local-server",
        choices=["auto", "yes", "no"],
        default="auto",
        help="wait for slow calls instead of re-sending them (auto: with --serve or a "
        "loopback --api-base)",
    )
    parser.add_argument(
        "--no-preflight",
        action="store_true",
        help="skip the one small request with tools sent to an --api-base/--serve server first",
    )
    parser.add_argument(
        "--client",
        default="auto",
        help="auto (direct HTTP with --api-base, else litellm), litellm, or direct",
    )
    parser.add_argument("--trials", type=int, help="trials per sample (default: the suite's)")
    parser.add_argument("--limit", type=int, help="at most N samples per subset")
    parser.add_argument("--ids", help="comma-separated sample ids to run")
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
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no leaderboard")
    parser.add_argument(
        "--adopt",
        action="store_true",
        help="resume a run folder that holds records but no manifest.json (its records are kept)",
    )
    # Local servers: replicas in a YAML file, or a server started for the run (harness/serving/).
    parser.add_argument("--model-config", type=Path, help="YAML naming the model and its replicas")
    from harness.serving.plan import add_serve_arguments

    add_serve_arguments(parser)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="harness",
        description="Evaluate tool-using LLM agents on the benchmarks of its adapters "
        "(see `harness list`).",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = commands.add_parser("run", help="run a suite against a model (resumes an existing run)")
    add_run_arguments(run)

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
            command = commands.add_parser(name, help=module.HELP)
            # A command that runs `harness run` once per job (sweep) takes all its flags.
            if getattr(module, "TAKES_RUN_FLAGS", False):
                add_run_arguments(command)
            module.add_arguments(command)
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
    ("paper", "harness.commands.paper"),
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
    )


def run_config(args: argparse.Namespace) -> RunConfig:
    """The one place ``harness run`` flags become a RunConfig (checked: ConfigError)."""
    from harness.data_dirs import DataDirs
    from harness.registry import benchmark_names

    config = RunConfig(
        suite=args.suite,
        model=args.model,
        api_base=args.api_base,
        model_config=args.model_config,
        serve=serve_config(args),
        client=args.client,
        prompt_mode=args.prompt_mode,
        tool_choice=args.tool_choice,
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
    )
    config.check()
    return config


def cmd_run(args: argparse.Namespace) -> int:
    from harness.evaluation import run_suite
    from harness.leaderboard import render

    summary = run_suite(run_config(args))
    for line in summary.report_lines():
        print(line, file=sys.stderr)
    if not args.quiet:
        print(render([summary.run_dir], "md"))
    return summary.exit_code


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
            from harness.serving.process import ServerError

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
