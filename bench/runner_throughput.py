"""Throughput of a whole `harness run` against a model server, against the ideal.

    uv run python bench/runner_throughput.py [--samples 640] [--concurrency 64] [--latency 0.2]

The fake server (a separate process) answers every request after a fixed latency
with a text reply; the run is BFCL's simple_python, multiple, parallel and
parallel_multiple categories (single-turn: one model call per sample, scored with
the official AST checker). With C samples in flight the ideal rate is C / latency
samples per second. Everything the harness adds (the episode loop, scoring,
appending records, the progress bookkeeping) shows up as the gap to the ideal.
For scale it also prints what a bare aiohttp client (no harness at all) reaches
against the same server: the part of the gap that is the machine and the server.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_server_throughput import measure, senders, start_server  # noqa: E402

from harness import RunConfig, run_suite  # noqa: E402
from harness.store.run_store import read_records  # noqa: E402

CATEGORIES = ["simple_python", "multiple", "parallel", "parallel_multiple"]
TARGET = 0.9  # of the ideal rate, for the run's episodes, scoring and records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=640, help="samples in all (<= 1000)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    per_category = -(-args.samples // len(CATEGORIES))
    server, url = start_server(args.latency)
    try:
        with tempfile.TemporaryDirectory() as folder:
            suite = Path(folder) / "throughput.yaml"
            suite.write_text(
                "name: throughput\nentries:\n  - benchmark: bfcl\n"
                f"    subsets: [{', '.join(CATEGORIES)}]\n    limit: {per_category}\n"
            )
            run_dir = Path(folder) / "run"
            start = time.perf_counter()
            cpu_start = time.process_time()
            summary = run_suite(
                RunConfig(
                    suite=str(suite),
                    workers=1,  # the harness's own CPU in this one process
                    model="openai/fake-model",
                    api_base=url,
                    concurrency=args.concurrency,
                    cache=False,
                    progress=False,
                    out=run_dir,
                )
            )
            elapsed = time.perf_counter() - start
            cpu = time.process_time() - cpu_start
            records = read_records(run_dir / "samples.jsonl").latest
            run_seconds = summary.elapsed_s
        bare = bare_client_rate(url, args.samples, args.concurrency, server.pid)
    finally:
        server.kill()
    ok = sum(1 for r in records.values() if r["status"] == "ok")
    rate = len(records) / elapsed
    ideal = args.concurrency / args.latency
    run_rate = len(records) / run_seconds
    print(
        f"ideal {ideal:.0f} samples/s ({args.concurrency} in flight, "
        f"{args.latency * 1000:.0f} ms latency); {len(records)} samples, {ok} ok\n"
        f"  episodes + scoring + records: {run_seconds:.2f} s = {run_rate:.1f}/s, "
        f"ratio {run_rate / ideal:.2f} (target >= {TARGET:.2f}: "
        f"{'met' if run_rate / ideal >= TARGET else 'not met'})\n"
        f"  whole command (imports, data loading, planning too): {elapsed:.2f} s = "
        f"{rate:.1f}/s, ratio {rate / ideal:.2f}\n"
        f"  harness CPU for the whole command: {cpu * 1000 / len(records):.2f} ms per sample "
        f"(the ideal rate leaves {1000 / ideal:.2f} ms per sample on one core)\n"
        f"  for scale, a bare aiohttp client against the same server: {bare:.1f}/s, ratio "
        f"{bare / ideal:.2f}; the run's rate is {run_rate / bare:.2f} of it"
    )


def bare_client_rate(url: str, requests: int, concurrency: int, server_pid: int) -> float:
    """Requests/s of bare aiohttp POSTs, ``concurrency`` at a time (no harness code)."""
    send, close = senders(url, concurrency)["aiohttp"]()

    async def go() -> float:
        try:
            result = await measure("aiohttp", send, requests, concurrency, server_pid, False)
        finally:
            await close()
        return result.requests / result.seconds

    return asyncio.run(go())


if __name__ == "__main__":
    main()
