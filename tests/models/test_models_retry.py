"""RetryingClient and ConcurrencyLimitedClient without a network."""

from __future__ import annotations

import asyncio
import random

import pytest

from harness.models.base import ModelClient, ModelError
from harness.models.retry import ConcurrencyLimitedClient, RetryingClient
from harness.types import AssistantTurn, SamplingParams


class FlakyClient(ModelClient):
    """Raises the given errors in order, then answers."""

    def __init__(self, errors, delay: float = 0.0):
        self.errors = list(errors)
        self.delay = delay
        self.calls = 0

    async def complete(self, messages, tools, params):
        self.calls += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.errors:
            raise self.errors.pop(0)
        return AssistantTurn(content="ok")


class RecordingSleep:
    def __init__(self):
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def call(client):
    return asyncio.run(client.complete([{"role": "user", "content": "x"}], [], SamplingParams()))


def test_transient_errors_are_retried_with_growing_backoff():
    sleep = RecordingSleep()
    inner = FlakyClient([ModelError("busy", transient=True)] * 4)
    client = RetryingClient(inner, max_attempts=5, base_delay=1.0, max_delay=3.0, sleep=sleep)
    assert call(client).content == "ok"
    assert inner.calls == 5
    ceilings = [1.0, 2.0, 3.0, 3.0]  # capped by max_delay
    assert len(sleep.waits) == 4
    assert all(c / 2 <= w <= c for w, c in zip(sleep.waits, ceilings, strict=True))
    assert client.stats.to_dict() == {
        "calls": 1,
        "attempts": 5,
        "retries": 4,
        "transient_errors": 4,
        "timeouts": 0,
        "gave_up": 0,
    }


def test_retry_after_is_honoured_and_capped():
    sleep = RecordingSleep()
    inner = FlakyClient(
        [ModelError("429", transient=True, retry_after=7.0), ModelError("429", True, 500.0)]
    )
    client = RetryingClient(
        inner,
        max_attempts=3,
        base_delay=1.0,
        max_retry_after=30.0,
        sleep=sleep,
        rng=random.Random(1),
    )
    call(client)
    assert 7.0 <= sleep.waits[0] <= 7.1
    assert 30.0 <= sleep.waits[1] <= 30.1


def test_permanent_error_is_raised_at_once():
    sleep = RecordingSleep()
    inner = FlakyClient([ModelError("bad request", transient=False)])
    client = RetryingClient(inner, max_attempts=5, sleep=sleep)
    with pytest.raises(ModelError, match="bad request") as caught:
        call(client)
    assert not caught.value.transient and inner.calls == 1 and sleep.waits == []


def test_other_exceptions_are_not_retried():
    inner = FlakyClient([ValueError("a bug")])
    with pytest.raises(ValueError):
        call(RetryingClient(inner, max_attempts=5, sleep=RecordingSleep()))
    assert inner.calls == 1


def test_gives_up_after_max_attempts():
    inner = FlakyClient([ModelError("busy", transient=True)] * 10)
    client = RetryingClient(inner, max_attempts=3, sleep=RecordingSleep())
    with pytest.raises(ModelError, match="gave up after 3 attempts") as caught:
        call(client)
    assert caught.value.transient and inner.calls == 3 and client.stats.gave_up == 1


def test_timeout_per_attempt_is_transient_and_retried():
    inner = FlakyClient([], delay=0.3)
    client = RetryingClient(inner, max_attempts=2, timeout=0.05, sleep=RecordingSleep())
    with pytest.raises(ModelError, match="no reply within") as caught:
        call(client)
    assert caught.value.transient and inner.calls == 2 and client.stats.timeouts == 2


def test_describe_keeps_inner_and_adds_retry_settings():
    client = RetryingClient(FlakyClient([]), max_attempts=4, timeout=9.0)
    info = client.describe()
    assert info["kind"] == "FlakyClient" and info["retry"]["max_attempts"] == 4


