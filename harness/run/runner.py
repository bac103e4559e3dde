"""The runner: every (sample, trial) of a suite, concurrently, into the results store.

Finished (sample, trial) pairs are skipped on a rerun of the same command, so a
killed run resumes where it stopped. A sample whose model calls keep failing, or
whose episode raises, is recorded as an infrastructure error: counted apart in
every table, never scored as a model failure, and run again on the next resume.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

from harness.boundary.collector import collector_paused, garbage_collection_for_a_run
from harness.boundary.deadline import Deadline
from harness.config.shard import Shard
from harness.errors import ModelOutputError
from harness.models.base import ModelClient
from harness.models.redact import scrub_secrets
from harness.run.explanations import with_explanation
from harness.run.order import longest_first
from harness.run.run_counts import RunCounts
from harness.run.worker_pool import WorkerPool
from harness.store.inputs import SampleInput
from harness.store.records import INFRA_ERROR, OK, SCORE_ERROR, Record, now_iso, record_key
from harness.store.run_store import RunStore
from harness.strategies.base import Strategy
from harness.task.contract import Sample, Services
from harness.task.registry import adapter_of
from harness.types import SamplingParams, Score, Trajectory

ModelProvider = Callable[[Sample], ModelClient]


class ProgressSink(Protocol):
    """What the runner tells about its work as it goes (harness/run/progress.py)."""

    def started(self, key: str) -> None: ...

    def finished(self, record: Record) -> None: ...


@dataclass
class WorkItem:
    sample: Sample
    trial: int

    @property
    def key(self) -> str:
        return record_key(self.sample.benchmark, self.sample.subset, self.sample.id, self.trial)


@dataclass
class EpisodeOutcome:
    """One (sample, trial) between its episode and its record: the trajectory to
    score, or (when the episode failed) the record already."""

    item: WorkItem
    seed: int
    started_at: str
    start: float  # time.monotonic() when the episode started
    options: dict[str, Any] = field(default_factory=dict)  # the suite entry's load options
    services: Services | None = None
    trajectory: Trajectory | None = None
    record: Record | None = None
    elapsed_s: float = 0.0  # the episode's time, and then its scoring's

    def finish(self, status: str, score: Score | None, error: dict[str, Any] | None) -> None:
        self.record = build_record(
            self.item,
            self.options,
            self.seed,
            status,
            self.trajectory,
            score,
            error,
            self.started_at,
            self.elapsed_s or time.monotonic() - self.start,
        )

    def failed_to_record(self, exc: BaseException) -> None:
        """The record when building the record itself failed."""
        self.record = build_record(
            self.item,
            {},
            self.seed,
            INFRA_ERROR,
            None,
            None,
            _error_info(exc),
            self.started_at,
            time.monotonic() - self.start,
        )


def build_record(
    item: WorkItem,
    load_options: dict[str, Any],
    seed: int,
    status: str,
    trajectory: Trajectory | None,
    score: Score | None,
    error: dict[str, Any] | None,
    started_at: str,
    latency_s: float,
) -> Record:
    sample = item.sample
    return Record(
        key=item.key,
        benchmark=sample.benchmark,
        subset=sample.subset,
        sample_id=sample.id,
        trial=item.trial,
        seed=seed,
        status=status,
        error=error,
        score=score.to_dict() if score else None,
        metadata=sample.metadata,
        load_options=load_options,
        started_at=started_at,
        latency_s=round(latency_s, 4),
        trajectory=trajectory.to_dict() if trajectory else None,
    )


# After its deadline an episode is cancelled and given this long to unwind. One
# that swallows the cancellation (asyncio.wait_for can lose one on Python 3.11
# when its inner call finishes at the same moment) is left behind by the worker
# pool, so that a record is never later than deadline + grace.
CANCEL_GRACE_S = 1.0


def sample_input_of(sample: Sample) -> SampleInput:
    """What the run keeps of a sample's input: its first messages, its tools and
    its adapter's gold view (a gold view that fails is kept as its error)."""
    try:
        gold = adapter_of(sample).gold_view(sample)
    except Exception as exc:  # shown with the sample, never the end of the run
        gold = {"gold view failed": scrub_secrets(f"{type(exc).__name__}: {exc}")[:500]}
    return SampleInput(
        key=sample.key,
        benchmark=sample.benchmark,
        subset=sample.subset,
        sample_id=str(sample.id),
        messages=list(sample.initial_messages),
        tools=list(sample.tools),
        gold=gold,
    )


def episode_timeout_message(timeout_s: float) -> str:
    return f"the episode ran past its {timeout_s:g} s timeout"


def model_failure_score(exc: BaseException) -> Score:
    """The score of an episode the model's output made impossible to finish or score."""
    return Score(passed=False, reward=0.0, details={"model_output_error": str(exc)[:2000]})


