"""Serving a checkpoint for ``harness run``: the ``--serve`` flags and the ``EndpointPlan``.

``EndpointPlan`` is what ``harness run`` sees of serving: it resolves the flags into the model name and URL the run calls, records the
server in the manifest, and starts the server only if the run has work left.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from harness.boundary.json_value import JsonObject
from harness.config import validate
from harness.config.run_config import DEFAULT_START_TIMEOUT_S, RunConfig, ServeConfig
from harness.errors import ConfigError
from harness.models.settings import ServedEndpoint
from harness.serving.checkpoints import checkpoint_name, checkpoint_step, resolve_checkpoint
from harness.serving.process import HOST, ManagedServer, free_port
from harness.serving.specs import SERVER_LOG, SPECS, CustomSpec, ServerSpec

if TYPE_CHECKING:
    from harness.models.settings import ModelSettings
    from harness.store.manifest import Manifest


class ServerSpan(TypedDict):
    """One time a plan's server ran: its kind, wall seconds and the GPUs it held."""

    kind: str
    seconds: float
    gpus: int


class ServerEntries(TypedDict, total=False):
    """What a plan adds to the run's manifest (nothing without a server)."""

    server: JsonObject
    checkpoint: str
    step: int | None


def _parse_loras(pairs: list[str]) -> dict[str, str]:
    loras: dict[str, str] = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise ConfigError(f"--lora '{pair}' is not NAME=PATH")
        loras[name.strip()] = resolve_checkpoint(path.strip())
    return loras


def build_spec(serve: ServeConfig, model: str | None = None) -> ServerSpec:
    """The ServerSpec that the serve settings describe (ConfigError on bad ones);
    ``model``: the name the run asks for, if it names one."""
    kind = serve.serve
    if kind not in SPECS:
        raise ConfigError(f"--serve {kind!r}: one of {', '.join(sorted(SPECS))}")
    if not serve.checkpoint:
        raise ConfigError(f"--serve {kind} needs --checkpoint (a folder, file or hub id)")
    if serve.tensor_parallel_size < 1 or serve.data_parallel_size < 1:
        raise ConfigError("--tensor-parallel-size and --data-parallel-size must be positive")
    validate.positive("--serve-timeout", serve.serve_timeout)  # nan too: the wait never ends
    if (kind == "custom") != bool(serve.serve_command):
        raise ConfigError("--serve-command goes with --serve custom (and custom needs it)")
    cls = SPECS[kind]
    loras = _parse_loras(list(serve.lora))
    if kind in ("llamacpp", "custom"):
        if serve.tensor_parallel_size > 1 or serve.data_parallel_size > 1:
            raise ConfigError(f"--serve {kind} takes no --tensor/--data-parallel-size")
    if kind == "llamacpp":
        if not Path(serve.checkpoint).expanduser().is_file():
            raise ConfigError(f"--serve llamacpp needs a GGUF file; {serve.checkpoint} is not one")
        if len(loras) > 1:
            raise ConfigError("--serve llamacpp serves at most one --lora")
    tool_parser = serve.tool_parser or cls.default_tool_parser
    if tool_parser == "none":
        tool_parser = None
    from harness.models.openai_http import served_name

    base_name = checkpoint_name(serve.checkpoint)
    if model and not loras:
        base_name = served_name(model)
    spec = cls(
        checkpoint=resolve_checkpoint(serve.checkpoint),
        served_name=base_name,
        tool_parser=tool_parser,
        reasoning_parser=serve.reasoning_parser,
        loras=loras,
        tensor_parallel_size=serve.tensor_parallel_size,
        data_parallel_size=serve.data_parallel_size,
        extra_args=list(serve.serve_arg),
    )
    if isinstance(spec, CustomSpec):
        spec.template = serve.serve_command or ""  # checked above: custom needs a command
    return spec


def requested_model(model: str | None, spec: ServerSpec) -> str:
    """The model name the run asks the server for (litellm style, ``openai/...``)."""
    if model:
        return model
    if len(spec.loras) == 1:
        return f"openai/{next(iter(spec.loras))}"
    if len(spec.loras) > 1:
        raise ConfigError("with several --lora adapters, name the one to evaluate with --model")
    return f"openai/{spec.served_name}"


_SERVE_ONLY_FLAGS = {
    "checkpoint": "--checkpoint",
    "tool_parser": "--tool-parser",
    "reasoning_parser": "--reasoning-parser",
    "lora": "--lora",
    "serve_arg": "--serve-arg",
    "serve_command": "--serve-command",
}


