"""Uncertainty for run comparisons: bootstrap intervals over tasks, paired tests, pass^k.

The unit of resampling is the *task* (benchmark, subset, sample): the trials of a
task share its difficulty, so they are kept together (a cluster bootstrap).
Resampling is stratified by subset, because a benchmark's subsets are fixed by
its design, not drawn at random. Every bootstrap is seeded, so the same runs give
the same intervals.

Comparisons are paired on the tasks both runs hold. Definitions used in reports:

- Δ = B − A (second run minus first), in the units of the metric.
- Bootstrap CI: percentile interval of the paired bootstrap of Δ. Flagged
  *degenerate* when every resample gives the same Δ (zero width, no information).
- Newcombe CI: Newcombe's (1998, method 10) hybrid score interval for the
  difference of the paired per-task pass rates (one pass/fail per task: its single
  trial, or with several trials a majority of them). It keeps its level at small n.
- McNemar: exact two-sided binomial test on the discordant tasks (same pass/fail);
  Holm: its p-value adjusted over every row of one comparison (all benchmarks and
  subsets), which bounds the chance of any false claim among them at 5%.
- Minimum detectable effect (MDE): (z₀.₉₇₅ + z₀.₈₀) × SE₀(Δ), with SE₀ the standard
  error of Δ *under no difference* for this design (``null_standard_error``: for a
  pass rate, sqrt(discordant tasks) / n). A true difference smaller than the MDE is
  found significant (at 5%, two-sided) less than 80% of the time with these tasks.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import TYPE_CHECKING, TypeAlias

from harness.results.headlines import estimator_for, sort_benchmarks, subset_estimator
from harness.store.records import INFRA_ERROR, OK, REGRADE_ERROR_KEY
from harness.task.estimators import Estimator

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    # Per-task sums or bootstrap replicates: a numpy array of floats.
    Floats: TypeAlias = NDArray[np.float64]

LEVEL = 0.95
N_BOOT = 2000
SEED = 0
ALPHA = 0.05
POWER = 0.80
SCORED_SUFFIX = "_scored"
PASS_HAT_PREFIX = "pass^"
# An interval narrower than this (in fraction units) has no width to show.
ZERO_WIDTH = 1e-9
# Bootstrap indices are drawn in blocks of at most this many cells, to bound memory.
_BLOCK_CELLS = 1_000_000


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    level: float = LEVEL
    # The tasks resampled, when known: a zero-width interval is shown as its n
    # (too few tasks, or no variation), not as a confident range.
    n: int | None = field(default=None, compare=False)

    @property
    def zero_width(self) -> bool:
        return self.high - self.low < ZERO_WIDTH

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    def includes_zero(self) -> bool:
        return self.contains(0.0)


# --- per-task outcomes -------------------------------------------------------------


@dataclass
class TaskOutcome:
    """The trials of one task in one run; every value is a per-trial number."""

    benchmark: str
    subset: str
    sample_id: str
    trials: dict[int, dict[str, float]] = field(default_factory=dict)
    errors: int = 0  # trials that ended in an infrastructure or scoring error
    infra_errors: int = 0  # of those, the infrastructure errors
    excluded: int = 0  # trials scored but left out by the benchmark's rule (Score.excluded)

    @property
    def key(self) -> str:
        return f"{self.benchmark}/{self.subset}/{self.sample_id}"

    @property
    def n(self) -> int:
        return len(self.trials)

    @property
    def successes(self) -> int:
        return sum(1 for values in self.trials.values() if values["passed"] >= 1.0)

    @property
    def pass_rate(self) -> float:
        return self.successes / self.n if self.n else 0.0

    @property
    def majority_passed(self) -> bool:
        return self.successes * 2 > self.n

    def scored_trials(self) -> list[dict[str, float]]:
        return [v for v in self.trials.values() if v.get("ok", 1.0)]

    def _pass_hat(self, name: str) -> float:
        scored_only = name.endswith(SCORED_SUFFIX)
        k = int(name[len(PASS_HAT_PREFIX) :].removesuffix(SCORED_SUFFIX))
        trials = self.scored_trials() if scored_only else list(self.trials.values())
        successes = sum(1 for values in trials if values["passed"] >= 1.0)
        return pass_hat_k(len(trials), successes, k) if len(trials) >= k else 0.0

    def component(self, name: str) -> float:
        """A per-task value for the adapters' estimators (``harness.task.estimators``):

        - ``<value>``: the mean over all trials (an unscored trial counts as 0);
        - ``<value>_scored``: the mean over scored trials only (0 when there are none);
        - ``has_score``: 1 when at least one trial was scored, else 0;
        - ``pass^k`` / ``pass^k_scored``: the task's pass^k over all its trials
          (an unscored one is a failure) / over its scored trials only (0 when
          it has fewer than k).
        """
        if name.startswith(PASS_HAT_PREFIX):
            return self._pass_hat(name)
        if name == "has_score" or name.endswith(SCORED_SUFFIX):
            scored = [v for v in self.trials.values() if v.get("ok", 1.0)]
            if name == "has_score":
                return 1.0 if scored else 0.0
            base = name[: -len(SCORED_SUFFIX)]
            return sum(v.get(base, 0.0) for v in scored) / len(scored) if scored else 0.0
        if not self.trials:
            return 0.0
        return sum(values.get(name, 0.0) for values in self.trials.values()) / self.n


def _number(value: object) -> float:
    """A score's number (``float()`` of it)."""
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError(f"not a number: {value!r}")


