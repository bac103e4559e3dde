"""Run folders as tidy pandas tables, for notebooks and scripts.

    from harness.results import frames as results

    runs = results.runs(["results/a", "results/b"])  # one row per run
    recs = results.records("results/sweep__smoke__ckpts")  # one row per (sample, trial)
    aggs = results.aggregates("results/a")  # one row per (benchmark, subset, metric)

Every table function takes one run folder, several, or a folder of run folders
(a sweep). Scores are the run's current ones: the regraded scores in scores.json
when it has them, else the records' own (scores.json is computed when missing,
as ``harness leaderboard`` does). Metric values are fractions, as in scores.json.

The leaderboard, ``harness compare`` and the plots are built on the same tables:
``load`` reads a run folder once (typed ``Manifest`` and ``Record``), ``records_of``
makes its record table and ``task_outcomes`` groups that table's rows by task for
the intervals and paired tests, so a notebook's numbers are the leaderboard's.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import ConfigError
from harness.results import stats
from harness.results.coverage import Coverage, coverage_of, run_limit
from harness.results.headlines import benchmark_info, benchmark_label, sort_benchmarks
from harness.serving.steps import step_in
from harness.store.manifest import Manifest
from harness.store.records import INFRA_ERROR, REGRADE_ERROR_KEY, Record
from harness.store.run_store import MANIFEST, RunStore
from harness.task.official_set import OfficialSet

if TYPE_CHECKING:
    import pandas as pd  # imported by the table functions: loading alone does not need it

# Columns that say which run a row belongs to, first in every table.
RUN_COLUMNS = ["run_id", "model", "strategy", "step"]


@dataclass
class LoadedRun:
    """One run folder: its manifest, records (with current scores) and scores.json."""

    run_dir: Path
    manifest: Manifest
    records: dict[str, Record]
    scores: dict[str, Any]

    @property
    def run_id(self) -> str:
        return str(self.manifest.run_id or self.run_dir.name)

    def identity(self) -> dict[str, object]:
        model = self.manifest.model or {}
        strategy = self.manifest.strategy or {}
        return {
            "run_id": self.run_id,
            "model": model.get("name"),
            "strategy": strategy.get("label") or strategy.get("name"),
            "step": training_step(self.manifest, self.run_id),
        }


def wall_seconds(manifest: Manifest) -> float | None:
    """The run's active time: the sum of its invocations' spans (a resume with
    nothing to do adds none); finished minus created for runs without spans."""
    spans = manifest.active_spans
    if isinstance(spans, list) and spans:
        return round(sum(float(span.get("seconds") or 0.0) for span in spans), 3)
    if manifest.created_at is None or manifest.finished_at is None:
        return None
    try:
        start = datetime.fromisoformat(str(manifest.created_at))
        end = datetime.fromisoformat(str(manifest.finished_at))
    except ValueError:
        return None
    return max(0.0, (end - start).total_seconds())


def load_scores(run_dir: Path) -> dict[str, Any]:
    """scores.json of a run, computed from stored scores when absent."""
    store = RunStore(run_dir)
    if store.scores_path.is_file():
        return store.read_scores()
    if not store.exists():
        raise ConfigError(f"{run_dir} is not a run folder (no manifest.json)")
    from harness.run.scoring import score_run

    # Computed, not written: reading a run never changes its folder (which
    # may be read-only, or another user's).
    return score_run(run_dir, rescore=False, write=False).to_dict()


def training_step(manifest: Manifest, run_name: str) -> int | None:
    """The checkpoint's training step: the manifest's "step", else a number in its
    "checkpoint", in the ``--model-revision`` the run was given (``step-100``, or a
    bare number), or in the run's name (``step_200``, ``checkpoint-200``)."""
    step: object = manifest.step  # written by other versions as text, too
    if isinstance(step, int) and not isinstance(step, bool):
        return step
    if isinstance(step, str) and step.isdigit():
        return int(step)
    revision = str((manifest.fingerprint or {}).get("revision") or "")
    if revision.isdigit():
        return int(revision)
    for text in (str(manifest.checkpoint or ""), revision, run_name):
        found = step_in(text)
        if found is not None:
            return found
    return None


def benchmark_coverage(
    benchmark: str,
    tasks: list[stats.TaskOutcome],
    trials: int,
    limit: int | None,
    recorded: object = None,
) -> Coverage:
    """What the benchmark's numbers cover, against the official set recorded when the
    run was scored (``recorded``, from scores.json), else the one its adapter declares."""
    scored: dict[str, dict[str, int]] = {}
    for task in tasks:
        scored.setdefault(task.subset, {})[task.sample_id] = len(task.scored_trials())
    official = OfficialSet.from_dict(recorded) or benchmark_info(benchmark).official
    return coverage_of(official, scored, int(trials), limit)


