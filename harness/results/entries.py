"""What one benchmark of one run came to, typed: ``BenchmarkEntry``.

An entry holds the benchmark's headline metrics (the official aggregates of
scores.json), the bootstrap interval of its primary metric (when it can be
recomputed from the records: ``harness.results.stats``), what its numbers cover
against the official set (``harness.results.coverage``), pass^k with intervals,
and its record counts. The leaderboard, ``harness compare``, the report and
``run_suite``'s summary all show these same objects; ``benchmark_entries`` makes
them from a loaded run folder. Entries are frozen: a renderer reads them and
never changes what a number is.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from harness.errors import ConfigError
from harness.results import stats, unscored
from harness.results.coverage import Coverage, run_limit
from harness.results.headlines import benchmark_info, estimator_for, is_count_metric, primary_metric
from harness.results.stats import Estimate, Interval, TaskOutcome

if TYPE_CHECKING:
    from harness.results.frames import LoadedRun
    from harness.results.stats import Floats

# A recomputed metric must match the official one this closely before its CI is shown.
CI_TOLERANCE = 5e-4
COUNT_NAMES = ("records", "ok", "infra_errors", "score_errors")


@dataclass(frozen=True)
class BenchmarkCounts:
    """The records behind a benchmark's numbers, by how they ended."""

    records: int = 0
    ok: int = 0  # episodes that ran to their end (scored or not by the benchmark)
    infra_errors: int = 0
    score_errors: int = 0  # scoring failed, when run or on a regrade
    excluded: int = 0  # scored, but left out of the metrics by the benchmark's own rule

    @property
    def errors(self) -> int:
        return self.infra_errors + self.score_errors

    @classmethod
    def from_dict(cls, data: object) -> BenchmarkCounts | None:
        """The ``counts`` of a benchmark in scores.json; None when it has none."""
        if not data:
            return None
        if not isinstance(data, dict):
            raise ConfigError(
                f"a benchmark's counts are a JSON {type(data).__name__}, not an object"
            )
        values = {}
        for name in (*COUNT_NAMES, "excluded"):
            value = data.get(name, 0)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ConfigError(f"a benchmark's count '{name}' is not a whole number")
            values[name] = value
        return cls(**values)

    def to_dict(self) -> dict[str, int]:
        """As scores.json writes it (``excluded`` only when some record was)."""
        data = {name: getattr(self, name) for name in COUNT_NAMES}
        if self.excluded:
            data["excluded"] = self.excluded
        return data


# What a table shows for an entry without counts (scores.json of an older version).
NO_COUNTS = BenchmarkCounts()


