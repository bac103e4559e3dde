"""What one evaluation run is: ``RunConfig`` (and ``ServeConfig`` for a server it starts).

The command line builds a RunConfig from its flags (``harness.commands.run.run_config``);
a Python caller builds one directly and passes it to ``harness.run_suite``. A
config is a plain value: planning reads it and never changes it.

The error messages name the command-line flag of a field, since that is how
most configs are written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

from harness.config import validate
from harness.config.data_dirs import DataDirs
from harness.config.flags import flag
from harness.errors import ConfigError
from harness.models.reasoning import INLINE_REASONING

if TYPE_CHECKING:
    from harness.models.base import ModelClient

DEFAULT_USER_MODEL = "gpt-4.1-2025-04-14"
DEFAULT_JUDGE_MODEL = "gpt-4.1-2025-04-14"
RESULTS_DIR = Path("results")
DEFAULT_START_TIMEOUT_S = 900.0  # a large checkpoint can take minutes to load and compile

# The fields that take one of a few words, typed so (a Python caller's checker sees
# them) and checked at run time too (a YAML or a command line gives plain text).
ToolChoice = Literal["auto", "required", "none", "omit"]
EnvFeedback = Literal["standard", "augmented"]
ClientKind = Literal["auto", "litellm", "direct"]
InlineReasoning = Literal["split", "keep"]
TOOL_CHOICES: tuple[str, ...] = get_args(ToolChoice)
ENV_FEEDBACK: tuple[str, ...] = get_args(EnvFeedback)
StartOrder = Literal["longest", "load"]
START_ORDERS: tuple[str, ...] = get_args(StartOrder)

# (sample, trial) pairs one run may hold: more is a typo (and its work list would
# not fit in memory).
MAX_WORK_ITEMS = 10_000_000


class StrategyObject(Protocol):
    """A strategy object given to ``RunConfig.strategy``: an instance of a
    subclass of ``harness.strategies.base.Strategy`` (planning checks that; this
    layer sits below the strategies and names only what it reads)."""

    name: str

    def describe(self) -> dict[str, Any]: ...

    async def run(self, sample: Any, model: Any, services: Any, params: Any) -> object: ...


def object_label(thing: object) -> str:
    """What the manifest records of an object the caller passed in: its class."""
    kind = type(thing)
    return f"{kind.__module__}.{kind.__qualname__}"


def slug(text: str, empty: str = "run") -> str:
    """``text`` as a file name: runs of other characters become one dash."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or empty


# The kinds of server ``--serve`` starts (harness/serving/specs.py has one spec each).
SERVER_KINDS = ("custom", "llamacpp", "sglang", "vllm")
LOCAL_SERVER_WORDS = {"auto": None, "yes": True, "no": False}


def _given_flag_is_false(given: bool) -> bool:
    """``--no-cache`` given -> ``cache=False``."""
    return not given


def _ids(text: str | None) -> tuple[str, ...] | None:
    return tuple(text.split(",")) if text is not None else None


def _data_dirs(values: list[str]) -> DataDirs:
    from harness.task.registry import benchmark_names  # the adapters' names, when asked

    return DataDirs.parse(values, known=benchmark_names())