def parse_key(key: str) -> tuple[str, str, str, int]:
    """(benchmark, subset, sample_id, trial) of a record key ``bench/subset/id#trial``."""
    benchmark, subset, rest = key.split("/", 2)
    sample_id, _, trial = rest.rpartition("#")
    return benchmark, subset, sample_id, int(trial)


def _score_of(record: Mapping[str, object]) -> Mapping[str, object]:
    score = record.get("score") or {}
    if not isinstance(score, Mapping):
        raise TypeError(f"a record's score is not an object: {score!r}")
    return score


def trial_values(record: Mapping[str, object]) -> tuple[bool, dict[str, float]]:
    """Whether a record was scored, and its numbers. An unscored record (infrastructure
    or scoring error, or a trial its benchmark's rules exclude) has zero pass, reward
    and tool counts; estimators decide whether it counts as a failure or is left out
    (``ok`` says which it is)."""
    score = _score_of(record)
    ok = (
        record.get("status", OK) == OK
        and not record.get(REGRADE_ERROR_KEY)
        and bool(score)
        and not score.get("excluded")
    )
    values = {"ok": 1.0 if ok else 0.0, "passed": 0.0, "reward": 0.0}
    if not ok:
        return False, values
    reward = _number(score.get("reward") or 0.0)
    passed = score.get("passed")
    values["passed"] = 1.0 if (passed if passed is not None else reward >= 1.0) else 0.0
    values["reward"] = reward
    for name in ("tool_tp", "tool_fp", "tool_fn", "progress"):
        if score.get(name) is not None:
            values[name] = _number(score[name])
    metadata = record.get("metadata") or {}
    if isinstance(metadata, Mapping) and metadata.get("error_flag"):
        # The record's metadata convention for an item its benchmark flags as
        # erroneous: left out of tool-call sums, as that benchmark's own script does.
        for name in ("tool_tp", "tool_fp", "tool_fn"):
            values.pop(name, None)
    return True, values


def task_outcomes(records: Mapping[str, Mapping[str, object]]) -> dict[str, TaskOutcome]:
    """Group records (key -> record, as in samples.jsonl or scores.json) by task."""
    tasks: dict[str, TaskOutcome] = {}
    for key, record in records.items():
        benchmark, subset, sample_id, trial = parse_key(key)
        task = tasks.get(f"{benchmark}/{subset}/{sample_id}")
        if task is None:
            task = TaskOutcome(benchmark, subset, sample_id)
            tasks[task.key] = task
        ok, values = trial_values(record)
        task.trials[trial] = values
        excluded = bool(_score_of(record).get("excluded")) and not ok
        task.excluded += excluded
        task.errors += 0 if ok or excluded else 1
        task.infra_errors += record.get("status") == INFRA_ERROR
    return tasks


def by_subset(tasks: Iterable[TaskOutcome]) -> dict[str, list[TaskOutcome]]:
    groups: dict[str, list[TaskOutcome]] = {}
    for task in sorted(tasks, key=lambda t: t.key):
        groups.setdefault(task.subset, []).append(task)
    return groups


