"""A run on several cores: its pending work shared by worker processes (``--workers N``).

One Python process runs one event loop on one core; a run whose episodes cost
CPU (an environment's database copies and hashes, scoring) is bound by it.
Here the run's process plans the run as always (the run folder, its manifest
and its lock, a server's start, the preflight, what is left to do), then starts
N worker processes (forked from it where that is safe, so that they start
with its imports and loaded samples: ``worker_start_method``), each with its
own event loop. The workers take the pending samples in turn, all the trials
of one at a time, in the run's order (harness/evaluate/claims.py).

Why workers append to the run's one samples.jsonl (rather than each writing a
part folder merged afterwards, as ``--parts`` does):

- One run folder, as with one process: the records stay append-only (no merge
  rewrites them), a rerun with any number of workers (or one process) resumes
  it, and nothing waits for the slowest worker to be merged.
- Never duplicated: the pending pairs come from the run's process's one
  reading of samples.jsonl, and each sample is taken by one worker; all its
  trials go with it, so its input is kept once too. A pair is written by the
  one worker that ran it.
- Resumable after a kill of any worker: each record is one whole line appended
  under a file lock (harness/store/shared_append.py); a worker killed mid-write
  leaves at most its own torn line, which readers skip and the next writer
  closes off. The pairs it had not written are missing, so a rerun runs them.
- The same records as one process: a worker runs the same runner on the same
  planned samples with the same seeds; only the order of the lines differs.

The run's process shows the one progress display: every 0.1 s each worker tells
it which pairs it started and which records it has appended (their status and
error only: reading each appended line back cost the run's process a CPU-second
in every ~20 of the workers'). If a worker dies, what it appended but had not told
yet is read from samples.jsonl, which stays the truth of what is done. Workers stop
when the run's process dies, so a rerun never meets a worker of an earlier run
still writing.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import multiprocessing.process
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from harness.boundary.collector import garbage_collection_for_a_run
from harness.boundary.json_read import read_json
from harness.config.run_config import RunConfig
from harness.errors import ConfigError
from harness.evaluate.claims import ClaimCounter, new_counter
from harness.models.base import CallMeter
from harness.run.run_counts import RunCounts
from harness.store.records import INFRA_ERROR, OK, SCORE_ERROR, Record

if TYPE_CHECKING:
    from harness.evaluate.plan import PlannedRun, Session
    from harness.run.progress import ProgressReporter
    from harness.run.runner import WorkItem

# Models that answer inside the process (no server to wait on, little work per
# call): a run of them is not worth a worker's start.
IN_PROCESS_MODELS = ("oracle", "null")
# Pending (sample, trial) pairs per worker, at least, before the default adds
# one: a worker's start (imports, loading the samples) costs a few seconds.
MIN_PAIRS_PER_WORKER = 50
# How often the run's process looks whether the workers have ended (their
# messages it reads as they arrive).
POLL_S = 0.1
# How often a worker tells what it started and wrote and its calls in flight;
# it tells at once when this many pairs have started or been written meanwhile.
TELL_EVERY_S = 0.1
TELL_AT_MOST = 64
WORKER_MODULE = "harness.evaluate.workers"
RERUN = "rerun the same command to resume (the pairs it had not written are run then)"


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _unshareable(config: RunConfig) -> str | None:
    """Why worker processes cannot share this run, or None when they can."""
    if config.serve.serve:
        return (
            "--workers: --serve starts the server inside the run's process; serve the "
            "model yourself and pass --api-base, or drop --workers"
        )
    if config.model_object is not None or not isinstance(config.strategy, str):
        return (
            "--workers: a model or strategy object lives in this process only; "
            "give its name instead, or one worker"
        )
    return None


def check_workers(config: RunConfig) -> None:
    """ConfigError, one line, for ``--workers N`` (N > 1) on a run that cannot be
    shared by processes."""
    if config.workers is None or config.workers == 1:
        return
    reason = _unshareable(config)
    if reason is not None:
        raise ConfigError(reason)


def worker_count(config: RunConfig, pending: int, cores: int | None = None) -> int:
    """How many worker processes run ``pending`` pairs (1: the run's own process).

    Asked for (``config.workers``): that many, but never more than the pairs or the
    concurrency (a worker runs at least one pair at a time). Else one per core
    while each gets at least MIN_PAIRS_PER_WORKER pairs, and one process for a
    model answered in-process or a run the workers cannot share.
    """
    limit = max(1, min(pending, config.concurrency))
    if config.workers is not None:
        check_workers(config)
        return min(config.workers, limit)
    if _unshareable(config) is not None or config.model in IN_PROCESS_MODELS:
        return 1
    cores = available_cores() if cores is None else cores
    return max(1, min(cores, pending // MIN_PAIRS_PER_WORKER, limit))


def sample_groups(todo: list[WorkItem]) -> list[list[WorkItem]]:
    """``todo`` as the workers take it: a group a sample, its trials together, the
    samples in the order they first come (the run's order: longest first)."""
    groups: dict[str, list[WorkItem]] = {}
    for item in todo:
        groups.setdefault(item.sample.key, []).append(item)
    return list(groups.values())


def claimed(groups: list[list[WorkItem]], counter: ClaimCounter) -> Iterator[WorkItem]:
    """The items of the groups this process takes, a group at a time, as the
    runner asks for them (the other workers take the rest)."""
    while (index := counter.take()) is not None:
        yield from groups[index]


def share_of(concurrency: int, index: int, workers: int) -> int:
    """Worker ``index``'s part of the run's concurrency (they add up to it)."""
    return concurrency // workers + (1 if index < concurrency % workers else 0)


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker process is given: the run's config (its share of the
    concurrency, no preflight, no display), the run's pending pairs as (sample
    key, trial), a group a sample, and the counter the workers take them by."""

    config: RunConfig
    groups: list[list[tuple[str, int]]]
    claims: Path
    parent_pid: int


@dataclass(frozen=True)
class WorkerDone:
    """What a worker sends back when no sample is left for it to take."""

    cache_hits: int
    cache_misses: int
    notes: list[str] = field(default_factory=list)


# -- the worker process ------------------------------------------------------------


class _Teller:
    """The runner's progress sink in a worker: the pairs it starts, the records it
    has appended and its model calls in flight, told to the run's process in
    batches (``tell``: every TELL_EVERY_S, or at once past TELL_AT_MOST events).
    A message per pair cost the run's process a wake-up and an unpickling each,
    ~70 us, and took that CPU from the workers."""

    def __init__(self, conn: Connection, meter: CallMeter | None = None):
        self.conn = conn
        self.meter = meter
        # In the order they happened: a pair's start, or a record appended.
        self._events: list[str | Record] = []
        self._calls_told = -1

    def started(self, key: str) -> None:
        self._events.append(key)
        self._tell_if_full()

    def finished(self, record: Record) -> None:
        # The display and the counts read its status and error. Its score and
        # conversation stay out: a judged score alone can be ~45 kB, and a
        # message past the pipe's room blocks this worker's loop until the run's
        # process reads it.
        told = replace(record, trajectory=None, score=None, metadata=None, load_options=None)
        self._events.append(told)
        self._tell_if_full()

    def _tell_if_full(self) -> None:
        if len(self._events) >= TELL_AT_MOST:
            self.tell()

    def tell(self) -> None:
        """Send what is new since the last message, if anything is."""
        calls = self.meter.in_flight if self.meter is not None else 0
        if not self._events and calls == self._calls_told:
            return
        self.conn.send(("events", (self._events, calls)))
        self._events, self._calls_told = [], calls


async def _tell_every(teller: _Teller) -> None:
    while True:
        await asyncio.sleep(TELL_EVERY_S)
        teller.tell()


def _stop_with_parent(parent_pid: int) -> None:
    """End this worker when the run's process is gone: its lock is released then,
    and a rerun must not meet this worker still appending."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def worker_main() -> None:
    """``python -m harness.evaluate.workers FD``: the spec on stdin, messages on FD."""
    conn = Connection(int(sys.argv[1]), readable=False)
    spec = pickle.loads(sys.stdin.buffer.read())
    run_share(spec, conn)


