"""tau2's aggregate: pass^k per domain, average reward, and the cross-domain means.

pass^k of one task with n trials and c successes is C(c, k) / C(n, k); a subset's
pass^k is its mean over tasks, for k = 1 .. the smallest number of trials any
task has (tau2's ``compute_metrics``). A trial succeeds when its reward is 1
(tau2's ``is_successful``, tolerance 1e-6), which is ``Score.passed``.

Records that did not end in a score (infrastructure or scoring errors), and
simulations tau2-bench v1.0.1 bins as infrastructure errors (``Score.excluded``:
every attempt aborted by tau2's own code), are left out of every metric and
counted apart, as tau2's ``compute_metrics`` leaves its INFRASTRUCTURE_ERROR
simulations out.

Headline metrics:
- ``pass^1/<subset>`` for every subset run (``pass^1/airline``,
  ``pass^1/telecom:test``...);
- ``tau2_mean``: the plain mean of pass^1 over the base-split domains run, the
  single "tau2" number papers quote; ``tau2_mean_task_weighted``: pass^1 over
  all their tasks pooled. Other splits get the same pair suffixed with the
  split (``tau2_mean:test``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.results.stats import pass_hat_k
from harness.store.records import OK
from harness.task.contract import BenchmarkResult, RecordView, SubsetResult
from harness.task.estimators import Estimator, mean_of, ratio
from harness.types import Score

from .domains import parse_subset
from .task_sets import BASE_SPLIT, V1_0_1, TaskSet

if TYPE_CHECKING:
    from .package import Tau2Package


def is_successful(package: Tau2Package, reward: float) -> bool:
    """tau2's success rule (tau2.metrics.agent_metrics.is_successful)."""
    return package.module("metrics.agent_metrics").is_successful(reward)


def cross_domain_mean(pass1: Mapping[str, Any]) -> Any:
    """``tau2_mean``: the plain mean of pass^1 over the domains given (floats or
    arrays of bootstrap replicates)."""
    return mean_of(list(pass1.values()))


def _tau2_mean_of_sums(sums: Mapping[str, Any], counts: Mapping[str, int]) -> Any:
    # Components (passed_scored, has_score): pass^1 of a domain is over its tasks
    # with a scored trial. Base domains only (a split such as "airline:test" is
    # reported apart).
    base = {n: ratio(sums[n][..., 0], sums[n][..., 1]) for n in sums if ":" not in n}
    return cross_domain_mean(base) if base else 0.0


ESTIMATORS = {
    "tau2_mean": Estimator(
        "mean pass^1",
        ("passed_scored", "has_score"),
        _tau2_mean_of_sums,
        "plain mean over the base domains of pass^1 (scored trials)",
    )
}


@dataclass(frozen=True)
class TaskTrials:
    """The scored trials of one task."""

    task_id: str
    successes: int
    trials: int
    reward_sum: float


def task_trials(records: Sequence[RecordView]) -> list[TaskTrials]:
    by_task: dict[str, list[Score]] = defaultdict(list)
    for record in records:
        if record.status == OK and record.score is not None and not record.score.excluded:
            by_task[record.sample_id].append(record.score)
    return [
        TaskTrials(
            task_id=task_id,
            successes=sum(1 for score in scores if score.passed),
            trials=len(scores),
            reward_sum=sum(score.reward for score in scores),
        )
        for task_id, scores in sorted(by_task.items())
    ]


def subset_metrics(records: Sequence[RecordView]) -> SubsetResult:
    tasks = task_trials(records)
    scored_records = sum(t.trials for t in tasks)
    metrics: dict[str, float] = {"n_tasks": float(len(tasks))}
    if tasks:
        max_k = min(t.trials for t in tasks)
        for k in range(1, max_k + 1):
            values = [pass_hat_k(t.trials, t.successes, k) for t in tasks]
            metrics[f"pass^{k}"] = sum(values) / len(values)
        metrics["avg_reward"] = sum(t.reward_sum for t in tasks) / scored_records
    return SubsetResult(
        metrics=metrics,
        n_samples=len({r.sample_id for r in records}),
        n_records=len(records),
        n_infra_errors=sum(1 for r in records if r.status != OK),
        n_excluded=sum(1 for r in records if r.score is not None and r.score.excluded),
    )


