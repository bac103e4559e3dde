"""Reliability around a model client: retries, per-call timeouts, concurrency.

``RetryingClient`` retries only transient ModelErrors (rate limits, server
errors, timeouts, dropped connections) with exponential backoff and jitter, and
waits as long as a Retry-After header asks (up to a cap). A permanent error (bad
request, bad key) is raised at once. When the attempts run out the last error
escapes, and the runner records an infrastructure error. The loop is this
module's own: its state is the call's local variables, so one client serves any
number of concurrent calls with nothing built per call (a tenacity retrying object
per call, which keeps its state on the object, cost ~12% of a call's CPU).

``ConcurrencyLimitedClient`` bounds the calls in flight per endpoint, shared by
every client object that talks to the same endpoint (actor and user simulator
on one server share its limit).

Order them as Retrying(ConcurrencyLimited(client)): a call waiting out its
backoff does not hold an endpoint slot.

With ``patience`` (a local server, local_server.py) a call past its timeout is
not abandoned and sent again while the server is alive: it is waited for.
"""

from __future__ import annotations

import asyncio
import random
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import NoReturn

from harness.boundary.deadline import Deadline
from harness.boundary.json_value import JsonObject
from harness.models.base import (
    CONTEXT_OVERFLOW,
    CallMeter,
    ModelClient,
    ModelError,
    WrappedClient,
)
from harness.models.local_server import FitReport, LocalPatience
from harness.types import AssistantTurn, Message, SamplingParams, ToolSchema


@dataclass
class RetryStats:
    """Counts over the life of a RetryingClient (for the run's record)."""

    calls: int = 0
    attempts: int = 0
    retries: int = 0
    transient_errors: int = 0
    timeouts: int = 0
    gave_up: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


