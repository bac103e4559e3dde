"""``run_suite(config) -> RunSummary``: one evaluation run, from Python.

This is what ``harness run`` does once its flags are a ``RunConfig``: plan the
run (endpoint, clients, strategy, samples, manifest), run what is left of it
into its run folder, and score it. A training loop evaluates a checkpoint the
same way, in its own process::

    from harness import RunConfig, run_suite

    summary = run_suite(RunConfig(suite="smoke", model="oracle", out=Path("runs/step_100")))
    for name, entry in summary.benchmarks.items():  # typed: harness.results.entries
        print(name, entry.primary_value, entry.interval, entry.coverage, entry.counts)

``run_suite_async`` is the same for a caller that already runs an event loop
(in that one process: ``workers`` is not used there).
A rerun of the same config resumes the run folder.

The planning is in this package, one concern a module: ``model`` (the model
under test: endpoint, settings, fingerprint, preflight), ``services`` (the
simulated user and the judge), ``manifest`` and ``plan`` (the plan itself).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.config.run_config import RunConfig
from harness.models.redact import environment_read_once
from harness.run.run_counts import RunCounts

if TYPE_CHECKING:  # imported where they are used: `import harness` stays cheap
    from harness.evaluate.plan import PlannedRun
    from harness.results.entries import BenchmarkEntry
    from harness.results.frames import LoadedRun, RunOutcomes
    from harness.results.scores import RunScores
    from harness.run.suite_samples import NotRun


@dataclass
class RunSummary(RunCounts):
    """What one ``run_suite`` call did (the runner's counts: total, skipped, ran,
    ok, infra_errors, score_errors, elapsed_s), and the run's results afterwards:
    ``results`` (``benchmarks``), the typed entries the leaderboard shows, equal
    to what ``harness.results.read_scores(run_dir)`` reads back."""

    run_dir: Path
    command_s: float  # the whole call, planning and final scoring included
    cache_hits: int
    cache_calls: int | None  # model calls that asked the cache; None without a cache
    results: RunScores  # the run's scores, as scored at the end of the call
    # The run folder as scored then: manifest, records (without their
    # conversation) and scores.json; its tables are written from it, and from
    # its record table and tasks, which its results were computed over.
    run: LoadedRun
    outcomes: RunOutcomes
    not_run: list[NotRun] = field(default_factory=list)  # subsets left out
    notes: list[str] = field(default_factory=list)  # e.g. local calls past the timeout
    # This call's errors by kind, each with its count and likely cause.
    error_lines: list[str] = field(default_factory=list)

    @property
    def benchmarks(self) -> dict[str, BenchmarkEntry]:
        """benchmark -> its headline, primary interval, coverage and counts."""
        return self.results.benchmarks

    @property
    def scores(self) -> dict[str, Any]:
        """The run's scores.json as a plain dict (as written; ``benchmarks`` is typed)."""
        from harness.store.run_store import RunStore

        return RunStore(self.run_dir).read_scores()

    @property
    def succeeded(self) -> bool:
        """No infrastructure or scoring error (a model's failure is a score, not an error)."""
        return self.infra_errors == 0 and self.score_errors == 0

    @property
    def exit_code(self) -> int:
        return 0 if self.succeeded else 1

    def report_lines(self, with_coverage: bool = True) -> list[str]:
        """What the command line prints to stderr after a run; ``with_coverage`` False when
        the table printed after them says what partial numbers cover."""
        from harness.results.headlines import benchmark_label, sort_benchmarks
        from harness.run.suite_samples import not_run_lines

        lines = [*self.lines(), *self.error_lines, *self.notes]
        lines += [f"not run: {line}" for line in not_run_lines(self.not_run)]
        # Numbers over less than the benchmark's official set say so here too.
        for name in sort_benchmarks(self.benchmarks) if with_coverage else []:
            coverage = self.benchmarks[name].coverage
            if coverage is not None and coverage.partial:
                lines.append(f"partial: {benchmark_label(name)}: {coverage.describe()}")
        return lines

    def printed_lines(self, width: int = 100, with_coverage: bool = True) -> list[str]:
        """``report_lines`` as the command line prints them: the counts as they
        are (one line each, to be found by what reads the output), every other
        line wrapped to ``width`` columns, its continuation lines indented."""
        from harness.boundary.terminal import wrap_line

        counts = self.lines()
        printed = list(counts)
        for line in self.report_lines(with_coverage)[len(counts) :]:
            printed += wrap_line(line, width)
        return printed

    def lines(self) -> list[str]:
        """The counts, in two lines that fit 100 columns (a short run folder's path)."""
        cache = (
            "no response cache"
            if self.cache_calls is None
            else f"{self.cache_hits} of {self.cache_calls} model calls from the cache"
        )
        # Scored records the benchmark's own rule leaves out (e.g. a simulation its
        # runner binned as an infrastructure error), beside the harness's own errors.
        excluded = sum((e.counts.excluded if e.counts else 0) for e in self.benchmarks.values())
        binned = f"{excluded} binned by the benchmark's rule, " if excluded else ""
        return [
            f"{self.run_dir}: {self.ran} ran, {self.skipped} already done, {self.ok} ok "
            f"in {self.command_s:.1f}s",
            f"  {self.infra_errors} infrastructure errors, {binned}{self.score_errors} scoring "
            f"errors; {cache}",
        ]

    def line(self) -> str:
        """The counts on one line."""
        first, second = self.lines()
        return f"{first};{second[1:]}"


