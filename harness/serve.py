"""Serving a checkpoint for a run: ``harness run --serve vllm --checkpoint PATH``.

A ``ServerSpec`` (one subclass per server kind) turns a checkpoint and its
settings (tool-call parser, reasoning parser, LoRA adapters, parallelism, extra
arguments) into a command line. A ``ManagedServer`` runs any such command as a
child process on a free port of 127.0.0.1, writes its output to ``server.log``
in the run folder, waits until it lists the served model on ``/v1/models``, and
stops it on every way out of the ``with`` block: success, error, Ctrl-C and
SIGTERM (handled like Ctrl-C). The child gets a process group of its own, so
that stopping it also stops the worker processes it started (vLLM's engine and
tensor-parallel workers); stopping means SIGTERM to the group, a grace period,
then SIGKILL. On Linux the child is also told to receive SIGTERM if the harness
itself dies (even by SIGKILL), so no server outlives its run.

``EndpointPlan`` is what ``harness run`` sees of all this: it resolves the
flags into the model name and URL the run calls, records the server in the
manifest, and starts the server only if the run has work left.

A managed server is known by what it serves, not by its URL: the port changes
on every start, so the manifest (which must match to resume a run) and the
response cache identify its replies by server kind, checkpoint and parsers.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import json
import os
import random
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from harness.errors import ConfigError
from harness.interrupts import sigterm_as_interrupt
from harness.models.base import ModelClient, WrappedClient
from harness.models.redact import MASK, argument_secrets, is_secret_flag, scrub_secrets
from harness.models.settings import ServedEndpoint
from harness.steps import names_step, step_in
from harness.types import AssistantTurn, Message, SamplingParams, ToolSchema

HOST = "127.0.0.1"
SERVER_LOG = "server.log"
DEFAULT_START_TIMEOUT_S = 900.0  # a large checkpoint can take minutes to load and compile
DEFAULT_STOP_TIMEOUT_S = 30.0
LOG_TAIL_LINES = 25


# llama-cpp-python's chat format for OpenAI tools (see with_system_message).
CHATML_FUNCTION_CALLING = "chatml-function-calling"


class ServerError(ConfigError):
    """A server that could not be started, never became ready, or died."""


# -- what to serve ------------------------------------------------------------


@dataclass
class ServerSpec:
    """A checkpoint and how to serve it. Subclasses build the command line.

    ``served_name`` is the model name the server answers to (the name the
    client asks for, without a ``openai/`` prefix). ``loras`` maps adapter names
    to paths; a request for an adapter's name uses that adapter.
    """

    checkpoint: str
    served_name: str
    tool_parser: str | None = None
    reasoning_parser: str | None = None
    loras: dict[str, str] = field(default_factory=dict)
    tensor_parallel_size: int = 1
    data_parallel_size: int = 1
    extra_args: list[str] = field(default_factory=list)

    kind: ClassVar[str] = ""
    default_tool_parser: ClassVar[str | None] = None
    uses_gpus: ClassVar[bool] = True

    def program(self) -> list[str]:
        """The executable part of the command; ConfigError if it is not installed."""
        raise NotImplementedError

    def arguments(self, host: str, port: int) -> list[str]:
        raise NotImplementedError

    def command(self, host: str, port: int) -> list[str]:
        return [*self.program(), *self.arguments(host, port), *self.extra_args]

    def gpus(self) -> int:
        """GPUs one server of this spec occupies (what a scheduler reserves)."""
        return self.tensor_parallel_size * self.data_parallel_size if self.uses_gpus else 0

    def version(self) -> str | None:
        return None

    def model_identity(self) -> dict[str, Any]:
        """What the model under test is: a run resumes only with the same. Extra
        server arguments may change between resumes (memory settings after an
        out-of-memory crash, say); they are recorded in the manifest."""
        return {
            "server": self.kind,
            "checkpoint": self.checkpoint,
            "served_name": self.served_name,
            "tool_parser": self.tool_parser,
            "reasoning_parser": self.reasoning_parser,
            "loras": dict(self.loras),
        }

    def label(self) -> str:
        """The manifest's stand-in for the server's URL (whose port changes every
        start): the server kind and checkpoint, and a digest of the rest of the
        model identity, so that another parser or adapter is another model."""
        identity = json.dumps(self.model_identity(), sort_keys=True)
        digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:12]
        return f"{self.kind}:{self.checkpoint}#{digest}"

    def identity(self) -> dict[str, Any]:
        """What decides the replies besides the request (the response cache key)."""
        return {**self.model_identity(), "extra_args": mask_secret_args(self.extra_args)}

    def describe(self, host: str, port: int) -> dict[str, Any]:
        """The manifest's record of the server (credentials masked)."""
        return {
            "kind": self.kind,
            "checkpoint": self.checkpoint,
            "served_name": self.served_name,
            "tool_parser": self.tool_parser,
            "reasoning_parser": self.reasoning_parser,
            "loras": dict(self.loras),
            "tensor_parallel_size": self.tensor_parallel_size,
            "data_parallel_size": self.data_parallel_size,
            "extra_args": mask_secret_args(self.extra_args),
            "command": mask_secret_args(self.command(host, port)),
            "version": self.version(),
            "log": SERVER_LOG,
        }


