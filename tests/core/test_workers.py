"""A run on several cores (--workers N): the same records as one process, nothing
lost when a worker is killed, one progress display; and --parts K on the local
executor running its parts at once."""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import re
import signal
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path

import pytest
from support import harness_process, toy_reply, wait_for_lines, without_timing

from harness.cli import main
from harness.config.run_config import RunConfig, ServeConfig
from harness.errors import ConfigError
from harness.evaluate import workers as workers_module
from harness.evaluate.claims import ClaimCounter, new_counter
from harness.evaluate.workers import (
    TELL_AT_MOST,
    RecordTail,
    _Teller,
    _watch,
    _Worker,
    claimed,
    read_untold,
    sample_groups,
    worker_count,
    worker_start_method,
)
from harness.run.progress import ProgressReporter, RunProgress
from harness.store.inputs import read_inputs
from harness.store.records import Record
from harness.store.run_store import read_records
from harness.store.shared_append import SharedAppender
from harness.task.contract import Sample
from harness.testing.fake_server import FakeServer


def run_args(suite: Path, url: str, out: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--suite",
        str(suite),
        "--model",
        "openai/fake-model",
        "--api-base",
        url,
        "--trials",
        "3",
        "--no-cache",
        "--out",
        str(out),
        *extra,
    ]


def records_of(run_dir: Path) -> dict:
    return {k: without_timing(r) for k, r in read_records(run_dir / "samples.jsonl").latest.items()}


def ok_lines(run_dir: Path) -> list[str]:
    """The key of every successful record line in samples.jsonl (a key twice: duplicated)."""
    keys = []
    for line in (run_dir / "samples.jsonl").read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record["status"] == "ok":
            keys.append(record["key"])
    return keys


def test_two_workers_write_the_records_one_process_writes(toy_suite, tmp_path, capsys):
    with FakeServer(latency=0.2, handler=toy_reply) as server:
        # The server's thread runs in this process: the workers start fresh
        # interpreters here (the forked ones: the killed-worker test below).
        assert worker_start_method() == "spawn"
        one = main(run_args(toy_suite, server.url, tmp_path / "one", "--workers", "1"))
        capsys.readouterr()
        two = main(
            run_args(toy_suite, server.url, tmp_path / "two", "--workers", "2")
            + ["--progress-every", "0.1"]
        )
    err = capsys.readouterr().err
    assert one == two == 0
    assert "run: 2 worker processes" in err
    # One display, over both workers' records: past what one worker's share (12) holds.
    done = [int(n) for n in re.findall(r"progress: (\d+)/24", err)]
    assert max(done) > 12, err
    # ... and their samples and model calls in flight
    assert re.search(r"progress: .*in flight: [1-9]\d* samples, [1-9]\d* calls", err)
    assert "two: 24 ran, 0 already done, 24 ok in" in err  # the summary's two lines
    assert "0 infrastructure errors, 0 scoring errors" in err
    assert records_of(tmp_path / "two") == records_of(tmp_path / "one")
    assert sorted(ok_lines(tmp_path / "two")) == sorted(records_of(tmp_path / "one"))
    assert read_inputs(tmp_path / "two") == read_inputs(tmp_path / "one")
    manifest = json.loads((tmp_path / "two" / "manifest.json").read_text())
    assert manifest["shard"] == "1/1" and manifest["last_summary"]["ok"] == 24