@dataclass
class EndpointPlan:
    """What a run calls beyond ``--model``/``--api-base``: a server it starts
    (``spec``, on ``port``) and per-replica limits for a replica list."""

    spec: ServerSpec | None = None
    port: int | None = None
    host: str = HOST
    start_timeout_s: float = DEFAULT_START_TIMEOUT_S
    model: str | None = None  # the model name the run asks for
    api_base: str | None = None  # the URL(s) it calls
    replica_limits: dict[str, int] = field(default_factory=dict)
    # How the endpoint's replies are read: inline <think> reasoning split or kept.
    inline_reasoning: str = "split"
    quiet: bool = False  # no lines about the server starting up (ServeConfig.quiet)
    # Each time this plan's server ran: start to stop, with the GPUs it held (the
    # leaderboard's GPU-seconds); ``record_server_spans`` copies them to the manifest.
    server_spans: list[ServerSpan] = field(default_factory=list)

    @property
    def url(self) -> str | None:
        return None if self.port is None else f"http://{self.host}:{self.port}/v1"

    def configure(self, settings: ModelSettings) -> None:
        """Give the run's ModelSettings what the plan knows about the endpoint."""
        settings.replica_concurrency = dict(self.replica_limits)
        settings.inline_reasoning = self.inline_reasoning
        if self.spec is not None and self.url is not None:
            settings.served = ServedEndpoint(self.url, self.spec.identity(), self.spec.label())

    def manifest_entries(self) -> ServerEntries:
        """``server``, ``checkpoint`` and ``step`` for the run's manifest."""
        if self.spec is None or self.port is None:
            return {}
        return {
            "server": self.spec.describe(self.host, self.port),
            "checkpoint": self.spec.checkpoint,
            "step": checkpoint_step(self.spec.checkpoint),
        }

    @contextlib.contextmanager
    def serving(self, run_dir: Path, needed: bool = True) -> Iterator[ManagedServer | None]:
        """The server for the ``with`` block (none when the plan has none, or
        when the run has nothing left to do)."""
        if self.spec is None or self.port is None or self.model is None:
            yield None
            return
        if not needed:
            print("nothing left to run; the server is not started", file=sys.stderr)
            yield None
            return
        from harness.models.openai_http import served_name

        server = ManagedServer(
            command=self.spec.command(self.host, self.port),
            port=self.port,
            model=served_name(self.model),
            log_path=Path(run_dir) / SERVER_LOG,
            label=self.spec.kind,
            host=self.host,
            start_timeout_s=self.start_timeout_s,
        )
        self._say(f"starting the {self.spec.kind} server (log: {server.log_path})")
        started = time.monotonic()
        try:
            with server:
                self._say(
                    f"{self.spec.kind} server ready at {server.url} "
                    f"after {time.monotonic() - started:.0f} s"
                )
                yield server
        finally:
            # From start to stop: start-up and shutdown hold the GPUs too.
            self.server_spans.append(
                {
                    "kind": self.spec.kind,
                    "seconds": round(time.monotonic() - started, 3),
                    "gpus": self.spec.gpus(),
                }
            )

    def _say(self, line: str) -> None:
        if not self.quiet:
            print(line, file=sys.stderr)

    def record_server_spans(self, manifest: Manifest) -> None:
        """Add this invocation's server spans to the ``Manifest``'s (kept across resumes)."""
        if self.server_spans:
            manifest.server_spans = [
                *(manifest.server_spans or []),
                *(dict(span) for span in self.server_spans),
            ]
            self.server_spans = []


def plan_endpoint(config: RunConfig, check_installed: bool = True) -> EndpointPlan:
    """Resolve a run's ``serve`` / ``model_config`` into the model and URL it calls
    (``plan.model``, ``plan.api_base``); the config is not changed. ConfigError
    on settings that do not go together, and (``check_installed``) when the
    server program is not installed here."""
    plan = EndpointPlan(
        model=config.model_name, api_base=config.api_base, inline_reasoning=config.inline_reasoning
    )
    serve = config.serve
    if config.model_config is not None:
        from harness.serving.replicas import load_model_config

        if config.api_base or serve.serve:
            raise ConfigError("--model-config replaces --api-base and --serve; give only one")
        replicas = load_model_config(Path(config.model_config))
        plan.model = config.model_name or replicas.model
        plan.api_base = replicas.api_base()
        plan.replica_limits = replicas.limits()
    if not serve.serve:
        given = [flag for dest, flag in _SERVE_ONLY_FLAGS.items() if getattr(serve, dest)]
        if given:
            raise ConfigError(f"{', '.join(given)} only apply with --serve")
        if not plan.model:
            raise ConfigError("the following arguments are required: --model (or --serve)")
        return plan
    if config.api_base:
        raise ConfigError("--serve starts its own server; drop --api-base")
    spec = build_spec(serve, config.model_name)
    if check_installed:
        spec.program()  # ConfigError now, before any work, if the server is not installed
    plan.spec = spec
    plan.port = free_port(plan.host)
    plan.start_timeout_s = serve.serve_timeout
    plan.quiet = serve.quiet
    plan.model = requested_model(config.model_name, spec)
    plan.api_base = plan.url
    return plan