def _package_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


@dataclass
class VLLMSpec(ServerSpec):
    kind: ClassVar[str] = "vllm"
    default_tool_parser: ClassVar[str | None] = "hermes"

    def program(self) -> list[str]:
        # The environment's own vllm first (a venv that is not activated), then PATH.
        local = Path(sys.executable).with_name("vllm")
        if local.is_file():
            return [str(local), "serve"]
        found = shutil.which("vllm")
        if found:
            return [found, "serve"]
        raise ConfigError(
            "--serve vllm needs vLLM (pip install vllm, on a GPU machine); "
            "or start a server yourself and pass --api-base"
        )

    def arguments(self, host: str, port: int) -> list[str]:
        args = [self.checkpoint, "--host", host, "--port", str(port)]
        args += ["--served-model-name", self.served_name]
        if self.tool_parser:
            args += ["--enable-auto-tool-choice", "--tool-call-parser", self.tool_parser]
        if self.reasoning_parser:
            args += ["--reasoning-parser", self.reasoning_parser]
        if self.loras:
            args += ["--enable-lora", "--lora-modules"]
            args += [f"{name}={path}" for name, path in self.loras.items()]
        if self.tensor_parallel_size > 1:
            args += ["--tensor-parallel-size", str(self.tensor_parallel_size)]
        if self.data_parallel_size > 1:
            args += ["--data-parallel-size", str(self.data_parallel_size)]
        return args

    def version(self) -> str | None:
        return _package_version("vllm")


@dataclass
class SGLangSpec(ServerSpec):
    kind: ClassVar[str] = "sglang"
    # SGLang's parser for the <tool_call>{json}</tool_call> format (vLLM's "hermes").
    default_tool_parser: ClassVar[str | None] = "qwen25"

    def program(self) -> list[str]:
        if importlib.util.find_spec("sglang") is None:
            raise ConfigError(
                "--serve sglang needs SGLang in this environment (pip install 'sglang[all]'); "
                "or start a server yourself and pass --api-base"
            )
        return [sys.executable, "-m", "sglang.launch_server"]

    def arguments(self, host: str, port: int) -> list[str]:
        args = ["--model-path", self.checkpoint, "--host", host, "--port", str(port)]
        args += ["--served-model-name", self.served_name]
        if self.tool_parser:
            args += ["--tool-call-parser", self.tool_parser]
        if self.reasoning_parser:
            args += ["--reasoning-parser", self.reasoning_parser]
        if self.loras:
            args += ["--enable-lora", "--lora-paths"]
            args += [f"{name}={path}" for name, path in self.loras.items()]
        if self.tensor_parallel_size > 1:
            args += ["--tp-size", str(self.tensor_parallel_size)]
        if self.data_parallel_size > 1:
            args += ["--dp-size", str(self.data_parallel_size)]
        return args

    def version(self) -> str | None:
        return _package_version("sglang")


