"""Leaderboards over runs: a summary across benchmarks plus one detail table per benchmark.

Every row names what produced it (model, strategy, user simulator, judge, whether
the environment's feedback was the standard one) and shows its infrastructure
errors, missing samples and not-run subsets beside the metrics, so that no number
is read without its conditions. Primary metrics carry a 95% bootstrap interval
over tasks (see ``harness.stats``). Published numbers can be shown beside the runs
(``reference=``, see ``harness.reference``).

One unit per output: metrics are stored as fractions; the human tables (Markdown,
LaTeX, the report) show percent and say so in every metric column's header; CSV
and JSON keep fractions and name their unit (a ``unit`` column, ``unit`` fields).
Notes under a table never state a unit, so they cannot contradict its cells.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from harness import stats, unscored
from harness.composite import CompositeDefinition, default_composite
from harness.coverage import LEGEND, PARTIAL_MARK, Coverage, run_limit
from harness.errors import ConfigError
from harness.headlines import (
    benchmark_info,
    benchmark_label,
    estimator_for,
    is_count_metric,
    primary_metric,
    primary_metrics,
    sort_benchmarks,
)
from harness.pricing import MoneyCost, run_money
from harness.reference import ReferenceTable, load_references
from harness.results import (
    benchmark_coverage,
    load_scores,
    scored_records,
    training_step,
)
from harness.stats import Estimate, Interval, TaskOutcome
from harness.store import RunStore

FORMATS = ("md", "csv", "json", "latex")
FRACTION = "fraction"  # the unit of metrics in CSV and JSON (0 to 1)
# A recomputed metric must match the official one this closely before its CI is shown.
CI_TOLERANCE = 5e-4
STANDARD_FEEDBACK = "standard"


# --- what a leaderboard row holds ------------------------------------------------------


@dataclass
class MetricValue:
    value: float | None
    interval: Interval | None = None
    note: str = ""  # shown instead of the value when there is none
    partial: bool = False  # over less than the official set: marked PARTIAL_MARK


@dataclass
class BenchmarkEntry:
    """One benchmark of one run (or of one published row)."""

    benchmark: str
    headline: dict[str, float | None]
    primary: str | None
    interval: Interval | None = None
    ci_note: str = ""
    replicates: Any = None  # bootstrap replicates of the primary metric
    counts: dict[str, int] = field(default_factory=dict)
    missing: int = 0
    not_run: dict[str, str] = field(default_factory=dict)  # subset -> reason
    notes: list[str] = field(default_factory=list)
    subsets: dict[str, Any] = field(default_factory=dict)
    unscored: str = ""  # why the benchmark has no number (harness.unscored), if it has none
    unscored_subsets: dict[str, str] = field(default_factory=dict)  # subset -> why
    coverage: Coverage | None = None  # what the numbers cover; None for published rows
    # headline metric -> the subsets it is computed from (Adapter.metric_subsets)
    metric_scopes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # metric -> why it has no number: none of the subsets it is over was run
    not_run_metrics: dict[str, str] = field(default_factory=dict)
    # subset -> k -> pass^k with its interval (benchmarks that report pass^k)
    pass_hat_k: dict[str, dict[int, Estimate]] = field(default_factory=dict)

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
        return self.counts.get("infra_errors", 0) + self.counts.get("score_errors", 0)

    def incomplete(self) -> str:
        """Why this benchmark's number does not cover all it should ('' when it does)."""
        parts = []
        if self.not_run:
            parts.append("not run: " + ", ".join(sorted(self.not_run)))
        if self.missing:
            parts.append(f"{self.missing} sample(s) missing")
        if self.errors:
            parts.append(f"{self.errors} error record(s)")
        return "; ".join(parts)


@dataclass
class Composite:
    """A composite across benchmarks (``harness.composite``), when all it names are present."""

    value: float | None
    interval: Interval | None = None
    missing: list[str] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)
    published: bool = False

    def metric(self) -> MetricValue:
        if self.value is None:
            if not self.missing:
                return MetricValue(None)
            absent = ", ".join(benchmark_label(b) for b in self.missing)
            return MetricValue(None, note=f"partial (no {absent})")
        return MetricValue(self.value, self.interval, partial=bool(self.caveats))


@dataclass
class Cost:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_calls: int = 0  # model calls answered by the response cache
    wall_s: float | None = None
    by_role: dict[str, dict[str, int]] = field(default_factory=dict)
    money: MoneyCost | None = None  # USD, GPU-seconds, rehearsal ratio (harness.pricing)


@dataclass
class RunResult:
    """A leaderboard row: a run of the harness, or a published row (``reference`` set)."""

    name: str
    model: str
    strategy: str
    env_feedback: str
    user_model: str
    judge_model: str
    benchmarks: dict[str, BenchmarkEntry]
    composite: Composite
    cost: Cost | None = None
    step: int | None = None
    strategy_settings: dict[str, Any] = field(default_factory=dict)
    reference: str | None = None
    extra: dict[str, float] = field(default_factory=dict)
    note: str = ""
    run_dir: Path | None = None
    tasks: dict[str, TaskOutcome] = field(default_factory=dict, repr=False)
    fingerprint: str | None = None  # of the weights evaluated (models/fingerprint.py)

    @property
    def is_reference(self) -> bool:
        return self.reference is not None


# --- loading runs ---------------------------------------------------------------------


def _label(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("name") or "-")
    return "-" if value in (None, "") else str(value)


def strategy_label(value: Any) -> str:
    """A strategy's own label when it has one (it names e.g. the rehearser), else its name."""
    if isinstance(value, dict) and value.get("label"):
        return str(value["label"])
    return _label(value)