def run_suite(config: RunConfig) -> RunSummary:
    """Run (or resume) one suite; ConfigError for a config that cannot run.

    The pending work runs in ``config.workers`` processes (None: as many as help,
    harness/evaluate/workers.py) over the one run folder."""
    from harness.evaluate.workers import check_workers, run_in_workers, worker_count

    started, started_at = time.monotonic(), _now_iso()
    check_workers(config)
    notes: list[str] = []
    with environment_read_once():
        run = _plan(config)
        with run.session(started, started_at) as session:
            workers = worker_count(config, len(session.todo))
            if workers > 1:
                outcome = run_in_workers(run, session, workers)
                session.counts, notes = outcome.counts, outcome.notes
            else:
                asyncio.run(run.run_items(session))
        summary = _finish(run, session.result(), started)
        summary.notes += [note for note in notes if note not in summary.notes]
        return summary


async def run_suite_async(config: RunConfig) -> RunSummary:
    """``run_suite`` inside a running event loop: the episodes run on the caller's
    loop; planning, a server's start and the final scoring block it meanwhile."""
    started, started_at = time.monotonic(), _now_iso()
    with environment_read_once():
        run = _plan(config)
        with run.session(started, started_at) as session:
            await run.run_items(session)
        return _finish(run, session.result(), started)


def _now_iso() -> str:
    from harness.store.records import now_iso

    return now_iso()


def _plan(config: RunConfig) -> PlannedRun:
    from harness.evaluate.plan import plan_run

    return plan_run(config)


def _finish(run: PlannedRun, counts: RunCounts, started: float) -> RunSummary:
    """The run scored, and what the call did. Its records are read once: scoring,
    the results and the run's tables share them (each read of a large run's
    samples.jsonl and the intervals over it took about a second).

    The collector is paused meanwhile: what the end builds (records, tables,
    intervals) holds no reference cycle, and a full pass over a large run's
    objects took ~0.3 s each time the allocations started one."""
    from harness.boundary.collector import collector_paused
    from harness.results import frames
    from harness.results.entries import benchmark_entries
    from harness.results.scores import run_scores
    from harness.run.scoring import score_run_records

    with collector_paused():
        scored = score_run_records(run.run_dir, rescore=False)
        loaded = frames.load(run.run_dir, conversation=False, stored=scored.records)
        outcomes = frames.run_outcomes(loaded)
        results = run_scores(loaded, benchmark_entries(loaded, outcomes.tasks))
    stats = run.settings.cache_stats
    return RunSummary(
        **vars(counts),
        run_dir=run.run_dir,
        command_s=round(time.monotonic() - started, 3),
        cache_hits=stats.hits,
        cache_calls=None if run.settings.cache_dir is None else stats.hits + stats.misses,
        not_run=list(run.plan.not_run),
        results=results,
        run=loaded,
        outcomes=outcomes,
        notes=list(run.settings.fit_report.lines(run.config.timeout)),
        error_lines=run.progress.errors.summary_lines() if run.progress is not None else [],
    )