def coverage_by_benchmark(run: LoadedRun) -> dict[str, Coverage]:
    """benchmark -> what its numbers cover in one loaded run (no intervals computed)."""
    groups = stats.by_benchmark(task_outcomes(records_of([run])).values())
    trials = (run.scores.get("settings") or {}).get("trials") or run.manifest.trials or 1
    benchmarks = run.scores.get("benchmarks") or {}
    return {
        bench: benchmark_coverage(
            bench,
            groups.get(bench, []),
            int(trials),
            run_limit(run.manifest, bench),
            benchmarks[bench].get("official_set"),
        )
        for bench in sort_benchmarks(benchmarks)
    }


def partial_lines(run_dir: Path) -> list[str]:
    """One line per benchmark of a run whose numbers are partial, saying what they cover."""
    return [
        f"partial: {benchmark_label(bench)}: {coverage.describe()}"
        for bench, coverage in coverage_by_benchmark(load(run_dir, conversation=False)).items()
        if coverage.partial
    ]


def run_folders(paths: str | Path | Iterable[str | Path]) -> list[Path]:
    """The run folders ``paths`` name: each path is a run folder, or a folder
    whose sub-folders are (a sweep); ConfigError for one that is neither."""
    given = [paths] if isinstance(paths, str | Path) else list(paths)
    found: list[Path] = []
    for path in map(Path, given):
        if (path / MANIFEST).is_file():
            found.append(path)
            continue
        inside = sorted(p.parent for p in path.glob(f"*/{MANIFEST}"))
        if not inside:
            raise ConfigError(f"{path} is not a run folder, nor a folder of run folders")
        found.extend(inside)
    return found


def load(
    run_dir: str | Path, conversation: bool = True, stored: dict[str, Record] | None = None
) -> LoadedRun:
    """One run folder, its records carrying their current (regraded) scores. When
    scores.json lists its records, they are the run's records: those its aggregates
    are over (a record stored after the last scoring waits for the next one).
    ``conversation=False``: the trajectories without their conversation, for what
    reads only numbers (run_store.read_records). ``stored``: the folder's records
    as its scoring just read them (``score_run_records``), not read again (the
    end of a run reads its records once; given, they carry the current scores)."""
    store = RunStore(Path(run_dir))
    manifest = store.load_manifest()  # ConfigError if it is not a run folder
    scores = load_scores(store.root)
    if stored is None:
        stored = store.load_records(conversation)
    current = scores.get("records")
    if current is None:  # an older scores.json: the records as stored
        return LoadedRun(store.root, manifest, stored, scores)
    records = {}
    for key, now in current.items():
        record = stored.get(key)
        if record is None or not isinstance(now, dict):
            continue
        record.status = now.get("status", record.status)
        record.score = now.get("score", record.score)
        if now.get(REGRADE_ERROR_KEY):  # a regrade that failed: not scored
            record.score_error = now[REGRADE_ERROR_KEY]
        records[key] = record
    return LoadedRun(store.root, manifest, records, scores)


def _loaded(paths: str | Path | Iterable[str | Path]) -> list[LoadedRun]:
    """The runs ``paths`` name, for tables of numbers (no conversation read)."""
    return [load(folder, conversation=False) for folder in run_folders(paths)]


