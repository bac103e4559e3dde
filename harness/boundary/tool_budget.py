"""Synchronous tool code run off the event loop, within a time budget per call.

Environment calls are plain Python that model arguments drive (and building an
environment can copy a whole domain database). Run on the event
loop, one slow call would freeze every episode in flight and keep
``--episode-timeout`` from firing. ``run_tool_call`` runs such a call in the tool
worker thread instead and waits at most ``timeout_s``; a call over budget gives
``ToolBudgetExceeded`` (the adapter turns it into an error result the agent
sees) and the loop moves on.

One worker thread runs every call, one at a time, as the event loop did before:
simulators that keep process-wide state (mpmath's precision, decimal contexts
per thread) give the same results as on the loop. A thread cannot be stopped, so
a worker whose call ran over budget is abandoned (it finishes or dies with the
process) and the next call gets a fresh worker. The worker is a daemon thread
of its own, not a ThreadPoolExecutor's: the interpreter joins those at exit, so
one abandoned call that never returns would keep the finished run from exiting.

A thread bounds time, not memory, and cannot interrupt a single long C call (a
huge integer power holds the interpreter lock): each adapter bounds those by
their arguments before the call, which also bounds the memory a call can take.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")

# No legitimate simulator or domain-tool call takes a fraction of this.
DEFAULT_TOOL_TIMEOUT_S = 20.0
# Building a benchmark environment (a copy of a domain database) may take longer.
ENVIRONMENT_BUILD_TIMEOUT_S = 120.0
# How often a waiting call checks its budget.
_POLL_S = 0.05


class ToolBudgetExceeded(Exception):
    """A tool call ran over its time budget (it was abandoned, not finished)."""


class _Job(NamedTuple):
    """A submitted call, bound to the future its outcome goes to."""

    cancel: Callable[[], bool]  # the future's: drops the call while it is queued
    run: Callable[[], None]  # runs the call (unless cancelled), its outcome set on the future


def _job(future: concurrent.futures.Future[T], call: Callable[[], T]) -> _Job:
    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return  # cancelled while queued
        try:
            result = call()
        except BaseException as exc:  # the caller's to see, as an executor would
            future.set_exception(exc)
        else:
            future.set_result(result)

    return _Job(future.cancel, run)


class _ToolThread:
    """One daemon thread that runs the calls submitted to it, in order."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()  # None: stop
        self._thread = threading.Thread(target=self._serve, name="tool", daemon=True)
        self._start = threading.Lock()

    def submit(self, call: Callable[[], T]) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put(_job(future, call))
        with self._start:  # started by its first call, not at import
            if self._thread.ident is None:
                self._thread.start()
        return future

    def abandon(self) -> None:
        """Cancel the calls queued here (their callers resubmit them to the next
        worker); the thread ends once its current call returns, if it ever does."""
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                job.cancel()
        self._jobs.put(None)

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            job.run()


class _Worker:
    """The current tool thread; replaced when a call on it runs over budget."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread = _ToolThread()

    def current(self) -> _ToolThread:
        with self._lock:
            return self._thread

    def abandon(self, thread: _ToolThread) -> None:
        with self._lock:
            if self._thread is thread:
                thread.abandon()
                self._thread = _ToolThread()


_WORKER = _Worker()


async def run_tool_call(
    function: Callable[..., T], *args: object, timeout_s: float = DEFAULT_TOOL_TIMEOUT_S
) -> T:
    """``function(*args)`` in the tool worker; ToolBudgetExceeded once it has run
    for ``timeout_s`` (time spent queued behind other calls does not count).

    Cancelling the awaiting task (an episode timeout) returns at once; a call not
    yet started is dropped, a running one finishes in the worker unseen.
    """
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()  # the caller's context vars (e.g. the strategy phase)
    started: list[float] = []

    def job() -> T:
        started.append(time.monotonic())
        return function(*args)

    while True:
        worker = _WORKER.current()
        future = worker.submit(functools.partial(context.run, job))
        budget = _Budget(loop, worker, started, timeout_s)
        future.add_done_callback(budget.call_done)
        try:
            await budget.done
        except BaseException:
            future.cancel()  # not started yet: never runs
            raise
        finally:
            budget.stop()
        if future.cancelled() and not started:
            continue  # queued on a worker that was abandoned: run it on the new one
        return future.result()


class _Budget:
    """The wait for one submitted call: ``done`` is resolved when the call ends (its
    outcome stays on the call's own future), or fails with ToolBudgetExceeded once
    the call has run past its budget (checked every ``_POLL_S``).

    The end reaches the loop in one ``call_soon_threadsafe`` that resolves
    ``done``, so the caller runs again at the loop's next turn. (A wrapped
    future awaited with ``asyncio.wait`` took three turns: at 256 episodes in
    flight a turn of the loop is ~10 ms, and tool calls are on every episode's
    chain of calls.)"""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        worker: _ToolThread,
        started: list[float],
        timeout_s: float,
    ) -> None:
        self.loop = loop
        self.worker = worker
        self.started = started
        self.timeout_s = timeout_s
        self.done: asyncio.Future[None] = loop.create_future()
        self._timer = loop.call_later(_POLL_S, self._check)

    def call_done(self, _future: concurrent.futures.Future[Any]) -> None:
        """Run by the thread that ended the call (or cancelled it)."""
        try:
            self.loop.call_soon_threadsafe(self._resolve)
        except RuntimeError:
            pass  # the loop has closed: nobody waits for the call any more

    def _resolve(self) -> None:
        if not self.done.done():
            self.done.set_result(None)

    def _check(self) -> None:
        if self.done.done():
            return
        if self.started and time.monotonic() - self.started[0] > self.timeout_s:
            _WORKER.abandon(self.worker)
            self.done.set_exception(
                ToolBudgetExceeded(f"the call took longer than {self.timeout_s:g} s")
            )
            return
        self._timer = self.loop.call_later(_POLL_S, self._check)

    def stop(self) -> None:
        self._timer.cancel()
