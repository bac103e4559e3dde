"""tau2 scoring cost: the adapter's scoring vs tau2's own evaluator, same transcripts.

    python bench/tau2_scoring.py [--domains airline,retail,telecom] [--limit N]
                                 [--variants oracle,drop,null]

For every base task of each domain it runs episodes with the scripted user:
``oracle`` (the gold actions), ``drop`` (the oracle without the task's last
state-changing gold action; tasks without one are skipped) and ``null`` (an agent
that never calls a tool). Each transcript is scored by:
- official: ``tau2.evaluator.evaluator.evaluate_simulation`` on the transcript as
  a tau2 SimulationRun;
- ours, first: the adapter's ``score_now`` right after the episode (a run's
  scoring pass): the live environment's final state, the gold state from the
  on-disk cache (as after the first run of this tau2 version), nothing in memory;
- ours, regrade: the stored record scored again (``harness score``): a replay on a
  fresh environment, the gold state in memory.
Once per task, before that, ours, cold: the first scoring when the on-disk gold
cache is empty (once per tau2 version). The cache is a fresh temporary folder.
Also shown: the cost the live state adds at the end of each episode (hashing the
databases, running the task's assertions).
Rewards must be identical (the script fails otherwise). Per domain it prints the
mean seconds per transcript and the speed-ups of ours over the official evaluator.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.adapters.tau2 import Tau2Adapter  # noqa: E402
from harness.adapters.tau2.domains import quiet_tau2, write_tools  # noqa: E402
from harness.adapters.tau2.gold_cache import CACHE_ENV, clear_memory  # noqa: E402
from harness.adapters.tau2.official import official_reward, simulation_run  # noqa: E402
from harness.adapters.tau2.oracle import Tau2Oracle  # noqa: E402
from harness.models.base import ModelClient, NullClient  # noqa: E402
from harness.strategies.base import PlainStrategy  # noqa: E402
from harness.task import Sample, Services  # noqa: E402
from harness.types import SamplingParams, Trajectory  # noqa: E402

VARIANTS = ("oracle", "drop", "null")


@dataclass
class Timings:
    transcripts: int = 0
    cold: list[float] = field(default_factory=list)
    first: list[float] = field(default_factory=list)
    official: list[float] = field(default_factory=list)
    regrade: list[float] = field(default_factory=list)
    episode_end: list[float] = field(default_factory=list)
    rewards: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))


def variant_model(variant: str, sample: Sample, domain: str) -> ModelClient | None:
    from harness.adapters.tau2.domains import task_from_dict

    task = task_from_dict(sample.gold)
    if variant == "oracle":
        return Tau2Oracle(task)
    if variant == "null":
        return NullClient()
    writes = [a for a in task.evaluation_criteria.actions or [] if a.name in write_tools(domain)]
    return Tau2Oracle(task, skip_action_ids={writes[-1].action_id}) if writes else None


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def timed(function, *args):
    started = time.perf_counter()
    value = function(*args)
    return value, time.perf_counter() - started


def check(domain: str, sample: Sample, variant: str, **rewards: float) -> None:
    if len(set(rewards.values())) != 1:
        raise SystemExit(f"reward mismatch on {domain}/{sample.id} ({variant}): {rewards}")


async def bench_domain(domain: str, limit: int | None, variants: list[str]) -> Timings:
    from harness.adapters.tau2.domains import task_from_dict

    adapter = Tau2Adapter()
    samples = adapter.load(domain)[:limit]
    services = Services()
    timings = Timings()
    for sample in samples:  # once per task: the gold cache on disk is still empty
        trajectory = await PlainStrategy().run(
            sample, Tau2Oracle(task_from_dict(sample.gold)), services, SamplingParams()
        )
        clear_memory()
        score, elapsed = timed(adapter.score_now, sample, trajectory, services)
        timings.cold.append(elapsed)
        _, elapsed = timed(sample.make_environment().final_state)
        timings.episode_end.append(elapsed)
    for sample in samples:
        task = task_from_dict(sample.gold)
        for variant in variants:
            model = variant_model(variant, sample, domain)
            if model is None:
                continue
            trajectory = await PlainStrategy().run(sample, model, services, SamplingParams())
            clear_memory()  # a new run: nothing in memory, the gold state on disk
            first, elapsed = timed(adapter.score_now, sample, trajectory, services)
            timings.first.append(elapsed)

            simulation = simulation_run(task, trajectory)
            official, elapsed = timed(official_reward, domain, task, simulation)
            timings.official.append(elapsed)

            stored = Trajectory.from_dict(json.loads(json.dumps(trajectory.to_dict())))
            regraded, elapsed = timed(adapter.score_now, sample, stored, services)
            timings.regrade.append(elapsed)

            check(
                domain,
                sample,
                variant,
                first=first.reward,
                official=official,
                regrade=regraded.reward,
            )
            sources = (first.details["state_source"], regraded.details["state_source"])
            if sources not in (("live", "replay"), (None, None)):
                raise SystemExit(f"{domain}/{sample.id} ({variant}): state sources {sources}")
            timings.transcripts += 1
            timings.rewards[variant].append(first.reward)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", default="airline,retail,telecom")
    parser.add_argument("--limit", type=int, default=None, help="first N tasks per domain")
    parser.add_argument("--variants", default="oracle,drop")
    parser.add_argument("--cache-dir", help="gold cache folder (default: a fresh temporary one)")
    args = parser.parse_args()
    os.environ[CACHE_ENV] = args.cache_dir or tempfile.mkdtemp(prefix="tau2-gold-")
    variants = [v for v in args.variants.split(",") if v]
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)}; choose from {VARIANTS}")

    # Import tau2's evaluator (and litellm with it) before anything is timed.
    quiet_tau2()
    import tau2.evaluator.evaluator  # noqa: F401

    header = (
        f"{'domain':8} {'n':>4} {'official s':>10} {'first s':>8} {'regrade s':>9} {'cold s':>7}"
        f" {'episode end s':>13} {'x first':>8} {'x regrade':>9} {'x cold':>7}  rewards (sum/n)"
    )
    print(header)
    for domain in args.domains.split(","):
        t = asyncio.run(bench_domain(domain, args.limit, variants))
        official, first, regrade, cold = (
            mean(t.official),
            mean(t.first),
            mean(t.regrade),
            mean(t.cold),
        )
        rewards = ", ".join(f"{v} {sum(r):g}/{len(r)}" for v, r in t.rewards.items())
        print(
            f"{domain:8} {t.transcripts:>4} {official:>10.4f} {first:>8.4f} {regrade:>9.4f}"
            f" {cold:>7.4f} {mean(t.episode_end):>13.4f} {official / first:>7.1f}x"
            f" {official / regrade:>8.2f}x {official / cold:>6.2f}x  {rewards}",
            flush=True,
        )
    print("rewards identical to tau2's evaluate_simulation on every transcript, both paths")


if __name__ == "__main__":
    sys.exit(main())
