"""CPU per request of the direct client's HTTP exchange, against aiohttp's.

    uv run python bench/http_client.py [--requests 4000] [--concurrency 64]
        [--latency 0.05] [--rounds 3]

The same chat request body (a user message and 20 tool schemas) is POSTed
``--requests`` times, ``--concurrency`` at a time, to the fake server (a process
of its own): once through harness/models/http1.py, once through an aiohttp
session set up as the direct client used to (no decompression, no limit on
connections). Measured is the event-loop thread's CPU per request (the server's
apart), median of the rounds; printed with the ratio http1 / aiohttp.
aiohttp comes with litellm.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from harness.models.http1 import Http1Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_server_throughput import start_server  # noqa: E402

HEADERS = {"Content-Type": "application/json", "Accept-Encoding": "gzip, deflate"}
BODY = json.dumps(
    {
        "model": "fake-model",
        "messages": [{"role": "user", "content": "hello " * 200}],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": f"tool_{i}",
                    "parameters": {"type": "object", "properties": {"a": {"type": "string"}}},
                },
            }
            for i in range(20)
        ],
    }
).encode()
LIMIT = 64 * 1024 * 1024

Post = Callable[[], Awaitable[bytes]]


async def cpu_per_request(post: Post, requests: int, concurrency: int) -> float:
    """Microseconds of this thread's CPU per request, after a warm-up."""
    limit = asyncio.Semaphore(concurrency)

    async def one() -> bytes:
        async with limit:
            return await post()

    await asyncio.gather(*(one() for _ in range(concurrency * 2)))  # connections open
    start = time.thread_time()
    await asyncio.gather(*(one() for _ in range(requests)))
    return (time.thread_time() - start) / requests * 1e6


async def http1_round(url: str, requests: int, concurrency: int) -> float:
    client = Http1Client(url, HEADERS)

    async def post() -> bytes:
        return (await client.post(BODY, LIMIT)).body

    try:
        return await cpu_per_request(post, requests, concurrency)
    finally:
        client.close()


async def aiohttp_round(url: str, requests: int, concurrency: int) -> float:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector, auto_decompress=False) as session:

        async def post() -> bytes:
            async with session.post(url, data=BODY, headers=HEADERS) as response:
                return await response.read()

        return await cpu_per_request(post, requests, concurrency)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    server, base = start_server(args.latency)
    url = base + "/chat/completions"
    results: dict[str, list[float]] = {"http1": [], "aiohttp": []}
    try:
        for _ in range(args.rounds):
            for name, round_of in (("http1", http1_round), ("aiohttp", aiohttp_round)):
                results[name].append(asyncio.run(round_of(url, args.requests, args.concurrency)))
    finally:
        server.kill()
    medians = {name: statistics.median(values) for name, values in results.items()}
    for name, values in results.items():
        rounds = ", ".join(f"{v:.0f}" for v in values)
        print(f"{name:8} {medians[name]:6.0f} µs CPU per request (rounds: {rounds})")
    print(f"ratio http1 / aiohttp: {medians['http1'] / medians['aiohttp']:.2f}")


if __name__ == "__main__":
    main()