@dataclass(frozen=True)
class ServeConfig:
    """A server the run starts for itself (``--serve``); ``serve`` is its kind
    (vllm, sglang, llamacpp, custom) or None for no server. The field names are
    the ``--serve`` flags' names."""

    serve: str | None = field(
        default=None,
        metadata=flag(
            "--serve",
            "start this server for the run: vllm, sglang, llamacpp (a GGUF file, CPU), "
            "or custom (--serve-command)",
            choices=SERVER_KINDS,
        ),
    )
    checkpoint: str | None = field(
        default=None,
        metadata=flag("--checkpoint", "what to serve: a local folder or file, or a hub id"),
    )
    tool_parser: str | None = field(
        default=None,
        metadata=flag(
            "--tool-parser",
            "the server's tool-call parser (default: hermes for vllm, qwen25 for sglang, "
            "chatml-function-calling for llamacpp; 'none': no parser, e.g. with --prompt-mode)",
        ),
    )
    reasoning_parser: str | None = field(
        default=None,
        metadata=flag("--reasoning-parser", "the server's reasoning parser, e.g. qwen3"),
    )
    lora: tuple[str, ...] = field(  # NAME=PATH
        default=(),
        metadata=flag(
            "--lora",
            "a LoRA adapter to serve (repeatable); the run asks for NAME "
            "(with several, name one with --model)",
            action="append",
            metavar="NAME=PATH",
            convert=tuple,
        ),
    )
    tensor_parallel_size: int = field(
        default=1, metadata=flag("--tensor-parallel-size", kind=int, metavar="N")
    )
    data_parallel_size: int = field(
        default=1, metadata=flag("--data-parallel-size", kind=int, metavar="N")
    )
    serve_arg: tuple[str, ...] = field(  # extra server arguments, as given
        default=(),
        metadata=flag(
            "--serve-arg",
            "an extra server argument, passed through as it is (repeatable; "
            "use --serve-arg=--flag for one that starts with a dash)",
            action="append",
            metavar="ARG",
            convert=tuple,
        ),
    )
    serve_command: str | None = field(  # with serve="custom"
        default=None,
        metadata=flag(
            "--serve-command",
            "with --serve custom: the server's command line, with {port} and optionally "
            "{host}, {model}, {checkpoint}",
        ),
    )
    serve_timeout: float = field(
        default=DEFAULT_START_TIMEOUT_S,
        metadata=flag(
            "--serve-timeout",
            f"how long the server may take to become ready (default {DEFAULT_START_TIMEOUT_S:g})",
            kind=float,
            metavar="SECONDS",
        ),
    )
    # --quiet: no lines about the server starting (a failure is still the one error line).
    quiet: bool = False


