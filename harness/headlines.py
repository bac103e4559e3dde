"""Which number headlines each benchmark, and how to recompute it from per-task outcomes.

The adapters compute the official aggregates (scores.json). To put a confidence
interval on a headline, the statistics module must recompute the same number
from resampled tasks, so each benchmark's formula is restated here as a
function of per-subset sums of per-task values. The leaderboard checks that the
recomputed value equals the official one before it shows an interval.

This is the one place that maps a benchmark to its primary metric; the names
must match the keys the adapters write into ``headline``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

# Benchmark -> the headline key of its primary metric, as the adapters name it.
PRIMARY_METRIC: dict[str, str] = {
    "bfcl": "overall",
    "tau2": "tau2_mean",
    "vitabench": "Avg",
    "finmcp": "micro_f1",
}

# Other spellings accepted for the primary metric while adapters settle on names.
METRIC_ALIASES: dict[str, tuple[str, ...]] = {
    "bfcl": ("overall",),
    "tau2": ("tau2_mean", "mean", "pass^1_mean", "avg"),
    "vitabench": ("avg",),
    "finmcp": ("micro_f1", "f1"),
}

BENCHMARK_LABELS: dict[str, str] = {
    "bfcl": "BFCL-v4",
    "tau2": "τ²-Bench",
    "vitabench": "VitaBench",
    "finmcp": "FinMCP-Bench",
}

# Preferred column order of benchmarks in tables and plots.
BENCHMARK_ORDER = ("bfcl", "tau2", "vitabench", "finmcp")

# The EnvACE paper's composite: Overall = mean(BFCL-v4 Overall, tau2 mean, VitaBench Avg).
COMPOSITE_BENCHMARKS = ("bfcl", "tau2", "vitabench")
COMPOSITE_LABEL = "Overall = mean(BFCL-v4, τ², VitaBench)"

# Benchmarks whose recomputation needs each record's metadata (FinMCP: items
# flagged as erroneous are left out), which scores.json does not carry.
METADATA_BENCHMARKS = ("finmcp",)

# Headline keys that hold counts rather than fractions (shown as integers).
COUNT_PREFIXES = ("n_",)

# BFCL-v4 official aggregate (bfcl-eval 2026.3.23). Live is weighted by the
# category sizes of the published data; a category not run counts as 0.
BFCL_NON_LIVE_SIMPLE = ("simple_python", "simple_java", "simple_javascript")
BFCL_NON_LIVE_OTHER = ("multiple", "parallel", "parallel_multiple")
BFCL_LIVE_SIZES = {
    "live_simple": 258,
    "live_multiple": 1053,
    "live_parallel": 16,
    "live_parallel_multiple": 24,
}
BFCL_HALLUCINATION = ("irrelevance", "live_irrelevance")
BFCL_MULTI_TURN = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
BFCL_WEB_SEARCH = ("web_search_base", "web_search_no_snippet")
BFCL_MEMORY = ("memory_kv", "memory_vector", "memory_rec_sum")
BFCL_WEIGHTS = {
    "non_live": 0.10,
    "live": 0.10,
    "hallucination": 0.10,
    "multi_turn": 0.30,
    "agentic": 0.40,
}


def normalise(name: str) -> str:
    """Compare metric names without case, spaces or dashes."""
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


def is_count_metric(name: str) -> bool:
    return name.startswith(COUNT_PREFIXES)


def benchmark_label(benchmark: str) -> str:
    return BENCHMARK_LABELS.get(benchmark, benchmark)


def sort_benchmarks(names: list[str] | set[str]) -> list[str]:
    known = [b for b in BENCHMARK_ORDER if b in names]
    return known + sorted(b for b in names if b not in BENCHMARK_ORDER)


def primary_metric(benchmark: str, headline: Mapping[str, Any]) -> str | None:
    """The key in ``headline`` that holds the benchmark's primary metric."""
    by_norm = {normalise(k): k for k in headline}
    candidates = METRIC_ALIASES.get(benchmark, ()) or ()
    for candidate in (PRIMARY_METRIC.get(benchmark, ""), *candidates):
        if candidate and normalise(candidate) in by_norm:
            return by_norm[normalise(candidate)]
    if benchmark in PRIMARY_METRIC:
        return None  # e.g. a published row that reports only a group score
    # Unknown benchmark: its first fractional headline metric.
    for key in headline:
        if not is_count_metric(key):
            return key
    return None


# --- recomputation for confidence intervals ---------------------------------------

# combine(sums, counts): per-subset sums of per-task component values, shaped
# (..., n_components), and per-subset task counts -> the metric, shaped (...).
Combine = Callable[[Mapping[str, Any], Mapping[str, int]], Any]


@dataclass(frozen=True)
class Estimator:
    """How to recompute one benchmark metric from per-task values.

    ``components`` names the per-task values (each the mean over the task's
    trials) that ``combine`` needs; see ``harness.stats.TaskOutcome.component``.
    """

    name: str  # short, for table cells
    components: tuple[str, ...]
    combine: Combine
    description: str


def _means(sums: Mapping[str, Any], counts: Mapping[str, int], column: int = 0) -> dict[str, Any]:
    return {name: sums[name][..., column] / counts[name] for name in sums if counts[name] > 0}


def _mean_of(values: list[Any]) -> Any:
    return sum(values) / len(values)