def env_feedback_label(value: Any) -> str:
    if value in (None, STANDARD_FEEDBACK):
        return STANDARD_FEEDBACK
    return f"{value} (NON-STANDARD)"


def _wall_seconds(manifest: dict[str, Any]) -> float | None:
    """The run's active time: the sum of its invocations' spans (a resume with
    nothing to do adds none); finished minus created for runs without spans."""
    spans = manifest.get("active_spans")
    if isinstance(spans, list) and spans:
        return round(sum(float(span.get("seconds") or 0.0) for span in spans), 3)
    try:
        start = datetime.fromisoformat(str(manifest["created_at"]))
        end = datetime.fromisoformat(str(manifest["finished_at"]))
    except (KeyError, ValueError):
        return None
    return max(0.0, (end - start).total_seconds())


def _cost(scores: dict[str, Any], manifest: dict[str, Any]) -> Cost:
    usage = scores.get("usage") or {}
    return Cost(
        calls=sum(int(u.get("calls", 0)) for u in usage.values()),
        prompt_tokens=sum(int(u.get("prompt_tokens", 0)) for u in usage.values()),
        completion_tokens=sum(int(u.get("completion_tokens", 0)) for u in usage.values()),
        cached_calls=sum(int(u.get("cached_calls", 0)) for u in usage.values()),
        wall_s=_wall_seconds(manifest),
        by_role=usage,
        money=run_money(scores, manifest),
    )


def _primary_interval(
    entry: BenchmarkEntry, tasks: list[TaskOutcome], n_boot: int, seed: int
) -> None:
    """Attach the bootstrap CI of the primary metric, if it can be recomputed exactly."""
    official = entry.primary_value
    if official is None or not tasks:
        entry.ci_note = "no CI: no scored tasks" if official is not None else ""
        return
    estimator = estimator_for(entry.benchmark, entry.primary)
    result = stats.estimate(
        stats.by_subset(tasks), estimator, n_boot, stats.derive_seed(seed, entry.benchmark)
    )
    if abs(result.value - float(official)) > CI_TOLERANCE:
        entry.ci_note = (
            f"no CI: {entry.primary} could not be recomputed from the records "
            f"({result.value:.4f} vs official {float(official):.4f})"
        )
        return
    entry.interval = result.interval
    entry.replicates = result.replicates


def _drop_not_run(entry: BenchmarkEntry) -> None:
    """A metric over subsets none of which was run shows no number (a group score
    that the official formula would put at 0), only that it was not run."""
    scope_of = benchmark_info(entry.benchmark).metric_subsets
    for metric in entry.headline:
        scope = scope_of(metric)
        if scope is not None:
            entry.metric_scopes[metric] = tuple(scope)
    coverage = entry.coverage
    if coverage is None or not coverage.declared:
        return
    for metric, scope in entry.metric_scopes.items():
        if is_count_metric(metric) or coverage.restrict(scope).samples_scored:
            continue
        entry.not_run_metrics[metric] = "not run"
        entry.headline[metric] = None


def _pass_hat_k(
    benchmark: str, tasks: list[TaskOutcome], n_boot: int, seed: int
) -> dict[str, dict[int, Estimate]]:
    mode = benchmark_info(benchmark).pass_hat_k_trials
    if not mode or not tasks:
        return {}
    return stats.pass_hat_k_estimates(tasks, mode == "scored", n_boot, seed)


def _drop_unscored(entry: BenchmarkEntry, tasks: list[TaskOutcome]) -> None:
    """No number where nothing was scored: an aggregate over error records only is
    a formula applied to nothing. Clears the benchmark's fractional headline values,
    or those of a subset (headline keys name their subset as a '/'-separated part)."""
    why = unscored.tasks_reason(tasks)
    if why:
        entry.unscored = why
    else:
        for subset, group in stats.by_subset(tasks).items():
            why = unscored.tasks_reason(group)
            if why:
                entry.unscored_subsets[subset] = why
    entry.headline = {
        key: None if entry.why_none(key) and not is_count_metric(key) else value
        for key, value in entry.headline.items()
    }


def composite_of(
    entries: dict[str, BenchmarkEntry], definition: CompositeDefinition | None = None
) -> Composite:
    """The composite of one row (default: the first composite definition found)."""
    definition = definition or default_composite()
    if definition is None:
        return Composite(None)
    missing = [
        b for b in definition.benchmarks if b not in entries or entries[b].primary_value is None
    ]
    if missing:
        return Composite(None, missing=missing)
    parts = [entries[b] for b in definition.benchmarks]
    values = [float(e.primary_value) for e in parts if e.primary_value is not None]
    value = sum(values) / len(values)  # every part has one (checked above)
    interval = None
    if all(e.replicates is not None for e in parts):
        # The benchmarks are independent task sets: averaging their
        # independent bootstrap replicates gives replicates of the composite.
        replicates = sum(e.replicates for e in parts) / len(parts)
        interval = stats.percentile_interval(replicates)
    return Composite(value, interval, caveats=[c for c in map(_caveat, parts) if c])


def _caveat(entry: BenchmarkEntry) -> str:
    """Why a composite's component is not over its full set ('' when it is)."""
    label = benchmark_label(entry.benchmark)
    if entry.coverage is not None and entry.coverage.declared:
        return f"{label}: {entry.coverage.describe()}" if entry.partial else ""
    return f"{label}: {entry.incomplete()}" if entry.incomplete() else ""


def _env_feedback(settings: dict[str, Any], manifest: dict[str, Any], strategy: Any) -> Any:
    """The run's environment feedback; a strategy that rewrites it says so in its settings."""
    value = settings.get("env_feedback", manifest.get("env_feedback"))
    if value in (None, STANDARD_FEEDBACK) and isinstance(strategy, dict):
        return strategy.get("env_feedback", value)
    return value


