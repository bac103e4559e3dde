"""BFCL-v4's aggregate (eval_checker/eval_runner_helper.py), from stored records.

Per category: accuracy = passed entries / entries run; a record that errored
(infrastructure or scoring error) counts as wrong and is also counted apart.
With several trials the accuracy is computed per trial and averaged.

Headline (official formula, a category that was not run counts as 0):
  non_live      = mean(mean(simple_python, simple_java, simple_javascript),
                       multiple, parallel, parallel_multiple)
  live          = live_simple, live_multiple, live_parallel, live_parallel_multiple
                  weighted by their entries evaluated (a category not run: its
                  dataset size 258 / 1053 / 16 / 24, at accuracy 0), as officially
  hallucination = mean(irrelevance, live_irrelevance)
  multi_turn    = mean of the four multi-turn categories
  agentic       = mean(mean(web_search_base, web_search_no_snippet),
                       mean(memory_kv, memory_vector, memory_rec_sum))
  overall       = 0.1 non_live + 0.1 live + 0.1 hallucination + 0.3 multi_turn + 0.4 agentic
``overall_run`` is the same formula restricted to what was run: every mean and
weighted sum is taken over the parts that have results, with their weights
renormalised (not an official number; it equals ``overall`` on a full run).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from harness.store.records import OK
from harness.task.contract import BenchmarkResult, RecordView, SubsetResult
from harness.task.estimators import Estimator, subset_means

from .categories import ALL_CATEGORIES, CATEGORY_SIZES, MULTI_TURN


@dataclass
class Weighted:
    """A weighted mean of parts (category names or other weighted means)."""

    parts: list[tuple[object, float]]
    # Weights are the entries evaluated per category (the dataset size for a
    # category not run), as the official Live summary weights them.
    by_entries: bool = False

    @classmethod
    def mean(cls, *parts: object) -> Weighted:
        return cls([(part, 1.0) for part in parts])


SIMPLE = Weighted.mean("simple_python", "simple_java", "simple_javascript")
GROUPS: dict[str, Weighted] = {
    "non_live": Weighted.mean(SIMPLE, "multiple", "parallel", "parallel_multiple"),
    "live": Weighted(
        [
            (name, float(CATEGORY_SIZES[name]))
            for name in ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
        ],
        by_entries=True,
    ),
    "hallucination": Weighted.mean("irrelevance", "live_irrelevance"),
    "multi_turn": Weighted.mean(*MULTI_TURN),
    "agentic": Weighted.mean(
        Weighted.mean("web_search_base", "web_search_no_snippet"),
        Weighted.mean("memory_kv", "memory_vector", "memory_rec_sum"),
    ),
}
OVERALL = Weighted(
    [
        ("non_live", 10.0),
        ("live", 10.0),
        ("hallucination", 10.0),
        ("multi_turn", 30.0),
        ("agentic", 40.0),
    ]
)


def overall_categories() -> list[str]:
    """The categories the official Overall is computed from, in table order."""
    return categories_of(OVERALL)


def categories_of(part: object) -> list[str]:
    """The categories a formula part (a group's name or a Weighted) is computed from."""
    found: set[str] = set()

    def walk(part: object) -> None:
        if isinstance(part, str):
            if part in GROUPS:
                walk(GROUPS[part])
            else:
                found.add(part)
        else:
            assert isinstance(part, Weighted)
            for child, _ in part.parts:
                walk(child)

    walk(part)
    return [name for name in ALL_CATEGORIES if name in found]


# An accuracy: a number, or an array of bootstrap replicates (elementwise).
Accuracy = TypeVar("Accuracy", float, npt.NDArray[np.float64])


def evaluate(
    part: object,
    accuracy: Mapping[str, Accuracy],
    run_only: bool,
    entries: Mapping[str, int] | None = None,
) -> Accuracy | float | None:
    """The value of a formula part. Official (``run_only`` False): a missing
    category is 0. ``run_only``: missing parts are left out (None if all are).
    Accuracies may be floats or arrays of bootstrap replicates. ``entries``:
    entries evaluated per category (for entry-weighted groups)."""
    entries = entries or {}
    if isinstance(part, str):
        if part in GROUPS:
            return evaluate(GROUPS[part], accuracy, run_only, entries)
        if part in accuracy:
            return accuracy[part]
        return None if run_only else 0.0
    assert isinstance(part, Weighted)
    total: Accuracy | float = 0.0
    weights = 0.0
    for child, weight in part.parts:
        if part.by_entries and isinstance(child, str) and entries.get(child):
            weight = float(entries[child])
        value = evaluate(child, accuracy, run_only, entries)
        if value is None:
            continue
        total += weight * value
        weights += weight
    if weights == 0.0:
        return None if run_only else 0.0
    # Officially no part is ever left out (missing ones are 0), so this is the
    # plain weighted mean; with run_only it renormalises over the parts present.
    return total / weights


def official_overall(
    accuracy: Mapping[str, Accuracy], entries: Mapping[str, int] | None = None
) -> Accuracy | float:
    """BFCL-v4 Overall from per-category accuracy (a category not run counts as 0)
    and entries evaluated per category."""
    value = evaluate(OVERALL, accuracy, run_only=False, entries=entries)
    return 0.0 if value is None else value  # never None: missing parts count as 0


def run_overall(
    accuracy: Mapping[str, Accuracy], entries: Mapping[str, int] | None = None
) -> Accuracy | float:
    """``overall_run``: the Overall formula over the categories run (0 when none was)."""
    value = evaluate(OVERALL, accuracy, run_only=True, entries=entries)
    return 0.0 if value is None else value


# The bootstrap recomputes Overall (and overall_run) with the same formula from
# resampled per-task pass rates (each category's accuracy is the mean over its tasks).
ESTIMATORS = {
    "overall": Estimator(
        "Overall",
        ("passed",),
        lambda sums, counts: official_overall(subset_means(sums, counts), counts),
        "BFCL-v4 Overall from per-category accuracy",
    ),
    "overall_run": Estimator(
        "Overall (run)",
        ("passed",),
        lambda sums, counts: run_overall(subset_means(sums, counts), counts),
        "BFCL-v4 Overall over the categories run, from per-category accuracy",
    ),
}


def _passed(record: RecordView) -> float:
    return float(record.status == OK and record.score is not None and record.score.passed)


def _progress(record: RecordView) -> float:
    if record.status != OK or record.score is None or record.score.progress is None:
        return 0.0
    return float(record.score.progress)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def subset_result(records: list[RecordView], with_progress: bool) -> SubsetResult:
    by_trial: dict[int, list[RecordView]] = defaultdict(list)
    for record in records:
        by_trial[record.trial].append(record)
    metrics = {
        "accuracy": _mean([_mean([_passed(r) for r in group]) for group in by_trial.values()])
    }
    if with_progress:
        metrics["progress"] = _mean(
            [_mean([_progress(r) for r in group]) for group in by_trial.values()]
        )
    return SubsetResult(
        metrics=metrics,
        n_samples=len({record.sample_id for record in records}),
        n_records=len(records),
        n_infra_errors=sum(record.status != OK for record in records),
    )


def aggregate_records(records: list[RecordView]) -> BenchmarkResult:
    by_category: dict[str, list[RecordView]] = defaultdict(list)
    for record in records:
        by_category[record.subset].append(record)

    subsets = {
        category: subset_result(by_category[category], category in MULTI_TURN)
        for category in ALL_CATEGORIES
        if by_category.get(category)
    }
    accuracy = {category: result.metrics["accuracy"] for category, result in subsets.items()}
    entries = {category: result.n_samples for category, result in subsets.items()}

    headline: dict[str, float] = {"overall": official_overall(accuracy, entries)}
    headline["overall_run"] = run_overall(accuracy, entries)
    for group in GROUPS:
        headline[group] = evaluate(group, accuracy, run_only=False, entries=entries) or 0.0
    headline.update(accuracy)

    unknown = sorted(set(by_category) - set(ALL_CATEGORIES))
    notes = [
        "Per category, accuracy = passed / entries run; errored records count as wrong.",
        "With several trials, each category's accuracy is the mean of its per-trial accuracies.",
        "overall and the group scores follow the official formula (a category not run counts as 0); "
        "overall_run applies it to the categories run only; a group none of whose categories "
        "ran has no number.",
        "live_relevance is reported but not part of overall (as officially).",
    ]
    if unknown:
        notes.append(f"Records of unknown categories ignored: {', '.join(unknown)}")
    return BenchmarkResult(
        benchmark="bfcl",
        headline=headline,
        subsets=subsets,
        not_run=[category for category in ALL_CATEGORIES if category not in subsets],
        notes=notes,
    )
