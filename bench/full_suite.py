"""The full-size bench: every benchmark's whole official set, played by the oracle
through a model server, with the harness's costs and the result commands timed.

    uv run python bench/full_suite.py [--concurrency 64,256] [--latency 0.2]
        [--fraction F | --limit N] [--benchmarks bfcl,tau2,vitabench,finmcp]
        [--data-dir /work/shared/data] [--keep DIR]

(``make bench`` runs it with no flags: the full size at 64 and 256 in flight, which
takes the better part of an hour on two cores; ``--fraction 0.02`` is a check in a
few minutes.)

What runs, one run folder per benchmark (a suite's trials are the same for all its
entries, and these differ): BFCL-v4 offline (tasks/bfcl-v4-offline.yaml, 1 trial),
τ²-Bench's original set (airline, retail, telecom; 4 trials), VitaBench delivery and
instore (English, 4 trials), FinMCP-Bench (whatever items the data folder holds; 1
trial), with the deterministic scripted user and the stub judge.

How, in phases (each a process of its own, so one's memory is not another's):

1. record: each benchmark run in-process with ``--model oracle``; a wrapper the
   bench puts on the adapter objects' ``oracle`` records, for every model call, the
   request the harness's OpenAI-compatible client would send, the oracle's reply
   (bench/replay_book.py keys a request by its messages and tools, ids and
   run-varying fields left out) and the episode that asked it, episodes numbered
   in the order the runner started them (bench/episodes.py). These runs' scores
   are the expected ones. A sample that asked a request the oracle answered two
   ways is ambiguous (the server cannot tell which reply is its own): ambiguous
   samples are counted and left out of both sides (the replay runs a suite of
   the others' ids; the bare client skips their episodes).
2. serve: the replay server (harness.testing.fake_server with the book as its
   handler) answers each chat request after ``--latency`` seconds with the recorded
   reply; a request it has no reply for gets HTTP 422 and is counted (the bench
   fails). The ideal rate is in-flight / latency requests a second.
3. replay, once per concurrency: the same runs with ``model=openai/replay-oracle``
   against the server, through ``harness.run_suite`` (model client, retries,
   records on the path). Measured in that process: wall time, CPU split by where
   it goes (environment code: the tool worker thread, the environments' building,
   ``execute`` steps and final-state readout on the loop, timed by a wrapper on the
   adapter's environments; scoring: the adapters' ``score`` steps and
   ``asyncio.to_thread`` workers; harness: the rest), RSS by a sampling thread at
   10%, 50% and 100% of each run's records (its growth is judged from the first
   mark past the in-flight window: ``growth_start``).
   Every record's score is checked against the oracle's.
4. bare client: the same episodes' recorded request bodies POSTed with aiohttp
   (no harness code), each episode's calls one after another, ``concurrency``
   episodes at a time in the runner's order: the fair ceiling the harness is
   compared with. Beside it, the best possible schedules of those chains
   (bench/schedule.py, from the bare client's per-call latencies): in the runner's
   order, longest first, and every call posted independently (the bound no
   client replaying whole episodes reaches when some episodes are long).
5. commands, on the replay runs of the largest concurrency: ``harness score``
   (each run), ``leaderboard`` (all runs), ``compare`` (each run against itself),
   ``report`` (all runs; bytes per sample; opened in headless Chromium, which must
   show the list and the first sample in <= 5 s by the page's own clock) and
   ``paper``.

It prints the per-benchmark table and the schedules' table, then the targets each met
or not, and exits 1 when
a target is missed, a score differs from the oracle's or a request went unmatched.
Rates: samples/s of the runner's own time (episodes, scoring, records; the whole
command's time, with loading, is printed beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

from episodes import (  # noqa: E402
    Episode,
    ambiguous_samples,
    call_line,
    kept_ids,
    leave_out,
    read_episodes,
)
from replay_book import (  # noqa: E402
    SERVED_MODEL,
    ReplyBook,
    Target,
    exit_code,
    reply_of,
    request_key,
    serve,
    target_table,
    wire_body,
)
from schedule import Schedule, best_schedule  # noqa: E402

HARNESS = str(Path(sys.executable).with_name("harness"))
DEFAULT_DATA = Path(os.environ.get("HARNESS_SHARED_DATA", ROOT.parent / "shared" / "data"))
PROGRESS_MARKS = (0.1, 0.5, 1.0)

# The targets (2 cores).
# Of the sequential bare client (each episode's calls in sequence, in the runner's
# order): the whole suite, and τ² at 64 in flight.
MIN_RATIO_TO_BARE = 0.85
MIN_TAU2_RATIO_TO_BARE = 0.8
TAU2_RATIO_CONCURRENCY = 64
MAX_HARNESS_MS_PER_CALL = 2.0
MAX_PEAK_RSS_MB = 1536.0
MAX_RSS_GROWTH = 0.10
MAX_REGRADE_S = 120.0
MAX_BOARD_S = 5.0
MAX_REPORT_S = 30.0
MAX_REPORT_BYTES_PER_SAMPLE = 4096.0
MAX_OPEN_S = 5.0


@dataclass(frozen=True)
class Part:
    """One benchmark's run: its suite entry and trials."""

    benchmark: str
    subsets: tuple[str, ...]
    trials: int
    options: dict[str, Any] = field(default_factory=dict)


