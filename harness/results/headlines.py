"""What headlines each benchmark, as its adapter declares it.

Tables, plots and comparisons ask here for a benchmark's label, its primary
metric and the estimators that recompute its headline metrics for bootstrap
intervals. Everything comes from the benchmark's adapter (``Adapter.reporting``,
``estimators()``); a benchmark without a registered adapter
(a published table's, or a run folder's from elsewhere) gets neutral defaults:
its own name, its first fractional headline metric, the mean pass rate over
subsets (which the leaderboard shows only if it equals the official value), and
no official set size (so its coverage has no denominator).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness.task.estimators import MEAN_PASS, Estimator
from harness.task.official_set import OfficialSet

if TYPE_CHECKING:
    from harness.task.contract import Adapter

# Headline keys that hold counts rather than fractions (shown as integers).
COUNT_PREFIXES = ("n_",)


@dataclass(frozen=True)
class BenchmarkInfo:
    name: str
    label: str
    primary: str  # "" when the adapter does not name one
    run_metric: str = ""  # the primary over the subsets run only (Reporting.run_metric)
    quantity: str = "score"  # what kind of number the primary metric is
    estimators: dict[str, Estimator] = field(default_factory=dict)
    subset_estimator: Estimator = MEAN_PASS
    needs_metadata: bool = False
    order: int = 100
    official: OfficialSet | None = None  # the official full set (harness.results.coverage)
    pass_hat_k_trials: str = ""  # "", "scored" or "all" (Reporting.pass_hat_k_trials)
    # metric -> the subsets it is computed from, when its name does not say
    metric_subsets: Callable[[str], tuple[str, ...] | None] = lambda metric: None


def benchmark_info(benchmark: str) -> BenchmarkInfo:
    from harness.task.registry import find_adapter

    try:
        adapter = find_adapter(benchmark)
    except Exception:  # a broken adapter must not take the tables down with it
        adapter = None
    if adapter is None:
        return BenchmarkInfo(benchmark, benchmark, "")
    reporting = adapter.reporting
    return BenchmarkInfo(
        name=benchmark,
        label=reporting.label_for(benchmark),
        primary=reporting.primary_metric,
        run_metric=reporting.run_metric,
        quantity=reporting.primary_quantity or "score",
        estimators=dict(adapter.estimators()),
        subset_estimator=adapter.subset_estimator(),
        needs_metadata=reporting.estimators_need_metadata,
        order=reporting.table_order,
        official=_official_set(adapter),
        pass_hat_k_trials=reporting.pass_hat_k_trials,
        metric_subsets=adapter.metric_subsets,
    )


def _official_set(adapter: Adapter) -> OfficialSet | None:
    try:
        return adapter.official_set()
    except Exception:  # an adapter that cannot say is treated as one that does not
        return None


def is_count_metric(name: str) -> bool:
    return name.startswith(COUNT_PREFIXES)


def benchmark_label(benchmark: str) -> str:
    return benchmark_info(benchmark).label


def primary_quantity(benchmark: str) -> str:
    """What kind of number the benchmark's primary metric is ("pass rate", "F1", ...)."""
    return benchmark_info(benchmark).quantity


def sort_benchmarks(names: Iterable[str]) -> list[str]:
    """In the adapters' table order, then by name."""
    return sorted(set(names), key=lambda b: (benchmark_info(b).order, b))


def primary_metric(benchmark: str, headline: Mapping[str, object]) -> str | None:
    """The key in ``headline`` that holds the benchmark's primary metric."""
    declared = benchmark_info(benchmark).primary
    if declared:
        # None: e.g. a published row that reports only a group score.
        return declared if declared in headline else None
    for key in headline:
        if not is_count_metric(key):
            return key
    return None


def primary_metrics(benchmarks: Iterable[str]) -> dict[str, str]:
    """benchmark -> its declared primary metric (for machine-readable output)."""
    return {b: benchmark_info(b).primary for b in benchmarks if benchmark_info(b).primary}


def estimator_for(benchmark: str, metric: str | None = None) -> Estimator:
    """The recomputation of ``metric`` (default: the primary one) of ``benchmark``;
    the mean pass rate over subsets when the adapter declares none for it (the
    caller compares it with the official value before use)."""
    info = benchmark_info(benchmark)
    return info.estimators.get(metric or info.primary, MEAN_PASS)


def subset_estimator(benchmark: str) -> Estimator:
    """The per-subset quantity that paired comparisons report."""
    return benchmark_info(benchmark).subset_estimator