def by_benchmark(tasks: Iterable[TaskOutcome]) -> dict[str, list[TaskOutcome]]:
    groups: dict[str, list[TaskOutcome]] = {}
    for task in tasks:
        groups.setdefault(task.benchmark, []).append(task)
    return groups


# --- pass^k ----------------------------------------------------------------------------


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of one task: the chance that k trials drawn from its n all pass, C(c,k)/C(n,k)."""
    if not 0 < k <= n:
        raise ValueError(f"k must be in 1..{n}, got {k}")
    return math.comb(c, k) / math.comb(n, k)


def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k of one task: the chance that at least one of k drawn trials passes."""
    if not 0 < k <= n:
        raise ValueError(f"k must be in 1..{n}, got {k}")
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k_curve(tasks: Iterable[TaskOutcome]) -> dict[int, float]:
    """Mean over tasks of pass^k for k = 1 .. the fewest trials any task has."""
    counts = [(task.n, task.successes) for task in tasks if task.n > 0]
    if not counts:
        return {}
    max_k = min(n for n, _ in counts)
    return {
        k: sum(pass_hat_k(n, c, k) for n, c in counts) / len(counts) for k in range(1, max_k + 1)
    }


def pass_hat_k_estimator(k: int, scored_only: bool) -> Estimator:
    """pass^k of a subset as an estimator: the mean over its tasks of their pass^k
    (``scored_only``: over each task's scored trials, among tasks with one)."""
    from harness.task.estimators import mean_over_subsets, ratio

    if not scored_only:
        return Estimator(
            f"pass^{k}", (f"{PASS_HAT_PREFIX}{k}",), mean_over_subsets, f"mean pass^{k} over tasks"
        )

    def combine(sums: Mapping[str, Floats], counts: Mapping[str, int]) -> Floats | float:
        means = [ratio(s[..., 0], s[..., 1]) for s in sums.values()]
        return sum(means) / len(means) if means else 0.0

    return Estimator(
        f"pass^{k}",
        (f"{PASS_HAT_PREFIX}{k}{SCORED_SUFFIX}", "has_score"),
        combine,
        f"mean pass^{k} over tasks with a scored trial (scored trials only)",
    )


def max_pass_hat_k(tasks: Iterable[TaskOutcome], scored_only: bool) -> int:
    """The largest k every task allows: its fewest trials (scored ones, among tasks
    with any, when ``scored_only``); 0 when there are none."""
    if scored_only:
        counts = [len(t.scored_trials()) for t in tasks]
        counts = [n for n in counts if n]
    else:
        counts = [t.n for t in tasks]
    return min(counts) if counts else 0


def pass_hat_k_estimates(
    tasks: Iterable[TaskOutcome],
    scored_only: bool,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, dict[int, Estimate]]:
    """subset -> k -> pass^k with its bootstrap interval over tasks, for every k up
    to the subset's fewest trials per task (``max_pass_hat_k``). The one place
    pass^k intervals are computed; tables, plots and reports read it from here."""
    out: dict[str, dict[int, Estimate]] = {}
    for subset, group in by_subset(tasks).items():
        curve = {}
        for k in range(1, max_pass_hat_k(group, scored_only) + 1):
            curve[k] = estimate(
                {subset: group},
                pass_hat_k_estimator(k, scored_only),
                n_boot,
                derive_seed(seed, group[0].benchmark, subset, f"pass^{k}"),
                level,
            )
        if curve:
            out[subset] = curve
    return out


# --- bootstrap -------------------------------------------------------------------------


def derive_seed(seed: int, *names: str) -> int:
    """A seed per named quantity, so adding a benchmark does not move the others' intervals."""
    return (seed ^ zlib.crc32("|".join(names).encode())) & 0xFFFFFFFF


def _matrix(tasks: list[TaskOutcome], components: tuple[str, ...]) -> Floats:
    import numpy as np

    return np.array([[t.component(c) for c in components] for t in tasks], dtype=float).reshape(
        len(tasks), len(components)
    )


