"""Throughput of the model clients against the fake server.

The fake server (a separate process) answers every chat request after a fixed
latency (200 ms); with C requests in flight the ideal rate is C / latency
(64 / 0.2 s = 320 requests/s). Each client sends N requests, C at a time,
through the same wrappers a run uses (retries, endpoint concurrency limit):

- litellm: LiteLLMClient (litellm.acompletion, the default path);
- direct:  OpenAIHTTPClient (http1.py, for OpenAI-compatible local servers);
- httpx / aiohttp: bare POSTs with no client logic, for comparison.

For each it prints requests/s, the ratio to the ideal (target >= 90%) and the
CPU time per request spent in this process and in the server.

    python bench/fake_server_throughput.py [--requests 640] [--concurrency 64]
        [--latency 0.2] [--clients litellm,direct,httpx,aiohttp] [--profile litellm]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.models.litellm_client import LiteLLMClient  # noqa: E402
from harness.models.openai_http import OpenAIHTTPClient  # noqa: E402
from harness.models.retry import ConcurrencyLimitedClient, RetryingClient  # noqa: E402
from harness.types import SamplingParams  # noqa: E402

MESSAGES = [{"role": "user", "content": "What is the weather in Paris?"}]
BODY = {"model": "fake-model", "messages": MESSAGES, "temperature": 0.0}
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Result:
    name: str
    requests: int
    seconds: float
    client_cpu: float
    server_cpu: float
    errors: int


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


async def measure(
    name: str,
    send: Callable[[], Awaitable[None]],
    requests: int,
    concurrency: int,
    server_pid: int,
    profile: bool,
) -> Result:
    gate = asyncio.Semaphore(concurrency)
    errors = 0

    async def one() -> None:
        nonlocal errors
        async with gate:
            try:
                await send()
            except Exception:
                errors += 1

    await asyncio.gather(*(one() for _ in range(concurrency)))  # warm up connections
    profiler = cProfile.Profile() if profile else None
    server_before = process_cpu_seconds(server_pid)
    cpu_before = time.process_time()
    started = time.perf_counter()
    if profiler:
        profiler.enable()
    await asyncio.gather(*(one() for _ in range(requests)))
    if profiler:
        profiler.disable()
    seconds = time.perf_counter() - started
    result = Result(
        name,
        requests,
        seconds,
        time.process_time() - cpu_before,
        process_cpu_seconds(server_pid) - server_before,
        errors,
    )
    if profiler:
        print(f"\n--- where {name} spends its time (cumulative, top 25) ---")
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    return result


def senders(url: str, concurrency: int):
    """name -> (send one request, close) for each client under test."""
    params = SamplingParams()

    def wrapped(client):
        return RetryingClient(ConcurrencyLimitedClient(client, concurrency), max_attempts=1)

    litellm_client = wrapped(LiteLLMClient("openai/fake-model", api_base=url, api_key="bench"))
    direct_inner = OpenAIHTTPClient("openai/fake-model", url, api_key="bench")
    direct_client = wrapped(direct_inner)

    async def via(client) -> None:
        await client.complete(MESSAGES, [], params)

    async def nothing() -> None:
        return None

    def httpx_pair():
        import httpx

        client = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        )

        async def send() -> None:
            response = await client.post(f"{url}/chat/completions", json=BODY)
            response.json()

        return send, client.aclose

    def aiohttp_pair():
        import aiohttp

        session: list[aiohttp.ClientSession] = []

        async def send() -> None:
            if not session:
                session.append(aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)))
            async with session[0].post(f"{url}/chat/completions", json=BODY) as response:
                await response.json()

        async def close() -> None:
            if session:
                await session[0].close()

        return send, close

    return {
        "litellm": lambda: (lambda: via(litellm_client), nothing),
        "direct": lambda: (lambda: via(direct_client), direct_inner.aclose),
        "httpx": httpx_pair,
        "aiohttp": aiohttp_pair,
    }


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    command = [
        sys.executable,
        "-m",
        "harness.testing.fake_server",
        "--port",
        "0",
        "--latency",
        str(latency),
        "--no-record",
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("FAKE_SERVER_URL "):
        proc.kill()
        raise SystemExit(f"the fake server did not start: {line!r}")
    return proc, line.split()[1]


async def main_async(args: argparse.Namespace, url: str, server_pid: int) -> list[Result]:
    available = senders(url, args.concurrency)
    results = []
    for name in args.clients.split(","):
        send, close = available[name]()
        try:
            results.append(
                await measure(
                    name, send, args.requests, args.concurrency, server_pid, name in args.profile
                )
            )
        finally:
            await close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=640)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--clients", default="litellm,direct,httpx,aiohttp")
    parser.add_argument("--profile", default="", help="comma-separated clients to profile")
    parser.add_argument("--target", type=float, default=0.9)
    args = parser.parse_args()
    proc, url = start_server(args.latency)
    try:
        results = asyncio.run(main_async(args, url, proc.pid))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    ideal = args.concurrency / args.latency
    print(
        f"\n{args.requests} requests, {args.concurrency} in flight, {args.latency * 1000:.0f} ms "
        f"server latency: ideal {ideal:.0f} requests/s (cores: {os.cpu_count()})"
    )
    print(
        f"{'client':<9} {'req/s':>7} {'ratio':>6} {'ok':>4} {'cpu ms/req':>11} {'server ms/req':>14} errors"
    )
    for r in results:
        rate = r.requests / r.seconds
        ratio = rate / ideal
        verdict = "yes" if ratio >= args.target else "no"
        print(
            f"{r.name:<9} {rate:7.1f} {ratio:6.0%} {verdict:>4} "
            f"{r.client_cpu / r.requests * 1000:11.2f} {r.server_cpu / r.requests * 1000:14.2f} "
            f"{r.errors}"
        )


if __name__ == "__main__":
    main()