def runs(paths: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """One row per run: what ran (model, strategy, checkpoint, suite) and how long."""
    import pandas as pd

    rows = []
    for run in _loaded(paths):
        manifest = run.manifest
        rows.append(
            {
                **run.identity(),
                "run_dir": str(run.run_dir),
                "checkpoint": manifest.checkpoint,
                "suite": manifest.suite_name,
                "trials": manifest.trials,
                "env_feedback": manifest.env_feedback,
                "user_model": manifest.user_model,
                "judge_model": manifest.judge_model,
                "fingerprint": (manifest.fingerprint or {}).get("id"),
                "created_at": manifest.created_at,
                "finished_at": manifest.finished_at,
                "wall_s": wall_seconds(manifest),
                "records": len(run.records),
            }
        )
    return pd.DataFrame(rows, columns=_columns(rows, RUN_COLUMNS))


def _error_type(error: object) -> str | None:
    if isinstance(error, dict):
        return error.get("type")
    return None if error is None else str(error)


def _usage(trajectory: Mapping[str, object] | None) -> dict[str, int | None]:
    """Tokens and calls of the model under test (the trajectory's ``actor`` usage),
    and the tokens of every role (actor, user, judge, rehearser...) together."""
    found = (trajectory or {}).get("usage") or {}
    if not isinstance(found, dict):
        raise TypeError(f"a trajectory's usage is not an object: {found!r}")
    usage = found
    actor = usage.get("actor") or {}
    return {
        "calls": actor.get("calls"),
        "prompt_tokens": actor.get("prompt_tokens"),
        "completion_tokens": actor.get("completion_tokens"),
        "all_roles_tokens": sum(
            int(u.get("prompt_tokens", 0)) + int(u.get("completion_tokens", 0))
            for u in usage.values()
        ),
    }


# A trial's numbers as harness.results.stats.trial_values gives them, in its order.
TRIAL_VALUES = ("passed", "reward", "tool_tp", "tool_fp", "tool_fn", "progress")
RECORD_COLUMNS = [
    *RUN_COLUMNS,
    "benchmark",
    "subset",
    "sample_id",
    "trial",
    "key",
    "status",
    "scored",
    "excluded",  # why the benchmark's own rule leaves a scored record out (Score.excluded)
    *TRIAL_VALUES,
    "error_type",
    "termination",
    "calls",
    "prompt_tokens",
    "completion_tokens",
    "all_roles_tokens",
    "latency_s",
    "seed",
    "started_at",
]


def records(paths: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """One row per (run, sample, trial) with its current score. ``scored`` says
    whether the record counts as scored (its status is ok and it has a score);
    ``passed``, ``reward``, ``progress`` and the tool-call counts are the trial's
    numbers as the leaderboard's estimators read them (``harness.results.stats.trial_values``)
    and empty for a record that was not scored (an infrastructure or scoring
    error): never a zero."""
    return records_of(_loaded(paths))


def _trial_columns(record: Record) -> dict[str, object]:
    ok, values = stats.trial_values(record.to_dict())
    columns: dict[str, object] = {"scored": ok, "excluded": (record.score or {}).get("excluded")}
    for name in TRIAL_VALUES:
        value = values.get(name) if ok else None
        columns[name] = bool(value) if name == "passed" and value is not None else value
    return columns


def _trial_row(record: Record) -> dict[str, object]:
    """The columns of a record's row that say which trial of which task it is and
    how it went: what ``task_outcomes`` reads."""
    return {
        "benchmark": record.benchmark,
        "subset": record.subset,
        "sample_id": str(record.sample_id),
        "trial": record.trial,
        "status": record.status,
        **_trial_columns(record),
    }


def records_of(loaded: Iterable[LoadedRun]) -> pd.DataFrame:
    """The record table (see ``records``) of runs already loaded."""
    import pandas as pd

    rows = []
    for run in loaded:
        identity = run.identity()
        for record in run.records.values():
            rows.append(
                {
                    **identity,
                    **_trial_row(record),
                    "key": record.key,
                    "error_type": _error_type(record.error),
                    "termination": (record.trajectory or {}).get("termination"),
                    **_usage(record.trajectory),
                    "latency_s": record.latency_s,
                    "seed": record.seed,
                    "started_at": record.started_at,
                }
            )
    table = pd.DataFrame(rows, columns=RECORD_COLUMNS)
    # Nullable types: an unscored record stays empty instead of becoming a float.
    floats = {name: "float64" for name in TRIAL_VALUES if name != "passed"}
    return table.astype(
        {"passed": "boolean", "scored": "boolean", "trial": "Int64", "step": "Int64", **floats}
    )


@dataclass
class RunOutcomes:
    """One loaded run's tasks (``task_outcomes``) and, built when first read, its
    record table (``records_of``): what its results and its leaderboard row are
    computed over. The end of a run builds the tasks once for both, from the
    records (~0.03 s at 4,448 records), and never the table: that would load
    pandas (~0.4 s) for what only the plots read."""

    run: LoadedRun = field(repr=False)
    tasks: dict[str, stats.TaskOutcome]

    @functools.cached_property
    def records(self) -> pd.DataFrame:
        return records_of([self.run])


def run_outcomes(run: LoadedRun) -> RunOutcomes:
    """``task_outcomes(records_of([run]))``, without building the table."""
    tasks: dict[str, stats.TaskOutcome] = {}
    for record in run.records.values():
        _add_trial(tasks, _trial_row(record))
    return RunOutcomes(run, tasks)


def task_outcomes(table: pd.DataFrame) -> dict[str, stats.TaskOutcome]:
    """The record table of one run grouped by task: each trial's numbers as the
    intervals, pass^k and paired comparisons read them (``harness.results.stats``)."""
    import pandas as pd

    if table["run_id"].nunique() > 1:
        raise ValueError("task_outcomes takes the record table of one run")
    tasks: dict[str, stats.TaskOutcome] = {}
    for row in table.to_dict("records"):
        # The table's empty cells (NaN, <NA>) as the records hold them: None.
        _add_trial(
            tasks, {k: None if k in TRIAL_VALUES and pd.isna(v) else v for k, v in row.items()}
        )
    return tasks


def _add_trial(tasks: dict[str, stats.TaskOutcome], row: Mapping[str, Any]) -> None:
    """One record's trial added to its task; ``row``: its ``_trial_row`` columns."""
    task_key = f"{row['benchmark']}/{row['subset']}/{row['sample_id']}"
    task = tasks.get(task_key)
    if task is None:
        task = tasks[task_key] = stats.TaskOutcome(
            row["benchmark"], row["subset"], row["sample_id"]
        )
    scored = bool(row["scored"])
    values = {"ok": 1.0 if scored else 0.0, "passed": 0.0, "reward": 0.0}
    if scored:
        for name in TRIAL_VALUES:
            value = row[name]
            # NaN is an empty cell in the table: the same here.
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                values[name] = float(value)
    task.trials[int(row["trial"])] = values
    excluded = not scored and isinstance(row["excluded"], str) and bool(row["excluded"])
    task.excluded += excluded
    task.errors += 0 if scored or excluded else 1
    task.infra_errors += row["status"] == INFRA_ERROR


AGGREGATE_COLUMNS = [
    *RUN_COLUMNS,
    "benchmark",
    "subset",
    "metric",
    "value",
    "n_samples",
    "n_records",
    "n_infra_errors",
    "n_excluded",  # scored, left out by the benchmark's own rule (e.g. binned)
    "partial",  # over less than the benchmark's official set (harness.results.coverage)
    "samples_scored",
    "samples_official",
]
HEADLINE = "(headline)"  # the subset column of a benchmark's headline metrics


def aggregates(paths: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """One row per (run, benchmark, subset, metric) of scores.json, the official
    aggregates; a benchmark's headline metrics are rows whose subset is
    ``(headline)``. A subset that was not run has no rows. ``partial``,
    ``samples_scored`` and ``samples_official`` say what each value covers of the
    benchmark's official set (empty where the benchmark declares none)."""
    import pandas as pd

    rows = []
    for run in _loaded(paths):
        identity = run.identity()
        coverage_of_run = coverage_by_benchmark(run)
        for benchmark, result in (run.scores.get("benchmarks") or {}).items():
            counts = result.get("counts") or {}
            coverage = coverage_of_run.get(benchmark)
            scope_of = benchmark_info(benchmark).metric_subsets
            for metric, value in (result.get("headline") or {}).items():
                covered = (
                    None if coverage is None else coverage.for_metric(metric, scope_of(metric))
                )
                rows.append(
                    {
                        **identity,
                        "benchmark": benchmark,
                        "subset": HEADLINE,
                        "metric": metric,
                        "value": value,
                        "n_records": counts.get("records"),
                        "n_infra_errors": counts.get("infra_errors"),
                        "n_excluded": counts.get("excluded", 0),
                        **_coverage_columns(covered),
                    }
                )
            for subset, entry in (result.get("subsets") or {}).items():
                covered = None if coverage is None else coverage.restrict([subset])
                for metric, value in (entry.get("metrics") or {}).items():
                    rows.append(
                        {
                            **identity,
                            "benchmark": benchmark,
                            "subset": subset,
                            "metric": metric,
                            "value": value,
                            "n_samples": entry.get("n_samples"),
                            "n_records": entry.get("n_records"),
                            "n_infra_errors": entry.get("n_infra_errors"),
                            "n_excluded": entry.get("n_excluded", 0),
                            **_coverage_columns(covered),
                        }
                    )
    table = pd.DataFrame(rows, columns=AGGREGATE_COLUMNS)
    counts = {
        name: "Int64"
        for name in (
            "n_samples",
            "n_records",
            "n_infra_errors",
            "n_excluded",
            "samples_scored",
            "samples_official",
        )
    }
    return table.astype({"value": "float64", "step": "Int64", "partial": "boolean", **counts})


def _coverage_columns(coverage: Coverage | None) -> dict[str, bool | int | None]:
    """What one aggregate covers (a ``harness.results.coverage.Coverage``, or None)."""
    if coverage is None or not coverage.declared:
        return {"partial": None, "samples_scored": None, "samples_official": None}
    return {
        "partial": coverage.partial,
        "samples_scored": coverage.samples_scored,
        "samples_official": coverage.samples_official,
    }


def _columns(rows: Sequence[Mapping[str, object]], first: list[str]) -> list[str]:
    rest = [key for key in (rows[0] if rows else {}) if key not in first]
    return [*first, *rest]