@dataclass
class LlamaCppSpec(ServerSpec):
    """llama-cpp-python's OpenAI server on a GGUF file (CPU by default)."""

    kind: ClassVar[str] = "llamacpp"
    # llama-cpp-python's generic chat format that understands OpenAI tools.
    default_tool_parser: ClassVar[str | None] = CHATML_FUNCTION_CALLING
    uses_gpus: ClassVar[bool] = False
    # Its default window (2048 tokens) is too small for agent episodes.
    context_tokens: ClassVar[int] = 16384

    # The Python that runs the server: by default this environment's. The server
    # may live in an environment of its own (it brings fastapi, uvicorn and a
    # native library the harness does not need); this variable names its Python.
    python_variable: ClassVar[str] = "HARNESS_LLAMACPP_PYTHON"

    def _server_python(self) -> str | None:
        return os.environ.get(self.python_variable) or None

    def program(self) -> list[str]:
        python = self._server_python()
        if python is not None:
            if not Path(python).is_file():
                raise ConfigError(f"{self.python_variable}={python} is not a file")
            return [python, "-m", "llama_cpp.server"]
        if importlib.util.find_spec("llama_cpp") is None:
            raise ConfigError(
                "--serve llamacpp needs llama-cpp-python in this environment "
                f"(pip install 'llama-cpp-python[server]'), or {self.python_variable} "
                "naming a Python that has it"
            )
        return [sys.executable, "-m", "llama_cpp.server"]

    def arguments(self, host: str, port: int) -> list[str]:
        args = ["--model", self.checkpoint, "--host", host, "--port", str(port)]
        args += ["--model_alias", self.served_name, "--n_ctx", str(self.context_tokens)]
        # By default a new request interrupts the one being generated; a run
        # sends many at once.
        args += ["--interrupt_requests", "False"]
        if self.tool_parser:
            args += ["--chat_format", self.tool_parser]
        if self.loras:
            args += ["--lora_path", next(iter(self.loras.values()))]
        return args

    def version(self) -> str | None:
        python = self._server_python()
        if python is None:
            return _package_version("llama-cpp-python")
        probe = "import importlib.metadata as m; print(m.version('llama-cpp-python'))"
        try:
            found = subprocess.run(
                [python, "-c", probe], capture_output=True, text=True, timeout=30, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return found.stdout.strip() or None


@dataclass
class CustomSpec(ServerSpec):
    """Any other OpenAI-compatible server, from a command template.

    The template is split like a shell line; ``{port}`` (required), ``{host}``,
    ``{model}`` (the served name) and ``{checkpoint}`` are filled in.
    """

    template: str = ""

    kind: ClassVar[str] = "custom"
    uses_gpus: ClassVar[bool] = False

    def program(self) -> list[str]:
        return []

    def arguments(self, host: str, port: int) -> list[str]:
        if "{port}" not in self.template:
            raise ConfigError("--serve-command must contain {port} (the port to listen on)")
        values = {
            "host": host,
            "port": str(port),
            "model": self.served_name,
            "checkpoint": self.checkpoint,
        }
        try:
            return [part.format(**values) for part in shlex.split(self.template)]
        except (KeyError, IndexError, ValueError) as exc:
            raise ConfigError(
                f"--serve-command: bad placeholder {exc} (known: {{host}}, {{port}}, "
                "{model}, {checkpoint})"
            ) from None

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "template": mask_secret_args(shlex.split(self.template))}


SPECS: dict[str, type[ServerSpec]] = {
    spec.kind: spec for spec in (VLLMSpec, SGLangSpec, LlamaCppSpec, CustomSpec)
}