def _replicate_sums(matrices: list[Floats], rng: np.random.Generator, n_boot: int) -> list[Floats]:
    """Sums over resampled rows, the same resampled rows for every matrix (pairing)."""
    import numpy as np

    rows = matrices[0].shape[0]
    out = [np.empty((n_boot, m.shape[1])) for m in matrices]
    block = max(1, _BLOCK_CELLS // max(rows, 1))
    for start in range(0, n_boot, block):
        stop = min(n_boot, start + block)
        index = rng.integers(0, rows, size=(stop - start, rows))
        for matrix, target in zip(matrices, out, strict=True):
            target[start:stop] = matrix[index].sum(axis=1)
    return out


def _evaluate(
    estimator: Estimator, sums: Mapping[str, Floats], counts: Mapping[str, int]
) -> Floats:
    import numpy as np

    return np.asarray(estimator.combine(sums, counts), dtype=float)


def bootstrap_replicates(
    strata: Mapping[str, list[TaskOutcome]],
    estimator: Estimator,
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> tuple[float, Floats]:
    """The estimator on all tasks, and its values on ``n_boot`` resamples of tasks
    (drawn with replacement within each stratum)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    strata = {name: tasks for name, tasks in sorted(strata.items()) if tasks}
    matrices = {name: _matrix(tasks, estimator.components) for name, tasks in strata.items()}
    counts = {name: len(tasks) for name, tasks in strata.items()}
    point = _evaluate(estimator, {n: m.sum(axis=0) for n, m in matrices.items()}, counts)
    sums = {name: _replicate_sums([m], rng, n_boot)[0] for name, m in matrices.items()}
    return float(point), _evaluate(estimator, sums, counts) * np.ones(n_boot)


def paired_replicates(
    pairs: Mapping[str, list[tuple[TaskOutcome, TaskOutcome]]],
    estimator: Estimator,
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> tuple[float, float, Floats]:
    """Estimator on A and on B over the paired tasks, and bootstrap replicates of
    B − A where each resample draws the same tasks for both runs."""
    import numpy as np

    rng = np.random.default_rng(seed)
    pairs = {name: items for name, items in sorted(pairs.items()) if items}
    counts = {name: len(items) for name, items in pairs.items()}
    a = {
        name: _matrix([x for x, _ in items], estimator.components) for name, items in pairs.items()
    }
    b = {
        name: _matrix([y for _, y in items], estimator.components) for name, items in pairs.items()
    }
    value_a = float(_evaluate(estimator, {n: m.sum(axis=0) for n, m in a.items()}, counts))
    value_b = float(_evaluate(estimator, {n: m.sum(axis=0) for n, m in b.items()}, counts))
    sums_a: dict[str, Floats] = {}
    sums_b: dict[str, Floats] = {}
    for name in pairs:
        sums_a[name], sums_b[name] = _replicate_sums([a[name], b[name]], rng, n_boot)
    diff = _evaluate(estimator, sums_b, counts) - _evaluate(estimator, sums_a, counts)
    return value_a, value_b, diff * np.ones(n_boot)


def percentile_interval(replicates: Floats | Sequence[float], level: float = LEVEL) -> Interval:
    import numpy as np

    tail = (1.0 - level) / 2.0
    low, high = np.quantile(np.asarray(replicates, dtype=float), [tail, 1.0 - tail])
    return Interval(float(low), float(high), level)


@dataclass
class Estimate:
    value: float
    interval: Interval
    n_tasks: int
    # A sample of how the interval was computed: not part of an estimate's equality.
    replicates: Floats | None = field(default=None, repr=False, compare=False)


def estimate(
    strata: Mapping[str, list[TaskOutcome]],
    estimator: Estimator,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    level: float = LEVEL,
) -> Estimate:
    """Point value and bootstrap CI of a metric over tasks grouped in strata."""
    value, replicates = bootstrap_replicates(strata, estimator, n_boot, seed)
    n_tasks = sum(len(tasks) for tasks in strata.values())
    interval = replace(percentile_interval(replicates, level), n=n_tasks)
    return Estimate(value, interval, n_tasks, replicates)


# --- tests of a paired difference ------------------------------------------------------


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts: tasks only A passed,
    tasks only B passed. Under no difference each discordant task is a fair coin."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(a_only, b_only) + 1)) / 2**n
    return min(1.0, 2.0 * tail)


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of a family of p-values (any dependence between
    them): the i-th smallest is multiplied by (m − i + 1), and the adjusted values are
    made monotone in that order and capped at 1. Returned in the input's order."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def minimum_detectable_effect(
    standard_error: float, alpha: float = ALPHA, power: float = POWER
) -> float:
    """Smallest true difference found significant (two-sided ``alpha``) with ``power``."""
    normal = NormalDist()
    return (normal.inv_cdf(1.0 - alpha / 2.0) + normal.inv_cdf(power)) * standard_error


def _z(level: float) -> float:
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def wilson_interval(successes: int, n: int, level: float = LEVEL) -> Interval:
    """Wilson's score interval for a binomial proportion (Wilson 1927)."""
    if n <= 0:
        raise ValueError("a proportion needs n > 0")
    z = _z(level)
    p = successes / n
    scale = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / scale
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4 * n * n)) / scale
    return Interval(max(0.0, centre - half), min(1.0, centre + half), level)