def run_share(spec: WorkerSpec, conn: Connection) -> None:
    """A worker process: plan the run as its process did, run the samples it
    takes into the run folder beside the other workers, report the cache's
    counts."""
    from harness.evaluate.plan import plan_run
    from harness.models.redact import environment_read_once
    from harness.run.runner import WorkItem

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run's process decides what stops
    _stop_with_parent(spec.parent_pid)
    with environment_read_once():
        run = plan_run(spec.config)
        samples = {sample.key: sample for sample in run.plan.samples}
        groups = [[WorkItem(samples[key], trial) for key, trial in group] for group in spec.groups]
        counter = ClaimCounter(spec.claims, len(groups))
        run.store.open_as_worker()
        try:
            items = claimed(groups, counter)
            asyncio.run(_run_share(run, items, _Teller(conn, run.settings.calls)))
        finally:
            run.store.close()
            counter.close()
    stats = run.settings.cache_stats
    notes = list(run.settings.fit_report.lines(run.config.timeout))
    # Plain values: this module is __main__ here, its classes are not the parent's.
    conn.send(("done", (stats.hits, stats.misses, notes)))
    conn.close()


async def _run_share(run: PlannedRun, items: Iterator[WorkItem], teller: _Teller) -> None:
    run.runner.progress = teller
    telling = asyncio.get_running_loop().create_task(_tell_every(teller))
    try:
        await run.runner.run_items(items, 0)
    finally:
        telling.cancel()
        teller.tell()
        for client in run.clients:
            if client is not None:
                await client.aclose()


