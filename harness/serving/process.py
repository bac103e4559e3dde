"""A server as a child process for the length of a ``with`` block.

A ``ManagedServer`` runs a command on a free port of 127.0.0.1, writes its
output to a log (credentials scrubbed), waits until it lists the served model on
``/v1/models``, and stops it on every way out of the block: success, error,
Ctrl-C and SIGTERM (handled like Ctrl-C). The child gets a process group of its
own, so that stopping it also stops the worker processes it started (vLLM's
engine and tensor-parallel workers); stopping means SIGTERM to the group, a grace
period, then SIGKILL. On Linux the child is also told to receive SIGTERM if the
harness itself dies (even by SIGKILL), so no server outlives its run.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO

from harness.boundary.interrupts import sigterm_as_interrupt
from harness.config.run_config import DEFAULT_START_TIMEOUT_S
from harness.errors import ConfigError
from harness.models.redact import scrub_secrets
from harness.models.urls import join_url
from harness.serving.specs import mask_secret_args, secret_values

HOST = "127.0.0.1"
DEFAULT_STOP_TIMEOUT_S = 30.0
LOG_TAIL_LINES = 25
# The server.log line that records a started server's process group (its pid).
STARTED_MARK = "=== harness: server process group "


def started_groups(log_text: str) -> list[int]:
    """The process groups a server.log records as started (STARTED_MARK lines)."""
    return [
        int(line[len(STARTED_MARK) :])
        for line in log_text.splitlines()
        if line.startswith(STARTED_MARK) and line[len(STARTED_MARK) :].isdigit()
    ]


class ServerError(ConfigError):
    """A server that could not be started, never became ready, or died."""


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


def _die_with_parent() -> Callable[[], None] | None:
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

    def __init__(self, stream: IO[bytes] | None, log_path: Path, secrets: list[str]):
        self.tail: deque[str] = deque(maxlen=LOG_TAIL_LINES)
        self._stream = stream
        self._log_path = log_path
        self._secrets = secrets
        self._thread = threading.Thread(target=self._pump, name="server-log", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _pump(self) -> None:
        if self._stream is None:  # started without a pipe: nothing to copy
            return
        stream = self._stream
        with self._log_path.open("a", encoding="utf-8") as log:
            for raw in iter(stream.readline, b""):
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
    _signals: AbstractContextManager[None] | None = field(default=None, init=False)
    _stopping: bool = field(default=False, init=False)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def __enter__(self) -> ManagedServer:
        signals = self._signals = sigterm_as_interrupt()
        signals.__enter__()
        try:
            self.start()
            self.wait_until_ready()
        except BaseException:
            self.stop()
            signals.__exit__(None, None, None)
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            code = self.process.poll() if self.process is not None else None
            self.stop()
            if code is not None and exc_type is None:
                raise self._error(f"exited with code {code} during the run")
        finally:
            if self._signals is not None:
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
        # Its process group, for whoever must end a server its harness could not
        # (CI after a killed test tier): the pid is the group's id (a new session).
        with self.log_path.open("a", encoding="utf-8") as log:
            log.write(f"{STARTED_MARK}{self.process.pid}\n")
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

        from harness.models.probes import open_probe

        try:
            with open_probe(join_url(self.url, "models"), timeout=2.0) as response:
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
