"""The Ray executor: a sweep, and a run in parts, on a local Ray instance give the
local executor's results (a real two-node cluster: test_ray_cluster.py).

Needs the optional extra (``uv sync --extra ray``); without Ray installed these
tests are skipped, and test_sweep.py checks the one-line error instead.
"""

from __future__ import annotations

import json
import os

import pytest
from support import without_timing
from test_sweep import add_checkpoint, sweep

from harness.executors.ray import UV_RUN_SWITCH
from harness.store.run_store import read_records

# Under `uv run` (as `make test` runs pytest) Ray would start its workers with
# `uv run` in a copy of the working directory; the executor turns that off before
# Ray's first import (Ray reads the switch then), so this test does too.
os.environ.setdefault(UV_RUN_SWITCH, "0")
ray = pytest.importorskip("ray", reason="the Ray executor needs the 'ray' extra")


@pytest.fixture
def training_run(toy_suite, tmp_path):
    for step, skill in ((100, 0.3), (200, 0.9)):
        add_checkpoint(tmp_path, step, skill)
    return toy_suite


@pytest.fixture
def local_ray(training_run):
    """A Ray instance on this machine with two logical GPUs (no hardware needed:
    Ray only counts them and sets CUDA_VISIBLE_DEVICES for each task)."""
    ray.init(num_cpus=2, num_gpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.slow
def test_a_ray_sweep_equals_the_local_sweep_and_reserves_a_gpu_per_job(
    training_run, local_ray, tmp_path
):
    assert sweep(training_run, tmp_path / "local", "--quiet") == 0
    ray_args = ["--quiet", "--executor", "ray", "--parts", "2", "--gpus-per-job", "1"]
    assert sweep(training_run, tmp_path / "ray", *ray_args) == 0
    for step in (100, 200):
        local = read_records(tmp_path / "local" / f"step_{step}" / "samples.jsonl").latest
        remote = read_records(tmp_path / "ray" / f"step_{step}" / "samples.jsonl").latest
        assert len(remote) == 8
        assert {k: without_timing(r) for k, r in remote.items()} == {
            k: without_timing(r) for k, r in local.items()
        }
        local_scores = json.loads((tmp_path / "local" / f"step_{step}" / "scores.json").read_text())
        ray_scores = json.loads((tmp_path / "ray" / f"step_{step}" / "scores.json").read_text())
        assert ray_scores["benchmarks"] == local_scores["benchmarks"]
        for part in ("1-of-2", "2-of-2"):
            log = (tmp_path / "ray" / ".parts" / f"step_{step}" / part / "server.log").read_text()
            devices = log.split("CUDA_VISIBLE_DEVICES=", 1)[1].split("\n", 1)[0]
            assert devices in ("0", "1"), log  # each job held one of the two GPUs


@pytest.fixture
def ray_for_runs(toy_suite):
    """A local Ray started after the toy adapter is registered (its workers inherit it)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield toy_suite
    ray.shutdown()


@pytest.mark.slow
def test_a_run_in_parts_on_ray_equals_the_local_run_and_a_changed_rerun_is_one_line(
    ray_for_runs, tmp_path, capsys
):
    from fake_llm_server import toy_agent

    from harness.cli import main
    from harness.testing.fake_server import FakeServer

    with FakeServer(handler=toy_agent(0.6)) as server:
        argv = ["run", "--suite", str(ray_for_runs), "--model", "openai/fake-model", "--quiet"]
        argv += ["--api-base", server.url, "--no-cache"]
        assert main([*argv, "--out", str(tmp_path / "local")]) == 0
        ray_args = ["--out", str(tmp_path / "ray"), "--executor", "ray"]
        assert main([*argv, *ray_args, "--parts", "2"]) == 0
        local = read_records(tmp_path / "local" / "samples.jsonl").latest
        remote = read_records(tmp_path / "ray" / "samples.jsonl").latest
        assert {k: without_timing(r) for k, r in remote.items()} == {
            k: without_timing(r) for k, r in local.items()
        }
        capsys.readouterr()
        # The parts refuse to resume with another temperature: the error each task
        # raised is the command's one line, exit code 2.
        assert main([*argv, *ray_args, "--parts", "2", "--temperature", "0.5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len([line for line in err if line.startswith("harness: error:")]) == 1, err
    assert "holds a run with different sampling" in err[-1], err
