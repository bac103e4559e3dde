"""tau2 scoring cost: the adapter's scoring vs tau2's own evaluator, same transcripts.

    python bench/tau2_scoring.py [--domains airline,retail,telecom] [--limit N]
                                 [--variants oracle,drop,null]

For every base task of each domain it runs episodes with the scripted user:
``oracle`` (the gold actions), ``drop`` (the oracle without the task's last
state-changing gold action; tasks without one are skipped) and ``null`` (an agent
that never calls a tool). Each transcript is then scored three times:
- ours, first time: the adapter's ``score_now`` with the task's gold hashes not
  yet cached (the cost of a run's single scoring pass);
- official: ``tau2.evaluator.evaluator.evaluate_simulation`` on the same
  transcript as a tau2 SimulationRun;
- ours, again: the same transcript once more (regrades, further trials).
Rewards must be identical (the script fails otherwise). Per domain it prints the
mean seconds per transcript and the speed-up of ours over the official evaluator.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.adapters.tau2 import Tau2Adapter  # noqa: E402
from harness.adapters.tau2.domains import quiet_tau2, write_tools  # noqa: E402
from harness.adapters.tau2.official import official_reward, simulation_run  # noqa: E402
from harness.adapters.tau2.oracle import Tau2Oracle  # noqa: E402
from harness.models.base import ModelClient, NullClient  # noqa: E402
from harness.strategies.base import PlainStrategy  # noqa: E402
from harness.task import Sample, Services  # noqa: E402
from harness.types import SamplingParams  # noqa: E402

VARIANTS = ("oracle", "drop", "null")


@dataclass
class Timings:
    transcripts: int = 0
    first: list[float] = field(default_factory=list)
    official: list[float] = field(default_factory=list)
    again: list[float] = field(default_factory=list)
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


async def bench_domain(domain: str, limit: int | None, variants: list[str]) -> Timings:
    from harness.adapters.tau2.domains import task_from_dict

    adapter = Tau2Adapter()
    samples = adapter.load(domain)[:limit]
    services = Services()
    timings = Timings()
    for sample in samples:
        task = task_from_dict(sample.gold)
        first_of_task = True
        for variant in variants:
            model = variant_model(variant, sample, domain)
            if model is None:
                continue
            trajectory = await PlainStrategy().run(sample, model, services, SamplingParams())
            started = time.perf_counter()
            ours = adapter.score_now(sample, trajectory, services).reward
            elapsed = time.perf_counter() - started
            (timings.first if first_of_task else timings.again).append(elapsed)
            first_of_task = False

            simulation = simulation_run(task, trajectory)
            started = time.perf_counter()
            official = official_reward(domain, task, simulation)
            timings.official.append(time.perf_counter() - started)

            started = time.perf_counter()
            again = adapter.score_now(sample, trajectory, services).reward
            timings.again.append(time.perf_counter() - started)

            if not ours == official == again:
                raise SystemExit(
                    f"reward mismatch on {domain}/{sample.id} ({variant}): "
                    f"ours {ours}, official {official}, ours again {again}"
                )
            timings.transcripts += 1
            timings.rewards[variant].append(ours)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", default="airline,retail,telecom")
    parser.add_argument("--limit", type=int, default=None, help="first N tasks per domain")
    parser.add_argument("--variants", default="oracle,drop")
    args = parser.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)}; choose from {VARIANTS}")

    # Import tau2's evaluator (and litellm with it) before anything is timed.
    quiet_tau2()
    import tau2.evaluator.evaluator  # noqa: F401

    header = (
        f"{'domain':8} {'n':>4} {'official s':>10} {'ours 1st s':>10} {'ours again s':>12}"
        f" {'speed-up 1st':>12} {'speed-up again':>14}  rewards (sum/n)"
    )
    print(header)
    for domain in args.domains.split(","):
        t = asyncio.run(bench_domain(domain, args.limit, variants))
        official, first, again = mean(t.official), mean(t.first), mean(t.again)
        rewards = ", ".join(f"{v} {sum(r):g}/{len(r)}" for v, r in t.rewards.items())
        print(
            f"{domain:8} {t.transcripts:>4} {official:>10.4f} {first:>10.4f} {again:>12.4f}"
            f" {official / first:>11.2f}x {official / again:>13.2f}x  {rewards}",
            flush=True,
        )
    print("rewards identical to tau2's evaluate_simulation on every transcript")


if __name__ == "__main__":
    sys.exit(main())
