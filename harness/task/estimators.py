"""Headline metrics as functions of per-subset sums, for aggregates and intervals alike.

An adapter declares, for each headline metric it can put an interval on, an
``Estimator``: which per-task values it needs (``components``) and how to combine
their per-subset sums into the metric. The adapter's official aggregate calls the
same formula on the observed values, and the bootstrap (``harness.results.stats``) calls
it on resampled sums, so the number and its interval cannot drift apart.

``combine(sums, counts)`` receives, per subset, the sums over tasks of each
component (an array shaped ``(..., n_components)``; the leading axes are
bootstrap replicates) and the task counts, and returns the metric shaped
``(...)``. Every helper here works on plain floats and on arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, overload

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# Per-subset component sums: an array shaped (..., n_components).
Sums: TypeAlias = "NDArray[np.float64]"
# A metric, or a value combined into one: a float, or an array of bootstrap replicates.
Metric: TypeAlias = "float | NDArray[np.float64]"
Combine: TypeAlias = Callable[[Mapping[str, Sums], Mapping[str, int]], Metric]


@dataclass(frozen=True)
class Estimator:
    """How to recompute one headline metric from per-task values.

    ``components`` names the per-task values (each the mean over the task's
    trials) that ``combine`` needs; see ``harness.results.stats.TaskOutcome.component``.
    """

    name: str  # short, for table cells
    components: tuple[str, ...]
    combine: Combine
    description: str


@overload
def ratio(numerator: float, denominator: float) -> float: ...
@overload
def ratio(numerator: Sums, denominator: Metric) -> Sums: ...
@overload
def ratio(numerator: Metric, denominator: Sums) -> Sums: ...
@overload
def ratio(numerator: Metric, denominator: Metric) -> Metric: ...
def ratio(numerator: Metric, denominator: Metric) -> Metric:
    """numerator / denominator, 0 where the denominator is not positive (elementwise)."""
    if isinstance(numerator, int | float) and isinstance(denominator, int | float):
        return numerator / denominator if denominator > 0 else 0.0
    import numpy as np

    top = np.asarray(numerator, dtype=float)
    bottom = np.asarray(denominator, dtype=float)
    out = np.zeros(np.broadcast(top, bottom).shape)
    return np.divide(top, bottom, out=out, where=bottom > 0)


def mean_of(values: Sequence[Metric]) -> Metric:
    """The plain mean of a non-empty list of numbers or same-shaped arrays."""
    return sum(values) / len(values)


def subset_means(
    sums: Mapping[str, Sums], counts: Mapping[str, int], column: int = 0
) -> dict[str, Sums]:
    """Per subset, the mean over its tasks of one component."""
    return {name: sums[name][..., column] / counts[name] for name in sums if counts[name] > 0}


def pooled(sums: Mapping[str, Sums]) -> Sums:
    """The component sums over all subsets together: an array like each of them
    (for no subsets, which no caller passes, a 0-d array of 0)."""
    import numpy as np

    return np.asarray(sum(sums.values()), dtype=np.float64)


def mean_over_subsets(sums: Mapping[str, Sums], counts: Mapping[str, int]) -> Metric:
    means = list(subset_means(sums, counts).values())
    return mean_of(means) if means else 0.0


MEAN_PASS = Estimator(
    "pass rate", ("passed",), mean_over_subsets, "mean over subsets of the per-task pass rate"
)
MEAN_REWARD = Estimator(
    "mean reward",
    ("reward",),
    mean_over_subsets,
    "mean over subsets of the per-task mean reward",
)
