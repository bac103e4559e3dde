"""A deadline inside the current task: at a given loop time the task is
cancelled, and that cancellation (only that one) comes out as TimeoutError.

asyncio.timeout does this on Python 3.11 and later; this project also runs on
3.10. The alternative there, running the awaited work in a task of its own under
asyncio.wait or asyncio.wait_for, costs two hand-offs between tasks per call. Each
hand-off waits behind every callback that is ready at that moment, and replies
arrive in bursts: with 64 requests in flight those waits were milliseconds per
reply (harness/run/worker_pool.py says more).
"""

from __future__ import annotations

import asyncio
from types import TracebackType


class Deadline:
    """``with Deadline(when, message):`` around awaits of the current task.

    ``when`` is a time of the running loop (``loop.time()``), or None for no
    deadline yet; ``reschedule`` moves it and ``expire`` ends the wait now. Past
    the deadline the task is cancelled once; the CancelledError that reaches the
    end of the block is raised as ``TimeoutError(message)``. A cancellation from
    anywhere else passes through as it is (on Python 3.11+, where a task counts
    its cancellations, also one that arrives together with the deadline's).
    """

    def __init__(self, when: float | None, message: str = "the deadline passed"):
        self.when = when
        self.message = message
        self.expired = False
        self._task: asyncio.Task | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._cancelling = 0

    def __enter__(self) -> Deadline:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("Deadline is used inside a task")
        self._task = task
        cancelling = getattr(task, "cancelling", None)  # Python 3.11+
        self._cancelling = cancelling() if cancelling is not None else 0
        self.reschedule(self.when)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._disarm()
        task, self._task = self._task, None  # from here on, expire() does nothing
        if not self.expired:
            return
        uncancel = getattr(task, "uncancel", None)  # Python 3.11+: count ours off
        cancelled_elsewhere = uncancel is not None and uncancel() > self._cancelling
        if exc_type is asyncio.CancelledError and not cancelled_elsewhere:
            raise asyncio.TimeoutError(self.message) from exc

    def reschedule(self, when: float | None) -> None:
        """Move the deadline (None: no deadline)."""
        self._disarm()
        self.when = when
        if when is not None and self._task is not None and not self.expired:
            self._handle = asyncio.get_running_loop().call_at(when, self.expire)

    def expire(self) -> None:
        """The deadline is now: cancel the task (once; not after the block ended)."""
        self._disarm()
        if self.expired or self._task is None or self._task.done():
            return
        self.expired = True
        self._task.cancel()

    def _disarm(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