def mask_secret_args(args: list[str]) -> list[str]:
    """The arguments with the value of a credential flag (``--api-key X``,
    ``--hf-token=X``) masked, and credential-looking text scrubbed. A credential
    flag followed by another flag has no value (``--skip-tokenizer-init``)."""
    masked: list[str] = []
    values = argument_secrets(args)
    for index, arg in enumerate(args):
        previous = args[index - 1] if index else ""
        flag, eq, _ = arg.partition("=")
        if is_secret_flag(arg) and eq:
            masked.append(f"{flag}={MASK}")
        elif is_secret_flag(previous) and "=" not in previous and not arg.startswith("-"):
            masked.append(MASK)
        else:
            masked.append(scrub_secrets(arg, values))
    return masked


def secret_values(args: list[str]) -> list[str]:
    """The values that ``mask_secret_args`` hides (to scrub them from the log too)."""
    return argument_secrets(args)


# -- names and steps ------------------------------------------------------------


def is_local_checkpoint(checkpoint: str) -> bool:
    return Path(checkpoint).expanduser().exists()


def resolve_checkpoint(checkpoint: str) -> str:
    """A local checkpoint as an absolute path (two folders named step_200 in two
    training runs must not share cached replies); anything else, such as a
    Hugging Face id, as given."""
    path = Path(checkpoint).expanduser()
    return str(path.resolve()) if path.exists() else checkpoint


def checkpoint_name(checkpoint: str) -> str:
    """A short name for a checkpoint: a Hugging Face id as it is; for a local
    path, the part among its last three that names a step (``global_step_200``
    in ``run/global_step_200/actor/huggingface``), else the last part."""
    if not is_local_checkpoint(checkpoint):
        return checkpoint
    path = Path(checkpoint).expanduser().resolve()
    parts = [path.stem if path.suffix == ".gguf" else path.name, *(p.name for p in path.parents)]
    for part in parts[:3]:
        if names_step(part):
            return part
    return parts[0]


def checkpoint_step(checkpoint: str) -> int | None:
    """The training step in a checkpoint's name (``step_200`` -> 200), if any."""
    return step_in(checkpoint_name(checkpoint))


# -- the child process ------------------------------------------------------------