@dataclass(frozen=True)
class PassFailTable:
    """The paired 2×2 table of per-task pass/fail (a task passes when a majority of
    its trials pass) in run A and run B."""

    both: int
    a_only: int  # A passed, B failed
    b_only: int  # B passed, A failed
    neither: int

    @property
    def n(self) -> int:
        return self.both + self.a_only + self.b_only + self.neither

    @property
    def diff(self) -> float:
        """B's pass rate minus A's, over the tasks of the table."""
        return (self.b_only - self.a_only) / self.n if self.n else 0.0

    @property
    def discordant(self) -> int:
        return self.a_only + self.b_only


def pass_fail_table(pairs: Iterable[tuple[TaskOutcome, TaskOutcome]]) -> PassFailTable:
    counts = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for a, b in pairs:
        counts[(a.majority_passed, b.majority_passed)] += 1
    return PassFailTable(
        both=counts[(True, True)],
        a_only=counts[(True, False)],
        b_only=counts[(False, True)],
        neither=counts[(False, False)],
    )


def newcombe_paired_interval(table: PassFailTable, level: float = LEVEL) -> Interval:
    """Newcombe's hybrid score interval for B − A on paired proportions (Newcombe 1998,
    "Improved confidence intervals for the difference between binomial proportions
    based on paired data", method 10): each run's Wilson interval, combined by
    square-and-add with the estimated correlation φ of the two margins (φ shrunk by
    n/2 towards 0 when positive, 0 when a margin is empty). Its coverage stays near
    the nominal level down to a handful of pairs, where the bootstrap's does not."""
    n = table.n
    if n <= 0:
        raise ValueError("an interval needs at least one pair")
    b_pass, a_pass = table.both + table.b_only, table.both + table.a_only
    p_b, p_a = b_pass / n, a_pass / n
    wilson_b, wilson_a = wilson_interval(b_pass, n, level), wilson_interval(a_pass, n, level)
    margins = b_pass * (n - b_pass) * a_pass * (n - a_pass)
    cross = table.both * table.neither - table.b_only * table.a_only
    if margins == 0:
        phi = 0.0
    elif cross > n / 2:
        phi = (cross - n / 2) / math.sqrt(margins)
    elif cross >= 0:
        phi = 0.0
    else:
        phi = cross / math.sqrt(margins)

    def spread(x: float, y: float) -> float:
        return math.sqrt(max(0.0, x * x - 2.0 * phi * x * y + y * y))

    diff = p_b - p_a
    low = diff - spread(p_b - wilson_b.low, wilson_a.high - p_a)
    high = diff + spread(wilson_b.high - p_b, p_a - wilson_a.low)
    return Interval(max(-1.0, low), min(1.0, high), level)


def is_degenerate(replicates: Floats | Sequence[float]) -> bool:
    """True when every bootstrap resample gave the same value (to rounding): its
    percentile interval then has zero width and says nothing about uncertainty.
    It happens when, within every stratum, all tasks have the same difference."""
    import numpy as np

    values = np.asarray(replicates, dtype=float)
    return values.size > 0 and float(np.ptp(values)) <= 1e-12 * max(
        1.0, float(np.max(np.abs(values)))
    )


