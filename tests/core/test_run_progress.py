"""A run says what it is doing: progress lines without a terminal, each kind of
error once when first seen and counted at the end, nothing with --quiet."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import TESTS, harness_process, wait_for_lines

from harness.config.run_config import RunConfig
from harness.run.error_kinds import classify
from harness.run.progress import (
    DEFAULT_INTERVAL_S,
    STEP_MIN_GAP_S,
    ProgressReporter,
    RunProgress,
)
from harness.store.records import Record

MODEL = ["--model", "openai/fake-model", "--no-cache", "--local-server", "no"]


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_fake_server(latency: float) -> tuple[subprocess.Popen, str]:
    """tests/fake_llm_server.py as a process of its own; its /v1 base URL."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(TESTS / "fake_llm_server.py"), "--port", str(port)]
        + ["--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    for line in server.stdout:
        if line.startswith("listening on"):
            return server, f"http://127.0.0.1:{port}/v1"
    raise AssertionError("the fake server did not start")


def run_to_log(suite: Path, url: str, out: Path, log: Path, *extra: str) -> subprocess.Popen:
    """``harness run`` with stdout and stderr to one file (as under nohup or Slurm)."""
    argv = ["run", "--suite", str(suite), *MODEL, "--api-base", url, "--out", str(out), *extra]
    handle = log.open("w")
    return harness_process(argv, stdout=handle, stderr=subprocess.STDOUT)


def test_a_server_stopped_mid_run_is_said_once_when_it_happens_and_in_the_summary(
    toy_suite, tmp_path
):
    server, url = start_fake_server(latency=0.3)
    log, out = tmp_path / "run.log", tmp_path / "r"
    try:
        run = run_to_log(
            toy_suite, url, out, log,
            "--concurrency", "1", "--max-attempts", "2", "--retry-delay", "0.01",
        )  # fmt: skip
        assert wait_for_lines(out / "samples.jsonl", 2)
    finally:
        server.kill()
        server.wait()
    assert run.wait(timeout=120) == 1
    text = log.read_text()
    cause = f"connection refused at {url}/chat/completions — is the server up?"
    first_seen = [line for line in text.splitlines() if line.startswith("error (")]
    assert len([line for line in first_seen if cause in line]) == 1, text
    # Said when it happened: before the run's summary.
    summary_at = text.index(f"{out}: ")
    assert text.index(cause) < summary_at
    refused = [line for line in text[summary_at:].splitlines() if cause in line]
    assert len(refused) == 1 and re.match(r"errors: \d+ × connection refused", refused[0])
    assert all(len(line) <= 100 for line in refused)


def elapsed_seconds(line: str) -> int:
    h, m, s = re.search(r"\) in (\d+):(\d\d):(\d\d)", line).groups()
    return 3600 * int(h) + 60 * int(m) + int(s)


def test_without_a_terminal_a_slow_run_logs_progress_lines_every_interval(toy_suite, tmp_path):
    server, url = start_fake_server(latency=0.8)
    log = tmp_path / "run.log"
    try:
        run = run_to_log(
            toy_suite, url, tmp_path / "r", log,
            "--concurrency", "1", "--ids", "easy-0,easy-1,easy-2", "--progress-every", "1",
        )  # fmt: skip
        assert run.wait(timeout=120) == 0
    finally:
        server.kill()
        server.wait()
    lines = [line for line in log.read_text().splitlines() if line.startswith("progress: ")]
    # 3 samples of ~1.6 s: a line a second besides those at each 10%.
    assert len(lines) >= 4, lines
    times = [elapsed_seconds(line) for line in lines]
    assert times == sorted(times) and times[0] <= 2
    assert all(later - earlier <= 2 for earlier, later in zip(times, times[1:], strict=False))
    assert any(line.startswith("progress: 3/3 (100%)") for line in lines)


def test_the_default_interval_is_30_seconds():
    assert DEFAULT_INTERVAL_S == 30.0 == RunConfig(suite="").progress_interval
    from harness.cli import build_parser

    args = build_parser().parse_args(["run", "--suite", "smoke", "--model", "oracle"])
    assert args.progress_every == 30.0
    assert ProgressReporter(RunProgress(1)).interval_s == 30.0


def record(key: str, status: str = "ok", message: str = "") -> Record:
    error = {"type": "ModelError", "message": message} if message else None
    return Record(key=key, benchmark="b", subset="s", sample_id=key, trial=0, seed=0,
                  status=status, error=error)  # fmt: skip


REFUSED = "ClientConnectorError at http://h:1/v1/chat/completions: Cannot connect to host h:1"


@pytest.mark.parametrize("enabled", [True, False])
def test_each_error_kind_is_said_once_and_quiet_says_nothing(enabled, capsys):
    now = [0.0]
    progress = RunProgress(total=20, clock=lambda: now[0])
    reporter = ProgressReporter(progress, enabled=enabled, terminal=False)
    for i in range(20):
        now[0] += 3.0  # a tenth of the work every 6 s
        reporter.started(f"k{i}")
        failed = i % 2 == 1
        message = REFUSED if i % 4 == 1 else "HTTP 500: boom" if failed else ""
        reporter.finished(record(f"k{i}", "infra_error" if failed else "ok", message))
    err = capsys.readouterr().err.splitlines()
    assert progress.done == 20 and progress.errors.total == 10
    assert [t.count for t in progress.errors.kinds.values()] == [5, 5]
    if not enabled:
        assert err == []
        return
    firsts = [line for line in err if line.startswith("error (")]
    assert firsts == [
        "error (connection refused, first seen in k1): connection refused at "
        "http://h:1/v1/chat/completions — is the server up?",
        "error (HTTP 500, first seen in k3): server error (HTTP 500) — see the server's log",
    ]
    # A line at each tenth of the work (the ticker's lines need the event loop).
    steps = [line for line in err if line.startswith("progress: ")]
    assert [line.split(" ")[1] for line in steps] == [f"{2 * i}/20" for i in range(1, 11)]
    assert steps[-1].endswith("10 errors (connection refused 5, HTTP 500 5)")
    assert progress.errors.summary_lines() == [
        "errors: 5 × connection refused at http://h:1/v1/chat/completions — is the server up?",
        "errors: 5 × server error (HTTP 500) — see the server's log",
    ]


def test_error_kinds_name_their_likely_cause():
    def cause(message: str, api_base: str | None = None) -> str:
        return classify({"type": "ModelError", "message": message}, api_base).cause

    assert cause("HTTP 404: Not Found", "http://127.0.0.1:8765") == (
        "HTTP 404 at http://127.0.0.1:8765 — does --api-base need /v1?"
    )
    assert "is the model name right" in cause("HTTP 404: x", "http://127.0.0.1:8765/v1")
    assert cause("no reply within 30 s", "http://h/v1").startswith(
        "no reply within 30 s at http://h/v1"
    )
    assert "closed the connection" in cause("ServerDisconnectedError at http://h/v1/x: gone")
    assert cause("KeyError: 'x'") == "ModelError: KeyError: 'x'"


def test_the_rate_and_eta_come_from_recent_throughput():
    now = [0.0]
    progress = RunProgress(total=100, clock=lambda: now[0])
    for i in range(10):  # 10 samples in the first 10 s
        now[0] += 1.0
        progress.finished(record(f"a{i}"))
    assert progress.rate() == pytest.approx(1.0)
    now[0] += 200.0  # then nothing for 200 s: no recent throughput, no ETA
    assert progress.rate() is None and progress.eta_s() is None
    for i in range(30):  # 30 samples in the next 60 s
        now[0] += 2.0
        progress.finished(record(f"b{i}"))
    assert progress.rate() == pytest.approx(30 / 120)
    assert progress.eta_s() == pytest.approx(60 / (30 / 120))
    progress.started("b/s/x#0")
    now[0] += 5
    assert "in flight: 1 samples, 0 calls (oldest b/s/x#0, 0:00:05)" in progress.in_flight_text()


def test_the_terminal_panel_shows_counts_in_flight_and_errors_with_the_latest_message():
    from rich.console import Console

    from harness.run.progress import _Panel

    progress = RunProgress(total=4)
    progress.started("b/s/a#0")
    progress.finished(record("b/s/a#0", "infra_error", REFUSED))
    progress.started("b/s/b#0")
    progress.finished(record("b/s/b#0", "infra_error", REFUSED.replace("h:1", "h:2\x1b[2J")))
    progress.started("b/s/c#0")
    console = Console(record=True, width=100, force_terminal=False)
    console.print(_Panel(progress))
    lines = console.export_text().splitlines()
    assert "2/4 (50%)" in lines[0]
    assert lines[1].startswith("in flight: 1 samples, 0 calls (oldest b/s/c#0")
    # The latest message of the kind, its control characters shown, not acted on.
    assert lines[2].startswith(
        "  connection refused × 2: ClientConnectorError at http://h:2\\x1b[2J"
    )
    assert all(len(line) <= 100 for line in lines)


def test_the_smoke_demos_lines_on_stderr_fit_100_columns(tmp_path, monkeypatch, capsys):
    from harness.cli import main

    monkeypatch.chdir(tmp_path)  # the default run folder: results/smoke__oracle__plain
    assert main(["run", "--suite", "smoke", "--model", "oracle"]) == 0
    err = capsys.readouterr().err.splitlines()
    head = "results/smoke__oracle__plain: 44 ran, 0 already done, 44 ok in "
    summary = next(i for i, line in enumerate(err) if line.startswith(head))
    assert err[summary + 1].startswith("  0 infrastructure errors, 0 scoring errors; ")
    assert max(len(line) for line in err) <= 100, [line for line in err if len(line) > 100]


def test_tenths_are_logged_at_most_one_per_gap(capsys):
    """A tenth waits STEP_MIN_GAP_S after the previous line: a 2 s run logs none, a
    10 s run one every 5 s."""

    def tenths(seconds_per_sample: float) -> list[str]:
        now = [0.0]
        progress = RunProgress(total=10, clock=lambda: now[0])
        reporter = ProgressReporter(progress, terminal=False)
        for i in range(10):
            now[0] += seconds_per_sample
            reporter.finished(record(f"k{i}"))
        return [line.split(" ")[1] for line in capsys.readouterr().err.splitlines()]

    assert STEP_MIN_GAP_S == 5.0
    assert tenths(0.2) == []
    assert tenths(1.0) == ["5/10", "10/10"]
