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

# (sample, trial) pairs one run may hold: more is a typo (and its work list would
# not fit in memory).
MAX_WORK_ITEMS = 10_000_000


class StrategyObject(Protocol):
    """A strategy object given to ``RunConfig.strategy``: an instance of a
    subclass of ``harness.strategies.base.Strategy`` (planning checks that; this
    layer sits below the strategies and names only what it reads)."""

    name: str

    def describe(self) -> dict[str, Any]: ...

    async def run(self, sample: Any, model: Any, services: Any, params: Any) -> Any: ...


def object_label(thing: object) -> str:
    """What the manifest records of an object the caller passed in: its class."""
    kind = type(thing)
    return f"{kind.__module__}.{kind.__qualname__}"


def slug(text: str, empty: str = "run") -> str:
    """``text`` as a file name: runs of other characters become one dash."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or empty


@dataclass(frozen=True)
class ServeConfig:
    """A server the run starts for itself (``--serve``); ``serve`` is its kind
    (vllm, sglang, llamacpp, custom) or None for no server. The field names are
    the ``--serve`` flags' names."""

    serve: str | None = None
    checkpoint: str | None = None
    tool_parser: str | None = None
    reasoning_parser: str | None = None
    lora: tuple[str, ...] = ()  # NAME=PATH
    tensor_parallel_size: int = 1
    data_parallel_size: int = 1
    serve_arg: tuple[str, ...] = ()  # extra server arguments, as given
    serve_command: str | None = None  # with serve="custom"
    serve_timeout: float = DEFAULT_START_TIMEOUT_S
    # --quiet: no lines about the server starting (a failure is still the one error line).
    quiet: bool = False


@dataclass(frozen=True)
class RunConfig:
    """One ``harness run``. Only ``suite`` and a model (``model``, or a server
    through ``serve`` / ``model_config``) are needed; every other field has the
    command line's default."""

    suite: str  # a suite name (tasks/<name>.yaml) or a path to a suite file
    # oracle, null, a litellm model name, or a ModelClient object the caller built
    # (a training loop's own client): the run then calls it for every sample.
    model: str | ModelClient | None = None
    api_base: str | None = None  # OpenAI-compatible server URL(s), comma-separated
    model_config: Path | None = None  # YAML naming the model and its replicas
    serve: ServeConfig = field(default_factory=ServeConfig)
    client: ClientKind = "auto"
    prompt_mode: bool = False
    tool_choice: ToolChoice = "auto"
    argument_max_length: int | None = None  # maxLength for the tools' string parameters
    inline_reasoning: InlineReasoning = "split"  # <think> tags: set apart, or decoded as text
    local_server: bool | None = None  # None: with a server or a loopback api_base
    preflight: bool = True
    model_revision: str | None = None
    # What runs
    trials: int | None = None  # None: the suite's
    limit: int | None = None
    ids: tuple[str, ...] | None = None
    shard: str | None = None  # "I/N"
    data_dirs: DataDirs = field(default_factory=DataDirs)
    # How
    # A --strategy value, or a strategy object (harness.strategies.base.Strategy).
    strategy: str | StrategyObject = "plain"
    strategy_options: dict[str, Any] = field(default_factory=dict)
    env_feedback: EnvFeedback = "standard"
    measure_world_model: bool = False
    temperature: float = 0.0
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int = 0
    concurrency: int = 8
    timeout: float = 120.0  # seconds per model call
    max_attempts: int = 6
    retry_delay: float = 1.0
    episode_timeout: float = 3600.0
    user_model: str | None = None  # None: the suite's, else DEFAULT_USER_MODEL
    judge_model: str | None = None  # None: the suite's, else the benchmark's, else default
    # Where
    out: Path | None = None  # None: results/<suite>__<model>__<strategy>
    cache: bool = True
    cross_run_cache: bool = False
    cache_dir: Path | None = None
    adopt: bool = False
    progress: bool = True  # the progress panel (or lines) and first-seen errors on stderr
    progress_interval: float = 30.0  # seconds between progress lines without a terminal

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
        for flag, name in (
            ("--model", self.model if isinstance(self.model, str) else None),
            ("--user-model", self.user_model),
            ("--judge-model", self.judge_model),
        ):
            if name is not None and not name.strip():  # else '' would mean the default
                raise ConfigError(f"{flag} is empty")
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
                flag
                for flag, used in (
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
                flag
                for flag, used in (
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

    def all_strategy_options(self) -> dict[str, Any]:
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