def _error_info(exc: BaseException) -> dict[str, Any]:
    """A record's ``error``: an exception's text, not the trajectory, so
    credential-looking text in it is scrubbed (a server's error body echoing a
    header) besides the held secrets."""
    return {
        "type": type(exc).__name__,
        "message": scrub_secrets(str(exc))[:2000],
        # Of ``exc`` itself: it is not always the exception being handled.
        "traceback": scrub_secrets("".join(traceback.format_exception(exc, limit=8)))[-4000:],
    }


class Runner:
    """Runs work items with bounded concurrency and appends one record each."""

    def __init__(
        self,
        store: RunStore,
        strategy: Strategy,
        model_provider: ModelProvider,
        services: Services,
        params: SamplingParams,
        concurrency: int = 8,
        base_seed: int = 0,
        episode_timeout_s: float | None = None,
        progress: ProgressSink | None = None,
        load_options: dict[str, dict[str, Any]] | None = None,
        shard: Shard | None = None,
        longest_first: bool = True,
    ):
        self.store = store
        self.strategy = strategy
        self.model_provider = model_provider
        self.services = services
        self.params = params
        self.concurrency = max(1, concurrency)
        self.base_seed = base_seed
        self.episode_timeout_s = episode_timeout_s
        self.progress = progress
        self.load_options = load_options or {}
        self.shard = shard or Shard()
        # False: items start in load order (RunConfig.start_order "load").
        self.longest_first = longest_first

    def trial_seed(self, trial: int) -> int:
        # One seed per trial, shared by all samples: trials differ, reruns repeat.
        return self.base_seed + trial

    def pending(self, samples: list[Sample], trials: int) -> tuple[list[WorkItem], int]:
        """The items of this shard not yet done, in the order they start (the longest
        estimated episodes first, harness/run/order.py, unless asked for load order),
        and how many are done.

        The collector is paused: the items hold no cycle, and a full pass that
        their allocation started walked every loaded sample (~0.25 s before the
        first episode of a run of 4,448 pairs)."""
        with collector_paused():
            done = {key for key, rec in self.store.records().items() if rec.get("status") == OK}
            items = [WorkItem(s, t) for t in range(trials) for s in samples]
            items = [item for item in items if self.shard.owns(item.key)]
            todo = [item for item in items if item.key not in done]
            if self.longest_first:
                todo = longest_first(todo, lambda item: item.sample)
        return todo, len(items) - len(todo)

    async def run_item(self, item: WorkItem) -> Record:
        """The record of one (sample, trial); never raises for one sample's failure.

        An exception while running, scoring or building the record becomes the
        record's error: a scored failure when the model's output caused it
        (ModelOutputError), an infrastructure error (run again on resume) or a
        scoring error otherwise.
        """
        return await self.score_episode(await self.run_episode(item))

    async def run_episode(self, item: WorkItem) -> EpisodeOutcome:
        """The episode of one (sample, trial), not yet scored; never raises for
        one sample's failure (the outcome then holds its record already)."""
        outcome = EpisodeOutcome(item, self.trial_seed(item.trial), now_iso(), time.monotonic())
        if self.progress:
            self.progress.started(item.key)
        try:
            self.keep_input(item.sample)
            outcome.options = self.load_options.get(item.sample.key, {})
            seed = outcome.seed
            # dataclasses.replace, not to_dict() and back: asdict deep-copies (a hot spot).
            params = dataclasses.replace(self.params, seed=seed, extra=dict(self.params.extra))
            outcome.services = dataclasses.replace(self.services, seed=seed)
            try:
                model = self.model_provider(item.sample)
                episode = self.strategy.run(item.sample, model, outcome.services, params)
                # In this task (no task of its own): harness/boundary/deadline.py says why.
                with self._episode_deadline():
                    outcome.trajectory = await episode
            except ModelOutputError as exc:  # the model's failure: scored, not retried
                outcome.finish(OK, model_failure_score(exc), _error_info(exc))
            except Exception as exc:  # ModelError, timeouts, adapter bugs: all recorded
                outcome.finish(INFRA_ERROR, None, _error_info(exc))
        except Exception as exc:  # building the record itself failed
            outcome.failed_to_record(exc)
        outcome.elapsed_s = time.monotonic() - outcome.start
        return outcome

    def _episode_deadline(self) -> Deadline:
        timeout = self.episode_timeout_s
        if not timeout:
            return Deadline(None)
        when = asyncio.get_running_loop().time() + timeout
        return Deadline(when, episode_timeout_message(timeout))

    async def score_episode(self, outcome: EpisodeOutcome) -> Record:
        """The record of an episode: scored by its adapter (when it ran to the
        end); never raises for one sample's failure."""
        if outcome.record is not None:
            return outcome.record
        started = time.monotonic()
        try:
            item, trajectory, services = outcome.item, outcome.trajectory, outcome.services
            # run_episode gives a record, or a trajectory and its services
            assert trajectory is not None and services is not None
            adapter = adapter_of(item.sample)
            score: Score | None = None
            error: dict[str, Any] | None = None
            status = OK
            try:
                score = with_explanation(
                    adapter,
                    item.sample,
                    trajectory,
                    await adapter.score(item.sample, trajectory, services),
                )
            except ModelOutputError as exc:
                score, error = model_failure_score(exc), _error_info(exc)
            except Exception as exc:  # a scoring failure is shown, never a silent zero
                status, error = SCORE_ERROR, _error_info(exc)
            # The sample's own time: its episode and its scoring (not the wait between).
            outcome.elapsed_s += time.monotonic() - started
            outcome.finish(status, score, error)
        except Exception as exc:  # building the record itself failed
            outcome.failed_to_record(exc)
        assert outcome.record is not None
        return outcome.record

    def _append(self, record: Record) -> Record:
        """Write one record; a record that cannot be written (anything but an OS
        failure such as a full disk) is replaced by a short error record."""
        try:
            self.store.append(record)
            return record
        except OSError:
            raise
        except Exception as exc:
            short = Record(
                key=record.key,
                benchmark=record.benchmark,
                subset=record.subset,
                sample_id=record.sample_id,
                trial=record.trial,
                seed=record.seed,
                status=INFRA_ERROR,
                error=_error_info(exc),
                started_at=record.started_at,
                latency_s=record.latency_s,
            )
            self.store.append(short)
            return short

    async def run(self, samples: list[Sample], trials: int) -> RunCounts:
        todo, skipped = self.pending(samples, trials)
        if skipped:  # a resumed run folder written before inputs were kept
            started = {item.sample.key for item in todo}
            for sample in samples:
                if sample.key not in started and self._owns_any(sample, trials):
                    self.keep_input(sample)
        return await self.run_items(todo, skipped)

    def _owns_any(self, sample: Sample, trials: int) -> bool:
        return any(
            self.shard.owns(record_key(sample.benchmark, sample.subset, sample.id, trial))
            for trial in range(trials)
        )

    def keep_input(self, sample: Sample) -> None:
        """Keep the sample's input in the run folder, once per sample."""
        if not self.store.has_input(sample.key):
            self.store.append_input(sample_input_of(sample))

    async def run_items(self, todo: Iterable[WorkItem], skipped: int) -> RunCounts:
        """Run the given pending items (``skipped``: how many were already done),
        each taken from ``todo`` when an episode can start.

        ``concurrency`` episodes at a time, and as many being scored and written
        (harness/run/worker_pool.py): an episode's scoring (a judge, a replay in the
        tool worker) and its record come after the next episode's first request.
        """
        start = time.monotonic()
        counts: dict[str, int] = {OK: 0, INFRA_ERROR: 0, SCORE_ERROR: 0}

        async def record(item: WorkItem, outcome: EpisodeOutcome) -> None:
            written = self._append(await self.score_episode(outcome))
            counts[written.status] += 1
            if self.progress:
                self.progress.finished(written)

        timeout = self.episode_timeout_s
        pool: WorkerPool[WorkItem, EpisodeOutcome] = WorkerPool(
            self.concurrency,
            self.run_episode,
            record,
            give_up_after=timeout + CANCEL_GRACE_S if timeout else None,
            abandoned=self._left_behind if timeout else None,
        )
        with garbage_collection_for_a_run():
            await pool.run(todo)
        ran = sum(counts.values())  # every item taken has its record once the pool ends
        return RunCounts(
            total=ran + skipped,
            skipped=skipped,
            ran=ran,
            ok=counts[OK],
            infra_errors=counts[INFRA_ERROR],
            score_errors=counts[SCORE_ERROR],
            elapsed_s=round(time.monotonic() - start, 3),
        )

    def _left_behind(self, item: WorkItem, started: float) -> EpisodeOutcome:
        """The outcome of an episode that did not stop when its deadline cancelled it."""
        assert self.episode_timeout_s is not None
        elapsed = time.monotonic() - started
        began = datetime.now(timezone.utc) - timedelta(seconds=elapsed)
        outcome = EpisodeOutcome(
            item, self.trial_seed(item.trial), began.isoformat(timespec="seconds"), started
        )
        outcome.options = self.load_options.get(item.sample.key, {})
        error = asyncio.TimeoutError(
            episode_timeout_message(self.episode_timeout_s) + ", and did not stop when cancelled"
        )
        outcome.finish(INFRA_ERROR, None, _error_info(error))
        return outcome
