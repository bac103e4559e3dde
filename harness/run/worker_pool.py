"""A fixed number of workers over a queue: each worker runs one item's job,
hands the result to a follow-up task of its own and takes the next item at once.

Why workers, and not one task per item behind a semaphore: the task that reads a
model's reply is then the task that sends the next request. A hand-off between
tasks (a semaphore waking its next waiter, asyncio.wait around a task) runs only
after every callback that is ready at that moment, and with many requests in
flight replies arrive in bursts; with 64 in flight the hand-offs cost several
milliseconds a reply, and scoring and writing the last reply's record came before
the next request too. Here the follow-up (scoring, writing) is a task that starts
after the worker has sent its next request.

Follow-ups run at most ``follow_ups`` at a time, and a worker takes its next item
only once its result has a follow-up slot: jobs wait while follow-ups are behind,
rather than pile up results.

A job still running ``give_up_after`` seconds after it started (one that does not
stop when cancelled) is left behind: its item's result comes from
``abandoned(item, started)`` and a new worker takes its place, so such a job holds
up neither the run nor a worker.

Items are taken from the iterable one at a time, when a worker is free: a run's
worker processes share their pending samples by taking them in turn
(harness/evaluate/claims.py), so an item is asked for only when it can start.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

Item = TypeVar("Item")
Result = TypeVar("Result")

# Workers left behind, kept referenced until they end (the loop itself holds tasks
# only weakly).
_LEFT_BEHIND: set[asyncio.Task[None]] = set()


@dataclass
class _Worker:
    task: asyncio.Task[None] | None = None
    left_behind: bool = False


class WorkerPool(Generic[Item, Result]):
    def __init__(
        self,
        workers: int,
        job: Callable[[Item], Awaitable[Result]],
        follow_up: Callable[[Item, Result], Awaitable[None]],
        follow_ups: int | None = None,
        give_up_after: float | None = None,
        abandoned: Callable[[Item, float], Result] | None = None,
    ):
        if give_up_after is not None and abandoned is None:
            raise ValueError("give_up_after needs abandoned")
        self.workers = max(1, workers)
        self.job = job
        self.follow_up = follow_up
        self.follow_ups = max(1, follow_ups or workers)
        self.give_up_after = give_up_after
        self.abandoned = abandoned

    async def run(self, items: Iterable[Item]) -> None:
        """Every item's job and follow-up; the first exception of either ends the
        run (the other workers and follow-ups are cancelled) and is raised."""
        run = _Run(self, iter(items))
        await run.wait()


class _Run(Generic[Item, Result]):
    """One WorkerPool.run: the items, the tasks, and the end of the run."""

    def __init__(self, pool: WorkerPool[Item, Result], items: Iterator[Item]):
        self.pool = pool
        self.items = items
        self.exhausted = False  # every item has been taken
        self.unfinished = 0  # items taken whose follow-up has not ended
        self.loop = asyncio.get_running_loop()
        self.ended: asyncio.Future[None] = self.loop.create_future()
        self.follow_slots = asyncio.Semaphore(pool.follow_ups)
        self.tasks: set[asyncio.Task[None]] = set()

    async def wait(self) -> None:
        # Each worker takes its first item when it first runs: one that finds
        # none left (more workers than items) ends at once.
        for _ in range(self.pool.workers):
            self._start_worker()
        try:
            await self.ended
        finally:
            for task in self.tasks:
                task.cancel()

    def _take(self) -> tuple[bool, Item | None]:
        """(True, the next item), or (False, None) once every item is taken."""
        if not self.exhausted:
            try:
                item = next(self.items)
            except StopIteration:
                self.exhausted = True
            except BaseException as exc:  # the iterable's own failure ends the run
                self.exhausted = True
                self._fail(exc)
            else:
                self.unfinished += 1
                return True, item
        return False, None

    def _end_if_done(self) -> None:
        if self.exhausted and not self.unfinished and not self.ended.done():
            self.ended.set_result(None)

    def _spawn(self, coroutine: Coroutine[object, object, None]) -> asyncio.Task[None]:
        task = self.loop.create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def _start_worker(self) -> None:
        worker = _Worker()
        worker.task = self._spawn(self._work(worker))

    def _fail(self, exc: BaseException) -> None:
        if not self.ended.done():
            self.ended.set_exception(exc)

    async def _work(self, worker: _Worker) -> None:
        pool = self.pool
        while not self.ended.done():
            taken, item = self._take()
            if not taken:
                self._end_if_done()
                return
            item = cast(Item, item)
            started = time.monotonic()
            timer = (
                self.loop.call_later(pool.give_up_after, self._leave_behind, worker, item, started)
                if pool.give_up_after is not None
                else None
            )
            try:
                result = await pool.job(item)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:
                if not worker.left_behind:  # (one left behind has its result already)
                    self._fail(exc)
                return
            finally:
                if timer is not None:
                    timer.cancel()
            if worker.left_behind:
                return  # its item has its result already, and its place a new worker
            await self.follow_slots.acquire()
            self._spawn(self._follow(item, result))

    async def _follow(self, item: Item, result: Result) -> None:
        try:
            await self.pool.follow_up(item, result)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self._fail(exc)
            return
        finally:
            self.follow_slots.release()
        self.unfinished -= 1
        self._end_if_done()

    async def _follow_abandoned(self, item: Item, started: float) -> None:
        assert self.pool.abandoned is not None
        try:
            result = self.pool.abandoned(item, started)
        except BaseException as exc:
            self._fail(exc)
            return
        await self.follow_slots.acquire()
        await self._follow(item, result)

    def _leave_behind(self, worker: _Worker, item: Item, started: float) -> None:
        worker.left_behind = True
        task = worker.task
        assert task is not None
        self.tasks.discard(task)  # not cancelled at the end: it was, and did not stop
        _LEFT_BEHIND.add(task)
        task.add_done_callback(_forget)
        self._spawn(self._follow_abandoned(item, started))
        if not self.exhausted:
            self._start_worker()


def _forget(task: asyncio.Task[None]) -> None:
    _LEFT_BEHIND.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: it was left behind either way