def null_standard_error(
    pairs: Mapping[str, list[tuple[TaskOutcome, TaskOutcome]]], estimator: Estimator
) -> float:
    """Standard error of Δ = metric(B) − metric(A) for this design when the runs do
    not differ: each task's A and B are exchangeable, so its (linearised)
    contribution to Δ is equally likely to have either sign, and the variance of Δ
    is the sum of the squared contributions. For a pass rate this is
    sqrt(discordant tasks) / n, the variance behind McNemar's test. The metric is
    linearised around the two runs' pooled sums (central differences), so any
    estimator works: pass rates, means over subsets, micro F1."""
    import numpy as np

    pairs = {name: items for name, items in sorted(pairs.items()) if items}
    counts = {name: len(items) for name, items in pairs.items()}
    diffs = {
        name: _matrix([y for _, y in items], estimator.components)
        - _matrix([x for x, _ in items], estimator.components)
        for name, items in pairs.items()
    }
    pooled = {
        name: (
            _matrix([x for x, _ in items], estimator.components).sum(axis=0)
            + _matrix([y for _, y in items], estimator.components).sum(axis=0)
        )
        / 2.0
        for name, items in pairs.items()
    }
    # One batch: for each (stratum, component), the sums nudged up and down.
    names = list(pairs)
    width = len(estimator.components)
    steps = len(names) * width
    batch = {name: np.tile(pooled[name], (2 * steps, 1)) for name in names}
    nudges = []
    for s, name in enumerate(names):
        for j in range(width):
            row = s * width + j
            h = 1e-5 * max(1.0, abs(float(pooled[name][j])))
            batch[name][2 * row, j] += h
            batch[name][2 * row + 1, j] -= h
            nudges.append(h)
    values = _evaluate(estimator, batch, counts)
    gradient = (values[0::2] - values[1::2]) / (2.0 * np.asarray(nudges))
    variance = 0.0
    for s, name in enumerate(names):
        contributions = diffs[name] @ gradient[s * width : (s + 1) * width]
        variance += float(np.sum(contributions**2))
    return math.sqrt(variance)


# Below this many paired tasks, compare warns that the bootstrap interval cannot be
# trusted. Exactly over every outcome of paired pass/fail designs with 12-40% of
# tasks flipping, the 95% percentile bootstrap of Δ covers the true Δ only 45-85%
# of the time at 6 tasks and 85-95% at 20, and holds 92-95% from 30 on; Newcombe's
# interval stays at or above 95% at every size (tests/results/test_compare_statistics.py
# re-checks both at 6 tasks).
MIN_PAIRED_TASKS = 30
# The exact McNemar test's smallest p-value with d discordant tasks is 2·0.5^d, so
# below 6 no outcome at all can be significant at 5% (two-sided).
MIN_DISCORDANT_FOR_ALPHA = 6


@dataclass
class PairedComparison:
    """B − A on the tasks both runs hold, for one benchmark or one of its subsets.

    Every statistic is None, with ``unscored`` saying why, when a run has no scored
    record here; ``p_holm`` is filled in across a whole comparison (``compare_runs``).
    """

    label: str
    metric: str
    n_tasks: int
    errored_tasks: int  # shared tasks with an infrastructure/scoring error in either run
    unscored: str = ""
    value_a: float | None = None
    value_b: float | None = None
    interval: Interval | None = None  # percentile interval of the paired bootstrap
    bootstrap_degenerate: bool = False  # every resample gave the same Δ
    table: PassFailTable | None = None  # per-task pass/fail in A and B
    newcombe: Interval | None = None  # of B − A in pass/fail (``table.diff``)
    mde: float | None = None  # None when no task differs (the design's SE is unknown)
    null_se: float | None = None  # SE of Δ under no difference (``null_standard_error``)
    a_only: list[str] = field(default_factory=list)  # tasks A passed and B failed
    b_only: list[str] = field(default_factory=list)  # tasks B passed and A failed
    p_value: float | None = None  # exact McNemar, before correction
    p_holm: float | None = None  # Holm-adjusted over the comparison's family
    warnings: list[ComparisonWarning] = field(default_factory=list)

    @property
    def diff(self) -> float | None:
        if self.value_a is None or self.value_b is None:
            return None
        return self.value_b - self.value_a


def _unscored_side(pairs: list[tuple[TaskOutcome, TaskOutcome]]) -> str:
    """'' when both runs scored some record of ``pairs``, else which run did not and why."""
    from harness.results.unscored import tasks_reason

    sides = [
        (name, tasks_reason(tasks))
        for name, tasks in (("A", [a for a, _ in pairs]), ("B", [b for _, b in pairs]))
    ]
    return "; ".join(f"{name}: {why}" for name, why in sides if why)