# -- the run's process -------------------------------------------------------------


class RecordTail:
    """The records appended to a samples.jsonl since it was opened: whole lines
    only (a line being written is read when it is whole; a torn one is skipped)."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = path.stat().st_size if path.exists() else 0
        self._partial = b""

    def read(self) -> list[Record]:
        if not self.path.exists():
            return []
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            data = handle.read()
        self.offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        records = []
        for line in lines:
            try:
                records.append(Record.from_dict(read_json(line)))
            except (ValueError, KeyError, TypeError, RecursionError):
                continue  # a torn line, closed off by the next writer
        return records


_Process: TypeAlias = "subprocess.Popen[bytes] | _ForkedWorker"


@dataclass
class _Worker:
    index: int
    process: _Process
    conn: Connection
    done: WorkerDone | None = None
    calls_in_flight: int = 0
    pipe_closed: bool = False  # the worker has ended and its messages are all read

    def receive(self, reporter: ProgressReporter, written: Callable[[Record], None]) -> None:
        """This worker's messages so far, in order: each pair it started to the
        reporter, each record it says it has appended to ``written``."""
        try:
            while not self.pipe_closed and self.conn.poll():
                kind, value = self.conn.recv()
                if kind == "events":
                    events, self.calls_in_flight = value
                    for event in events:
                        if isinstance(event, str):
                            reporter.started(event)
                        else:
                            written(event)
                else:
                    self.done = WorkerDone(*value)
        except (EOFError, OSError):
            self.pipe_closed = True


def worker_start_method() -> str:
    """How this process starts its workers: ``fork`` on Linux while it runs one
    thread, counted by the system (a library's own threads too: Ray's, a BLAS
    pool's), else ``spawn`` (a fresh ``python -m harness.evaluate.workers``).

    A forked worker starts with the planned run's imports and loaded samples (its
    planning then reads them from the adapters' caches): ~50 ms, against ~2.5 s
    for a fresh interpreter to import and load them again, which on a slice of
    ~20 s of work was most of what a second core could save. A fork copies only
    the thread that calls it; a lock another thread held at that moment would
    stay held in the copy for good, so a process running other threads (a
    notebook's, a test's server) starts fresh interpreters instead. Elsewhere
    than Linux fork is not safe with the system's libraries (macOS)."""
    if sys.platform.startswith("linux") and _system_threads() == 1:
        return "fork"
    return "spawn"


def _system_threads() -> int:
    """The threads of this process as the system counts them (Linux), or 0 when
    it cannot tell. Python's own count misses those a library starts natively;
    a copy of a process whose Ray client threads held its connections broke the
    client in the process copied."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


class _ForkedWorker:
    """A forked worker process, answering the calls the run's process makes of a
    started one (as ``subprocess.Popen`` does)."""

    def __init__(self, process: multiprocessing.process.BaseProcess):
        self.process = process

    @property
    def returncode(self) -> int | None:
        return self.process.exitcode  # -N when ended by signal N, as Popen's

    def poll(self) -> int | None:
        return self.process.exitcode

    def terminate(self) -> None:
        self.process.terminate()

    def kill(self) -> None:
        self.process.kill()

    def wait(self, timeout: float | None = None) -> int | None:
        self.process.join(timeout)
        if self.process.exitcode is None:
            raise subprocess.TimeoutExpired(f"worker {self.process.pid}", timeout or 0)
        return self.process.exitcode


def _forked_main(spec: WorkerSpec, sending: int, receiving: int) -> None:
    """A forked worker: the run's process's own handlers undone, then its work."""
    os.close(receiving)
    # The run's SIGTERM handler (harness/boundary/interrupts.py) would unwind this
    # copy of the run's stack; a worker ends at once, as a fresh interpreter does.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    run_share(spec, Connection(sending, readable=False))


def _fork_worker(spec: WorkerSpec, sending: int, receiving: int) -> _ForkedWorker:
    context = multiprocessing.get_context("fork")
    process = context.Process(
        target=_forked_main, args=(spec, sending, receiving), name="harness-worker"
    )
    process.start()  # flushes this process's std streams first
    return _ForkedWorker(process)


def _spawn_worker(spec: WorkerSpec, sending: int) -> subprocess.Popen[bytes]:
    """A fresh interpreter (no re-run of the caller's script, as multiprocessing's
    spawn would), its spec on stdin, its messages on the pipe's ``sending`` end."""
    process = subprocess.Popen(
        [sys.executable, "-m", WORKER_MODULE, str(sending)],
        stdin=subprocess.PIPE,
        pass_fds=(sending,),
    )
    assert process.stdin is not None
    process.stdin.write(pickle.dumps(spec))
    process.stdin.close()
    return process


def _start_workers(
    run: PlannedRun, groups: list[list[WorkItem]], claims: Path, count: int
) -> list[_Worker]:
    """``count`` worker processes (``worker_start_method``) taking ``groups`` by
    the ``claims`` counter, each with its messages on a pipe of its own."""
    workers = []
    method = worker_start_method()
    pairs = [[(item.sample.key, item.trial) for item in group] for group in groups]
    for index in range(count):
        config = replace(
            run.config,
            out=run.run_dir,
            concurrency=share_of(run.config.concurrency, index, count),
            workers=1,
            preflight=False,  # the run's process made it
            progress=False,
        )
        spec = WorkerSpec(config, pairs, claims, os.getpid())
        receiving, sending = os.pipe()
        try:
            process: _Process = (
                _fork_worker(spec, sending, receiving)
                if method == "fork"
                else _spawn_worker(spec, sending)
            )
        finally:
            os.close(sending)
        workers.append(_Worker(index, process, Connection(receiving, writable=False)))
    return workers


@dataclass
class WorkersOutcome:
    counts: RunCounts  # as one process would count them
    notes: list[str]  # the workers' notes (e.g. local calls past the timeout), each once


def run_in_workers(run: PlannedRun, session: Session, count: int) -> WorkersOutcome:
    """Run ``session.todo`` in ``count`` worker processes into the run folder,
    showing their progress as one; a pair a dead worker left unwritten counts as
    an infrastructure error."""
    from harness.run.progress import ProgressReporter, RunProgress

    start = time.monotonic()
    todo_keys = {item.key for item in session.todo}
    run.progress = RunProgress(
        total=len(session.todo) + session.skipped,
        already_done=session.skipped,
        calls=CallMeter(),  # the workers' calls in flight, added up as they tell them
        api_base=run.settings.api_base,
    )
    reporter = ProgressReporter(
        run.progress, enabled=run.config.progress, interval_s=run.config.progress_interval
    )
    tail = RecordTail(run.store.samples_path)
    latest: dict[str, Record] = {}
    # Set as for a run in one process (harness/boundary/collector.py), before the
    # fork: forked workers start with it set, and the loaded samples are out of
    # the collector's passes in this process too (a full pass over them, started
    # by the messages it reads meanwhile, took ~0.2 s of a worker's core).
    with garbage_collection_for_a_run():
        workers = _run_workers(run, session.todo, count, reporter, todo_keys, latest)
    if any(worker.done is None for worker in workers):
        read_untold(tail, todo_keys, latest)
    for worker in workers:
        if worker.done is None:
            how = _how_it_ended(worker.process.returncode)
            print(
                f"run: worker {worker.index + 1}/{len(workers)} {how} before its work was done; {RERUN}",
                file=sys.stderr,
            )
        else:
            run.settings.cache_stats.hits += worker.done.cache_hits
            run.settings.cache_stats.misses += worker.done.cache_misses
    notes = [note for worker in workers if worker.done for note in worker.done.notes]
    counts = _counts(session, latest, todo_keys, time.monotonic() - start)
    return WorkersOutcome(counts, list(dict.fromkeys(notes)))


def _run_workers(
    run: PlannedRun,
    todo: list[WorkItem],
    count: int,
    reporter: ProgressReporter,
    todo_keys: set[str],
    latest: dict[str, Record],
) -> list[_Worker]:
    """Up to ``count`` workers taking ``todo`` a sample at a time, watched until
    every one has ended (or stopped, when this process is interrupted)."""
    groups = sample_groups(todo)
    # All trials of a sample go together: fewer samples than workers leave some idle.
    count = min(count, len(groups))
    print(f"run: {count} worker processes, one event loop each", file=sys.stderr)
    claims = new_counter()
    try:
        workers = _start_workers(run, groups, claims, count)
        try:
            asyncio.run(_watch(workers, reporter, todo_keys, latest))
        finally:
            _stop(workers)
    finally:
        claims.unlink(missing_ok=True)
    return workers


async def _watch(
    workers: list[_Worker],
    reporter: ProgressReporter,
    todo_keys: set[str],
    latest: dict[str, Record],
) -> None:
    """Show the records as the workers tell them, until every worker has ended.

    A worker's messages are read as they arrive (the loop watches its pipe), not
    only every POLL_S: a worker whose pipe is full waits in its send, its event
    loop with it."""
    loop = asyncio.get_running_loop()

    def written(record: Record) -> None:
        if record.key in todo_keys:
            latest[record.key] = record
            reporter.finished(record)

    def read(worker: _Worker) -> None:
        worker.receive(reporter, written)
        if worker.pipe_closed:  # at its end a pipe stays readable: stop watching it
            loop.remove_reader(worker.conn.fileno())

    reporter.start()
    for worker in workers:
        loop.add_reader(worker.conn.fileno(), read, worker)
    try:
        while True:
            # Asked first: a worker that has ended has told all it will tell.
            running = any(worker.process.poll() is None for worker in workers)
            for worker in workers:
                read(worker)
            reporter.progress.calls.in_flight = sum(w.calls_in_flight for w in workers)
            if not running:
                return
            await asyncio.sleep(POLL_S)
    finally:
        for worker in workers:
            loop.remove_reader(worker.conn.fileno())
        reporter.stop()


def read_untold(tail: RecordTail, todo_keys: set[str], latest: dict[str, Record]) -> None:
    """The records a dead worker appended but had not told, read from samples.jsonl."""
    for record in tail.read():
        if record.key in todo_keys and record.key not in latest:
            latest[record.key] = record


def _stop(workers: list[_Worker]) -> None:
    """Workers still running (the run's process was interrupted) are ended."""
    for worker in workers:
        if worker.process.poll() is None:
            worker.process.terminate()
    for worker in workers:
        try:
            worker.process.wait(5)
        except subprocess.TimeoutExpired:
            worker.process.kill()
            worker.process.wait()
        worker.conn.close()


def _how_it_ended(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        return f"was stopped by signal {-exitcode}"
    return f"ended with exit code {exitcode}"


def _counts(
    session: Session, latest: dict[str, Record], todo_keys: set[str], elapsed: float
) -> RunCounts:
    statuses = [record.status for record in latest.values()]
    unwritten = len(todo_keys) - len(latest)
    return RunCounts(
        total=len(session.todo) + session.skipped,
        skipped=session.skipped,
        ran=len(session.todo),
        ok=statuses.count(OK),
        infra_errors=statuses.count(INFRA_ERROR) + unwritten,
        score_errors=statuses.count(SCORE_ERROR),
        elapsed_s=round(elapsed, 3),
    )


if __name__ == "__main__":
    worker_main()
