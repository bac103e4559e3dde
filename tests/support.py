"""What tests in every folder share: where the tests are, the toy suite, the
perfect toy agent a fake server plays, and the harness as a child process."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from fake_llm_server import toy_agent

# This folder: the helper modules (toy_adapter.py, fake_llm_server.py...) that
# harness processes started by a test import through PYTHONPATH.
TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent

# The toy adapter (toy_adapter.py) under the benchmark name its suites use.
TOY_ADAPTER = "toy=toy_adapter:ToyAdapter"
TOY_SUITE = "name: toy\nentries:\n  - benchmark: toy\n    subsets: [easy, hard]\n"

# What in a record depends on the clock.
TIMING = {"started_at", "latency_s", "wall_time_s"}

# A fake server's handler that solves every toy task: add(n=target), then an answer.
toy_reply = toy_agent(1.0)


def harness_process(argv: list[str], **popen: object) -> subprocess.Popen:
    """``python -m harness.cli ARGV`` as a child process, its output piped as text
    (``popen`` overrides, e.g. ``stdout=subprocess.DEVNULL``)."""
    options: dict = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    # Ctrl-C as a terminal delivers it: a shell's background job (the tests run
    # with `&`, under nohup) starts with SIGINT ignored, and a child would inherit that.
    options["preexec_fn"] = _default_sigint
    options.update(popen)
    return subprocess.Popen([sys.executable, "-m", "harness.cli", *argv], **options)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_lines(path: Path, count: int, timeout_s: float = 60.0) -> bool:
    """Whether ``path`` holds at least ``count`` lines within ``timeout_s`` (a run's
    samples.jsonl while it is being written)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and len(path.read_text().splitlines()) >= count:
            return True
        time.sleep(0.02)
    return False


def without_timing(value):
    """A record with what depends on the clock left out (everything else of two
    equal runs must match)."""
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value
