"""The ``harness`` command line.

Imports stay inside the command functions: ``harness --help`` must not pay for
litellm, pandas or the benchmark packages.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from harness.errors import ConfigError


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad command as one line with exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise ConfigError(message)


class _CommandParser(_Parser):
    """The parser of one command. Every value is checked as it is parsed, for
    every command (adapters' too): a ``type=float`` flag takes only finite
    numbers >= 0, a ``type=Path`` flag or one without a type no empty value
    (harness.config.validate's ``*_argument``). Not the top-level parser: it hands
    the command's own arguments on as they are."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from harness.config import validate

        super().__init__(*args, **kwargs)
        # argparse looks a flag's ``type`` up in this registry before calling it.
        self.register("type", float, validate.number_argument)
        self.register("type", Path, validate.path_argument)
        self.register("type", None, validate.text_argument)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="harness",
        description="Evaluate tool-using LLM agents on the benchmarks of its adapters "
        "(see `harness list`).",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_CommandParser)
    for name, module_name in {**dict(COMMANDS), **adapter_commands()}.items():
        module = _command_module(module_name)
        if module is not None:
            module.add_arguments(commands.add_parser(name, help=module.HELP))
    return parser


# Every command is a module of its own under harness/commands/. Each defines HELP,
# add_arguments(parser) and run(args) -> exit code, and imports nothing heavy at
# module level (the parser is built on every call). Adapters add theirs
# (``Adapter.commands()``).
COMMANDS = [
    ("run", "harness.commands.run"),
    ("score", "harness.commands.score"),
    ("leaderboard", "harness.commands.leaderboard"),
    ("list", "harness.commands.list"),
    ("compare", "harness.commands.compare"),
    ("plot", "harness.commands.plot"),
    ("paper", "harness.commands.paper"),
    ("report", "harness.commands.report"),
    ("view", "harness.commands.view"),
    ("sweep", "harness.commands.sweep"),
    ("merge", "harness.commands.merge"),
]


def adapter_commands() -> dict[str, str]:
    """Commands the registered adapters contribute (``Adapter.commands()``), by name.
    A core command keeps its name; a broken adapter contributes nothing."""
    from harness.task.registry import benchmark_names, get_adapter

    core = {name for name, _ in COMMANDS}
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


def _command_module(module_name: str) -> ModuleType | None:
    import importlib
    import importlib.util

    if importlib.util.find_spec(module_name) is None:
        return None
    return importlib.import_module(module_name)


def register_secrets(args: argparse.Namespace) -> None:
    """Tell the masker every credential the command line carries: URL userinfo
    and credential query values in any flag (``--api-base``, strategy options),
    key-named strategy options (``--strategy-opt rehearser_api_key=...``) and
    credential flags of the server command (``--serve-arg``, ``--serve-command``).
    Model configs and strategy configs register theirs when they are read."""
    import shlex

    from harness.models.redact import add_argument_secrets, add_config_secrets, add_url_secrets

    for value in vars(args).values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                add_url_secrets(item.partition("=")[2] if "=" in item.split("://")[0] else item)
    add_argument_secrets(getattr(args, "serve_arg", None) or [])
    for pair in getattr(args, "strategy_opt", None) or []:  # KEY=VALUE: a key-named KEY
        key, _, value = str(pair).partition("=")
        add_config_secrets({key.strip(): value})
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


def one_blas_thread() -> None:
    """Keep numpy's BLAS to the calling thread in this command's process, unless
    the user set its thread count.

    numpy is loaded by adapters' metrics and by the scorer, and OpenBLAS starts
    a pool of threads on load (one per core). The harness does no linear
    algebra worth a pool, and a process running a second system thread starts
    its workers as fresh interpreters instead of forking them
    (``harness.evaluate.workers.worker_start_method``), ~2.5 s each instead of
    ~50 ms. Read by OpenBLAS when numpy loads: it must be set before that."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv: list[str] | None = None) -> int:
    from harness.boundary import interrupts
    from harness.boundary.terminal import terminal_safe_streams
    from harness.errors import one_line
    from harness.models.redact import scrub_secrets, secret_scope

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    one_blas_thread()
    interrupts.forget()
    # Whatever a command prints (a server's model ids or error body, a log's
    # tail) cannot act on the terminal (harness/boundary/terminal.py).
    with terminal_safe_streams(), secret_scope(), interrupts.sigterm_as_interrupt():
        try:
            args = build_parser().parse_args(argv)
            register_secrets(args)
            modules = {**dict(COMMANDS), **adapter_commands()}
            module = _command_module(modules[args.command])
            if module is None:  # an adapter's command whose module has gone
                raise ConfigError(f"harness {args.command}: its module is not installed")
            code = module.run(args)
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
