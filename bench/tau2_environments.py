"""What τ² environments cost a run: CPU per model call, the collector, peak memory.

    uv run python bench/tau2_environments.py [--benchmark tau2] [--subset airline]
        [--limit 50] [--trials 4] [--concurrency 64] [--latency 0.2]

A CPU-bound τ² slice: every task of the subset, ``--trials`` times, with the
oracle agent (the gold actions) behind a model that answers after ``--latency``
seconds, and the scripted user, ``--concurrency`` episodes in flight, through the
runner as a run uses it (records, scoring from the live state). There is no
network: what the process spends is the harness and the environments.

It prints, per model call: the process CPU, the environment CPU (building the
environment, its tool calls and its final state: the tool worker's CPU, plus
the final state's where it runs on the event loop), and the cyclic garbage
collector's time (its passes in any thread); and the run's wall time and the
process's peak RSS. Targets: environment CPU <= 10 ms per call, peak RSS at 256
in flight <= 1.5 GB. A first, untimed pass fills the on-disk gold-hash cache.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.boundary.tool_budget import run_tool_call  # noqa: E402
from harness.config.suites import Suite, SuiteEntry  # noqa: E402
from harness.models.base import ModelClient, WrappedClient  # noqa: E402
from harness.run.runner import Runner  # noqa: E402
from harness.run.suite_samples import load_suite_samples  # noqa: E402
from harness.store.run_store import RunStore  # noqa: E402
from harness.strategies.plain import PlainStrategy  # noqa: E402
from harness.task.contract import Environment, Sample, Services, WrappedEnvironment  # noqa: E402
from harness.task.registry import get_adapter  # noqa: E402
from harness.types import AssistantTurn, SamplingParams  # noqa: E402

ENV_CPU_TARGET_MS = 10.0
RSS_TARGET_GB = 1.5


@dataclasses.dataclass
class Meter:
    """What the slice spent, added up as it runs."""

    calls: int = 0
    loop_final_state_s: float = 0.0  # final states taken on the event-loop thread
    gc_s: float = 0.0
    gc_full: int = 0
    _gc_started: float = 0.0

    def on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
            return
        self.gc_s += time.perf_counter() - self._gc_started
        self.gc_full += info["generation"] == 2


class DelayedModel(WrappedClient):
    """The oracle, answering after a fixed latency (a model server's round trip)."""

    def __init__(self, inner: ModelClient, latency_s: float, meter: Meter):
        super().__init__(inner)
        self.latency_s = latency_s
        self.meter = meter

    async def complete(self, messages, tools, params) -> AssistantTurn:
        self.meter.calls += 1
        await asyncio.sleep(self.latency_s)
        return await self.inner.complete(messages, tools, params)


class MeteredEnvironment(WrappedEnvironment):
    """Counts the CPU of a final state taken on the event-loop thread (the tool
    worker's CPU, measured as a whole, already holds one taken there)."""

    def __init__(self, inner: Environment, meter: Meter):
        super().__init__(inner)
        self.meter = meter

    def final_state(self) -> Any:
        on_loop = threading.current_thread() is threading.main_thread()
        started = time.thread_time()
        try:
            return self.inner.final_state()
        finally:
            if on_loop:
                self.meter.loop_final_state_s += time.thread_time() - started


def metered(sample: Sample, meter: Meter) -> Sample:
    make = sample.make_environment
    return dataclasses.replace(sample, make_environment=lambda: MeteredEnvironment(make(), meter))


@dataclasses.dataclass
class Slice:
    wall_s: float
    cpu_s: float
    tool_cpu_s: float
    episodes: int
    ok: int
    meter: Meter


def run_slice(samples: list[Sample], args: argparse.Namespace, trials: int) -> Slice:
    meter = Meter()
    adapter = get_adapter(args.benchmark)
    samples = [metered(sample, meter) for sample in samples]
    with tempfile.TemporaryDirectory() as folder:
        store = RunStore(Path(folder) / "run")
        store.write_manifest({"run_id": "bench", "model": {"name": "oracle"}})
        store.open_for_append()
        runner = Runner(
            store,
            PlainStrategy(),
            lambda sample: DelayedModel(adapter.oracle(sample), args.latency, meter),
            Services(),
            SamplingParams(),
            concurrency=args.concurrency,
        )

        async def go() -> tuple[Any, float]:
            tool_cpu = -await run_tool_call(time.thread_time)
            counts = await runner.run(samples, trials)
            tool_cpu += await run_tool_call(time.thread_time)
            return counts, tool_cpu

        gc.callbacks.append(meter.on_gc)
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            counts, tool_cpu = asyncio.run(go())
        finally:
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            gc.callbacks.remove(meter.on_gc)
            store.close()
    return Slice(wall, cpu, tool_cpu, counts.ran, counts.ok, meter)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="tau2", choices=["tau2", "tau3"])
    parser.add_argument("--subset", default="airline")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    suite = Suite(
        name="bench",
        entries=[SuiteEntry(benchmark=args.benchmark, subsets=[args.subset], limit=args.limit)],
    )
    plan = load_suite_samples(suite)
    if not plan.samples:
        sys.exit(f"no samples: {[n.reason for n in plan.not_run]}")
    run_slice(plan.samples, argparse.Namespace(**{**vars(args), "latency": 0.0}), 1)  # warm
    result = run_slice(plan.samples, args, args.trials)
    meter = result.meter
    calls = max(meter.calls, 1)
    env_cpu_ms = (result.tool_cpu_s + meter.loop_final_state_s) * 1000 / calls
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    print(
        f"{args.benchmark} {args.subset}: {result.episodes} episodes ({result.ok} ok), "
        f"{meter.calls} model calls, {args.concurrency} in flight, "
        f"{args.latency * 1000:.0f} ms per call\n"
        f"  wall {result.wall_s:.2f} s, process CPU {result.cpu_s:.2f} s "
        f"= {result.cpu_s * 1000 / calls:.2f} ms per call\n"
        f"  environment CPU {env_cpu_ms:.2f} ms per call (target <= {ENV_CPU_TARGET_MS:g}: "
        f"{'met' if env_cpu_ms <= ENV_CPU_TARGET_MS else 'not met'}); of it on the event "
        f"loop {meter.loop_final_state_s * 1000 / calls:.2f} ms\n"
        f"  garbage collector {meter.gc_s:.2f} s ({meter.gc_s * 1000 / calls:.2f} ms per call, "
        f"{meter.gc_full} full passes)\n"
        f"  peak RSS {peak_gb:.2f} GB (target at 256 in flight <= {RSS_TARGET_GB:g})"
    )


if __name__ == "__main__":
    main()