def _mean_over_subsets(sums: Mapping[str, Any], counts: Mapping[str, int]) -> Any:
    means = list(_means(sums, counts).values())
    return _mean_of(means) if means else 0.0


def _tau2_mean(sums: Mapping[str, Any], counts: Mapping[str, int]) -> Any:
    # Components (passed_scored, has_score). The base domains only (a split such as
    # "airline:test" is reported apart); tasks without a scored trial are left out.
    base = [name for name in sums if ":" not in name]
    means = [_ratio(sums[name][..., 0], sums[name][..., 1]) for name in base]
    return _mean_of(means) if means else 0.0


def _bfcl_overall(sums: Mapping[str, Any], counts: Mapping[str, int]) -> Any:
    acc = _means(sums, counts)

    def get(category: str) -> Any:
        return acc.get(category, 0.0)  # the official aggregate counts a category not run as 0

    non_live = _mean_of(
        [_mean_of([get(c) for c in BFCL_NON_LIVE_SIMPLE]), *(get(c) for c in BFCL_NON_LIVE_OTHER)]
    )
    live = sum(size * get(c) for c, size in BFCL_LIVE_SIZES.items()) / sum(BFCL_LIVE_SIZES.values())
    hallucination = _mean_of([get(c) for c in BFCL_HALLUCINATION])
    multi_turn = _mean_of([get(c) for c in BFCL_MULTI_TURN])
    agentic = _mean_of(
        [_mean_of([get(c) for c in BFCL_WEB_SEARCH]), _mean_of([get(c) for c in BFCL_MEMORY])]
    )
    groups = {
        "non_live": non_live,
        "live": live,
        "hallucination": hallucination,
        "multi_turn": multi_turn,
        "agentic": agentic,
    }
    return sum(BFCL_WEIGHTS[name] * value for name, value in groups.items())


def _ratio(numerator: Any, denominator: Any) -> Any:
    import numpy as np

    numerator = np.asarray(numerator, dtype=float)
    denominator = np.asarray(denominator, dtype=float)
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    return np.divide(numerator, denominator, out=out, where=denominator > 0)


def _pooled(sums: Mapping[str, Any]) -> Any:
    return sum(sums.values())


def _micro_precision(sums: Mapping[str, Any], counts: Mapping[str, int]) -> Any:
    total = _pooled(sums)
    return _ratio(total[..., 0], total[..., 0] + total[..., 1])


def _micro_recall(sums: Mapping[str, Any], counts: Mapping[str, int]) -> Any:
    total = _pooled(sums)
    return _ratio(total[..., 0], total[..., 0] + total[..., 2])


def _micro_f1(sums: Mapping[str, Any], counts: Mapping[str, int]) -> Any:
    precision = _micro_precision(sums, counts)
    recall = _micro_recall(sums, counts)
    return _ratio(2 * precision * recall, precision + recall)


MEAN_PASS = Estimator(
    "pass rate", ("passed",), _mean_over_subsets, "mean over subsets of the per-task pass rate"
)
MEAN_REWARD = Estimator(
    "mean reward",
    ("reward",),
    _mean_over_subsets,
    "mean over subsets of the per-task mean reward",
)
TOOL_COUNTS = ("tool_tp", "tool_fp", "tool_fn")

ESTIMATORS: dict[tuple[str, str], Estimator] = {
    ("bfcl", "overall"): Estimator(
        "Overall", ("passed",), _bfcl_overall, "BFCL-v4 Overall from per-category accuracy"
    ),
    ("tau2", "tau2_mean"): Estimator(
        "mean pass^1",
        ("passed_scored", "has_score"),
        _tau2_mean,
        "plain mean over the base domains of pass^1 (scored trials)",
    ),
    ("vitabench", "avg"): Estimator(
        "Avg", ("reward",), _mean_over_subsets, "plain mean over scenarios of avg@k"
    ),
    ("finmcp", "micro_precision"): Estimator(
        "micro P", TOOL_COUNTS, _micro_precision, "micro precision of tool names"
    ),
    ("finmcp", "micro_recall"): Estimator(
        "micro R", TOOL_COUNTS, _micro_recall, "micro recall of tool names"
    ),
    ("finmcp", "micro_f1"): Estimator("micro F1", TOOL_COUNTS, _micro_f1, "micro F1 of tool names"),
}


def estimator_for(benchmark: str, metric: str | None = None) -> Estimator:
    """The recomputation of ``metric`` (default: the primary one) of ``benchmark``.

    A benchmark this module does not know falls back to the mean over subsets of
    the pass rate; the caller compares it with the official value before use.
    """
    metric = metric or PRIMARY_METRIC.get(benchmark, "")
    wanted = normalise(metric)
    for (bench, name), estimator in ESTIMATORS.items():
        if bench == benchmark and normalise(name) == wanted:
            return estimator
    if benchmark in PRIMARY_METRIC and wanted in {
        normalise(a) for a in METRIC_ALIASES.get(benchmark, ())
    }:
        return estimator_for(benchmark, PRIMARY_METRIC[benchmark])
    return MEAN_PASS


def subset_estimator(benchmark: str) -> Estimator:
    """The per-subset quantity that paired comparisons report: the mean reward where
    the benchmark grades with partial reward (VitaBench), micro F1 of tool calls for
    FinMCP, else the pass rate."""
    if benchmark == "vitabench":
        return MEAN_REWARD
    if benchmark == "finmcp":
        return ESTIMATORS[("finmcp", "micro_f1")]
    return MEAN_PASS