class RetryingClient(WrappedClient):
    """Retries transient failures of ``inner``; bounds each attempt by ``timeout``.

    Backoff before retry n (n = 1, 2, ...) is drawn from
    [d/2, d] with d = min(max_delay, base_delay * 2**(n-1)). A Retry-After of r
    seconds waits min(r, max_retry_after) plus up to 10% of base_delay jitter.
    """

    def __init__(
        self,
        inner: ModelClient,
        max_attempts: int = 6,
        base_delay: float = 1.0,
        max_delay: float = 60.0,
        timeout: float | None = None,
        max_retry_after: float = 120.0,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        rng: random.Random | None = None,
        patience: LocalPatience | None = None,
        fit_report: FitReport | None = None,
    ):
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        super().__init__(inner)
        self.max_attempts = max_attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.timeout = timeout
        self.max_retry_after = max_retry_after
        self.patience = patience
        self.fit_report = (
            fit_report
            if fit_report is not None
            else (patience.waits if patience is not None else None)
        )
        self.stats = RetryStats()
        self._sleep = sleep or asyncio.sleep
        self._rng = rng or random.Random()

    def backoff(self, retry_number: int, error: BaseException | None) -> float:
        """Seconds to wait before retry ``retry_number`` (1-based) after ``error``."""
        retry_after = getattr(error, "retry_after", None)
        if retry_after is not None:
            jitter = self._rng.uniform(0, 0.1 * self.base_delay)
            return min(float(retry_after), self.max_retry_after) + jitter
        ceiling = min(self.max_delay, self.base_delay * 2 ** (retry_number - 1))
        return self._rng.uniform(ceiling / 2, ceiling)

    async def _attempt(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> AssistantTurn:
        self.stats.attempts += 1
        if self.patience is not None and self.timeout is not None:
            return await self._patient_attempt(messages, tools, params, self.patience)
        try:
            if self.timeout is None:
                return await self.inner.complete(messages, tools, params)
            # The call runs in this task under a deadline, not in a task of its
            # own under asyncio.wait_for (harness/boundary/deadline.py says why).
            when = asyncio.get_running_loop().time() + self.timeout
            with Deadline(when, f"no reply within {self.timeout:g} s"):
                return await self.inner.complete(messages, tools, params)
        except asyncio.TimeoutError:
            self.stats.timeouts += 1
            self.stats.transient_errors += 1
            raise ModelError(f"no reply within {self.timeout:g} s", transient=True) from None
        except ModelError as exc:
            self.stats.transient_errors += int(exc.transient)
            raise

    async def _patient_attempt(
        self,
        messages: list[Message],
        tools: list[ToolSchema],
        params: SamplingParams,
        patience: LocalPatience,
    ) -> AssistantTurn:
        """One attempt on a local server: past the timeout, keep waiting for the
        same request while the server is alive (never re-send it to a server
        still computing it), up to ``patience.max_wait_s``.

        The call runs in this task; past the timeout a watcher task checks the
        server every ``patience.check_every_s`` and ends the wait (the deadline
        expires) when it is gone or the longest wait is over."""
        assert self.timeout is not None
        loop = asyncio.get_running_loop()
        started = loop.time()
        watchers: list[asyncio.Task[None]] = []
        deadline = Deadline(None)

        def watch() -> None:
            watchers.append(loop.create_task(self._watch(deadline, started, patience)))

        timer = loop.call_at(started + self.timeout, watch)
        try:
            with deadline:
                turn = await self.inner.complete(messages, tools, params)
        except asyncio.TimeoutError:
            if not deadline.expired:
                raise
            self.stats.timeouts += 1
            self.stats.transient_errors += 1
            waited = loop.time() - started
            raise ModelError(
                f"no reply within {waited:.0f} s from the local server", transient=True
            ) from None
        except ModelError as exc:
            self.stats.transient_errors += int(exc.transient)
            raise
        finally:
            timer.cancel()
            for watcher in watchers:
                watcher.cancel()
        patience.waits.note(loop.time() - started, self.timeout)
        return turn

    async def _watch(self, deadline: Deadline, started: float, patience: LocalPatience) -> None:
        """Past the timeout: end the call's wait when the server is gone or the
        longest wait is over (a reply that lands meanwhile cancels this watch)."""
        loop = asyncio.get_running_loop()
        while True:
            waited = loop.time() - started
            if waited >= patience.max_wait_s:
                patience.waits.gave_up += 1
                break
            if not await patience.alive():
                break
            waited = loop.time() - started
            await asyncio.sleep(min(patience.check_every_s, max(0.0, patience.max_wait_s - waited)))
        deadline.expire()

    async def complete(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> AssistantTurn:
        self.stats.calls += 1
        attempt = 1
        while True:
            try:
                return await self._attempt(messages, tools, params)
            except ModelError as exc:
                if not exc.transient or attempt >= self.max_attempts:
                    self._give_up(exc, attempt)
                self.stats.retries += 1
                await self._sleep(self.backoff(attempt, exc))
            attempt += 1

    def _give_up(self, exc: ModelError, attempts: int) -> NoReturn:
        """Raise the error a call ends with: a permanent one as it is, a transient
        one that outlasted every attempt saying so."""
        if exc.kind == CONTEXT_OVERFLOW and self.fit_report is not None:
            self.fit_report.context_overflow(str(exc))
        if not exc.transient:
            raise exc
        self.stats.gave_up += 1
        raise ModelError(
            f"{exc} (gave up after {attempts} attempts)",
            transient=True,
            retry_after=exc.retry_after,
        ) from None

    def describe(self) -> JsonObject:
        return {
            **self.inner.describe(),
            "retry": {
                "max_attempts": self.max_attempts,
                "base_delay_s": self.base_delay,
                "max_delay_s": self.max_delay,
                "timeout_s": self.timeout,
                "max_retry_after_s": self.max_retry_after,
                "local_server_wait_s": self.patience.max_wait_s if self.patience else None,
            },
        }


def endpoint_key(client: ModelClient) -> str:
    """Which endpoint a client calls (``ModelClient.endpoint``), else its name."""
    return client.endpoint() or client.name


# One semaphore per (endpoint, limit) and event loop: asyncio primitives belong to
# the loop they were first used on, and tests run many loops in one process.
_LIMITERS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, int], asyncio.Semaphore]
] = weakref.WeakKeyDictionary()


def endpoint_semaphore(key: str, limit: int) -> asyncio.Semaphore:
    per_loop = _LIMITERS.setdefault(asyncio.get_running_loop(), {})
    semaphore = per_loop.get((key, limit))
    if semaphore is None:
        semaphore = per_loop[(key, limit)] = asyncio.Semaphore(limit)
    return semaphore


class ConcurrencyLimitedClient(WrappedClient):
    """At most ``max_concurrency`` calls in flight per endpoint.

    ``key`` names the endpoint; by default the api_base (or model) of the
    wrapped client, so separate client objects for one server share the limit.
    """

    def __init__(
        self,
        inner: ModelClient,
        max_concurrency: int,
        key: str | None = None,
        meter: CallMeter | None = None,
    ):
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        super().__init__(inner)
        self.max_concurrency = max_concurrency
        self.key = key or endpoint_key(inner)
        self.in_flight = 0
        self.peak_in_flight = 0
        self.meter = meter or CallMeter()  # shared with the run's other clients

    async def complete(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> AssistantTurn:
        async with endpoint_semaphore(self.key, self.max_concurrency):
            self.in_flight += 1
            self.meter.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                return await self.inner.complete(messages, tools, params)
            finally:
                self.in_flight -= 1
                self.meter.in_flight -= 1

    def describe(self) -> JsonObject:
        return {**self.inner.describe(), "max_concurrency": self.max_concurrency}