@dataclass(frozen=True)
class BenchmarkEntry:
    """One benchmark of one run (or of one published row)."""

    benchmark: str
    headline: dict[str, float | None]
    primary: str | None
    interval: Interval | None = None  # 95% bootstrap interval of the primary metric
    ci_note: str = ""  # why the primary metric has no interval, when it has none
    # Bootstrap replicates of the primary metric (a composite's interval averages
    # them); a sample of the interval's computation, so not part of equality.
    replicates: Floats | None = field(default=None, compare=False, repr=False)
    counts: BenchmarkCounts | None = None  # None for published rows
    missing: int = 0
    not_run: dict[str, str] = field(default_factory=dict)  # subset -> reason
    notes: list[str] = field(default_factory=list)
    subsets: dict[str, object] = field(default_factory=dict)
    unscored: str = ""  # why the benchmark has no number (harness.results.unscored), if it has none
    unscored_subsets: dict[str, str] = field(default_factory=dict)  # subset -> why
    coverage: Coverage | None = None  # what the numbers cover; None for published rows
    # headline metric -> the subsets it is computed from (Adapter.metric_subsets)
    metric_scopes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # metric -> why it has no number: none of the subsets it is over was run
    not_run_metrics: dict[str, str] = field(default_factory=dict)
    # subset -> k -> pass^k with its interval (benchmarks that report pass^k)
    pass_hat_k: dict[str, dict[int, Estimate]] = field(default_factory=dict)
    # settings that are not the benchmark's own (harness.results.nonstandard)
    nonstandard: list[str] = field(default_factory=list)
    # what the numbers were measured under (BenchmarkResult.conditions), for its labels
    conditions: list[str] = field(default_factory=list)
    # what its numbers depend on, name -> value (harness.results.conditions)
    score_conditions: dict[str, str] = field(default_factory=dict)
    # how they differ from the other rows of their column ('' alike): DRIFT_MARK
    drift: str = ""

    @property
    def primary_value(self) -> float | None:
        return None if self.primary is None else self.headline.get(self.primary)

    @property
    def partial(self) -> bool:
        """Whether the headline is over less than the benchmark's official set."""
        return self.coverage is not None and self.coverage.partial

    def metric_coverage(self, metric: str) -> Coverage | None:
        """What one headline metric covers: the benchmark's coverage itself when the
        metric is over all of its official subsets, else that of its subsets."""
        if self.coverage is None:
            return None
        found = self.coverage.for_metric(metric, self.metric_scopes.get(metric))
        whole = found.official_subsets == self.coverage.official_subsets and (
            found.official_subsets or len(found.subsets) == len(self.coverage.subsets)
        )
        return self.coverage if whole else found

    def metric_partial(self, metric: str) -> bool:
        """Whether one headline metric (of the benchmark or of a subset) is partial."""
        coverage = self.metric_coverage(metric)
        return coverage is not None and coverage.partial

    def why_none(self, metric: str) -> str:
        """Why ``metric`` has no value because nothing behind it was scored ('' otherwise)."""
        if self.unscored:
            return self.unscored
        if metric in self.not_run_metrics:
            return self.not_run_metrics[metric]
        for subset, why in self.unscored_subsets.items():
            if subset in metric.split("/"):
                return why
        return ""

    @property
    def errors(self) -> int:
        return 0 if self.counts is None else self.counts.errors

    def incomplete(self) -> str:
        """Why this benchmark's number does not cover all it should ('' when it does)."""
        parts = []
        if self.not_run:
            parts.append("not run: " + ", ".join(sorted(self.not_run)))
        if self.missing:
            parts.append(f"{self.missing} sample(s) missing")
        if self.errors:
            parts.append(f"{self.errors} error record(s)")
        if self.counts is not None and self.counts.excluded:
            parts.append(f"{self.counts.excluded} record(s) left out by the benchmark's rule")
        return "; ".join(parts)


def metric_interval(entry: BenchmarkEntry, metric: str) -> Interval | None:
    """The interval of a headline metric: the primary's, or a ``pass^k/<subset>``
    key's from the core's pass^k estimates when they give the same value."""
    if metric == entry.primary:
        return entry.interval
    name, _, subset = metric.partition("/")
    if (
        not name.startswith(stats.PASS_HAT_PREFIX)
        or not name[len(stats.PASS_HAT_PREFIX) :].isdigit()
    ):
        return None
    found = entry.pass_hat_k.get(subset, {}).get(int(name[len(stats.PASS_HAT_PREFIX) :]))
    value = entry.headline.get(metric)
    if found is None or value is None or abs(found.value - float(value)) > CI_TOLERANCE:
        return None
    return found.interval


# --- from a run folder ------------------------------------------------------------------


def _without_unscored(entry: BenchmarkEntry, tasks: list[TaskOutcome]) -> BenchmarkEntry:
    """No number where nothing was scored: an aggregate over error records only is
    a formula applied to nothing. Clears the benchmark's fractional headline values,
    or those of a subset (headline keys name their subset as a '/'-separated part)."""
    why = unscored.tasks_reason(tasks)
    if why:
        entry = replace(entry, unscored=why)
    else:
        found = {}
        for subset, group in stats.by_subset(tasks).items():
            reason = unscored.tasks_reason(group)
            if reason:
                found[subset] = reason
        entry = replace(entry, unscored_subsets=found)
    headline = {
        key: None if entry.why_none(key) and not is_count_metric(key) else value
        for key, value in entry.headline.items()
    }
    return replace(entry, headline=headline)


def _with_interval(
    entry: BenchmarkEntry, tasks: list[TaskOutcome], n_boot: int, seed: int
) -> BenchmarkEntry:
    """The bootstrap CI of the primary metric, if it can be recomputed exactly."""
    official = entry.primary_value
    if official is None or not tasks:
        return replace(entry, ci_note="no CI: no scored tasks" if official is not None else "")
    estimator = estimator_for(entry.benchmark, entry.primary)
    result = stats.estimate(
        stats.by_subset(tasks), estimator, n_boot, stats.derive_seed(seed, entry.benchmark)
    )
    if abs(result.value - float(official)) > CI_TOLERANCE:
        return replace(
            entry,
            ci_note=(
                f"no CI: {entry.primary} could not be recomputed from the records "
                f"({result.value:.4f} vs official {float(official):.4f})"
            ),
        )
    return replace(entry, interval=result.interval, replicates=result.replicates)