BFCL_OFFLINE = (
    "simple_python simple_java simple_javascript multiple parallel parallel_multiple "
    "irrelevance live_simple live_multiple live_parallel live_parallel_multiple "
    "live_irrelevance live_relevance multi_turn_base multi_turn_miss_func "
    "multi_turn_miss_param multi_turn_long_context memory_kv memory_rec_sum"
).split()
PARTS = {
    "bfcl": Part("bfcl", tuple(BFCL_OFFLINE), 1, {"mode": "fc"}),
    "tau2": Part("tau2", ("airline", "retail", "telecom"), 4),
    "vitabench": Part("vitabench", ("delivery", "instore"), 4, {"language": "en"}),
    "finmcp": Part("finmcp", ("single_tool", "multi_tool", "multi_turn"), 1),
}


# -- suites --------------------------------------------------------------------------------


def subset_limits(part: Part, fraction: float | None, limit: int | None, data: Path) -> dict:
    """subset -> samples to run (None: all)."""
    if fraction is None:
        return {subset: limit for subset in part.subsets}
    from harness.config.data_dirs import DataDirs
    from harness.task.registry import get_adapter

    adapter = get_adapter(part.benchmark)
    folder = DataDirs(root=data).for_benchmark(part.benchmark)
    sizes = {s: len(adapter.load(s, data_dir=folder, options=part.options)) for s in part.subsets}
    return {s: max(1, math.ceil(fraction * n)) for s, n in sizes.items()}


def suite_text(
    part: Part, limits: dict[str, int | None], ids: dict[str, list[str]] | None = None
) -> str:
    lines = [
        f"name: full-{part.benchmark}",
        f"trials: {part.trials}",
        "user_model: scripted",
        "judge_model: stub",
        "entries:",
    ]
    for subset in part.subsets:
        lines += [f"  - benchmark: {part.benchmark}", f"    subsets: [{subset}]"]
        if limits.get(subset) is not None:
            lines.append(f"    limit: {limits[subset]}")
        if ids and ids.get(subset):
            lines.append(f"    ids: {json.dumps(ids[subset])}")
        if part.options:
            lines.append(f"    options: {json.dumps(part.options)}")
    return "\n".join(lines) + "\n"


# -- measuring inside a run ------------------------------------------------------------------


