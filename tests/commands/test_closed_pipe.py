"""A reader that leaves early (``harness leaderboard | head``) ends the command quietly."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from fake_runs import make_run, pass_fail_records


def _run_with_reader_gone(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Start ``harness ARGS`` and close the read end of its stdout before it writes.

    The child needs far longer to import Python than the parent needs to close the
    pipe, so every write the command makes meets a closed pipe.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    stderr = proc.stderr.read()
    proc.stderr.close()
    return subprocess.CompletedProcess(proc.args, proc.wait(), "", stderr)


@pytest.fixture
def run_dir(tmp_path):
    return make_run(
        tmp_path,
        "r",
        pass_fail_records("tau2", "airline", [True, False, True]),
        {"tau2": {"pass^1/airline": 2 / 3, "tau2_mean": 2 / 3}},
    )


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["md", "csv", "json"])
def test_leaderboard_into_a_closed_pipe_ends_quietly(run_dir, fmt):
    done = _run_with_reader_gone(["leaderboard", str(run_dir), "--format", fmt])
    assert done.returncode in (0, 141)
    assert done.stderr == ""


@pytest.mark.slow
def test_help_into_a_closed_pipe_ends_quietly():
    done = _run_with_reader_gone(["--help"])
    assert done.returncode in (0, 141)
    assert done.stderr == ""


@pytest.mark.slow
def test_an_open_pipe_still_gets_everything(run_dir):
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "leaderboard", str(run_dir)],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )
    assert done.returncode == 0 and done.stderr == ""
    assert "tau2" in done.stdout.lower()