def load_run(run_dir: Path, n_boot: int = stats.N_BOOT, seed: int = stats.SEED) -> RunResult:
    """Everything the leaderboard, plots and report show about one run folder."""
    run_dir = Path(run_dir)
    store = RunStore(run_dir)
    if not store.exists():
        raise ConfigError(f"{run_dir} is not a run folder (no manifest.json)")
    manifest = store.read_manifest()
    scores = load_scores(run_dir)
    settings = scores.get("settings") or {}
    records = scored_records(store, scores)
    tasks = stats.task_outcomes(records)
    tasks_by_benchmark = stats.by_benchmark(tasks.values())
    entries: dict[str, BenchmarkEntry] = {}
    for benchmark, result in (scores.get("benchmarks") or {}).items():
        headline = result.get("headline") or {}
        entry = BenchmarkEntry(
            benchmark=benchmark,
            headline=headline,
            primary=primary_metric(benchmark, headline),
            counts=result.get("counts") or {},
            missing=sum((scores.get("missing_samples") or {}).get(benchmark, {}).values()),
            not_run={
                subset: (result.get("not_run_reasons") or {}).get(subset, "")
                for subset in result.get("not_run") or []
            },
            notes=list(result.get("notes") or []),
            subsets=result.get("subsets") or {},
        )
        group = tasks_by_benchmark.get(benchmark, [])
        _drop_unscored(entry, group)
        _primary_interval(entry, group, n_boot, seed)
        trials = settings.get("trials") or manifest.get("trials") or 1
        entry.coverage = benchmark_coverage(
            benchmark, group, trials, run_limit(manifest, benchmark), result.get("official_set")
        )
        _drop_not_run(entry)
        entry.pass_hat_k = _pass_hat_k(benchmark, group, n_boot, seed)
        entries[benchmark] = entry
    name = str(scores.get("run_id") or manifest.get("run_id") or run_dir.name)
    strategy = settings.get("strategy", manifest.get("strategy"))
    return RunResult(
        name=name,
        model=_label(settings.get("model", manifest.get("model"))),
        strategy=strategy_label(strategy),
        env_feedback=env_feedback_label(_env_feedback(settings, manifest, strategy)),
        user_model=_label(settings.get("user_model", manifest.get("user_model"))),
        judge_model=_label(settings.get("judge_model", manifest.get("judge_model"))),
        benchmarks=entries,
        composite=composite_of(entries),
        cost=_cost(scores, manifest),
        step=training_step(manifest, name),
        strategy_settings=strategy if isinstance(strategy, dict) else {"name": strategy},
        run_dir=run_dir,
        fingerprint=(manifest.get("fingerprint") or {}).get("id"),
        tasks=tasks,
    )