class Meter:
    """CPU seconds of the loop thread spent inside some coroutines or calls."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def add(self, seconds: float) -> None:
        self.seconds += seconds


class _Stepped:
    """Awaits a coroutine, adding to ``meter`` the thread CPU time of each of its steps
    (not the time other tasks run while it waits)."""

    def __init__(self, coroutine: Any, meter: Meter):
        self.coroutine = coroutine
        self.meter = meter

    def __await__(self) -> Iterator[Any]:
        steps = self.coroutine.__await__()
        value: Any = None
        error: BaseException | None = None
        while True:
            start = time.thread_time()
            try:
                yielded = steps.throw(error) if error is not None else steps.send(value)
            except StopIteration as stop:
                self.meter.add(time.thread_time() - start)
                return stop.value
            except BaseException:
                self.meter.add(time.thread_time() - start)
                raise
            self.meter.add(time.thread_time() - start)
            try:
                value, error = (yield yielded), None
            except BaseException as exc:  # noqa: BLE001 - passed on to the coroutine
                value, error = None, exc


def unbound(environment: Any, name: str) -> Callable[..., Any]:
    """``environment.<name>``, holding the environment by a weak reference. Its bound
    method, stored on the environment itself, would make the environment a
    reference cycle; the run freezes a large world out of the collector's passes
    once built, so each environment would stay until the run ends (τ² at 64 in
    flight: ~45 MB over the run, all of it the bench's)."""
    reference = weakref.ref(environment)
    method = getattr(type(environment), name)

    def call(*args: Any, **kwargs: Any) -> Any:
        return method(reference(), *args, **kwargs)

    return call


def stepped(function: Callable[..., Any], meter: Meter) -> Callable[..., Any]:
    async def timed(*args: Any, **kwargs: Any) -> Any:
        return await _Stepped(function(*args, **kwargs), meter)

    return timed


def timed_on_loop(function: Callable[..., Any], meter: Meter) -> Callable[..., Any]:
    """A synchronous call, timed when made on the main thread (elsewhere the thread's
    own CPU is counted whole)."""

    def timed(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not threading.main_thread():
            return function(*args, **kwargs)
        start = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            meter.add(time.thread_time() - start)

    return timed


@dataclass
class Meters:
    tool: Meter = field(default_factory=Meter)
    scoring: Meter = field(default_factory=Meter)
    scored: int = 0  # records scored so far (for the RSS marks)


def install_meters(benchmarks: list[str], meters: Meters) -> None:
    """Wrap our adapter objects: each sample's environment's ``execute`` (tool code) and
    the adapter's ``score`` (the benchmark's evaluator) are timed."""
    from harness.task.registry import get_adapter

    for name in benchmarks:
        adapter = get_adapter(name)
        load, score = adapter.load, adapter.score

        def metered_environment(make: Callable[[], Any]) -> Callable[[], Any]:
            def build() -> Any:
                # Building the environment (τ²: its own copy of the domain database)
                # and reading its final state (τ²: tau2's hash of that database, which
                # its evaluator compares) are the benchmark's code, as its tools are.
                environment = timed_on_loop(make, meters.tool)()
                environment.execute = stepped(unbound(environment, "execute"), meters.tool)
                environment.execute_user_call = timed_on_loop(
                    unbound(environment, "execute_user_call"), meters.tool
                )
                environment.final_state = timed_on_loop(
                    unbound(environment, "final_state"), meters.tool
                )
                return environment

            return build

        def metered_load(*args: Any, _load: Any = load, **kwargs: Any) -> Any:
            samples = _load(*args, **kwargs)
            for sample in samples:
                sample.make_environment = metered_environment(sample.make_environment)
            return samples

        async def metered_score(*args: Any, _score: Any = score) -> Any:
            try:
                return await _Stepped(_score(*args), meters.scoring)
            finally:
                meters.scored += 1

        adapter.load = metered_load  # type: ignore[method-assign]
        adapter.score = metered_score  # type: ignore[method-assign]


def thread_cpu() -> dict[str, float]:
    """CPU seconds of each live thread, by name (and ident)."""
    out = {}
    for thread in threading.enumerate():
        if thread.ident is None:
            continue
        try:
            clock = time.pthread_getcpuclockid(thread.ident)
            out[f"{thread.name}#{thread.ident}"] = time.clock_gettime(clock)
        except OSError:
            continue
    return out


def rss_mb(field_name: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


class RssSampler(threading.Thread):
    """Reads VmRSS ten times a second; notes it when the records scored pass each mark."""

    def __init__(self, meters: Meters):
        super().__init__(name="rss-sampler", daemon=True)
        self.meters = meters
        self.total = 0
        self.base = 0
        self.marks: dict[float, float] = {}
        self.stop_event = threading.Event()

    def start_part(self, total: int) -> None:
        self.total, self.base, self.marks = total, self.meters.scored, {}

    def run(self) -> None:
        while not self.stop_event.wait(0.1):
            self.note()

    def note(self) -> None:
        if not self.total:
            return
        done = (self.meters.scored - self.base) / self.total
        for mark in PROGRESS_MARKS:
            if mark not in self.marks and done >= mark:
                self.marks[mark] = rss_mb()


# -- phase 1: record ---------------------------------------------------------------------------


class RecordingClient:
    """The oracle of one episode, with every call's wire request and reply written
    down (the runner asks for a client as each episode starts: the episodes are
    numbered in the runner's order)."""

    def __init__(self, inner: Any, recorder: Recorder, sample_key: str):
        self.inner = inner
        self.recorder = recorder
        self.sample_key = sample_key
        self.episode = recorder.new_episode()
        self.name = getattr(inner, "name", "oracle")

    async def complete(self, messages: Any, tools: Any, params: Any) -> Any:
        turn = await self.inner.complete(messages, tools, params)
        body = wire_body(messages, tools, params)
        self.recorder.note(body, turn, self.sample_key, self.episode)
        return turn

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Recorder:
    """Writes down every call; knows which samples asked each request."""

    def __init__(self, book: ReplyBook):
        self.book = book
        self.calls = 0
        self.episodes = 0
        self.calls_file: Any = None  # the open episodes file of the current part
        self.askers: dict[str, set[str]] = {}  # request key -> sample keys

    def new_episode(self) -> int:
        self.episodes += 1
        return self.episodes

    def note(self, body: dict[str, Any], turn: Any, sample_key: str, episode: int) -> None:
        key = request_key(body)
        self.book.add(key, reply_of(turn))
        self.askers.setdefault(key, set()).add(sample_key)
        self.calls += 1
        self.calls_file.write(call_line(episode, sample_key, body) + "\n")

    def ambiguous_samples(self) -> set[str]:
        """Samples that asked a request the oracle answered two ways (for two samples
        with the same opening, say): a server cannot tell which reply is theirs."""
        return ambiguous_samples(self.book.conflicts, self.askers)


def expected_scores(run_dir: Path) -> dict[str, list[Any]]:
    from harness.store.run_store import read_records

    out = {}
    for key, record in read_records(run_dir / "samples.jsonl").latest.items():
        score = record.get("score") or {}
        out[key] = [record["status"], score.get("passed"), score.get("reward")]
    return out


def record_phase(args: argparse.Namespace) -> None:
    from harness import RunConfig, run_suite
    from harness.config.data_dirs import DataDirs
    from harness.task.registry import get_adapter

    work = Path(args.work)
    book = ReplyBook()
    recorder = Recorder(book)
    for name in args.benchmarks:
        adapter = get_adapter(name)
        oracle = adapter.oracle
        adapter.oracle = lambda sample, _o=oracle: RecordingClient(  # type: ignore[method-assign]
            _o(sample), recorder, sample.key
        )
    meta: dict[str, Any] = {}
    for name in args.benchmarks:
        part = PARTS[name]
        limits = subset_limits(part, args.fraction, args.limit, Path(args.data_dir))
        suite = work / "suites" / f"{name}.yaml"
        suite.parent.mkdir(parents=True, exist_ok=True)
        suite.write_text(suite_text(part, limits), encoding="utf-8")
        (work / "episodes").mkdir(exist_ok=True)
        calls_before, started = recorder.calls, time.perf_counter()
        with (work / "episodes" / f"{name}.jsonl").open("w", encoding="utf-8") as calls_file:
            recorder.calls_file = calls_file
            summary = run_suite(
                RunConfig(
                    suite=str(suite),
                    model="oracle",
                    data_dirs=DataDirs(root=Path(args.data_dir)),
                    concurrency=64,
                    workers=1,
                    cache=False,
                    progress=False,
                    out=work / "oracle" / name,
                )
            )
        expected = expected_scores(work / "oracle" / name)
        (work / "oracle" / f"{name}.expected.json").write_text(json.dumps(expected))
        meta[name] = {
            "records": len(expected),
            "calls": recorder.calls - calls_before,
            "passed": sum(1 for v in expected.values() if v[1]),
            "not_ok": sum(1 for v in expected.values() if v[0] != "ok"),
            "seconds": round(time.perf_counter() - started, 2),
            "run_summary": summary.line() if hasattr(summary, "line") else "",
        }
        print(f"recorded {name}: {meta[name]}", flush=True)
    book.save(work / "book.jsonl")
    ambiguous = recorder.ambiguous_samples()
    for name in args.benchmarks:
        meta[name].update(leave_out_ambiguous(work, PARTS[name], ambiguous))
    meta["_book"] = {"replies": len(book.replies), "conflicts": len(book.conflicts)}
    (work / "record.json").write_text(json.dumps(meta, indent=1))


def leave_out_ambiguous(work: Path, part: Part, ambiguous: set[str]) -> dict[str, Any]:
    """Write the suite the replay runs: the part's samples but the ambiguous ones, in
    the order the runner started them (an adapter may keep the order of the ids it
    is given); say what is left out and what is replayed."""
    name = part.benchmark
    expected = json.loads((work / "oracle" / f"{name}.expected.json").read_text())
    samples = [key.rsplit("#", 1)[0] for key in expected]
    episodes = read_episodes(work / "episodes" / f"{name}.jsonl")
    # Samples that made no model call have no episode: they come last.
    ids = kept_ids([*(e.sample for e in episodes), *samples], ambiguous)
    split = leave_out(episodes, ambiguous)
    replay = Part(name, tuple(s for s in part.subsets if ids.get(s)), part.trials, part.options)
    if not replay.subsets:
        raise SystemExit(f"every {name} sample is ambiguous: nothing to replay")
    suite = work / "suites" / f"{name}.replay.yaml"
    suite.write_text(suite_text(replay, {}, ids), encoding="utf-8")
    left_out_records = sum(1 for sample in samples if sample in ambiguous)
    return {
        "ambiguous": sorted(k for k in ambiguous if k.startswith(name + "/")),
        "left_out_records": left_out_records,
        "left_out_calls": sum(len(e.bodies) for e in split.left_out),
        "replay_records": len(samples) - left_out_records,
        "replay_calls": split.kept_calls,
    }


# -- phase 3: replay ------------------------------------------------------------------------------


def compare_scores(run_dir: Path, expected: dict[str, list[Any]], left_out: set[str]) -> list[str]:
    """The records whose score is not the oracle's (the samples left out apart)."""
    got = expected_scores(run_dir)
    problems = []
    for key, wanted in expected.items():
        if key.rsplit("#", 1)[0] in left_out or got.get(key) == wanted:
            continue
        problems.append(f"{key}: {got.get(key, 'missing')} (oracle: {wanted})")
    extra = sorted(key for key in got if key.rsplit("#", 1)[0] in left_out)
    problems += [f"{key}: replayed, but its sample was to be left out" for key in extra]
    return problems


def replay_phase(args: argparse.Namespace) -> None:
    from harness import RunConfig, run_suite
    from harness.config.data_dirs import DataDirs

    work = Path(args.work)
    meta = json.loads((work / "record.json").read_text())
    meters = Meters()
    install_meters(args.benchmarks, meters)
    sampler = RssSampler(meters)
    sampler.start()
    results: dict[str, Any] = {"rss_start_mb": rss_mb()}
    for name in args.benchmarks:
        sampler.start_part(meta[name]["replay_records"])
        tool0, score0, threads0 = meters.tool.seconds, meters.scoring.seconds, thread_cpu()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        run_dir = work / f"replay-{args.concurrency}" / name
        summary = run_suite(
            RunConfig(
                suite=str(work / "suites" / f"{name}.replay.yaml"),
                model=f"openai/{SERVED_MODEL}",
                api_base=args.url,
                data_dirs=DataDirs(root=Path(args.data_dir)),
                concurrency=args.concurrency,
                workers=args.workers,  # above 1, the meters read this process only
                cache=False,
                progress=False,
                out=run_dir,
            )
        )
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        sampler.note()
        for mark in PROGRESS_MARKS:  # records that were never scored (errors) count too
            sampler.marks.setdefault(mark, rss_mb())
        threads1 = thread_cpu()
        by_kind = {"tool": 0.0, "to_thread": 0.0, "sampler": 0.0, "loop": 0.0, "other": 0.0}
        for key, seconds in threads1.items():
            thread_name = key.rsplit("#", 1)[0]
            kind = (
                "tool"
                if thread_name == "tool"
                else "to_thread"
                if thread_name.startswith("asyncio_")
                else "sampler"
                if thread_name == "rss-sampler"
                else "loop"
                if thread_name == "MainThread"
                else "other"
            )
            by_kind[kind] += seconds - threads0.get(key, 0.0)
        expected = json.loads((work / "oracle" / f"{name}.expected.json").read_text())
        problems = compare_scores(run_dir, expected, set(meta[name]["ambiguous"]))
        tool = by_kind["tool"] + (meters.tool.seconds - tool0)
        scoring = by_kind["to_thread"] + (meters.scoring.seconds - score0)
        results[name] = {
            "records": meta[name]["replay_records"],
            "calls": meta[name]["replay_calls"],
            "wall_s": wall,
            "run_s": summary.elapsed_s,
            "ok": summary.ok,
            "infra_errors": summary.infra_errors,
            "cpu_s": cpu,
            "tool_s": tool,
            "scoring_s": scoring,
            "threads": by_kind,
            "harness_s": cpu - tool - scoring - by_kind["sampler"],
            "rss_marks": {str(k): v for k, v in sampler.marks.items()},
            "mismatches": len(problems),
            "mismatch_examples": problems[:5],
            "run_dir": str(run_dir),
        }
        print(f"replayed {name} at {args.concurrency}: {results[name]}", flush=True)
    sampler.stop_event.set()
    results["peak_rss_mb"] = rss_mb("VmHWM")
    Path(args.out).write_text(json.dumps(results, indent=1))


# -- phase 4: the bare client ---------------------------------------------------------------------


@dataclass
class BareRun:
    """The sequential bare client's run: its seconds, calls sent and failed, and each
    episode's call latencies (in the runner's order)."""

    seconds: float
    calls: int
    failed: int
    latencies: list[list[float]]


async def sequential_bare_client(url: str, episodes: list[Episode], concurrency: int) -> BareRun:
    """POST each episode's recorded bodies one after another (each waits for the
    previous reply, as the episode's next request would), ``concurrency`` episodes at
    a time, taken in the runner's order: the fair ceiling, with no harness code."""
    import aiohttp

    target = f"{url}/chat/completions"
    headers = {"Content-Type": "application/json"}
    latencies: list[list[float]] = [[] for _ in episodes]
    failed = 0
    position = 0
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def worker() -> None:
            nonlocal failed, position
            while position < len(episodes):
                index = position
                position += 1
                for body in episodes[index].bodies:
                    sent = time.perf_counter()
                    async with session.post(target, data=body, headers=headers) as response:
                        await response.read()
                        failed += response.status != 200
                    latencies[index].append(time.perf_counter() - sent)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        seconds = time.perf_counter() - started
    return BareRun(seconds, sum(len(e.bodies) for e in episodes), failed, latencies)


def bare_phase(url: str, work: Path, name: str, ambiguous: set[str], concurrency: int) -> BareRun:
    episodes = leave_out(read_episodes(work / "episodes" / f"{name}.jsonl"), ambiguous).kept
    return asyncio.run(sequential_bare_client(url, episodes, concurrency))


# -- phase 5: the commands --------------------------------------------------------------------


def timed_command(*argv: str) -> tuple[float, int, str]:
    started = time.perf_counter()
    done = subprocess.run([HARNESS, *argv], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        print(f"harness {' '.join(argv)} exited {done.returncode}: {done.stderr[-1500:]}")
    return seconds, done.returncode, done.stdout


def chromium_open_seconds(page: Path, scratch: Path) -> float | None:
    """The page's own time (ms in its body's data-ready) until the list is shown."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        return None
    command = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={scratch / 'chromium-profile'}",
        "--virtual-time-budget=5000",
        "--dump-dom",
        page.as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    ready = re.search(r'data-ready="(\d+)"', done.stdout)
    opened = 'data-opened="' in done.stdout
    if not ready or not opened:
        return None
    return int(ready.group(1)) / 1000


def commands_phase(runs: list[Path], records: int, scratch: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"failed": []}

    def note(name: str, result: tuple[float, int, str]) -> float:
        if result[1] != 0:
            out["failed"].append(name)
        return result[0]

    # Per run as well, so that the line says which benchmark's regrade costs what.
    out["score_s_by_run"] = {
        run.name: round(note("score", timed_command("score", str(run))), 2) for run in runs
    }
    out["score_s"] = sum(out["score_s_by_run"].values())
    out["leaderboard_s"] = note("leaderboard", timed_command("leaderboard", *map(str, runs)))
    # One compare is of two runs: the target is each one's time (the slowest is
    # the largest run's); every run's is printed.
    out["compare_s_by_run"] = {
        run.name: round(note("compare", timed_command("compare", str(run), str(run))), 2)
        for run in runs
    }
    out["compare_s"] = max(out["compare_s_by_run"].values())
    page = scratch / "report.html"
    out["report_s"] = note("report", timed_command("report", *map(str, runs), "--out", str(page)))
    out["report_bytes_per_sample"] = page.stat().st_size / records if page.exists() else None
    out["open_s"] = chromium_open_seconds(page, scratch) if page.exists() else None
    out["paper_s"] = note(
        "paper",
        timed_command(
            "paper", *map(str, runs), "--baseline", str(runs[0]), "--out", str(scratch / "paper")
        ),
    )
    return out


# -- orchestration ----------------------------------------------------------------------------


def run_phase(argv: list[str], log: Path) -> None:
    command = [sys.executable, str(Path(__file__).resolve()), *argv]
    with log.open("a", encoding="utf-8") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise SystemExit(f"phase {argv[1]} failed (exit {done.returncode}); log {log}:\n{tail}")


def start_server(work: Path, latency: float) -> tuple[subprocess.Popen[str], str]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--phase", "serve", "--work", str(work)]
    argv += ["--latency", str(latency)]
    stderr = (work / "server.err").open("w")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("REPLAY_SERVER_URL "):
        proc.kill()
        raise SystemExit(f"the replay server did not start: {line!r}; see {work}/server.err")
    return proc, line.split()[1]


def server_counts(work: Path) -> dict[str, Any]:
    time.sleep(1.0)  # the server writes its counts twice a second
    return json.loads((work / "server.json").read_text())


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Level:
    """What one concurrency measured."""

    concurrency: int
    replay: dict[str, Any]
    bare: dict[str, BareRun]
    unmatched: int

    def schedule(self, name: str) -> Schedule:
        """The best schedules of a benchmark's episodes at this concurrency, from the
        bare client's per-call latencies."""
        return best_schedule(self.bare[name].latencies, self.concurrency)


def growth_start(records: int, concurrency: int) -> float:
    """The progress mark RSS growth is measured from: the first at which as many
    records are done as run at once. Before it the run is still filling its
    window (at 256 in flight, τ²'s 656 records are 40% in flight: its worlds are
    still being built at 10%), which is not memory that grows with the records.
    The last mark before the end when no mark gets there (a subset smaller than
    the window)."""
    starts = [m for m in PROGRESS_MARKS if m < 1.0]
    window = min(concurrency, records)
    return next((m for m in starts if m * records >= window), starts[-1])


def growth(marks: dict[str, float], start: float) -> float | None:
    if str(start) not in marks or "1.0" not in marks or not marks[str(start)]:
        return None
    return marks["1.0"] / marks[str(start)] - 1


def print_level(level: Level, latency: float, benchmarks: list[str], workers: int = 1) -> None:
    c = level.concurrency
    ideal_calls = c / latency
    print(
        f"\n== {c} in flight, {latency * 1000:.0f} ms server latency "
        f"(ideal {ideal_calls:.0f} calls/s; cores: {os.cpu_count()}) =="
    )
    if workers > 1:
        print(f"{workers} worker processes: the ms/call columns read the main process only")
    header = (
        f"{'benchmark':<10} {'records':>7} {'calls':>7} {'run s':>7} {'cmd s':>7} {'samp/s':>7} "
        f"{'ideal':>7} {'/ideal':>6} {'bare':>7} {'/bare':>6} {'harn ms/call':>12} "
        f"{'harn ms/samp':>12} {'tool ms/call':>12} {'score ms/call':>13} {'RSS 10/50/100% MB':>19} "
        f"{'mismatch':>8}"
    )
    print(header)
    totals = {"records": 0, "calls": 0, "run_s": 0.0, "wall_s": 0.0, "bare_s": 0.0}
    totals.update({"harness_s": 0.0, "tool_s": 0.0, "scoring_s": 0.0, "mismatches": 0})
    for name in benchmarks:
        r = level.replay[name]
        bare_s = level.bare[name].seconds
        calls, records = r["calls"], r["records"]
        ideal = ideal_calls * records / calls
        rate = records / r["run_s"]
        bare_rate = records / bare_s
        marks = r["rss_marks"]
        rss = "/".join(f"{marks.get(str(m), 0):.0f}" for m in PROGRESS_MARKS)
        print(
            f"{name:<10} {records:>7} {calls:>7} {r['run_s']:>7.1f} {r['wall_s']:>7.1f} "
            f"{rate:>7.1f} {ideal:>7.1f} {rate / ideal:>6.2f} {bare_rate:>7.1f} "
            f"{rate / bare_rate:>6.2f} {r['harness_s'] / calls * 1000:>12.2f} "
            f"{r['harness_s'] / records * 1000:>12.2f} {r['tool_s'] / calls * 1000:>12.2f} "
            f"{r['scoring_s'] / calls * 1000:>13.2f} {rss:>19} {r['mismatches']:>8}"
        )
        for key in ("records", "calls", "run_s", "wall_s", "harness_s", "tool_s", "scoring_s"):
            totals[key] += r[key]
        totals["bare_s"] += bare_s
        totals["mismatches"] += r["mismatches"]
        for key in ("independent", "in_order", "longest_first"):
            totals[key] = totals.get(key, 0.0) + getattr(level.schedule(name), key)
    t = totals
    ideal = ideal_calls * t["records"] / t["calls"]
    rate = t["records"] / t["run_s"]
    print(
        f"{'suite':<10} {t['records']:>7} {t['calls']:>7} {t['run_s']:>7.1f} {t['wall_s']:>7.1f} "
        f"{rate:>7.1f} {ideal:>7.1f} {rate / ideal:>6.2f} {t['records'] / t['bare_s']:>7.1f} "
        f"{t['bare_s'] / t['run_s']:>6.2f} {t['harness_s'] / t['calls'] * 1000:>12.2f} "
        f"{t['harness_s'] / t['records'] * 1000:>12.2f} {t['tool_s'] / t['calls'] * 1000:>12.2f} "
        f"{t['scoring_s'] / t['calls'] * 1000:>13.2f} {'':>19} {t['mismatches']:>8}"
    )
    print(
        f"peak RSS {level.replay['peak_rss_mb']:.0f} MB (at start {level.replay['rss_start_mb']:.0f} MB); "
        f"unmatched requests at the server: {level.unmatched}"
    )
    for name in benchmarks:
        r = level.replay[name]
        if r["mismatches"]:
            print(
                f"  {name}: {r['mismatches']} scores differ from the oracle's, e.g. "
                + "; ".join(r["mismatch_examples"][:3])
            )
        if level.bare[name].failed:
            print(f"  {name}: the bare client had {level.bare[name].failed} failed requests")
    print_schedules(level, benchmarks, totals)


def schedule_row(
    name: str, schedule: Schedule, bare_s: float, run_s: float, episodes: str, longest: str
) -> str:
    independent = schedule.independent
    return (
        f"{name:<10} {episodes:>8} {longest:>7} {independent:>7.1f} {schedule.in_order:>7.1f} "
        f"{schedule.longest_first:>7.1f} {bare_s:>7.1f} {run_s:>7.1f} "
        f"{independent / schedule.in_order:>7.2f} {independent / schedule.longest_first:>7.2f} "
        f"{independent / bare_s:>7.2f} {independent / run_s:>7.2f} "
        f"{bare_s / run_s:>7.2f} {bare_s / schedule.in_order:>7.2f} "
        f"{bare_s / schedule.longest_first:>7.2f}"
    )


def print_schedules(level: Level, benchmarks: list[str], totals: dict[str, float]) -> None:
    """The best possible schedules beside what was measured. Seconds: posting every
    call independently, whole episodes in the runner's order and longest first (all
    from the bare client's per-call latencies), the bare client's and the run's.
    Then each as a share of the independent posting's rate, and the run's, the best
    in-order and the best longest-first schedule's rates as a share of the bare
    client's (the yardstick)."""
    print(
        f"best possible schedules of the episodes at {level.concurrency} in flight "
        "(chains of the bare client's per-call latencies):"
    )
    print(
        f"{'benchmark':<10} {'episodes':>8} {'longest':>7} {'indep s':>7} {'order s':>7} "
        f"{'LF s':>7} {'bare s':>7} {'run s':>7} | {'share of independent posting:':<31} "
        f"| {'share of the bare client:':<23}"
    )
    print(
        f"{'':<10} {'':>8} {'calls':>7} {'':>7} {'':>7} {'':>7} {'':>7} {'':>7} "
        f"{'order':>7} {'LF':>7} {'bare':>7} {'run':>7} "
        f"{'run':>7} {'order':>7} {'LF':>7}"
    )
    for name in benchmarks:
        latencies = level.bare[name].latencies
        print(
            schedule_row(
                name,
                level.schedule(name),
                level.bare[name].seconds,
                level.replay[name]["run_s"],
                str(len(latencies)),
                str(max((len(calls) for calls in latencies), default=0)),
            )
        )
    # The suite's benchmarks run one after another: their times add up.
    suite = Schedule(totals["independent"], totals["in_order"], totals["longest_first"])
    print(schedule_row("suite", suite, totals["bare_s"], totals["run_s"], "", ""))


def level_targets(level: Level, benchmarks: list[str]) -> list[Target]:
    c = level.concurrency
    runs = [level.replay[n] for n in benchmarks]
    run_s = sum(r["run_s"] for r in runs)
    bare_s = sum(level.bare[n].seconds for n in benchmarks)
    targets = [
        Target(
            f"[{c}] suite samples/s / sequential bare client's",
            bare_s / run_s,
            MIN_RATIO_TO_BARE,
            False,
        )
    ]
    if c == TAU2_RATIO_CONCURRENCY and "tau2" in benchmarks:
        targets.append(
            Target(
                f"[{c}] tau2 samples/s / sequential bare client's",
                level.bare["tau2"].seconds / level.replay["tau2"]["run_s"],
                MIN_TAU2_RATIO_TO_BARE,
                False,
            )
        )
    for name in benchmarks:
        r = level.replay[name]
        targets.append(
            Target(
                f"[{c}] {name} harness CPU per model call (environment code apart)",
                r["harness_s"] / r["calls"] * 1000,
                MAX_HARNESS_MS_PER_CALL,
                unit=" ms",
            )
        )
    targets.append(
        Target(f"[{c}] peak RSS", level.replay["peak_rss_mb"], MAX_PEAK_RSS_MB, unit=" MB")
    )
    for name in benchmarks:
        replay = level.replay[name]
        start = growth_start(replay["records"], c)
        targets.append(
            Target(
                f"[{c}] {name} RSS growth {start:.0%} -> 100% of records",
                growth(replay["rss_marks"], start),
                MAX_RSS_GROWTH,
            )
        )
    return targets


def command_targets(done: dict[str, Any]) -> list[Target]:
    return [
        Target("harness score (regrade, every run)", done["score_s"], MAX_REGRADE_S, unit=" s"),
        Target("harness leaderboard (all runs)", done["leaderboard_s"], MAX_BOARD_S, unit=" s"),
        Target(
            "harness compare (each run with itself; the slowest)",
            done["compare_s"],
            MAX_BOARD_S,
            unit=" s",
        ),
        Target("harness report (all runs)", done["report_s"], MAX_REPORT_S, unit=" s"),
        Target(
            "report bytes per sample",
            done["report_bytes_per_sample"],
            MAX_REPORT_BYTES_PER_SAMPLE,
            unit=" B",
        ),
        Target("report opens in headless Chromium", done["open_s"], MAX_OPEN_S, unit=" s"),
    ]


def main_phase(args: argparse.Namespace) -> int:
    levels = [int(c) for c in args.concurrency.split(",")]
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="full-suite-"))
    work.mkdir(parents=True, exist_ok=True)
    common = [
        "--work",
        str(work),
        "--data-dir",
        str(args.data_dir),
        "--benchmarks",
        ",".join(args.benchmarks),
    ]
    slice_flags = (["--fraction", str(args.fraction)] if args.fraction is not None else []) + (
        ["--limit", str(args.limit)] if args.limit is not None else []
    )
    started = time.perf_counter()
    print(f"work folder: {work}", flush=True)
    run_phase(["--phase", "record", *common, *slice_flags], work / "record.log")
    meta = json.loads((work / "record.json").read_text())
    print(f"record phase done: {work / 'record.json'}", flush=True)  # summed up below
    server, url = start_server(work, args.latency)
    results: list[Level] = []
    try:
        for c in levels:
            before = server_counts(work)
            out = work / f"replay-{c}.json"
            run_phase(
                [
                    "--phase",
                    "replay",
                    *common,
                    "--url",
                    url,
                    "--concurrency",
                    str(c),
                    "--workers",
                    str(args.workers),
                    "--out",
                    str(out),
                ],
                work / f"replay-{c}.log",
            )
            replay = json.loads(out.read_text())
            after = server_counts(work)
            bare = {}
            for name in args.benchmarks:
                left_out = set(meta[name]["ambiguous"])
                bare[name] = bare_phase(url, work, name, left_out, c)
            results.append(Level(c, replay, bare, after["unmatched"] - before["unmatched"]))
            print_level(results[-1], args.latency, args.benchmarks, args.workers)
            if after["examples"]:
                print("unmatched, e.g.:", *after["examples"], sep="\n  ")
        runs = [work / f"replay-{levels[-1]}" / name for name in args.benchmarks]
        records = sum(meta[n]["replay_records"] for n in args.benchmarks)
        done = commands_phase(runs, records, work)
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(
        f"\nrecord phase: {meta['_book']['replies']} distinct requests, "
        f"{meta['_book']['conflicts']} asked with two different replies"
    )
    for name in args.benchmarks:
        m = meta[name]
        print(
            f"  {name}: oracle {m['passed']}/{m['records']} passed, {m['not_ok']} not ok, "
            f"{m['calls']} model calls, {m['seconds']} s in-process; "
            f"{len(m['ambiguous'])} samples ambiguous ({m['left_out_records']} records, "
            f"{m['left_out_calls']} calls), left out of both sides; replayed "
            f"{m['replay_records']} records, {m['replay_calls']} calls"
        )
    print(
        f"commands on the {levels[-1]}-in-flight runs: "
        + ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in done.items())
    )
    targets = [t for level in results for t in level_targets(level, args.benchmarks)]
    targets += command_targets(done)
    print()
    print("\n".join(target_table(targets)))
    mismatches = sum(level.replay[n]["mismatches"] for level in results for n in args.benchmarks)
    unmatched = sum(level.unmatched for level in results)
    code = exit_code(targets, mismatches + len(done["failed"]), unmatched)
    print(
        f"\nscores differing from the oracle's: {mismatches}; unmatched requests: {unmatched}; "
        f"failed commands: {done['failed'] or 'none'}; {time.perf_counter() - started:.0f} s in all"
        f" -> exit {code}"
    )
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return code


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", default="64,256", help="comma-separated levels")
    parser.add_argument("--latency", type=float, default=0.2, help="server seconds per reply")
    parser.add_argument("--fraction", type=float, help="this share of every subset (a slice)")
    parser.add_argument("--limit", type=int, help="at most N samples per subset")
    parser.add_argument("--benchmarks", default=",".join(PARTS))
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA))
    parser.add_argument("--keep", help="work folder to keep (default: a temporary one)")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes of the replay runs (above 1, the CPU columns read the main "
        "process only: compare the wall-time columns)",
    )
    # The phases in processes of their own (started by the main one).
    parser.add_argument(
        "--phase",
        choices=["main", "record", "serve", "replay"],
        default="main",
        help=argparse.SUPPRESS,
    )
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.benchmarks = [b for b in args.benchmarks.split(",") if b]
    unknown = [b for b in args.benchmarks if b not in PARTS]
    if unknown:
        parser.error(f"unknown benchmarks {unknown} (known: {', '.join(PARTS)})")
    if args.phase == "replay":
        args.concurrency = int(args.concurrency)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.phase == "record":
        record_phase(args)
        return 0
    if args.phase == "serve":
        serve(Path(args.work) / "book.jsonl", args.latency, Path(args.work) / "server.json")
        return 0
    if args.phase == "replay":
        replay_phase(args)
        return 0
    return main_phase(args)


if __name__ == "__main__":
    sys.exit(main())