@dataclass(frozen=True)
class RunConfig:
    """One ``harness run``. Only ``suite`` and a model (``model``, or a server
    through ``serve`` / ``model_config``) are needed; every other field has the
    command line's default. A field the command line sets names its flag in its
    metadata (harness/config/flags.py): the flag's default is the field's."""

    suite: str = field(  # a suite name (tasks/<name>.yaml) or a path to a suite file
        metadata=flag("--suite", "suite name (tasks/<name>.yaml) or path", required=True)
    )
    # oracle, null, a litellm model name, or a ModelClient object the caller built
    # (a training loop's own client): the run then calls it for every sample.
    model: str | ModelClient | None = field(
        default=None,
        metadata=flag(
            "--model",
            "oracle, null, or a litellm model name (with --serve: default from --checkpoint)",
        ),
    )
    api_base: str | None = field(  # OpenAI-compatible server URL(s), comma-separated
        default=None,
        metadata=flag(
            "--api-base", "OpenAI-compatible server URL (vLLM, SGLang, llama.cpp, Ollama)"
        ),
    )
    model_config: Path | None = field(  # YAML naming the model and its replicas
        default=None,
        metadata=flag("--model-config", "YAML naming the model and its replicas", kind=Path),
    )
    serve: ServeConfig = field(default_factory=ServeConfig)  # its own flags
    client: ClientKind = field(
        default="auto",
        metadata=flag(
            "--client", "auto (direct HTTP with --api-base, else litellm), litellm, or direct"
        ),
    )
    prompt_mode: bool = field(
        default=False,
        metadata=flag(
            "--prompt-mode", "tools in the prompt, calls parsed from text", action="store_true"
        ),
    )
    tool_choice: ToolChoice = field(
        default="auto",
        metadata=flag(
            "--tool-choice",
            "tool_choice sent with requests that offer tools (omit: none sent; default auto)",
            choices=TOOL_CHOICES,
        ),
    )
    argument_max_length: int | None = field(  # maxLength for the tools' string parameters
        default=None,
        metadata=flag(
            "--argument-max-length",
            "offer the tools with every string parameter bounded to N characters (for "
            "servers that ignore --max-tokens while writing arguments, e.g. llama-cpp-python's "
            "chatml-function-calling; changes the prompt, recorded in the manifest)",
            kind=int,
            metavar="N",
        ),
    )
    inline_reasoning: InlineReasoning = field(  # <think> tags: set apart, or decoded as text
        default="split",
        metadata=flag(
            "--inline-reasoning",
            "<think>...</think> in reply text: set apart before decoding (split, the "
            "default) or decoded with the rest of the text (keep)",
            choices=tuple(INLINE_REASONING),
        ),
    )
    local_server: bool | None = field(  # None: with a server or a loopback api_base
        default=None,
        metadata=flag(
            "--local-server",
            "wait for slow calls instead of re-sending them (auto: with --serve or a "
            "loopback --api-base)",
            choices=tuple(LOCAL_SERVER_WORDS),
            cli_default="auto",
            convert=LOCAL_SERVER_WORDS.__getitem__,
        ),
    )
    preflight: bool = field(
        default=True,
        metadata=flag(
            "--no-preflight",
            "skip the one small request with tools sent to an --api-base/--serve server "
            "first, and the check of the first requests against its context window",
            action="store_true",
            convert=_given_flag_is_false,
        ),
    )
    model_revision: str | None = field(
        default=None,
        metadata=flag(
            "--model-revision",
            "what identifies the weights beyond what the server says (e.g. a training step)",
        ),
    )
    # What runs
    trials: int | None = field(  # None: the suite's
        default=None,
        metadata=flag("--trials", "trials per sample (default: the suite's)", kind=int),
    )
    limit: int | None = field(
        default=None, metadata=flag("--limit", "at most N samples per subset", kind=int)
    )
    ids: tuple[str, ...] | None = field(
        default=None,
        metadata=flag(
            "--ids",
            "comma-separated sample ids to run: plain (looked up in every entry) or "
            "benchmark-qualified, BENCH/SUBSET:ID (e.g. tau3/retail:12)",
            convert=_ids,
        ),
    )
    shard: str | None = field(  # "I/N"
        default=None,
        metadata=flag(
            "--shard",
            "I/N: run only part I of N of the (sample, trial) work (merge with 'harness merge')",
        ),
    )
    data_dirs: DataDirs = field(
        default_factory=DataDirs,
        metadata=flag(
            "--data-dir",
            "local benchmark data not on PyPI: a root with one folder per benchmark "
            "(PATH/<benchmark>), or one benchmark's folder as NAME=PATH (repeatable)",
            action="append",
            metavar="PATH|NAME=PATH",
            convert=_data_dirs,
        ),
    )
    # How
    # A --strategy value, or a strategy object (harness.strategies.base.Strategy).
    strategy: str | StrategyObject = field(
        default="plain",
        metadata=flag(
            "--strategy",
            "plain, rehearsal-parallel:N, rehearsal-sequential:N or self-consistency:K",
        ),
    )
    # From --strategy-config and --strategy-opt (harness/commands/run.py).
    strategy_options: dict[str, object] = field(default_factory=dict)
    env_feedback: EnvFeedback = field(
        default="standard",
        metadata=flag(
            "--env-feedback",
            "augmented: actionable error messages (non-standard, marked in every table)",
            choices=ENV_FEEDBACK,
        ),
    )
    measure_world_model: bool = field(
        default=False,
        metadata=flag(
            "--measure-world-model",
            "the rehearser predicts every real tool result before it is known",
            action="store_true",
        ),
    )
    temperature: float = field(default=0.0, metadata=flag("--temperature", kind=float))
    top_p: float | None = field(default=None, metadata=flag("--top-p", kind=float))
    max_tokens: int | None = field(default=None, metadata=flag("--max-tokens", kind=int))
    seed: int = field(
        default=0, metadata=flag("--seed", "base seed; trial t uses seed + t", kind=int)
    )
    start_order: StartOrder = field(
        default="longest",
        metadata=flag(
            "--start-order",
            "longest: the longest estimated episodes start first (the default); load: "
            "in the order the benchmark lists them (a server that reuses the previous "
            "request's prompt cache can answer differently in another order)",
            choices=START_ORDERS,
        ),
    )
    # Samples in flight at once in the worker pool; each model endpoint also takes at
    # most this many requests at once (a replica's own max_concurrency can lower it).
    concurrency: int = field(
        default=8,
        metadata=flag(
            "--concurrency",
            "samples in flight at once (and at most this many requests at once per model endpoint)",
            kind=int,
        ),
    )
    # Worker processes on this machine, sharing the concurrency (harness/evaluate/workers.py);
    # None: chosen from the cores and the work (one where it is small or the model in-process).
    workers: int | None = field(
        default=None,
        metadata=flag(
            "--workers",
            "worker processes on this machine, each with its own event loop, sharing the run "
            "folder and --concurrency (default: one per core while each gets at least 50 "
            "pending samples; one for oracle, null, --serve or a small run)",
            kind=int,
            metavar="N",
        ),
    )
    timeout: float = field(  # seconds per model call
        default=120.0, metadata=flag("--timeout", "seconds per model call", kind=float)
    )
    max_attempts: int = field(
        default=6,
        metadata=flag("--max-attempts", "tries per model call on transient errors", kind=int),
    )
    retry_delay: float = field(
        default=1.0,
        metadata=flag("--retry-delay", "first backoff delay in seconds (doubles)", kind=float),
    )
    episode_timeout: float = field(
        default=3600.0, metadata=flag("--episode-timeout", "seconds per episode", kind=float)
    )
    user_model: str | None = field(  # None: the suite's, else DEFAULT_USER_MODEL
        default=None,
        metadata=flag(
            "--user-model",
            "user simulator model, or 'scripted' (default: the suite's, else "
            f"{DEFAULT_USER_MODEL})",
        ),
    )
    judge_model: str | None = field(  # None: the suite's, else the benchmark's, else default
        default=None,
        metadata=flag(
            "--judge-model",
            "judge model, or 'stub' (default: the suite's, else the benchmark's own, "
            f"else {DEFAULT_JUDGE_MODEL})",
        ),
    )
    # Where
    out: Path | None = field(  # None: results/<suite>__<model>__<strategy>
        default=None,
        metadata=flag(
            "--out", "run folder (default: results/<suite>__<model>__<strategy>)", kind=Path
        ),
    )
    cache: bool = field(
        default=True,
        metadata=flag(
            "--no-cache",
            "do not reuse cached model responses",
            action="store_true",
            convert=_given_flag_is_false,
        ),
    )
    cross_run_cache: bool = field(
        default=False,
        metadata=flag(
            "--cross-run-cache",
            "share cached responses across runs (~/.cache/harness; default: the run folder only)",
            action="store_true",
        ),
    )
    cache_dir: Path | None = field(
        default=None,
        metadata=flag(
            "--cache-dir", "a response cache shared across runs, in this folder", kind=Path
        ),
    )
    adopt: bool = field(
        default=False,
        metadata=flag(
            "--adopt",
            "resume a run folder that holds records but no manifest.json (its records are kept)",
            action="store_true",
        ),
    )
    # The progress panel (or lines) and first-seen errors on stderr.
    progress: bool = field(
        default=True,
        metadata=flag(
            "--quiet",
            "no progress panel or lines, no first-seen error lines, no leaderboard",
            action="store_true",
            convert=_given_flag_is_false,
        ),
    )
    progress_interval: float = field(  # seconds between progress lines without a terminal
        default=30.0,
        metadata=flag(
            "--progress-every",
            "without a terminal: a progress line every SECONDS (and at each 10%% of the "
            "work; default %(default)g)",
            kind=float,
            metavar="SECONDS",
        ),
    )

    @property
    def model_object(self) -> ModelClient | None:
        """The client object given as ``model``, else None (a name)."""
        return None if self.model is None or isinstance(self.model, str) else self.model

    @property
    def model_name(self) -> str | None:
        """The model's name: as given, or a client object's ``name``."""
        if self.model is None or isinstance(self.model, str):
            return self.model
        return str(getattr(self.model, "name", "") or type(self.model).__name__)

    @property
    def strategy_name(self) -> str:
        """The strategy as given on a command line, or a strategy object's ``name``."""
        if isinstance(self.strategy, str):
            return self.strategy
        return str(getattr(self.strategy, "name", "") or type(self.strategy).__name__)

    def check(self) -> None:
        """ConfigError, in one line, for a value no run could take."""
        self._check_objects()
        if self.trials is not None:
            validate.positive("--trials", self.trials)
            validate.at_most("--trials", self.trials, validate.MAX_TRIALS)
        validate.positive("--concurrency", self.concurrency)
        validate.at_most("--concurrency", self.concurrency, validate.MAX_CONCURRENCY)
        validate.positive("--workers", self.workers)
        validate.positive("--limit", self.limit)
        validate.positive("--timeout", self.timeout)
        validate.positive("--episode-timeout", self.episode_timeout)
        validate.positive("--progress-every", self.progress_interval)
        validate.positive("--max-attempts", self.max_attempts)
        validate.not_negative("--retry-delay", self.retry_delay)
        validate.not_negative("--temperature", self.temperature)
        validate.in_unit_interval("--top-p", self.top_p)
        validate.positive("--max-tokens", self.max_tokens)
        validate.positive("--argument-max-length", self.argument_max_length)
        validate.positive("--serve-timeout", self.serve.serve_timeout)
        for option, name in (
            ("--model", self.model if isinstance(self.model, str) else None),
            ("--user-model", self.user_model),
            ("--judge-model", self.judge_model),
        ):
            if name is not None and not name.strip():  # else '' would mean the default
                raise ConfigError(f"{option} is empty")
        if self.ids is not None and not [i for i in self.ids if i.strip()]:
            raise ConfigError("--ids names no sample")
        if self.tool_choice not in TOOL_CHOICES:
            raise ConfigError(
                f"--tool-choice {self.tool_choice!r}: one of {', '.join(TOOL_CHOICES)}"
            )
        if self.inline_reasoning not in INLINE_REASONING:
            raise ConfigError(
                f"--inline-reasoning {self.inline_reasoning!r}: one of {', '.join(INLINE_REASONING)}"
            )
        if self.start_order not in START_ORDERS:
            raise ConfigError(
                f"--start-order {self.start_order!r}: one of {', '.join(START_ORDERS)}"
            )
        if self.env_feedback not in ENV_FEEDBACK:
            raise ConfigError(
                f"--env-feedback {self.env_feedback!r}: one of {', '.join(ENV_FEEDBACK)}"
            )
        if not self.cache and (self.cross_run_cache or self.cache_dir):
            raise ConfigError("--no-cache goes with neither --cross-run-cache nor --cache-dir")

    def _check_objects(self) -> None:
        """A client or strategy object is used as it is: the settings that would
        build or configure one from a name do not apply to it."""
        if self.model_object is not None:
            given = [
                option
                for option, used in (
                    ("--api-base", self.api_base is not None),
                    ("--model-config", self.model_config is not None),
                    ("--serve", self.serve.serve is not None),
                    ("--client", self.client != "auto"),
                    ("--tool-choice", self.tool_choice != "auto"),
                    ("--inline-reasoning", self.inline_reasoning != "split"),
                    ("--local-server", self.local_server is not None),
                )
                if used
            ]
            if given:
                raise ConfigError(
                    f"model is a client object ({object_label(self.model)}): "
                    f"{', '.join(given)} only apply to a model named by a string"
                )
        if not isinstance(self.strategy, str):
            given = [
                option
                for option, used in (
                    ("--strategy-opt", bool(self.strategy_options)),
                    ("--env-feedback", self.env_feedback != "standard"),
                    ("--measure-world-model", self.measure_world_model),
                )
                if used
            ]
            if given:
                raise ConfigError(
                    f"strategy is an object ({object_label(self.strategy)}): "
                    f"{', '.join(given)} only apply to a strategy named by a string; "
                    "set them on the object"
                )

    def all_strategy_options(self) -> dict[str, object]:
        """The strategy's settings, with the two that have flags of their own."""
        options = dict(self.strategy_options)
        if self.env_feedback != "standard":
            options["env_feedback"] = self.env_feedback
        if self.measure_world_model:
            options["measure_world_model"] = True
        return options

    def run_dir(self, model: str) -> Path:
        """``out``, else a folder named after suite, model and strategy: deterministic,
        so that rerunning the same config resumes the same run. ``model`` is the
        name the run calls (a served checkpoint's, when the config names none)."""
        if self.out is not None:
            return Path(self.out)
        options = self.all_strategy_options()
        strategy = "+".join([self.strategy_name] + [f"{k}={options[k]}" for k in sorted(options)])
        name = f"{slug(Path(self.suite).stem)}__{slug(model)}__{slug(strategy)}"
        if self.shard:
            from harness.config.shard import Shard

            shard = Shard.parse(self.shard)
            if shard.count > 1:
                name += f"__shard-{shard.index + 1}of{shard.count}"
        return RESULTS_DIR / name

    def cache_place(self, run_dir: Path) -> tuple[Path | None, str | None]:
        """The response cache folder and its scope: the run folder unless a cache
        across runs is asked for (``cross_run_cache``, ``cache_dir``)."""
        from harness.models.cache import RUN_CACHE_DIR

        if not self.cache:
            return None, None
        if self.model_object is not None and self.model_revision is None:
            # Nothing says which weights a client object calls: a cached reply could
            # be another checkpoint's. With model_revision the caller says so.
            return None, None
        if self.cache_dir is not None:
            return Path(self.cache_dir), "cross-run"
        if self.cross_run_cache:
            return Path.home() / ".cache" / "harness" / "responses", "cross-run"
        return run_dir / RUN_CACHE_DIR, "run"
