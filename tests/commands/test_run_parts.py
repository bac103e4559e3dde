"""``harness run --parts K``: K shards as jobs, merged; resumed by a rerun; refusals.

Here the parts run on the local executor (one after another in this process);
the Ray executor runs the same jobs (tests/serving/test_ray_cluster.py, on a
real two-node cluster). The attempt log the Ray tasks keep, and the wait for a
lost attempt's lock, are tested here without Ray.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
from fake_llm_server import toy_agent
from support import without_timing

from harness.cli import main
from harness.errors import ConfigError
from harness.executors.base import Job, part_folder
from harness.executors.ray import (
    ATTEMPTS_FILE,
    MAX_RETRIES,
    RayExecutor,
    attempts_of,
    retried_line,
    wait_for_run_folder,
)
from harness.store.inputs import read_inputs
from harness.store.run_store import LOCK, read_records
from harness.testing.fake_server import FakeServer


@pytest.fixture
def server():
    with FakeServer(handler=toy_agent(0.6)) as running:
        yield running


def run(suite: Path, server: FakeServer, out: Path, *extra: str) -> int:
    argv = ["run", "--suite", str(suite), "--model", "openai/fake-model"]
    argv += ["--api-base", server.url, "--trials", "2", "--quiet", "--no-cache", "--out", str(out)]
    return main([*argv, *extra])


def comparable(run_dir: Path) -> dict:
    latest = read_records(run_dir / "samples.jsonl").latest
    return {key: without_timing(record) for key, record in latest.items()}


def keys_written(part: Path) -> Counter:
    written: Counter = Counter()
    for line in (part / "samples.jsonl").read_text().splitlines():
        try:
            written[json.loads(line)["key"]] += 1
        except ValueError:
            continue  # a torn line
    return written


def test_a_run_in_parts_equals_the_whole_run_and_a_rerun_resumes_its_parts(
    toy_suite, server, tmp_path, capfd
):
    # capfd: the parts run in processes of their own, and say what they did on fd 2.
    assert run(toy_suite, server, tmp_path / "whole") == 0
    out = tmp_path / "parts"
    assert run(toy_suite, server, out, "--parts", "3") == 0
    err = capfd.readouterr().err
    assert f"run: 3 part(s) on the local executor, into {out.resolve()}" in err
    assert f"{out.resolve()}: merged 3 shard(s), 16 records (0 infrastructure" in err
    assert comparable(out) == comparable(tmp_path / "whole")
    whole_scores = json.loads((tmp_path / "whole" / "scores.json").read_text())
    assert json.loads((out / "scores.json").read_text())["benchmarks"] == whole_scores["benchmarks"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["shard"] == "merged from 1/3, 2/3, 3/3"
    # Each sample's input, once, as the whole run kept it.
    assert read_inputs(out) == read_inputs(tmp_path / "whole") and len(read_inputs(out)) == 8
    parts = [part_folder(out, index, 3) for index in (1, 2, 3)]
    assert parts[0] == tmp_path / ".parts" / "parts" / "1-of-3"
    assert sum(len(keys_written(part)) for part in parts) == 16
    # Part 2 was cut short, its last line torn: a rerun finishes it, merges again,
    # and writes no pair twice.
    samples = parts[1] / "samples.jsonl"
    lines = samples.read_text().splitlines()
    samples.write_text(lines[0] + "\n" + lines[1][:25])
    assert run(toy_suite, server, out, "--parts", "3") == 0
    err = capfd.readouterr().err
    assert f"{parts[1]}: {len(lines) - 1} ran, 1 already done" in err
    assert f"{parts[0]}: 0 ran, " in err
    assert set(keys_written(parts[1]).values()) == {1}
    assert len(keys_written(parts[1])) == len(lines)
    assert comparable(out) == comparable(tmp_path / "whole")


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--parts", "0"], "--parts must be positive"),
        (["--parts", "2", "--shard", "1/2"], "--parts splits the run into shards itself"),
        (
            ["--parts", "2", "--serve", "custom", "--serve-command", "x {port}"],
            "--serve starts a server inside the run, which its parts",
        ),
        (
            ["--executor", "ray", "--serve", "custom", "--serve-command", "x {port}"],
            "--serve starts a server inside the run, which its parts",
        ),
    ],
)
def test_a_run_that_cannot_be_split_is_one_line_and_exit_code_2(
    toy_suite, server, tmp_path, capsys, extra, message
):
    assert run(toy_suite, server, tmp_path / "out", *extra) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "out").exists() and not (tmp_path / ".parts").exists()


def test_the_ray_executor_without_ray_is_one_line_before_any_work(
    toy_suite, server, tmp_path, capsys, monkeypatch
):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    assert run(toy_suite, server, tmp_path / "out", "--executor", "ray", "--parts", "2") == 2
    out, err = capsys.readouterr()
    assert (out + err).strip().splitlines() == [
        "harness: error: --executor ray needs Ray: pip install 'harness[ray]' (or pip install ray)"
    ]
    assert not (tmp_path / "out").exists() and not (tmp_path / ".parts").exists()
    assert not server.chat_requests


def test_parts_are_not_merged_over_a_run_that_is_not_a_merge(toy_suite, server, tmp_path, capsys):
    out = tmp_path / "out"
    assert run(toy_suite, server, out) == 0
    requests = len(server.chat_requests)
    capsys.readouterr()
    assert run(toy_suite, server, out, "--parts", "2") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "holds a run that is not a merge" in err, err
    assert len(server.chat_requests) == requests and not (tmp_path / ".parts").exists()


def test_without_parts_the_local_run_is_the_plain_run(toy_suite, server, tmp_path, capsys):
    """The default path is run_suite itself: no part folders, no executor line."""
    assert run(toy_suite, server, tmp_path / "out") == 0
    err = capsys.readouterr().err
    assert "part(s) on the" not in err and not (tmp_path / ".parts").exists()
    assert f"{tmp_path / 'out'}: 16 ran, 0 already done" in err
    assert not (tmp_path / "out" / ATTEMPTS_FILE).exists()


# The attempt log of Ray tasks (harness/executors/ray.py), without Ray.


def _job(tmp_path: Path, name: str = "part 2/2") -> Job:
    from harness.config.run_config import RunConfig

    folder = tmp_path / "2-of-2"
    folder.mkdir(exist_ok=True)
    return Job(name, "", folder, RunConfig(suite="toy"))


def _attempt(run: str, job: str, node: str, pid: int, records: int) -> str:
    entry = {"run": run, "job": job, "node": node, "pid": pid, "records": records}
    return json.dumps(entry) + "\n"


def test_the_retried_line_names_the_lost_attempts_of_this_invocation_only(tmp_path):
    job = _job(tmp_path)
    (job.run_dir / ATTEMPTS_FILE).write_text(
        _attempt("earlier", "part 2/2", "c" * 56, 7, 0)  # an earlier command's attempt
        + _attempt("now", "part 2/2", "a" * 56, 11, 0)
        + '{"run": "now", "job": "part 2/2", "no'  # torn by a kill mid-write
        + "\n"
        + _attempt("now", "part 2/2", "b" * 56, 12, 5)
    )
    assert [a.pid for a in attempts_of(job, "now")] == [11, 12]
    assert retried_line([job], "now") == (
        "ray: retried 1 job(s) whose worker died: part 2/2: 1 attempt(s) lost with their "
        "worker on node aaaaaaaa (pid 11); attempt 2 on node bbbbbbbb resumed with 5 "
        "record(s) already written"
    )
    assert retried_line([job], "earlier") is None  # one attempt: nothing was retried
    assert retried_line([_job(tmp_path, "part 1/2")], "now") is None


def test_an_attempt_waits_until_the_lost_attempt_lets_go_of_the_run_folder(tmp_path):
    wait_for_run_folder(tmp_path, wait_s=5)  # no lock file: at once
    (tmp_path / LOCK).write_text("")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time; handle = open(sys.argv[1], 'w'); "
            "fcntl.flock(handle, fcntl.LOCK_EX); print('held', flush=True); time.sleep(1.0)",
            str(tmp_path / LOCK),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        started = time.monotonic()
        wait_for_run_folder(tmp_path, wait_s=30)
        waited = time.monotonic() - started
        assert holder.wait(timeout=30) == 0  # it had exited when the wait ended
        assert 0.5 < waited < 10
    finally:
        holder.kill()
        holder.wait()


class _TaskError(Exception):
    """Stands for ray.exceptions.RayTaskError: an error the task itself raised."""

    def __init__(self, cause: Exception):
        super().__init__(str(cause))
        self.cause = cause


class _WorkerLost(Exception):
    """Stands for a ray.exceptions.RayError of a task whose worker died too often."""


def _ray_raising(error: Exception) -> SimpleNamespace:
    def get(future: object) -> object:
        raise error

    return SimpleNamespace(
        get=get, exceptions=SimpleNamespace(RayTaskError=_TaskError, RayError=_WorkerLost)
    )


def test_what_a_ray_task_ended_with_becomes_the_jobs_result_or_the_commands_error(tmp_path):
    job = _job(tmp_path)
    lost = RayExecutor._result(_ray_raising(_WorkerLost("the worker died\ndetails")), job, None)
    assert lost.exit_code == 1 and lost.error == (
        f"lost its Ray worker {MAX_RETRIES + 1} times (the worker died); rerun to resume"
    )
    with pytest.raises(ConfigError, match="^holds a run with different sampling$"):
        RayExecutor._result(
            _ray_raising(_TaskError(ConfigError("holds a run with different sampling"))), job, None
        )
    with pytest.raises(_TaskError):  # a bug in a task: its traceback is shown
        RayExecutor._result(_ray_raising(_TaskError(KeyError("x"))), job, None)