def worker_pids(parent: int) -> list[int]:
    """The worker processes a harness process started: its children (forked from it,
    they show its command line; started fresh, harness.evaluate.workers's)."""
    children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    return [int(pid) for pid in children if b"harness" in Path(f"/proc/{pid}/cmdline").read_bytes()]


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_nothing_on_resume(toy_suite, tmp_path):
    with FakeServer(latency=0.15, handler=toy_reply) as server:
        killed, clean = tmp_path / "killed", tmp_path / "clean"
        args = run_args(toy_suite, server.url, killed, "--workers", "2", "--concurrency", "2")
        process = harness_process(args)
        assert wait_for_lines(killed / "samples.jsonl", 4)
        pids = worker_pids(process.pid)
        assert len(pids) == 2
        os.kill(pids[0], signal.SIGKILL)
        _, err = process.communicate(timeout=120)
        assert process.returncode == 1, err
        assert "was stopped by signal 9 before its work was done; rerun" in err
        written = len(records_of(killed))
        assert 4 <= written < 24, "the kill must land mid-run"
        # Its summary counts what is in the file, told by the workers or not.
        assert f"24 ran, 0 already done, {written} ok" in err

        rerun = harness_process(args)
        _, err = rerun.communicate(timeout=120)
        assert rerun.returncode == 0, err
        assert f"{24 - written} ran, {written} already done, {24 - written} ok" in err
        assert main(run_args(toy_suite, server.url, clean, "--workers", "1", "--quiet")) == 0
    assert records_of(killed) == records_of(clean)
    assert sorted(ok_lines(killed)) == sorted(records_of(clean))  # none twice


@pytest.mark.slow
def test_local_parts_run_at_once(toy_suite, tmp_path, capsys):
    latency = 0.4
    with FakeServer(latency=latency, handler=toy_reply) as server:
        code = main(
            run_args(toy_suite, server.url, tmp_path / "run", "--parts", "2")
            + ["--concurrency", "1", "--quiet"]
        )
        arrivals = sorted(r.received_at for r in server.chat_requests)
    assert code == 0
    assert len(records_of(tmp_path / "run")) == 24
    # One at a time, each part's next request waits for the last reply (the
    # latency); two parts at once send requests closer together than that.
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]
    assert min(gaps) < latency / 2


@pytest.mark.parametrize("value", ["0", "-1"])
def test_a_bad_workers_value_is_one_line_and_exit_code_2(toy_suite, tmp_path, capsys, value):
    code = main(["run", "--suite", str(toy_suite), "--model", "oracle", "--workers", value])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.splitlines() == [
        f"harness: error: --workers must be a positive number (got {value})"
    ]