def _short_setting(settings: dict[str, Any], key: str) -> str:
    value = settings.get(key)
    if value is None:
        return "-"
    text = " ".join(str(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def reference_rows(table: ReferenceTable) -> list[RunResult]:
    """Published rows as leaderboard rows (no tasks, so no intervals)."""
    rows = []
    for row in table.rows:
        entries = {
            bench: BenchmarkEntry(
                benchmark=bench,
                headline=dict(metrics),
                primary=primary_metric(bench, metrics),
                notes=[f"published ({table.name})"],
            )
            for bench, metrics in row.scores.items()
        }
        composite = composite_of(entries)
        if row.overall is not None:
            composite = Composite(row.overall, published=True)
        rows.append(
            RunResult(
                name=f"ref:{table.name}",
                model=row.model,
                strategy=row.strategy,
                env_feedback=STANDARD_FEEDBACK,
                user_model=_short_setting(table.settings, "user_model"),
                judge_model=_short_setting(table.settings, "judge_model"),
                benchmarks=entries,
                composite=composite,
                reference=table.name,
                extra=dict(row.extra),
                note=row.note,
            )
        )
    return rows


def load_board(
    run_dirs: list[Path],
    reference: str | list[str] | None = None,
    n_boot: int = stats.N_BOOT,
    seed: int = stats.SEED,
) -> tuple[list[RunResult], list[ReferenceTable]]:
    tables = load_references(reference)
    results = [load_run(Path(d), n_boot, seed) for d in run_dirs]
    for table in tables:
        results.extend(reference_rows(table))
    return results, tables


# --- tables -----------------------------------------------------------------------------


PERCENT_HEADER = " (%)"


@dataclass
class Column:
    key: str
    label: str
    kind: str = "text"  # text | metric | count | tokens | seconds

    @property
    def header(self) -> str:
        """The label as a human table shows it: a metric column names its unit."""
        return self.label + PERCENT_HEADER if self.kind == "metric" else self.label


@dataclass
class Table:
    key: str  # "summary" or a benchmark name
    title: str
    columns: list[Column]
    rows: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)


def _identity_cells(result: RunResult) -> dict[str, Any]:
    return {
        "run": result.name,
        "model": result.model,
        "strategy": result.strategy,
        "env_feedback": result.env_feedback,
        "user": result.user_model,
        "judge": result.judge_model,
        "step": "-" if result.step is None else str(result.step),
        "weights": result.fingerprint or "-",
    }


def benchmarks_of(results: list[RunResult]) -> list[str]:
    return sort_benchmarks({b for r in results for b in r.benchmarks})


def _not_run_cell(entries: list[BenchmarkEntry]) -> str:
    items = [f"{e.benchmark}/{s}" for e in entries for s in sorted(e.not_run)]
    return ", ".join(items) or "-"


def summary_table(results: list[RunResult]) -> Table:
    benchmarks = benchmarks_of(results)
    identity = [
        Column("run", "run"),
        Column("model", "model"),
        Column("strategy", "strategy"),
        Column("env_feedback", "env feedback"),
        Column("user", "user model"),
        Column("judge", "judge model"),
    ]
    if any(r.step is not None for r in results):
        identity.append(Column("step", "step"))
    if any(r.fingerprint for r in results):
        identity.append(Column("weights", "weights"))
    columns = list(identity)
    for bench in benchmarks:
        metric = benchmark_info(bench).primary or _first_primary(results, bench) or "?"
        columns.append(Column(f"bench:{bench}", f"{benchmark_label(bench)} {metric}", "metric"))
    composite = _shown_composite(results)
    if composite is not None:
        columns.append(Column("composite", composite.label, "metric"))
    columns += [
        Column("records", "records", "count"),
        Column("errors", "infra/score errors", "count"),
        Column("missing", "missing", "count"),
        Column("not_run", "not run"),
        Column("calls", "model calls", "count"),
        Column("prompt_tokens", "prompt tokens", "tokens"),
        Column("completion_tokens", "completion tokens", "tokens"),
        Column("cost_usd", "cost (USD)", "usd"),
        Column("gpu_s", "GPU-s", "gpu_seconds"),
        Column("rehearsal_ratio", "rehearsal cost ×"),
        Column("cached_calls", "cached calls", "count"),
        Column("wall_s", "wall time", "seconds"),
    ]
    rows = []
    notes = []
    if composite is not None:
        notes.append(
            f"{composite.definition} ({composite.source}); a row without all of "
            f"{', '.join(benchmark_label(b) for b in composite.benchmarks)} has none; "
            f"{PARTIAL_MARK} on it: a component is partial."
        )
    notes.append(
        "Intervals: 95% bootstrap over tasks (trials of a task kept together, resampled "
        "within subsets); published rows have none."
    )
    coverage_notes: list[str] = []
    for result in results:
        cells = _identity_cells(result)
        entries = list(result.benchmarks.values())
        for bench in benchmarks:
            entry = result.benchmarks.get(bench)
            if entry is None:
                cells[f"bench:{bench}"] = MetricValue(None)
            elif entry.unscored:
                cells[f"bench:{bench}"] = MetricValue(None, note=entry.unscored)
            else:
                cells[f"bench:{bench}"] = MetricValue(
                    entry.primary_value,
                    entry.interval,
                    "" if entry.primary else "-",
                    partial=entry.partial,
                )
                if entry.partial and entry.primary_value is not None:
                    coverage_notes.append(_coverage_note(result, entry))
        if composite is not None:
            cells["composite"] = result.composite.metric()
            if result.composite.value is not None:
                for caveat in result.composite.caveats:
                    coverage_notes.append(
                        f"{PARTIAL_MARK} {result.name} {composite.label}: {caveat}"
                    )
        for entry in entries:
            if entry.ci_note:  # a missing interval is always explained where it is missing
                notes.append(f"{result.name} {benchmark_label(entry.benchmark)}: {entry.ci_note}")
        if not result.is_reference:
            cells["records"] = sum(e.counts.get("records", 0) for e in entries)
            cells["errors"] = sum(e.errors for e in entries)
            cells["missing"] = sum(e.missing for e in entries)
            cells["not_run"] = _not_run_cell(entries)
        if result.cost is not None:
            cells["calls"] = result.cost.calls
            cells["prompt_tokens"] = result.cost.prompt_tokens
            cells["completion_tokens"] = result.cost.completion_tokens
            cells["cached_calls"] = result.cost.cached_calls
            cells["wall_s"] = result.cost.wall_s
            cells.update(money_cells(result.cost.money))
        rows.append(cells)
    notes += _with_legend(coverage_notes)
    notes += money_notes([r for r in results if not r.is_reference])
    return Table("summary", "Summary across benchmarks (metrics in %)", columns, rows, notes)


def _coverage_note(result: RunResult, entry: BenchmarkEntry, metric: str = "") -> str:
    """The note that explains a partial mark: what the marked number covers (the
    benchmark, or the subsets a per-subset metric is over)."""
    coverage = entry.metric_coverage(metric) if metric else entry.coverage
    assert coverage is not None  # only partial numbers get a note
    where = benchmark_label(entry.benchmark)
    if coverage is not entry.coverage:
        where += " " + _scope_name(entry, metric, coverage)
    return f"{PARTIAL_MARK} {result.name} {where}: {coverage.describe()}"


def money_cells(money: MoneyCost | None) -> dict[str, Any]:
    """The summary's cost cells: None ("-") where a cost cannot be known."""
    if money is None:
        return {}
    if money.cpu_only:
        gpu: Any = "CPU-only"
    else:
        gpu = money.gpu_seconds
    ratio = None
    if money.rehearsal_ratio is not None:
        ratio = f"{money.rehearsal_ratio:.2f}× {money.rehearsal_basis}"
    return {"cost_usd": money.usd, "gpu_s": gpu, "rehearsal_ratio": ratio}


def _money_reasons(money: MoneyCost) -> list[str]:
    """Why a run's cost cells show "-" (or "CPU-only"), and what a known USD leaves out."""
    found = []
    if money.usd is None:
        found.append(f'cost (USD) "-": {money.usd_note}')
    elif money.usd_note:
        found.append(f"cost (USD) {money.usd_note}")
    if money.cpu_only:
        found.append(f'GPU-s "CPU-only": {money.gpu_note}')
    elif money.gpu_seconds is None:
        found.append(f'GPU-s "-": {money.gpu_note}')
    if money.rehearsal_ratio is None:
        found.append(f'rehearsal cost × "-": {money.rehearsal_note}')
    return found


def money_notes(results: list[RunResult]) -> list[str]:
    """Where each cost figure comes from, and each reason for a "-", said once."""
    moneys = [(r.name, r.cost.money) for r in results if r.cost and r.cost.money]
    if not moneys:
        return []
    sources = sorted({m.price_source for _, m in moneys if m.price_source})
    notes = [
        "cost (USD): API calls at base per-token prices from the "
        + (", ".join(sources) or "litellm cost map")
        + " (no long-context tiers or cache discounts; replies replayed from the response "
        "cache priced as the calls they replay). GPU-s: wall time of the server the run "
        "started (--serve) × its GPUs. rehearsal cost ×: rehearsals' cost over the "
        "committed episodes' (USD when every call is priced, else tokens)."
    ]
    reasons: dict[str, list[str]] = {}
    for name, money in moneys:
        for text in _money_reasons(money):
            reasons.setdefault(text, []).append(name)
    notes += [f"{text} ({', '.join(names)})" for text, names in reasons.items()]
    return notes


def _scope_name(entry: BenchmarkEntry, metric: str, coverage: Coverage) -> str:
    """A group score by its name; a per-subset metric by the subsets it is over."""
    if metric in entry.metric_scopes:
        return metric
    return ", ".join(s.name for s in coverage.subsets)


def _scoped_note(result: RunResult, entry: BenchmarkEntry, scoped: dict[str, Coverage]) -> str:
    """One note for a row's partial per-subset (or per-group) metrics: what each covers."""
    parts = []
    for name, coverage in scoped.items():
        text = f"{name} {coverage.samples_scored}/{coverage.samples_official}"
        if coverage.trials > 1:
            text += f" ({coverage.pairs_scored}/{coverage.pairs_official} pairs)"
        parts.append(text)
    label = benchmark_label(entry.benchmark)
    return f"{PARTIAL_MARK} {result.name} {label} by scope, samples scored/official: " + "; ".join(
        parts
    )


def _with_legend(coverage_notes: list[str]) -> list[str]:
    """The partial mark's meaning once, then what each marked number covers."""
    unique = list(dict.fromkeys(coverage_notes))
    return [LEGEND, *unique] if unique else []


def _shown_composite(results: list[RunResult]) -> CompositeDefinition | None:
    """The composite definition, when some row holds every benchmark it names."""
    definition = default_composite()
    if definition is None:
        return None
    if any(definition.applies_to(set(r.benchmarks)) or r.composite.published for r in results):
        return definition
    return None


def _first_primary(results: list[RunResult], bench: str) -> str | None:
    for result in results:
        entry = result.benchmarks.get(bench)
        if entry is not None and entry.primary:
            return entry.primary
    return None


def _metric_columns(results: list[RunResult], bench: str) -> list[tuple[str, str]]:
    """(column id, label) over all rows' headline keys: primary first, counts last."""
    labels: dict[str, str] = {}
    primary_id: str | None = None
    for result in results:
        entry = result.benchmarks.get(bench)
        if entry is None:
            continue
        if entry.primary and primary_id is None:
            primary_id = entry.primary
        for key in entry.headline:
            labels.setdefault(key, key)
    ordered = list(labels)
    if primary_id in labels:
        ordered = [primary_id] + [c for c in ordered if c != primary_id]
    fractions = [(c, labels[c]) for c in ordered if not is_count_metric(labels[c])]
    return fractions + [(c, labels[c]) for c in ordered if is_count_metric(labels[c])]


def _lookup(entry: BenchmarkEntry, column: str) -> float | None:
    return entry.headline.get(column)


def benchmark_table(results: list[RunResult], bench: str) -> Table:
    metric_columns = _metric_columns(results, bench)
    columns = [
        Column("run", "run"),
        Column("model", "model"),
        Column("strategy", "strategy"),
        Column("user", "user model"),
        Column("judge", "judge model"),
    ]
    columns += [
        Column(f"metric:{c}", label, "count" if is_count_metric(label) else "metric")
        for c, label in metric_columns
    ]
    columns += [
        Column("coverage", "coverage"),
        Column("records", "records", "count"),
        Column("infra_errors", "infra errors", "count"),
        Column("score_errors", "score errors", "count"),
        Column("missing", "missing", "count"),
        Column("not_run", "not run"),
    ]
    rows = []
    notes: list[str] = []
    coverage_notes: list[str] = []
    for result in results:
        entry = result.benchmarks.get(bench)
        if entry is None:
            continue
        cells = _identity_cells(result)
        scoped: dict[str, Coverage] = {}  # partial metrics over part of the benchmark
        for column, label in metric_columns:
            value = _lookup(entry, column)
            if is_count_metric(label):
                cells[f"metric:{column}"] = None if value is None else int(value)
                continue
            partial = value is not None and entry.metric_partial(column)
            # A metric over subsets none of which ran shows '-', like a subset not run.
            why = "" if column in entry.not_run_metrics else entry.why_none(column)
            cells[f"metric:{column}"] = MetricValue(
                value, metric_interval(entry, column), why, partial=partial
            )
            coverage = entry.metric_coverage(column) if partial else None
            if coverage is None:
                continue
            if coverage is entry.coverage:
                coverage_notes.append(_coverage_note(result, entry))
            else:
                scoped[_scope_name(entry, column, coverage)] = coverage
        if scoped:
            coverage_notes.append(_scoped_note(result, entry, scoped))
        if entry.coverage is not None:
            cells["coverage"] = entry.coverage.summary()
        if not result.is_reference:
            cells["records"] = entry.counts.get("records", 0)
            cells["infra_errors"] = entry.counts.get("infra_errors", 0)
            cells["score_errors"] = entry.counts.get("score_errors", 0)
            cells["missing"] = entry.missing
            cells["not_run"] = (
                ", ".join(
                    f"{subset} ({reason})" if reason else subset
                    for subset, reason in sorted(entry.not_run.items())
                )
                or "-"
            )
            if entry.ci_note:
                notes.append(f"{result.name}: {entry.ci_note}")
        for note in entry.notes:
            if note not in notes and not result.is_reference:
                notes.append(note)
        rows.append(cells)
    notes += _with_legend(coverage_notes)
    title = f"{benchmark_label(bench)} ({bench}; metrics in %)"
    return Table(bench, title, columns, rows, notes)


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


def pass_hat_k_table(results: list[RunResult], bench: str) -> Table | None:
    """pass^k per subset for every k up to the trials, each with its interval."""
    rows_of = [(r, r.benchmarks[bench]) for r in results if bench in r.benchmarks]
    rows_of = [(r, e) for r, e in rows_of if e.pass_hat_k]
    if not rows_of:
        return None
    max_k = max(k for _, e in rows_of for curve in e.pass_hat_k.values() for k in curve)
    columns = [
        Column("run", "run"),
        Column("model", "model"),
        Column("strategy", "strategy"),
        Column("subset", "subset"),
        Column("tasks", "tasks", "count"),
        Column("coverage", "coverage"),
    ]
    columns += [Column(f"k:{k}", f"pass^{k}", "metric") for k in range(1, max_k + 1)]
    rows, coverage_notes = [], []
    for result, entry in rows_of:
        for subset, curve in sorted(entry.pass_hat_k.items()):
            coverage = entry.coverage.restrict([subset]) if entry.coverage else None
            partial = coverage is not None and coverage.partial
            cells = _identity_cells(result)
            cells["subset"] = subset
            cells["tasks"] = next(iter(curve.values())).n_tasks
            cells["coverage"] = coverage.summary() if coverage is not None else "-"
            for k in range(1, max_k + 1):
                found = curve.get(k)
                cells[f"k:{k}"] = (
                    MetricValue(found.value, found.interval, partial=partial)
                    if found is not None
                    else MetricValue(None, note="-")
                )
            if partial:
                coverage_notes.append(_coverage_note(result, entry, subset))
            rows.append(cells)
    notes = [
        "pass^k of a task with n trials of which c passed: C(c, k) / C(n, k); per subset its "
        "mean over tasks, for k up to the fewest trials of a task ('-' beyond). Intervals: "
        "95% bootstrap over tasks."
    ]
    notes += _with_legend(coverage_notes)
    title = f"{benchmark_label(bench)} pass^k by subset (metrics in %)"
    return Table(f"{bench}:pass^k", title, columns, rows, notes)


def extra_table(results: list[RunResult]) -> Table | None:
    """Published numbers that fit no benchmark column (e.g. a two-benchmark mean)."""
    names = sorted({k for r in results for k in r.extra})
    if not names:
        return None
    columns = [Column("run", "run"), Column("model", "model"), Column("strategy", "strategy")]
    columns += [Column(f"extra:{n}", n, "metric") for n in names]
    rows = []
    for result in results:
        if result.extra:
            cells = _identity_cells(result)
            cells.update({f"extra:{n}": MetricValue(result.extra.get(n)) for n in names})
            rows.append(cells)
    return Table("extra", "Other published numbers (in %)", columns, rows)


def build_tables(results: list[RunResult]) -> list[Table]:
    tables = [summary_table(results)]
    for bench in benchmarks_of(results):
        tables.append(benchmark_table(results, bench))
        curve = pass_hat_k_table(results, bench)
        if curve is not None:
            tables.append(curve)
    extra = extra_table(results)
    if extra is not None:
        tables.append(extra)
    return tables


def reference_notes(tables: list[ReferenceTable]) -> list[str]:
    lines = []
    for table in tables:
        settings = "; ".join(
            f"{key}: {' '.join(str(value).split())}"
            for key, value in table.settings.items()
            if not isinstance(value, dict)
        )
        lines.append(f"ref:{table.name} — {table.title}. Source: {' '.join(table.source.split())}")
        if settings:
            lines.append(f"ref:{table.name} settings — {settings}")
        metrics = (table.settings.get("metrics") or {}) if isinstance(table.settings, dict) else {}
        for key, meaning in metrics.items():
            lines.append(f"ref:{table.name} metric {key} — {' '.join(str(meaning).split())}")
        lines += [f"ref:{table.name} note — {' '.join(n.split())}" for n in table.notes]
    return lines


# --- cell formatting ----------------------------------------------------------------------


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def format_metric(cell: MetricValue | None, with_interval: bool = True) -> str:
    if cell is None or cell.value is None:
        return cell.note if cell is not None and cell.note else "-"
    text = f"{100 * float(cell.value):.2f}"
    if with_interval and cell.interval is not None:
        text += f" ({100 * cell.interval.low:.1f}–{100 * cell.interval.high:.1f})"
    if cell.partial:
        text += PARTIAL_MARK
    if cell.note:
        text += cell.note
    return text


def format_cell(value: Any, kind: str) -> str:
    if kind == "metric":
        return format_metric(value)
    if value is None or value == "":
        return "-"
    if kind == "seconds":
        return format_seconds(value)
    if kind == "tokens":
        return f"{int(value):,}"
    if kind == "usd" and isinstance(value, int | float):
        return f"{value:,.2f}" if value >= 0.01 else f"{value:.4f}"
    if kind == "gpu_seconds" and isinstance(value, int | float):
        return f"{value:,.0f}"
    return str(value)


# --- renderers ----------------------------------------------------------------------------


def _md_escape(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render_markdown(tables: list[Table], footer: list[str]) -> str:
    out = io.StringIO()
    for table in tables:
        out.write(f"\n### {table.title}\n\n")
        out.write("| " + " | ".join(_md_escape(c.header) for c in table.columns) + " |\n")
        out.write("|" + "---|" * len(table.columns) + "\n")
        for row in table.rows:
            cells = [_md_escape(format_cell(row.get(c.key), c.kind)) for c in table.columns]
            out.write("| " + " | ".join(cells) + " |\n")
        if table.notes:
            out.write("\n" + "\n".join(f"- {_md_escape(n)}" for n in table.notes) + "\n")
    if footer:
        out.write("\n" + "\n".join(f"- {_md_escape(n)}" for n in footer) + "\n")
    return out.getvalue()


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # Characters of our labels that pdflatex does not take as text.
    "τ": r"$\tau$",
    "²": r"$^2$",
    "–": "--",
    "—": "---",
    "…": r"\ldots{}",
    "Δ": r"$\Delta$",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in " ".join(text.split()))


def _latex_cell(value: Any, kind: str) -> str:
    if kind == "metric" and isinstance(value, MetricValue) and value.value is not None:
        text = f"{100 * float(value.value):.2f}{latex_escape(value.note)}"
        if value.interval is not None:
            low, high = 100 * value.interval.low, 100 * value.interval.high
            text += rf" {{\scriptsize[{low:.1f}, {high:.1f}]}}"
        if value.partial:
            text += rf"$^{{{PARTIAL_MARK}}}$"
        return text
    return latex_escape(format_cell(value, kind))


def render_latex(tables: list[Table], footer: list[str]) -> str:
    """booktabs tables, one per leaderboard table (needs \\usepackage{booktabs})."""
    out = io.StringIO()
    for table in tables:
        spec = "".join("r" if c.kind != "text" else "l" for c in table.columns)
        out.write("\\begin{table}[t]\n\\centering\n\\small\n")
        out.write(f"\\begin{{tabular}}{{{spec}}}\n\\toprule\n")
        out.write(" & ".join(latex_escape(c.header) for c in table.columns) + " \\\\\n\\midrule\n")
        for row in table.rows:
            cells = [_latex_cell(row.get(c.key), c.kind) for c in table.columns]
            out.write(" & ".join(cells) + " \\\\\n")
        out.write("\\bottomrule\n\\end{tabular}\n")
        out.write(f"\\caption{{{latex_escape(table.title)}}}\n\\end{{table}}\n")
        for note in table.notes:
            out.write(f"% {' '.join(note.split())}\n")
        out.write("\n")
    for note in footer:
        out.write(f"% {' '.join(note.split())}\n")
    return out.getvalue()


CSV_HEADER = [
    "benchmark",
    "run",
    "model",
    "strategy",
    "env_feedback",
    "user_model",
    "judge_model",
    "step",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "unit",
    "partial",
    "samples_scored",
    "samples_official",
    "subsets_run",
    "subsets_official",
    "trials",
    "source",
    "note",
]
# The coverage columns of a row that has none (counts, cost, published numbers).
_NO_COVERAGE = ["", "", "", "", "", ""]


def _coverage_cells(coverage: Coverage | None) -> list[Any]:
    """CSV cells: partial (true/false) and what the value covers."""
    if coverage is None:
        return list(_NO_COVERAGE)
    official = coverage.samples_official
    return [
        "true" if coverage.partial else "false",
        coverage.samples_scored,
        "" if official is None else official,
        len(coverage.subsets_run),
        len(coverage.official_subsets) if coverage.declared else "",
        coverage.trials,
    ]


def _csv_rows(result: RunResult) -> list[list[Any]]:
    ident = [
        result.name,
        result.model,
        result.strategy,
        result.env_feedback,
        result.user_model,
        result.judge_model,
        "" if result.step is None else result.step,
    ]
    source = f"published:{result.reference}" if result.is_reference else "run"
    rows: list[list[Any]] = []

    def add(
        bench: str,
        metric: str,
        value: Any,
        unit: str,
        interval: Any = None,
        note: str = "",
        coverage: Coverage | None = None,
    ) -> None:
        low = "" if interval is None else interval.low
        high = "" if interval is None else interval.high
        value = "" if value is None else value
        covered = _coverage_cells(coverage)
        rows.append([bench, *ident, metric, value, low, high, unit, *covered, source, note])

    for bench in sort_benchmarks(set(result.benchmarks)):
        entry = result.benchmarks[bench]
        for name, value in entry.headline.items():
            unit = "count" if is_count_metric(name) else FRACTION
            coverage = None
            if entry.coverage is not None and unit == FRACTION and value is not None:
                coverage = entry.metric_coverage(name)
            note = (
                entry.why_none(name)
                if value is None
                else "; ".join(coverage.reasons() if coverage is not None else [])
            )
            add(bench, name, value, unit, metric_interval(entry, name), note, coverage)
        for subset, curve in sorted(entry.pass_hat_k.items()):
            coverage = entry.coverage.restrict([subset]) if entry.coverage else None
            for k, found in curve.items():
                if f"pass^{k}/{subset}" in entry.headline:
                    continue  # the adapter's own row above, with this interval
                reasons = "; ".join(coverage.reasons()) if coverage is not None else ""
                add(
                    bench,
                    f"pass^{k}/{subset}",
                    found.value,
                    FRACTION,
                    found.interval,
                    reasons,
                    coverage,
                )
        if not result.is_reference:
            for name in ("records", "ok", "infra_errors", "score_errors"):
                add(bench, name, entry.counts.get(name, 0), "count")
            add(bench, "missing", entry.missing, "count")
            add(bench, "not_run", ";".join(sorted(entry.not_run)), "subsets")
    composite = result.composite
    if composite.value is not None:
        caveats = "; ".join(composite.caveats)
        add("composite", "overall", composite.value, FRACTION, composite.interval, caveats)
        rows[-1][CSV_HEADER.index("partial")] = "true" if composite.caveats else "false"
    elif composite.missing:
        add("composite", "overall", "", "partial: no " + ";".join(composite.missing))
    for name, value in result.extra.items():
        add("extra", name, value, FRACTION)
    if result.cost is not None:
        add("run", "calls", result.cost.calls, "count")
        add("run", "prompt_tokens", result.cost.prompt_tokens, "tokens")
        add("run", "completion_tokens", result.cost.completion_tokens, "tokens")
        add("run", "cached_calls", result.cost.cached_calls, "count")
        add("run", "wall_s", "" if result.cost.wall_s is None else result.cost.wall_s, "s")
        money = result.cost.money
        if money is not None:
            add("run", "cost_usd", money.usd, "USD", note=money.usd_note)
            add("run", "gpu_seconds", money.gpu_seconds, "GPU-s", note=money.gpu_note)
            add("run", "server_seconds", money.server_seconds, "s")
            ratio_unit = f"ratio ({money.rehearsal_basis})" if money.rehearsal_basis else "ratio"
            add(
                "run",
                "rehearsal_ratio",
                money.rehearsal_ratio,
                ratio_unit,
                note=money.rehearsal_note,
            )
    return rows


def _cost_json(cost: Cost) -> dict[str, Any]:
    data = dict(cost.__dict__)
    data["money"] = None if cost.money is None else cost.money.to_dict()
    return data


def render_csv(results: list[RunResult]) -> str:
    """One row per (run, benchmark, metric): a tidy table for pandas and spreadsheets.
    Metrics are fractions; counts, tokens and seconds carry their unit."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_HEADER)
    for result in results:
        writer.writerows(_csv_rows(result))
    return out.getvalue()


def _interval_json(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [interval.low, interval.high]


def result_json(result: RunResult) -> dict[str, Any]:
    return {
        "run": result.name,
        "reference": result.reference,
        "model": result.model,
        "strategy": result.strategy,
        "strategy_settings": result.strategy_settings,
        "env_feedback": result.env_feedback,
        "user_model": result.user_model,
        "judge_model": result.judge_model,
        "step": result.step,
        "fingerprint": result.fingerprint,
        "note": result.note,
        "benchmarks": {
            bench: {
                "headline": entry.headline,
                "primary": entry.primary,
                "primary_ci": _interval_json(entry.interval),
                "units": {
                    name: "count" if is_count_metric(name) else FRACTION for name in entry.headline
                },
                "ci_note": entry.ci_note,
                "partial": entry.partial,
                "coverage": None if entry.coverage is None else entry.coverage.to_dict(),
                "metric_partial": {
                    name: entry.metric_partial(name)
                    for name, value in entry.headline.items()
                    if value is not None and not is_count_metric(name)
                },
                "pass_hat_k": {
                    subset: {
                        str(k): {"value": e.value, "ci": _interval_json(e.interval)}
                        for k, e in curve.items()
                    }
                    for subset, curve in entry.pass_hat_k.items()
                },
                "unscored": entry.unscored or None,
                "unscored_subsets": entry.unscored_subsets,
                "counts": entry.counts,
                "missing": entry.missing,
                "not_run": entry.not_run,
                "notes": entry.notes,
            }
            for bench, entry in result.benchmarks.items()
        },
        "composite": {
            "value": result.composite.value,
            "ci": _interval_json(result.composite.interval),
            "missing": result.composite.missing,
            "caveats": result.composite.caveats,
            "partial": bool(result.composite.caveats),
            "published": result.composite.published,
        },
        "extra": result.extra,
        "cost": None if result.cost is None else _cost_json(result.cost),
    }


def _composite_json(definition: CompositeDefinition | None) -> dict[str, Any] | None:
    if definition is None:
        return None
    return {
        "name": definition.name,
        "label": definition.label,
        "definition": definition.definition,
        "source": definition.source,
        "benchmarks": list(definition.benchmarks),
    }


def render_json(
    results: list[RunResult], references: list[ReferenceTable], n_boot: int, seed: int
) -> str:
    data = {
        "unit": FRACTION,  # of every metric value and interval below (counts say "count")
        "primary_metrics": primary_metrics(b for r in results for b in r.benchmarks),
        "composite": _composite_json(default_composite()),
        "intervals": {
            "level": stats.LEVEL,
            "method": "percentile bootstrap over tasks, stratified by subset",
            "n_boot": n_boot,
            "seed": seed,
        },
        "partial_mark": {"symbol": PARTIAL_MARK, "meaning": LEGEND},
        "rows": [result_json(r) for r in results],
        "references": [
            {
                "name": t.name,
                "title": t.title,
                "source": t.source,
                "settings": t.settings,
                "notes": t.notes,
            }
            for t in references
        ],
    }
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def render(
    run_dirs: list[Path],
    fmt: str = "md",
    reference: str | list[str] | None = None,
    n_boot: int = stats.N_BOOT,
    seed: int = stats.SEED,
) -> str:
    """The leaderboard of ``run_dirs`` (and published rows) as md, csv, json or latex."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown leaderboard format '{fmt}' (known: {', '.join(FORMATS)})")
    results, references = load_board(run_dirs, reference, n_boot, seed)
    if fmt == "json":
        return render_json(results, references, n_boot, seed)
    if fmt == "csv":
        return render_csv(results)
    tables = build_tables(results)
    footer = reference_notes(references)
    if fmt == "latex":
        return render_latex(tables, footer)
    return render_markdown(tables, footer)
