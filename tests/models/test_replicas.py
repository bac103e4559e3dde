"""Several replicas of one model: spreading, per-replica limits, failover, no lost samples."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest
from support import toy_reply

from harness.cli import main
from harness.models.base import ModelClient, ModelError
from harness.models.http1 import ServerDisconnected
from harness.serving.replicas import Replica, ReplicaPool, load_model_config
from harness.store.run_store import read_records
from harness.testing.fake_server import FakeServer
from harness.types import AssistantTurn, SamplingParams

PARAMS = SamplingParams()


class CountingClient(ModelClient):
    """Answers after a short wait, counting its calls and the most in flight at once."""

    def __init__(self, name: str, delay: float = 0.01):
        self.name = name
        self.delay = delay
        self.in_flight = self.peak = self.calls = 0

    async def complete(self, messages, tools, params) -> AssistantTurn:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
        self.calls += 1
        return AssistantTurn(content=self.name)


class UnreachableClient(ModelClient):
    """Fails as the HTTP client does when the server goes away: its error as context."""

    name = "unreachable"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, messages, tools, params) -> AssistantTurn:
        self.calls += 1
        try:
            raise ServerDisconnected(nothing_read=True)
        except OSError:
            raise ModelError("ServerDisconnectedError", transient=True) from None


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def pool_of(*replicas: tuple[ModelClient, int], clock: Clock | None = None) -> ReplicaPool:
    return ReplicaPool(
        "openai/m",
        [Replica(f"http://127.0.0.1:{9000 + i}/v1", c, n) for i, (c, n) in enumerate(replicas)],
        cooldown_s=10.0,
        clock=clock or Clock(),
    )


async def call_many(pool: ReplicaPool, count: int) -> list[AssistantTurn]:
    messages = [{"role": "user", "content": "hi"}]
    return await asyncio.gather(*(pool.complete(messages, [], PARAMS) for _ in range(count)))


def test_calls_spread_over_replicas_within_each_replicas_limit():
    a, b = CountingClient("a"), CountingClient("b")
    pool = pool_of((a, 2), (b, 1))
    turns = asyncio.run(call_many(pool, 9))
    assert len(turns) == 9 and a.calls + b.calls == 9
    assert a.peak == 2 and b.peak == 1
    assert a.calls > 0 and b.calls > 0


def test_one_call_at_a_time_alternates_between_idle_replicas():
    a, b = CountingClient("a"), CountingClient("b")
    pool = pool_of((a, 4), (b, 4))

    async def one_by_one() -> list[str]:
        return [
            (await pool.complete([{"role": "user", "content": "x"}], [], PARAMS)).content
            for _ in range(4)
        ]

    assert asyncio.run(one_by_one()) == ["a", "b", "a", "b"]


def test_an_unreachable_replica_is_cooled_down_and_its_calls_fail_over():
    clock = Clock()
    dead, alive = UnreachableClient(), CountingClient("alive")
    pool = pool_of((dead, 4), (alive, 4), clock=clock)
    turns = asyncio.run(call_many(pool, 6))
    assert [t.content for t in turns] == ["alive"] * 6
    assert pool.replicas[0].failures >= 1 and dead.calls == pool.replicas[0].failures
    calls_before = dead.calls
    asyncio.run(call_many(pool, 3))
    assert dead.calls == calls_before  # still cooling down: not tried
    clock.now += 11.0
    asyncio.run(call_many(pool, 1))
    assert dead.calls > calls_before  # tried again after the cool-down


def test_all_replicas_unreachable_is_a_transient_error():
    pool = pool_of((UnreachableClient(), 2), (UnreachableClient(), 2))
    with pytest.raises(ModelError, match="no replica of 2 could be reached") as caught:
        asyncio.run(call_many(pool, 1))
    assert caught.value.transient


def test_an_http_error_is_not_a_dead_replica():
    class Failing(ModelClient):
        async def complete(self, messages, tools, params):
            raise ModelError("HTTP 500: oops", transient=True)

    pool = pool_of((Failing(), 2), (CountingClient("b"), 2))
    with pytest.raises(ModelError, match="HTTP 500"):
        asyncio.run(pool.complete([{"role": "user", "content": "x"}], [], PARAMS))
    assert pool.replicas[0].failures == 0


# -- through `harness run` --------------------------------------------------------


def kill_after(server: FakeServer, requests: int):
    """A handler that answers as the toy agent and stops ``server`` at its Nth request."""
    count = {"n": 0}

    def handler(request: dict):
        count["n"] += 1
        if count["n"] == requests:
            threading.Thread(target=server.stop).start()
        return toy_reply(request)

    return handler


def run_args(suite: Path, out: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--suite",
        str(suite),
        "--model",
        "openai/fake-model",
        "--trials",
        "3",
        "--concurrency",
        "6",
        "--retry-delay",
        "0.05",
        "--no-cache",
        "--quiet",
        "--out",
        str(out),
        *extra,
    ]


@pytest.mark.parametrize("client", ["direct", "litellm"])
def test_a_replica_dying_mid_run_loses_no_sample(toy_suite, tmp_path, client):
    with FakeServer(latency=0.02) as a, FakeServer(latency=0.02, handler=toy_reply) as b:
        a.set_handler(kill_after(a, 10))
        code = main(
            run_args(
                toy_suite, tmp_path / "run", "--api-base", f"{a.url},{b.url}", "--client", client
            )
        )
        served_a, served_b = len(a.chat_requests), len(b.chat_requests)
    records = read_records(tmp_path / "run" / "samples.jsonl").latest
    assert code == 0
    assert len(records) == 8 * 3
    assert all(r["status"] == "ok" and r["score"]["passed"] for r in records.values())
    assert served_a >= 10 and served_b > 0
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["model"]["api_base"] == f"{a.url},{b.url}"
    assert len(manifest["model_client"]["replicas"]) == 2


def test_a_model_config_lists_replicas_and_their_limits(toy_suite, tmp_path):
    with FakeServer(handler=toy_reply) as a, FakeServer(handler=toy_reply) as b:
        config = tmp_path / "model.yaml"
        config.write_text(
            f"model: openai/fake-model\nreplicas:\n  - url: {a.url}\n    max_concurrency: 1\n"
            f"  - {b.url}\n"
        )
        argv = run_args(toy_suite, tmp_path / "run", "--model-config", str(config))
        argv.remove("--model")
        argv.remove("openai/fake-model")
        assert main(argv) == 0
        assert a.chat_requests and b.chat_requests
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["model"]["name"] == "openai/fake-model"
    limits = {r["url"]: r["max_concurrency"] for r in manifest["model_client"]["replicas"]}
    assert limits == {a.url: 1, b.url: 6}


@pytest.mark.parametrize(
    "text, message",
    [
        ("replicas: []\n", "needs a non-empty 'replicas' list"),
        ("replicas:\n  - port: 1\n", "replica 1 needs a 'url'"),
        ("replicas:\n  - url: http://a/v1\n    max_concurrency: 0\n", "must be positive"),
        ("replicas:\n  - http://a/v1\n  - http://a/v1\n", "names a replica twice"),
    ],
)
def test_a_bad_model_config_is_one_clear_error(tmp_path, text, message):
    path = tmp_path / "model.yaml"
    path.write_text(text)
    with pytest.raises(Exception, match=message):
        load_model_config(path)


def test_a_bad_model_config_on_the_command_line_exits_2(toy_suite, tmp_path, capsys):
    path = tmp_path / "model.yaml"
    path.write_text("replicas: nope\n")
    assert main(["run", "--suite", str(toy_suite), "--model-config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "needs a non-empty 'replicas' list" in err


def test_the_direct_clients_refused_and_dropped_connections_count_as_unreachable(fake):
    import socket

    from harness.models.openai_http import OpenAIHTTPClient
    from harness.serving.replicas import is_connection_failure
    from harness.testing.fake_server import Reply

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]

    async def error_of(client: OpenAIHTTPClient) -> ModelError:
        try:
            await client.complete([{"role": "user", "content": "hi"}], [], SamplingParams())
        except ModelError as exc:
            return exc
        finally:
            await client.aclose()
        raise AssertionError("no error")

    refused = asyncio.run(error_of(OpenAIHTTPClient("m", f"http://127.0.0.1:{closed_port}/v1")))
    fake.enqueue(Reply.dropped())
    dropped = asyncio.run(error_of(OpenAIHTTPClient("m", fake.url)))
    fake.enqueue(Reply.slow(2.0))
    slow = asyncio.run(error_of(OpenAIHTTPClient("m", fake.url, timeout=0.2)))
    assert is_connection_failure(refused) and is_connection_failure(dropped)
    assert not is_connection_failure(slow) and "no reply within" in str(slow)
    assert "Connect call failed" in str(refused)  # what the run's error kinds look for