def conditions(task_set: TaskSet, records: Sequence[RecordView]) -> list[str]:
    """What a τ³ number depends on beyond the task set, for its column labels: the user
    simulator (the leaderboard's rows use gpt-5.2 or gpt-4.1) and banking_knowledge's
    retrieval configuration."""
    if task_set is not V1_0_1:
        return []  # the original task set's labels stay as they were
    users = sorted(
        {str(r.score.details["user"]) for r in records if r.score and r.score.details.get("user")}
    )
    retrievals = sorted(
        {str(r.metadata["retrieval"]) for r in records if (r.metadata or {}).get("retrieval")}
    )
    found = [f"user {', '.join(users)}"] if users else []
    return found + ([f"retrieval {', '.join(retrievals)}"] if retrievals else [])


def aggregate(task_set: TaskSet, records: Sequence[RecordView]) -> BenchmarkResult:
    by_subset: dict[str, list[RecordView]] = defaultdict(list)
    for record in records:
        by_subset[record.subset].append(record)
    subsets = {name: subset_metrics(rows) for name, rows in sorted(by_subset.items())}
    headline: dict[str, float] = {}
    notes: list[str] = []
    for name, result in subsets.items():
        # Every pass^k the trials allow, so that tables show them beside pass^1.
        for key, value in result.metrics.items():
            if key.startswith("pass^"):
                headline[f"{key}/{name}"] = value
    by_split: dict[str, list[str]] = defaultdict(list)
    for name in subsets:
        by_split[parse_subset(task_set, name).split].append(name)
    for split, names in sorted(by_split.items()):
        scored = [n for n in names if "pass^1" in subsets[n].metrics]
        if not scored:
            continue
        suffix = "" if split == BASE_SPLIT else f":{split}"
        headline[f"tau2_mean{suffix}"] = cross_domain_mean(
            {n: subsets[n].metrics["pass^1"] for n in scored}
        )
        pooled = [t for n in scored for t in task_trials(by_subset[n])]
        headline[f"tau2_mean_task_weighted{suffix}"] = sum(
            pass_hat_k(t.trials, t.successes, 1) for t in pooled
        ) / len(pooled)
        notes.append(f"tau2_mean{suffix} is over {', '.join(scored)} (pass^1)")
    errors = sum(result.n_infra_errors for result in subsets.values())
    if errors:
        notes.append(f"{errors} records without a score (infra or scoring errors) left out")
    binned = [r for r in records if r.score is not None and r.score.excluded]
    if binned:
        notes.append(
            f"{len(binned)} simulation(s) binned as infrastructure errors by tau2-bench "
            f"{task_set.name}'s rule (every attempt aborted by tau2's code) left out"
        )
    retrievals = sorted(
        {str(r.metadata["retrieval"]) for r in records if (r.metadata or {}).get("retrieval")}
    )
    if retrievals:
        notes.append(f"banking_knowledge retrieval configuration: {', '.join(retrievals)}")
    nonstandard = []
    if any((r.metadata or {}).get("malformed_calls") for r in records):
        nonstandard.append(
            "option malformed_calls: continue (a malformed tool call was shown to the agent "
            "as an error and the episode went on; tau2 ends the simulation there)"
        )
    return BenchmarkResult(
        conditions=conditions(task_set, records),
        benchmark=task_set.benchmark,
        headline=headline,
        subsets=subsets,
        # The benchmark proper is its base domains; say which were not run.
        not_run=[
            d
            for d in task_set.domains
            if not any(parse_subset(task_set, n).domain == d for n in subsets)
        ],
        notes=notes,
        nonstandard=nonstandard,
    )