class GaugeClient(ModelClient):
    def __init__(self, name="gauge"):
        self.name = name
        self.active = 0
        self.peak = 0

    def endpoint(self):
        return "http://127.0.0.1:1/v1"

    async def complete(self, messages, tools, params):
        self.active += 1
        self.peak = max(self.peak, self.active)
        await asyncio.sleep(0.01)
        self.active -= 1
        return AssistantTurn(content="ok")


def test_concurrency_limit_is_shared_per_endpoint():
    shared = GaugeClient()
    first = ConcurrencyLimitedClient(shared, 3)
    second = ConcurrencyLimitedClient(shared, 3)  # another object, same endpoint

    async def main():
        jobs = [c.complete([], [], SamplingParams()) for c in (first, second) for _ in range(10)]
        await asyncio.gather(*jobs)

    asyncio.run(main())
    assert shared.peak == 3
    assert first.key == "http://127.0.0.1:1/v1"


def test_limit_must_be_positive():
    with pytest.raises(ValueError):
        ConcurrencyLimitedClient(GaugeClient(), 0)


def test_backoff_draws_once_per_retry_and_not_when_giving_up():
    # The same seed gives the same waits as the documented formula: one draw from
    # [d/2, d] per retry, none for the attempt that gives up.
    sleep = RecordingSleep()
    inner = FlakyClient([ModelError("busy", transient=True)] * 4)
    client = RetryingClient(
        inner, max_attempts=4, base_delay=2.0, sleep=sleep, rng=random.Random(5)
    )
    with pytest.raises(ModelError, match="gave up after 4 attempts"):
        call(client)
    expected = random.Random(5)
    assert sleep.waits == [expected.uniform(c / 2, c) for c in (2.0, 4.0, 8.0)]
    assert client.stats.retries == 3 and client.stats.attempts == 4


def test_the_error_that_gives_up_keeps_its_retry_after():
    inner = FlakyClient([ModelError("429", transient=True, retry_after=3.0)] * 2)
    client = RetryingClient(inner, max_attempts=2, sleep=RecordingSleep())
    with pytest.raises(ModelError) as caught:
        call(client)
    assert caught.value.retry_after == 3.0 and caught.value.__cause__ is None


def test_cancelled_during_backoff_is_not_retried():
    inner = FlakyClient([ModelError("busy", transient=True)] * 5)
    client = RetryingClient(inner, max_attempts=5, base_delay=30.0)

    async def main():
        task = asyncio.ensure_future(client.complete([], [], SamplingParams()))
        await asyncio.sleep(0.05)  # the first attempt failed; the backoff is under way
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert inner.calls == 1 and client.stats.retries == 1 and client.stats.gave_up == 0


def test_concurrent_calls_on_one_client_count_their_own_attempts():
    class PerCall(ModelClient):
        """The call whose message says "fail" always fails; the other fails twice."""

        def __init__(self):
            self.failures = 0

        async def complete(self, messages, tools, params):
            await asyncio.sleep(0)
            if messages[0]["content"] == "fail" or self.failures < 2:
                self.failures += messages[0]["content"] != "fail"
                raise ModelError("busy", transient=True)
            return AssistantTurn(content="ok")

    async def no_wait(seconds: float) -> None:
        await asyncio.sleep(0)

    client = RetryingClient(PerCall(), max_attempts=4, sleep=no_wait)

    async def main():
        return await asyncio.gather(
            client.complete([{"role": "user", "content": "fail"}], [], SamplingParams()),
            client.complete([{"role": "user", "content": "pass"}], [], SamplingParams()),
            return_exceptions=True,
        )

    failed, passed = asyncio.run(main())
    assert isinstance(failed, ModelError) and "gave up after 4 attempts" in str(failed)
    assert isinstance(passed, AssistantTurn) and passed.content == "ok"
    assert client.stats.attempts == 4 + 3 and client.stats.gave_up == 1