def compare_paired(
    label: str,
    pairs: Mapping[str, list[tuple[TaskOutcome, TaskOutcome]]],
    estimator: Estimator,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    level: float = LEVEL,
) -> PairedComparison:
    """Paired bootstrap and Newcombe intervals, McNemar test, flipped tasks, the
    design's MDE and warnings (``p_holm`` and its warning come from ``compare_runs``)."""
    all_pairs = [pair for items in pairs.values() for pair in items]
    comparison = PairedComparison(
        label=label,
        metric=estimator.name,
        n_tasks=len(all_pairs),
        errored_tasks=sum(1 for a, b in all_pairs if a.errors or b.errors),
        unscored=_unscored_side(all_pairs),
    )
    if comparison.unscored:  # a difference from a formula over nothing is no difference
        return comparison
    value_a, value_b, replicates = paired_replicates(pairs, estimator, n_boot, seed)
    table = pass_fail_table(all_pairs)
    null_se = null_standard_error(pairs, estimator)
    comparison.value_a, comparison.value_b = value_a, value_b
    comparison.interval = percentile_interval(replicates, level)
    comparison.bootstrap_degenerate = is_degenerate(replicates)
    comparison.table = table
    comparison.newcombe = newcombe_paired_interval(table, level)
    comparison.null_se = null_se
    comparison.mde = minimum_detectable_effect(null_se) if null_se > 0 else None
    comparison.a_only = sorted(
        a.key for a, b in all_pairs if a.majority_passed and not b.majority_passed
    )
    comparison.b_only = sorted(
        b.key for a, b in all_pairs if b.majority_passed and not a.majority_passed
    )
    comparison.p_value = mcnemar_exact(table.a_only, table.b_only)
    comparison.warnings = comparison_warnings(comparison)
    return comparison


@dataclass(frozen=True)
class ComparisonWarning:
    """A reason not to (yet) claim a difference on one row: a short ``message`` with
    the row's numbers; ``WARNING_NOTES[kind]`` explains the kind once per output."""

    kind: str
    message: str

    def __str__(self) -> str:
        return self.message


WARNING_NOTES = {
    "too_few_tasks": "a paired comparison needs at least 2 shared tasks.",
    "small_n": (
        f"below {MIN_PAIRED_TASKS} paired tasks the bootstrap's 95% interval covers the "
        "true Δ far less often than 95% (45-85% of the time at 6 tasks, 85-95% at 20, "
        "over all outcomes of designs with 12-40% of tasks flipping); read the Newcombe "
        "interval, which keeps its level."
    ),
    "degenerate_bootstrap": (
        "every bootstrap resample gave the same Δ (within each subset all tasks differ "
        "alike), so its interval has zero width and carries no uncertainty."
    ),
    "too_few_flips": (
        f"McNemar's exact test has p ≥ 2·0.5^d with d flipped tasks: below "
        f"{MIN_DISCORDANT_FOR_ALPHA} flips no outcome can reach p < {ALPHA:g}."
    ),
    "includes_zero": "a 95% interval of Δ that includes 0: no difference can be claimed.",
    "below_mde": (
        "|Δ| is below the minimum detectable effect: these tasks cannot resolve a "
        f"difference this small (found significant less than {POWER:.0%} of the time)."
    ),
    "no_mde": (
        "no task differs between the runs, so the design's variance under no difference "
        "(the MDE's basis) cannot be estimated from them."
    ),
    "holm": (
        f"McNemar p < {ALPHA:g} before, but not after, Holm's correction over every row "
        "of this comparison: claiming it would raise the chance of a false claim above 5%."
    ),
    "errors": "shared tasks with infrastructure or scoring errors count as failures.",
}


