"""What to serve and how: one ``ServerSpec`` subclass per server kind.

A spec turns a checkpoint and its settings into the server's command line, and
names what the model under test is (``model_identity``: a run resumes only with
the same) and what decides its replies (``identity``: the response cache key).
Credentials among the server's arguments are masked wherever they are shown.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from harness.boundary.json_value import JsonObject
from harness.errors import ConfigError
from harness.models.redact import MASK, argument_secrets, is_secret_flag, scrub_secrets

# The server's output, in the run folder.
SERVER_LOG = "server.log"

# llama-cpp-python's chat format for OpenAI tools (see models/tool_placement.py).
CHATML_FUNCTION_CALLING = "chatml-function-calling"


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

    def model_identity(self) -> dict[str, object]:
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

    def identity(self) -> dict[str, object]:
        """What decides the replies besides the request (the response cache key)."""
        return {**self.model_identity(), "extra_args": mask_secret_args(self.extra_args)}

    def describe(self, host: str, port: int) -> JsonObject:
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
            "extra_args": list(mask_secret_args(self.extra_args)),
            "command": list(mask_secret_args(self.command(host, port))),
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
        args += ["--model_alias", self.served_name]
        # Defaults the user can replace with --serve-arg (e.g. a smaller window,
        # which also bounds how long one reply can run: llama-cpp-python's
        # chatml-function-calling writes tool arguments with no token cap).
        given = {arg.split("=", 1)[0] for arg in self.extra_args if arg.startswith("--")}
        if "--n_ctx" not in given:
            args += ["--n_ctx", str(self.context_tokens)]
        # By default a new request interrupts the one being generated; a run
        # sends many at once.
        if "--interrupt_requests" not in given:
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

    def identity(self) -> dict[str, object]:
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
