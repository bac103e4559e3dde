"""A real Ray cluster on this machine: a sweep, and a run split into parts whose
worker node dies mid-run.

Two ``ray start --block`` processes make two nodes (a head and a worker, one CPU
each, each with a resource of its own, each with its own temp dir), as two
machines would. ``harness sweep --executor ray`` and ``harness run --executor ray
--parts 2`` connect to them through RAY_ADDRESS, as separate processes, against
fake OpenAI-compatible servers on 127.0.0.1. While the run's two parts are
running, one on each node, the worker node's raylet is killed: Ray runs its part
again on the head, which resumes that part's folder. The merged run must equal a
one-process run: the same (sample, trial) keys, each written once, the same scores.

Ray turns 127.0.0.1 into the machine's network address whenever a second node
joins, so the nodes use other loopback addresses (127.0.0.2, 127.0.0.3): every
connection stays on loopback.

Needs the optional extra (``uv sync --extra ray``, as CI installs it); skipped without.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pytest
from fake_llm_server import toy_agent
from support import harness_process, without_timing
from test_sweep import TEMPLATE, add_checkpoint

from harness.cli import main
from harness.executors.base import part_folder
from harness.executors.ray import ATTEMPTS_FILE, UV_RUN_SWITCH
from harness.store.run_store import read_records
from harness.testing.fake_server import FakeServer

os.environ.setdefault(UV_RUN_SWITCH, "0")
pytest.importorskip("ray", reason="the Ray executor needs the 'ray' extra")

pytestmark = pytest.mark.slow

RAY = Path(sys.executable).parent / "ray"
HEAD_IP, WORKER_IP = "127.0.0.2", "127.0.0.3"
START_TIMEOUT_S = 60.0  # a node on 2 busy cores starts in 5-15 s
RUN_TIMEOUT_S = 120.0


def children() -> dict[int, list[int]]:
    """Every process's children, from /proc."""
    found: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        found.setdefault(parent, []).append(int(entry.name))
    return found


def descendants(pid: int) -> list[int]:
    tree, todo, found = children(), [pid], []
    while todo:
        for child in tree.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def command_line(pid: int) -> list[str]:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_text().split("\0")
    except OSError:
        return []


def alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@dataclass
class Node:
    """One ``ray start --block``: it stays in the foreground with the node's
    processes (GCS, raylet, agents, workers) below it, in its own session."""

    name: str
    process: subprocess.Popen
    log: Path

    def wait_started(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while "Ray runtime started" not in self.log.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the {self.name} node did not start:\n{self.log.read_text()}")
            time.sleep(0.2)

    def raylet(self) -> tuple[int, str]:
        """The pid and node id of this node's raylet."""
        for pid in descendants(self.process.pid):
            argv = command_line(pid)
            if argv and Path(argv[0]).name == "raylet":
                node_id = next(a.split("=", 1)[1] for a in argv if a.startswith("--node_id="))
                return pid, node_id
        raise AssertionError(f"no raylet under the {self.name} node")

    def kill(self) -> None:
        """SIGKILL to the node's process group (every process it started is in
        it, also once ``ray start`` itself has exited); ``ray stop`` would stop
        every Ray on the machine, not just this one."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=30)


@dataclass
class Cluster:
    root: Path
    port: int
    nodes: list[Node] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"{HEAD_IP}:{self.port}"

    def start(self, name: str, *args: str) -> Node:
        log = self.root / f"{name}.log"
        process = subprocess.Popen(
            [str(RAY), "start", *args, "--block", "--disable-usage-stats"]
            + ["--num-cpus", "1", "--resources", json.dumps({f"{name}_node": 1})]
            + ["--temp-dir", str(self.root / name)],
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        node = Node(name, process, log)
        self.nodes.append(node)
        return node


def free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def cluster():
    """One cluster for the module (a node takes 5-15 s to start here); the test
    that kills its worker node is the module's last."""
    patch = pytest.MonkeyPatch()
    # Ray turns token authentication on when it finds ~/.ray/auth_token (which any
    # local ray.init() writes); the nodes and the harness processes must agree,
    # whatever that folder holds.
    patch.setenv("RAY_AUTH_MODE", "disabled")
    patch.setenv(UV_RUN_SWITCH, "0")
    # Short: Ray's sockets live under the temp dir, and a socket path has at most
    # 107 characters (pytest's tmp_path is too long).
    root = Path(tempfile.mkdtemp(prefix="hr-", dir="/tmp"))
    found = Cluster(root, free_port(HEAD_IP))
    try:
        head = found.start(
            "head",
            "--head",
            "--port",
            str(found.port),
            "--node-ip-address",
            HEAD_IP,
            "--include-dashboard",
            "false",
        )
        head.wait_started()
        worker = found.start("worker", "--address", found.address, "--node-ip-address", WORKER_IP)
        worker.wait_started()
        yield found
    finally:
        for node in reversed(found.nodes):
            node.kill()
        shutil.rmtree(root, ignore_errors=True)
        patch.undo()


@pytest.fixture
def driver_env(toy_suite, cluster, monkeypatch):
    """What the harness processes the test starts inherit: the toy adapter
    (toy_suite) and the cluster's address."""
    monkeypatch.setenv("RAY_ADDRESS", cluster.address)
    return toy_suite


def start(argv: list[str], log: Path) -> subprocess.Popen:
    """The harness as a process, its stderr to ``log`` (a pipe nobody reads
    while it runs could fill up and stop it)."""
    return harness_process(argv, stdout=subprocess.DEVNULL, stderr=log.open("w"))


def finish(process: subprocess.Popen, log: Path, what: str) -> str:
    try:
        process.wait(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError(f"{what} did not finish:\n{log.read_text()}") from None
    err = log.read_text()
    assert process.returncode == 0, f"{what} exited with {process.returncode}:\n{err}"
    return err


def records(run_dir: Path) -> dict:
    return read_records(run_dir / "samples.jsonl").latest


def comparable(run_dir: Path) -> dict:
    return {k: without_timing(r) for k, r in records(run_dir).items()}


def without_cache_counts(value):
    """A record without its counts of replies taken from the response cache."""
    if isinstance(value, dict):
        return {k: without_cache_counts(v) for k, v in value.items() if k != "cached_calls"}
    if isinstance(value, list):
        return [without_cache_counts(v) for v in value]
    return value


def keys_written(part: Path) -> Counter:
    """How often each (sample, trial) was written to a part's samples.jsonl
    (a line torn by a kill is not a record, and is skipped)."""
    written: Counter = Counter()
    samples = part / "samples.jsonl"
    for line in samples.read_text().splitlines() if samples.is_file() else []:
        try:
            written[json.loads(line)["key"]] += 1
        except ValueError:
            continue
    return written


def running_on(node: str, parts: list[Path], records: int, process, log: Path) -> dict:
    """The attempt of a part that runs on ``node``, once its part has written
    ``records`` records (with the folder of its part as ``part``)."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline and process.poll() is None:
        for part in parts:
            try:
                lines = (part / ATTEMPTS_FILE).read_text().splitlines()
                attempt = json.loads(lines[0])
            except (OSError, IndexError, ValueError):
                continue  # not started yet, or its line is being written
            if attempt["node"] == node and len(keys_written(part)) >= records:
                return {**attempt, "part": part}
        time.sleep(0.05)
    raise AssertionError(f"no part wrote {records} records on node {node}:\n{log.read_text()}")


def test_a_sweep_on_a_two_node_cluster_equals_the_local_sweep(driver_env, cluster, tmp_path):
    suite = driver_env
    for step, skill in ((100, 0.3), (200, 0.9)):
        add_checkpoint(tmp_path, step, skill)
    argv = ["sweep", "--checkpoints", str(tmp_path / "ckpts" / "step_*"), "--suite", str(suite)]
    argv += ["--serve", "custom", "--serve-command", TEMPLATE, "--no-cache", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "local")]) == 0
    log = tmp_path / "sweep.err"
    process = start([*argv, "--out", str(tmp_path / "ray"), "--executor", "ray"], log)
    err = finish(process, log, "the Ray sweep")
    assert "sweep: 2 checkpoint(s), 2 job(s) on the ray executor" in err
    nodes = set()
    for step in (100, 200):
        folder = tmp_path / "ray" / f"step_{step}"
        assert comparable(folder) == comparable(tmp_path / "local" / f"step_{step}")
        assert len(comparable(folder)) == 8
        [attempt] = [json.loads(line) for line in (folder / ATTEMPTS_FILE).read_text().splitlines()]
        nodes.add(attempt["node"])
    # One job on each node (each has one CPU).
    assert nodes == {node.raylet()[1] for node in cluster.nodes}


def test_a_part_whose_worker_node_dies_is_retried_and_resumed_without_a_duplicate(
    driver_env, cluster, tmp_path
):
    suite = driver_env
    with FakeServer(handler=toy_agent(0.6), latency=0.25) as server:
        argv = ["run", "--suite", str(suite), "--model", "openai/fake-model"]
        argv += ["--api-base", server.url, "--trials", "3", "--quiet"]
        # The reference: one process, no parts (concurrency does not change records).
        assert main([*argv, "--out", str(tmp_path / "whole"), "--concurrency", "8"]) == 0
        out = tmp_path / "run"
        command = [*argv, "--out", str(out), "--concurrency", "1", "--executor", "ray"]
        command += ["--parts", "2"]
        started = time.monotonic()
        log = tmp_path / "run.err"
        process = start(command, log)
        worker = cluster.nodes[1]
        raylet_pid, worker_node = worker.raylet()
        # Wait until the part on the worker node has written some records.
        parts = [part_folder(out, index, 2) for index in (1, 2)]
        try:
            lost = running_on(worker_node, parts, 3, process, log)
            killed_at, killed_wall = time.monotonic(), time.time()
            os.kill(raylet_pid, signal.SIGKILL)
            # Without its raylet, the task's worker process exits too (so its lock goes).
            while alive(lost["pid"]):
                assert time.monotonic() - killed_at < 60, "the lost worker process lives on"
                time.sleep(0.05)
            worker_gone_s = time.monotonic() - killed_at
            err = finish(process, log, "the Ray run")
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        run_s = time.monotonic() - started
        attempts = [json.loads(x) for x in (lost["part"] / ATTEMPTS_FILE).read_text().splitlines()]
        written = [keys_written(part) for part in parts]
        # A rerun of the same command resumes: every part is done, nothing runs again.
        rerun_log = tmp_path / "rerun.err"
        rerun = finish(start(command, rerun_log), rerun_log, "the rerun")
    index = parts.index(lost["part"]) + 1
    retried = [line for line in err.splitlines() if line.startswith("ray: retried")]
    assert len(retried) == 1, err
    assert retried[0].startswith(f"ray: retried 1 job(s) whose worker died: part {index}/2: ")
    assert [a["node"] == worker_node for a in attempts] == [True, False]  # then on the head
    assert attempts[0]["run"] == attempts[1]["run"]  # both of the one command
    assert attempts[1]["records"] >= 3  # it resumed what the lost attempt wrote
    # Equal to the one-process run: same keys and records, each written once, same
    # scores. The pair in flight when the node died was run again from its start;
    # its replies so far came from the part's response cache, and its record says so.
    whole = comparable(tmp_path / "whole")
    assert without_cache_counts(comparable(out)) == without_cache_counts(whole)
    assert len(whole) == 8 * 3
    redone = [
        k for k, r in records(out).items() if r["trajectory"]["usage"]["actor"]["cached_calls"]
    ]
    assert len(redone) <= 1  # --concurrency 1: one pair at a time
    for part in parts:
        assert set(keys_written(part).values()) == {1}
    assert sum(len(keys_written(part)) for part in parts) == 8 * 3
    whole_scores = json.loads((tmp_path / "whole" / "scores.json").read_text())
    scores = json.loads((out / "scores.json").read_text())
    assert scores["benchmarks"] == whole_scores["benchmarks"]
    assert json.loads((out / "manifest.json").read_text())["shard"] == "merged from 1/2, 2/2"
    # The rerun wrote nothing new, its attempts found each part complete, and it merged again.
    assert [keys_written(part) for part in parts] == written
    for part, done in zip(parts, written, strict=True):
        last = json.loads((part / ATTEMPTS_FILE).read_text().splitlines()[-1])
        assert last["records"] == len(done) and last["run"] != attempts[0]["run"]
    assert "ray: retried" not in rerun and "merged 2 shard(s), 24 records" in rerun, rerun
    assert without_cache_counts(comparable(out)) == without_cache_counts(whole)
    retry_s = datetime.fromisoformat(attempts[1]["started_at"]).timestamp() - killed_wall
    print(
        f"run with a lost node: {run_s:.1f} s; its worker process gone {worker_gone_s:.1f} s "
        f"after the raylet was killed, the retry started ~{retry_s:.0f} s after it; "
        f"{attempts[1]['records']} records kept, "
        f"{len(redone)} pair redone from the cache; {retried[0]}"
    )