def free_port(host: str = HOST) -> int:
    """A port nobody listens on. Drawn below the kernel's ephemeral range
    (32768+), from which outgoing connections and bind(0) take theirs, so that
    another process is unlikely to take it before the server binds it."""
    rng = random.Random()
    for _ in range(100):
        port = rng.randrange(20000, 32768)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _die_with_parent() -> Any:
    """A pre-exec hook that makes the child receive SIGTERM when the harness dies
    (Linux's PR_SET_PDEATHSIG), or None elsewhere. libc is loaded here, in the
    parent, so that the child only makes one system call before exec."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()
    pr_set_pdeathsig = 1

    def hook() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:  # the harness died before the call took effect
            os._exit(1)

    return hook


class _LogPump:
    """Copies the child's output to the log file line by line, with credentials
    scrubbed, and keeps the last lines for error messages."""

    def __init__(self, stream: Any, log_path: Path, secrets: list[str]):
        self.tail: deque[str] = deque(maxlen=LOG_TAIL_LINES)
        self._stream = stream
        self._log_path = log_path
        self._secrets = secrets
        self._thread = threading.Thread(target=self._pump, name="server-log", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _pump(self) -> None:
        with self._log_path.open("a", encoding="utf-8") as log:
            for raw in iter(self._stream.readline, b""):
                line = scrub_secrets(raw.decode("utf-8", errors="replace"), self._secrets)
                log.write(line)
                log.flush()
                self.tail.append(line.rstrip("\n"))

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


@dataclass
class ManagedServer:
    """Runs ``command`` (which must listen on ``host:port``) for a ``with`` block.

    Ready means ``GET /v1/models`` lists ``model``: the server is up and answers
    to the name the client will ask for.
    """

    command: list[str]
    port: int
    model: str
    log_path: Path
    label: str = "server"
    host: str = HOST
    start_timeout_s: float = DEFAULT_START_TIMEOUT_S
    stop_timeout_s: float = DEFAULT_STOP_TIMEOUT_S
    poll_interval_s: float = 0.5
    env: dict[str, str] | None = None
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)
    _pump: _LogPump | None = field(default=None, init=False)
    _signals: Any = field(default=None, init=False)
    _stopping: bool = field(default=False, init=False)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def __enter__(self) -> ManagedServer:
        self._signals = sigterm_as_interrupt()
        self._signals.__enter__()
        try:
            self.start()
            self.wait_until_ready()
        except BaseException:
            self.stop()
            self._signals.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            died = self.process is not None and self.process.poll() is not None
            self.stop()
            if died and exc_type is None:
                raise self._error(f"exited with code {self.process.returncode} during the run")
        finally:
            self._signals.__exit__(None, None, None)

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        masked = mask_secret_args(self.command)
        with self.log_path.open("a", encoding="utf-8") as log:
            log.write(f"=== harness: starting {self.label}: {shlex.join(masked)}\n")
        try:
            self.process = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,  # its own process group: stopped as a whole
                preexec_fn=_die_with_parent(),
            )
        except OSError as exc:
            raise ServerError(f"cannot start the {self.label} server: {exc}") from None
        self._pump = _LogPump(self.process.stdout, self.log_path, secret_values(self.command))
        self._pump.start()

    def wait_until_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            code = self.process.poll()
            if code is not None:
                raise self._error(f"exited with code {code} before it was ready")
            served = self._served_models()
            if served is not None:
                if self.model in served:
                    return
                raise self._error(f"serves {', '.join(served) or 'no model'}, not '{self.model}'")
            if time.monotonic() >= deadline:
                raise self._error(
                    f"was not ready within {self.start_timeout_s:g} s "
                    "(raise --serve-timeout for a large checkpoint)"
                )
            time.sleep(self.poll_interval_s)

    def _served_models(self) -> list[str] | None:
        """The model ids the server lists, or None while it does not answer."""
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(f"{self.url}/models", timeout=2.0) as response:
                data = json.loads(response.read())
        except (urllib.error.URLError, OSError, ValueError):
            return None
        entries = data.get("data") if isinstance(data, dict) else None
        return [str(e.get("id")) for e in entries or [] if isinstance(e, dict)]

    def stop(self) -> None:
        """SIGTERM to the process group, a grace period, then SIGKILL; also
        reaps workers left in the group after the main process has exited."""
        if self.process is None or self._stopping:
            return
        self._stopping = True
        group = self.process.pid  # start_new_session: the group id is the child's pid
        try:
            _signal_group(group, signal.SIGTERM)
            try:
                self.process.wait(timeout=self.stop_timeout_s)
            except subprocess.TimeoutExpired:
                pass
        finally:
            # Also on a second Ctrl-C during the grace period: nothing survives.
            _signal_group(group, signal.SIGKILL)
            self.process.wait()
            _wait_group_gone(group, timeout_s=5.0)
            if self._pump is not None:
                self._pump.join(timeout=2.0)

    def log_tail(self) -> list[str]:
        return list(self._pump.tail) if self._pump else []

    def _error(self, what: str) -> ServerError:
        tail = "\n".join(f"  | {line}" for line in self.log_tail())
        message = f"the {self.label} server {what}; log: {self.log_path}"
        return ServerError(f"{message}\n  last lines of its log:\n{tail}" if tail else message)


def _signal_group(group: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _wait_group_gone(group: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while group_alive(group) and time.monotonic() < deadline:
        time.sleep(0.05)


# -- the client side ------------------------------------------------------------


class ServedModelClient(WrappedClient):
    """The client of a server this run started, known by what it serves.

    Its calls go to the inner client; the manifest and the response cache see
    the server's identity (kind, checkpoint, parsers) instead of its URL, whose
    port changes on every start.
    """

    def __init__(self, inner: ModelClient, identity: dict[str, Any], label: str):
        super().__init__(inner)
        self.identity = dict(identity)
        self.label = label
        self.tools_need_system_message = (
            identity.get("server") == LlamaCppSpec.kind
            and identity.get("tool_parser") == CHATML_FUNCTION_CALLING
        )

    async def complete(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> AssistantTurn:
        if self.tools_need_system_message:
            messages = with_system_message(messages, tools)
        return await self.inner.complete(messages, tools, params)

    def cache_identity(self) -> dict[str, Any]:
        return {"model": self.name, **self.identity}

    def describe(self) -> dict[str, Any]:
        described = dict(self.inner.describe())
        described["url"] = described.get("api_base")
        described["api_base"] = self.label
        return described


def with_system_message(messages: list[Message], tools: list[ToolSchema]) -> list[Message]:
    """The conversation with an empty system message first when tools are offered
    and it has none. llama-cpp-python's chatml-function-calling format writes the
    tool list into the system message and nowhere else, so a conversation without
    one (a single-turn question) would reach the model without its tools."""
    if not tools or any(message.get("role") == "system" for message in messages):
        return messages
    return [{"role": "system", "content": ""}, *messages]


# -- wiring into `harness run` ------------------------------------------------------


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``harness run`` flags that start a server for the run."""
    group = parser.add_argument_group("serving a checkpoint (the server runs for this run only)")
    group.add_argument(
        "--serve",
        choices=sorted(SPECS),
        help="start this server for the run: vllm, sglang, llamacpp (a GGUF file, CPU), "
        "or custom (--serve-command)",
    )
    group.add_argument("--checkpoint", help="what to serve: a local folder or file, or a hub id")
    group.add_argument(
        "--tool-parser",
        help="the server's tool-call parser (default: hermes for vllm, qwen25 for sglang, "
        "chatml-function-calling for llamacpp; 'none': no parser, e.g. with --prompt-mode)",
    )
    group.add_argument("--reasoning-parser", help="the server's reasoning parser, e.g. qwen3")
    group.add_argument(
        "--lora",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a LoRA adapter to serve (repeatable); the run asks for NAME "
        "(with several, name one with --model)",
    )
    group.add_argument("--tensor-parallel-size", type=int, default=1, metavar="N")
    group.add_argument("--data-parallel-size", type=int, default=1, metavar="N")
    group.add_argument(
        "--serve-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="an extra server argument, passed through as it is (repeatable; "
        "use --serve-arg=--flag for one that starts with a dash)",
    )
    group.add_argument(
        "--serve-command",
        help="with --serve custom: the server's command line, with {port} and optionally "
        "{host}, {model}, {checkpoint}",
    )
    group.add_argument(
        "--serve-timeout",
        type=float,
        default=DEFAULT_START_TIMEOUT_S,
        metavar="SECONDS",
        help=f"how long the server may take to become ready (default {DEFAULT_START_TIMEOUT_S:g})",
    )


def _parse_loras(pairs: list[str]) -> dict[str, str]:
    loras: dict[str, str] = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise ConfigError(f"--lora '{pair}' is not NAME=PATH")
        loras[name.strip()] = resolve_checkpoint(path.strip())
    return loras


def build_spec(args: argparse.Namespace) -> ServerSpec:
    """The ServerSpec that the run's flags describe (ConfigError on bad flags)."""
    kind = args.serve
    if not args.checkpoint:
        raise ConfigError(f"--serve {kind} needs --checkpoint (a folder, file or hub id)")
    if args.tensor_parallel_size < 1 or args.data_parallel_size < 1:
        raise ConfigError("--tensor-parallel-size and --data-parallel-size must be positive")
    if args.serve_timeout <= 0:
        raise ConfigError("--serve-timeout must be positive")
    if (kind == "custom") != bool(args.serve_command):
        raise ConfigError("--serve-command goes with --serve custom (and custom needs it)")
    cls = SPECS[kind]
    loras = _parse_loras(args.lora)
    if kind in ("llamacpp", "custom"):
        if args.tensor_parallel_size > 1 or args.data_parallel_size > 1:
            raise ConfigError(f"--serve {kind} takes no --tensor/--data-parallel-size")
    if kind == "llamacpp":
        if not Path(args.checkpoint).expanduser().is_file():
            raise ConfigError(f"--serve llamacpp needs a GGUF file; {args.checkpoint} is not one")
        if len(loras) > 1:
            raise ConfigError("--serve llamacpp serves at most one --lora")
    tool_parser = args.tool_parser or cls.default_tool_parser
    if tool_parser == "none":
        tool_parser = None
    from harness.models.openai_http import served_name

    base_name = checkpoint_name(args.checkpoint)
    if args.model and not loras:
        base_name = served_name(args.model)
    spec = cls(
        checkpoint=resolve_checkpoint(args.checkpoint),
        served_name=base_name,
        tool_parser=tool_parser,
        reasoning_parser=args.reasoning_parser,
        loras=loras,
        tensor_parallel_size=args.tensor_parallel_size,
        data_parallel_size=args.data_parallel_size,
        extra_args=list(args.serve_arg),
    )
    if isinstance(spec, CustomSpec):
        spec.template = args.serve_command
    return spec


def requested_model(args: argparse.Namespace, spec: ServerSpec) -> str:
    """The model name the run asks the server for (litellm style, ``openai/...``)."""
    if args.model:
        return args.model
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
    model: str | None = None
    replica_limits: dict[str, int] = field(default_factory=dict)

    @property
    def url(self) -> str | None:
        return None if self.port is None else f"http://{self.host}:{self.port}/v1"

    def configure(self, settings: Any) -> None:
        """Give the run's ModelSettings what the plan knows about the endpoint."""
        settings.replica_concurrency = dict(self.replica_limits)
        if self.spec is not None and self.url is not None:
            settings.served = ServedEndpoint(self.url, self.spec.identity(), self.spec.label())

    def manifest_entries(self) -> dict[str, Any]:
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
        print(f"starting the {self.spec.kind} server (log: {server.log_path})", file=sys.stderr)
        started = time.monotonic()
        with server:
            print(
                f"{self.spec.kind} server ready at {server.url} "
                f"after {time.monotonic() - started:.0f} s",
                file=sys.stderr,
            )
            yield server


def plan_endpoint(args: argparse.Namespace, check_installed: bool = True) -> EndpointPlan:
    """Resolve ``--serve``/``--model-config`` into the model and URL the run calls.

    Sets ``args.model`` (when a server or a model config names it) and
    ``args.api_base``; raises ConfigError on flags that do not go together, and
    (``check_installed``) when the server program is not installed here.
    """
    plan = EndpointPlan()
    model_config = getattr(args, "model_config", None)
    if model_config is not None:
        from harness.replicas import load_model_config

        if args.api_base or args.serve:
            raise ConfigError("--model-config replaces --api-base and --serve; give only one")
        config = load_model_config(Path(model_config))
        args.model = args.model or config.model
        args.api_base = config.api_base()
        plan.replica_limits = config.limits()
    if not args.serve:
        given = [flag for dest, flag in _SERVE_ONLY_FLAGS.items() if getattr(args, dest, None)]
        if given:
            raise ConfigError(f"{', '.join(given)} only apply with --serve")
        if not args.model:
            raise ConfigError("the following arguments are required: --model (or --serve)")
        return plan
    if args.api_base:
        raise ConfigError("--serve starts its own server; drop --api-base")
    spec = build_spec(args)
    if check_installed:
        spec.program()  # ConfigError now, before any work, if the server is not installed
    plan.spec = spec
    plan.port = free_port(plan.host)
    plan.start_timeout_s = args.serve_timeout
    plan.model = args.model = requested_model(args, spec)
    args.api_base = plan.url
    return plan