def _without_not_run(entry: BenchmarkEntry) -> BenchmarkEntry:
    """A metric over subsets none of which was run shows no number (a group score
    that the official formula would put at 0), only that it was not run."""
    scope_of = benchmark_info(entry.benchmark).metric_subsets
    scopes = {}
    for metric in entry.headline:
        scope = scope_of(metric)
        if scope is not None:
            scopes[metric] = tuple(scope)
    entry = replace(entry, metric_scopes=scopes)
    coverage = entry.coverage
    if coverage is None or not coverage.declared:
        return entry
    not_run = {
        metric: "not run"
        for metric, scope in scopes.items()
        if not is_count_metric(metric) and not coverage.restrict(scope).samples_scored
    }
    headline = {key: None if key in not_run else value for key, value in entry.headline.items()}
    return replace(entry, not_run_metrics=not_run, headline=headline)


def _pass_hat_k(
    benchmark: str, tasks: list[TaskOutcome], n_boot: int, seed: int
) -> dict[str, dict[int, Estimate]]:
    mode = benchmark_info(benchmark).pass_hat_k_trials
    if not mode or not tasks:
        return {}
    return stats.pass_hat_k_estimates(tasks, mode == "scored", n_boot, seed)


def benchmark_entry(
    run: LoadedRun,
    benchmark: str,
    tasks: list[TaskOutcome],
    n_boot: int = stats.N_BOOT,
    seed: int = stats.SEED,
) -> BenchmarkEntry:
    """One benchmark of a loaded run: the official aggregates of its scores.json,
    with the interval, coverage and pass^k over its ``tasks`` (its records)."""
    from harness.results.conditions import score_conditions
    from harness.results.frames import benchmark_coverage

    scores, manifest = run.scores, run.manifest
    result = (scores.get("benchmarks") or {})[benchmark]
    headline = result.get("headline") or {}
    entry = BenchmarkEntry(
        benchmark=benchmark,
        headline=headline,
        primary=primary_metric(benchmark, headline),
        counts=BenchmarkCounts.from_dict(result.get("counts")),
        missing=sum((scores.get("missing_samples") or {}).get(benchmark, {}).values()),
        not_run={
            subset: (result.get("not_run_reasons") or {}).get(subset, "")
            for subset in result.get("not_run") or []
        },
        notes=list(result.get("notes") or []),
        subsets=result.get("subsets") or {},
        nonstandard=[str(item) for item in result.get("nonstandard") or []],
        conditions=[str(item) for item in result.get("conditions") or []],
    )
    settings = scores.get("settings") or {}
    entry = replace(
        entry,
        score_conditions=score_conditions(
            benchmark,
            manifest.versions or scores.get("versions"),
            manifest.suite,
            settings.get("user_model", manifest.user_model),
            settings.get("judge_model", manifest.judge_model),
            entry.conditions,
        ),
    )
    entry = _with_interval(_without_unscored(entry, tasks), tasks, n_boot, seed)
    trials = (scores.get("settings") or {}).get("trials") or manifest.trials or 1
    coverage = benchmark_coverage(
        benchmark, tasks, trials, run_limit(manifest, benchmark), result.get("official_set")
    )
    entry = _without_not_run(replace(entry, coverage=coverage))
    return replace(entry, pass_hat_k=_pass_hat_k(benchmark, tasks, n_boot, seed))


def benchmark_entries(
    run: LoadedRun,
    tasks: dict[str, TaskOutcome],
    n_boot: int = stats.N_BOOT,
    seed: int = stats.SEED,
) -> dict[str, BenchmarkEntry]:
    """benchmark -> its entry, in the order of the run's scores.json; ``tasks`` are
    the run's task outcomes (``harness.results.frames.task_outcomes``)."""
    by_benchmark = stats.by_benchmark(tasks.values())
    return {
        benchmark: benchmark_entry(run, benchmark, by_benchmark.get(benchmark, []), n_boot, seed)
        for benchmark in run.scores.get("benchmarks") or {}
    }