def test_workers_with_serve_is_one_line_and_exit_code_2(toy_suite, capsys):
    code = main(
        ["run", "--suite", str(toy_suite), "--serve", "vllm", "--checkpoint", "x", "--workers", "2"]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "--workers" in err


def test_the_default_uses_the_cores_when_the_work_is_large():
    config = RunConfig(suite="s", model="openai/m", concurrency=64)
    assert worker_count(config, pending=1000, cores=2) == 2
    assert worker_count(config, pending=1000, cores=8) == 8
    assert worker_count(config, pending=60, cores=8) == 1  # small: a worker's start costs more
    assert worker_count(config, pending=120, cores=8) == 2
    assert worker_count(RunConfig(suite="s", model="oracle"), 1000, cores=8) == 1
    assert worker_count(RunConfig(suite="s", model="null"), 1000, cores=8) == 1
    served = RunConfig(suite="s", serve=ServeConfig(serve="vllm", checkpoint="c"))
    assert worker_count(served, 1000, cores=8) == 1
    low = RunConfig(suite="s", model="openai/m", concurrency=3)
    assert worker_count(low, 1000, cores=8) == 3  # each worker runs a pair at least


def test_asked_for_workers_are_kept_within_the_work():
    config = RunConfig(suite="s", model="oracle", workers=4, concurrency=8)
    assert worker_count(config, pending=1000, cores=1) == 4
    assert worker_count(config, pending=2, cores=8) == 2
    with pytest.raises(ConfigError, match="--serve"):
        served = RunConfig(suite="s", workers=2, serve=ServeConfig(serve="vllm", checkpoint="c"))
        worker_count(served, 100)


def test_the_work_is_grouped_by_sample_in_the_runs_order():
    from harness.run.runner import WorkItem

    samples = [
        Sample(id=str(i), benchmark="b", subset="s", tools=[], initial_messages=[])
        for i in (2, 0, 1)
    ]
    todo = [WorkItem(s, t) for t in range(2) for s in samples]  # trials interleaved
    groups = sample_groups(todo)
    assert [[(i.sample.id, i.trial) for i in g] for g in groups] == [
        [("2", 0), ("2", 1)],
        [("0", 0), ("0", 1)],
        [("1", 0), ("1", 1)],
    ]


def test_workers_take_each_sample_once_in_the_runs_order(tmp_path):
    from harness.run.runner import WorkItem

    samples = [
        Sample(id=str(i), benchmark="b", subset="s", tools=[], initial_messages=[])
        for i in range(4)
    ]
    groups = sample_groups([WorkItem(s, t) for s in samples for t in range(2)])
    path = new_counter()
    try:
        first, second = ClaimCounter(path, len(groups)), ClaimCounter(path, len(groups))
        one, two = claimed(groups, first), claimed(groups, second)
        # Whoever asks next takes the next sample, with all its trials.
        taken = [next(one), next(one), next(two), next(one), next(two), next(two)]
        assert [(i.sample.id, i.trial) for i in taken] == [
            ("0", 0),
            ("0", 1),
            ("1", 0),
            ("2", 0),
            ("1", 1),
            ("3", 0),
        ]
        assert [(i.sample.id, i.trial) for i in [*one, *two]] == [("2", 1), ("3", 1)]
        assert first.take() is None and second.take() is None
        first.close()
        second.close()
    finally:
        path.unlink()


def _take_all(path: str, count: int, out: str, start: threading.Barrier) -> None:
    counter = ClaimCounter(Path(path), count)
    taken = []
    start.wait(30)  # all at once
    while (index := counter.take()) is not None:
        taken.append(index)
    Path(out).write_text(json.dumps(taken))


def test_processes_taking_at_once_take_every_index_once(tmp_path):
    import multiprocessing

    path, count = new_counter(), 3000
    try:
        context = multiprocessing.get_context("fork")
        outs = [tmp_path / f"{n}.json" for n in range(3)]
        start = context.Barrier(3)
        processes = [
            context.Process(target=_take_all, args=(str(path), count, str(out), start))
            for out in outs
        ]
        for process in processes:
            process.start()
        for process in processes:
            process.join(60)
        taken = [json.loads(out.read_text()) for out in outs]
    finally:
        path.unlink()
    assert sorted(i for part in taken for i in part) == list(range(count))
    assert all(part == sorted(part) for part in taken)  # each in the counter's order
    assert sum(1 for part in taken if part) >= 2  # they did take in turn


def test_a_torn_line_of_a_killed_writer_is_closed_off_by_the_next(tmp_path):
    path = tmp_path / "samples.jsonl"
    path.write_text('{"key": "a"}\n{"key": "b", "tor')  # a writer killed mid-line
    appender = SharedAppender(path)
    appender.write('{"key": "c"}\n')
    appender.write('{"key": "d"}\n')
    appender.close()
    lines = path.read_text().splitlines()
    assert lines == ['{"key": "a"}', '{"key": "b", "tor', '{"key": "c"}', '{"key": "d"}']


def test_the_tail_reads_whole_lines_only(tmp_path):
    path = tmp_path / "samples.jsonl"
    path.write_text("")
    tail = RecordTail(path)
    record = {
        "key": "b/s/1#0",
        "benchmark": "b",
        "subset": "s",
        "sample_id": "1",
        "trial": 0,
        "seed": 0,
        "status": "ok",
    }
    line = json.dumps(record)
    with path.open("a") as handle:
        handle.write(line[:10])
        handle.flush()
        assert tail.read() == []
        handle.write(line[10:] + "\n")
        handle.flush()
        assert [r.key for r in tail.read()] == ["b/s/1#0"]
        assert tail.read() == []


def test_workers_are_forked_from_a_one_thread_process_on_linux():
    code = "from harness.evaluate.workers import worker_start_method as m; print(m())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ("fork" if sys.platform.startswith("linux") else "spawn")


def start_method_after_numpy(set_blas_threads: bool) -> str:
    """The workers' start method of a fresh process that loaded numpy, as the
    command line does (adapters' metrics, the scorer), with or without
    ``one_blas_thread`` first; the user's own setting removed."""
    code = (
        "from harness.cli import one_blas_thread\n"
        + ("one_blas_thread()\n" if set_blas_threads else "")
        + "import numpy\n"
        "from harness.evaluate.workers import worker_start_method as m\n"
        "print(m())"
    )
    env = {
        k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
    }
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return done.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers fork on Linux only")
def test_the_command_line_forks_its_workers_after_loading_numpy():
    assert start_method_after_numpy(set_blas_threads=True) == "fork"
    if (os.cpu_count() or 1) > 1:
        # What it guards against: numpy's BLAS pool is a second system thread.
        assert start_method_after_numpy(set_blas_threads=False) == "spawn"


def test_a_process_running_other_threads_starts_fresh_interpreters():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert worker_start_method() == "spawn"
    finally:
        stop.set()
        thread.join()


def toy_record_line(key: str, status: str = "ok") -> str:
    benchmark, subset, rest = key.split("/")
    sample_id, trial = rest.split("#")
    return json.dumps(
        {
            "key": key,
            "benchmark": benchmark,
            "subset": subset,
            "sample_id": sample_id,
            "trial": int(trial),
            "seed": 0,
            "status": status,
        }
    )


def test_what_a_dead_worker_appended_untold_is_read_from_the_file(tmp_path):
    path = tmp_path / "samples.jsonl"
    path.write_text(toy_record_line("b/s/0#0") + "\n")  # before the run: not its work
    tail = RecordTail(path)
    told = Record.from_dict(json.loads(toy_record_line("b/s/1#0", "infra_error")))
    with path.open("a") as handle:
        for key in ("b/s/1#0", "b/s/2#0", "b/s/3#0"):
            handle.write(toy_record_line(key) + "\n")
    latest = {told.key: told}
    read_untold(tail, {"b/s/0#0", "b/s/1#0", "b/s/2#0"}, latest)
    # Told: kept as told; appended untold: read; not in the work, or before it: not.
    assert {k: r.status for k, r in latest.items()} == {"b/s/1#0": "infra_error", "b/s/2#0": "ok"}


def test_a_worker_tells_its_records_in_batches_that_fit_the_pipe():
    """A record's score can be large (a judged score ~45 kB); what a worker tells
    of it holds no score or conversation, so a whole batch fits the pipe's room
    (64 KiB) and its loop does not wait on the run's process to read."""
    receiving, sending = os.pipe()
    conn, reader = Connection(sending, readable=False), Connection(receiving, writable=False)
    teller = _Teller(conn)
    records = []
    for n in range(TELL_AT_MOST // 2):
        record = Record.from_dict(json.loads(toy_record_line(f"b/s/{n}#0", "score_error")))
        record.score = {"details": "x" * 60_000}
        record.trajectory = {"messages": [{"content": "y" * 60_000}]}
        record.error = {"kind": "judge", "message": "the judge's reply was not JSON " * 4}
        records.append(record)
        teller.started(record.key)
        assert not reader.poll()  # told in batches
        teller.finished(record)
    assert reader.poll()  # TELL_AT_MOST events: told at once
    payload = reader.recv_bytes()
    assert len(payload) < 65536
    kind, (events, calls) = pickle.loads(payload)
    assert kind == "events" and calls == 0
    # In the order they happened: each pair's start, then its record.
    told = [e if isinstance(e, str) else (e.key, e.status, e.error) for e in events]
    assert told == [x for r in records for x in (r.key, (r.key, r.status, r.error))]
    teller.tell()
    assert not reader.poll()  # nothing new: nothing sent
    conn.close()
    reader.close()


class _Running:
    """A worker process as _watch sees it: running until told otherwise."""

    returncode = None

    def __init__(self) -> None:
        self.ended = False

    def poll(self) -> int | None:
        return 0 if self.ended else None


def test_the_run_reads_a_workers_messages_as_they_arrive(monkeypatch):
    """Not only at each poll: a worker with a full pipe would wait on it."""
    monkeypatch.setattr(workers_module, "POLL_S", 30.0)
    receiving, sending = os.pipe()
    conn = Connection(sending, readable=False)
    process = _Running()
    worker = _Worker(0, process, Connection(receiving, writable=False), 1)  # type: ignore[arg-type]
    progress = RunProgress(total=2)
    reporter = ProgressReporter(progress, enabled=False)
    latest: dict = {}

    async def scenario() -> None:
        watching = asyncio.create_task(_watch([worker], reporter, {"b/s/1#0", "b/s/2#0"}, latest))
        await asyncio.sleep(0.1)  # _watch is in its first 30 s sleep now
        teller = _Teller(conn)
        teller.started("b/s/1#0")
        teller.finished(Record.from_dict(json.loads(toy_record_line("b/s/1#0"))))
        teller.tell()
        for _ in range(50):
            await asyncio.sleep(0.02)
            if latest:
                break
        assert list(latest) == ["b/s/1#0"] and progress.done == 1
        watching.cancel()

    asyncio.run(scenario())
    conn.close()
    worker.conn.close()


def test_a_batch_is_shown_in_the_order_it_happened():
    """A pair started and written within one batch leaves nothing in flight, and
    the in-flight count never holds a pair whose record came before the next start."""
    receiving, sending = os.pipe()
    conn = Connection(sending, readable=False)
    worker = _Worker(0, _Running(), Connection(receiving, writable=False), 2)  # type: ignore[arg-type]
    teller = _Teller(conn)
    first, second = (
        Record.from_dict(json.loads(toy_record_line(key))) for key in ("b/s/1#0", "b/s/2#0")
    )
    teller.started(first.key)
    teller.finished(first)
    teller.started(second.key)
    teller.tell()
    progress = RunProgress(total=2)
    reporter = ProgressReporter(progress, enabled=False)
    in_flight_when_written: list[set[str]] = []

    def written(record: Record) -> None:
        reporter.finished(record)
        in_flight_when_written.append(set(progress.in_flight))

    worker.receive(reporter, written)
    assert in_flight_when_written == [set()] and set(progress.in_flight) == {second.key}
    conn.close()
    worker.conn.close()


def test_the_collector_is_set_for_the_run_before_the_workers_start(monkeypatch, tmp_path):
    """Forked workers inherit the run's collector setting, and the run's process
    watches them with the loaded samples frozen out of its passes."""
    import gc
    from types import SimpleNamespace

    from harness.boundary.collector import RUN_GC_THRESHOLD
    from harness.evaluate.workers import run_in_workers
    from harness.run.runner import WorkItem

    seen: dict = {}

    def start(run, groups, claims, count):
        seen.update(frozen=gc.get_freeze_count(), threshold=gc.get_threshold()[0])
        seen.update(groups=len(groups), count=count, claims=claims.exists(), path=claims)
        return []

    monkeypatch.setattr(workers_module, "_start_workers", start)
    samples = [
        Sample(id=str(i), benchmark="b", subset="s", tools=[], initial_messages=[])
        for i in range(3)
    ]
    run = SimpleNamespace(
        progress=None,
        settings=SimpleNamespace(api_base=None),
        config=SimpleNamespace(progress=False, progress_interval=1.0),
        store=SimpleNamespace(samples_path=tmp_path / "samples.jsonl"),
    )
    session = SimpleNamespace(todo=[WorkItem(s, t) for s in samples for t in range(2)], skipped=0)
    before = gc.get_threshold()
    run_in_workers(run, session, 2)
    assert seen["frozen"] > 0 and seen["threshold"] >= RUN_GC_THRESHOLD
    assert seen == {**seen, "groups": 3, "count": 2, "claims": True}
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before  # given back
    assert not seen["path"].exists()  # the counter's file goes with the run