def comparison_warnings(c: PairedComparison) -> list[ComparisonWarning]:
    """Why a reader should not (yet) claim a difference; the Holm warning is added
    by ``apply_holm`` once the whole family's p-values are known."""
    if c.n_tasks < 2:
        return [ComparisonWarning("too_few_tasks", f"only {c.n_tasks} shared task(s)")]
    diff = c.diff
    if diff is None:  # a run scored nothing here: ``unscored`` says why
        return []
    found = []

    def warn(kind: str, message: str) -> None:
        found.append(ComparisonWarning(kind, message))

    if c.n_tasks < MIN_PAIRED_TASKS:
        warn("small_n", f"{c.n_tasks} paired tasks (< {MIN_PAIRED_TASKS})")
    if c.bootstrap_degenerate:
        warn(
            "degenerate_bootstrap",
            f"bootstrap degenerate (every resample Δ = {100 * diff:+.2f} pts)",
        )
    if c.table is not None and 0 < c.table.discordant < MIN_DISCORDANT_FOR_ALPHA:
        warn(
            "too_few_flips",
            f"{c.table.discordant} flipped task(s) (< {MIN_DISCORDANT_FOR_ALPHA}): McNemar cannot reach p < {ALPHA:g}",
        )
    intervals = [("bootstrap", c.interval)] if not c.bootstrap_degenerate else []
    zero = [
        name
        for name, i in [*intervals, ("Newcombe", c.newcombe)]
        if i is not None and i.includes_zero()
    ]
    if zero:
        warn("includes_zero", f"{' and '.join(zero)} CI include(s) 0")
    if c.mde is None:
        warn("no_mde", "no task differs: MDE unknown")
    elif abs(diff) < c.mde:
        mde = "> 100" if c.mde > 1.0 else f"{100 * c.mde:.1f}"
        warn("below_mde", f"|Δ| = {100 * abs(diff):.1f} pts < MDE {mde} pts")
    if c.errored_tasks:
        warn("errors", f"{c.errored_tasks} shared task(s) with errors (counted as failures)")
    return found


def apply_holm(comparisons: Iterable[PairedComparison], alpha: float = ALPHA) -> None:
    """Holm-adjust the McNemar p-values of one comparison's family (every benchmark
    headline and subset it reports), and warn where significance does not survive."""
    family = [(c, c.p_value) for c in comparisons if c.p_value is not None]
    adjusted_values = holm_adjust([p for _, p in family])
    for (c, p), adjusted in zip(family, adjusted_values, strict=True):
        c.p_holm = adjusted
        if p < alpha <= adjusted:
            c.warnings.append(
                ComparisonWarning(
                    "holm",
                    f"McNemar p = {p:.3g} < {alpha:g} only before Holm over "
                    f"{len(family)} rows (adjusted p = {adjusted:.3g})",
                )
            )


def shared_pairs(
    tasks_a: Mapping[str, TaskOutcome], tasks_b: Mapping[str, TaskOutcome]
) -> list[tuple[TaskOutcome, TaskOutcome]]:
    """Tasks both runs hold, in key order."""
    return [(tasks_a[key], tasks_b[key]) for key in sorted(set(tasks_a) & set(tasks_b))]


@dataclass
class BenchmarkComparison:
    """A benchmark's primary metric and each subset's, compared on shared tasks."""

    benchmark: str
    headline: PairedComparison
    subsets: list[PairedComparison]
    only_a: int  # tasks only the first run holds (not compared)
    only_b: int


def compare_runs(
    tasks_a: Mapping[str, TaskOutcome],
    tasks_b: Mapping[str, TaskOutcome],
    n_boot: int = N_BOOT,
    seed: int = SEED,
    level: float = LEVEL,
) -> list[BenchmarkComparison]:
    """Paired comparison of two runs, per benchmark and per subset, on their shared tasks."""
    groups_a = by_benchmark(tasks_a.values())
    groups_b = by_benchmark(tasks_b.values())
    results = []
    for bench in sort_benchmarks(set(groups_a) & set(groups_b)):
        keyed_a = {t.key: t for t in groups_a[bench]}
        keyed_b = {t.key: t for t in groups_b[bench]}
        pairs = shared_pairs(keyed_a, keyed_b)
        if not pairs:
            continue
        strata: dict[str, list[tuple[TaskOutcome, TaskOutcome]]] = {}
        for a, b in pairs:
            strata.setdefault(a.subset, []).append((a, b))
        headline = compare_paired(
            bench, strata, estimator_for(bench), n_boot, derive_seed(seed, bench), level
        )
        subsets = [
            compare_paired(
                f"{bench}/{subset}",
                {subset: items},
                subset_estimator(bench),
                n_boot,
                derive_seed(seed, bench, subset),
                level,
            )
            for subset, items in sorted(strata.items())
        ]
        results.append(
            BenchmarkComparison(
                benchmark=bench,
                headline=headline,
                subsets=subsets,
                only_a=len(set(keyed_a) - set(keyed_b)),
                only_b=len(set(keyed_b) - set(keyed_a)),
            )
        )
    apply_holm(c for result in results for c in (result.headline, *result.subsets))
    return results
