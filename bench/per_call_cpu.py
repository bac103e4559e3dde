"""Harness CPU per model call on BFCL, 64 in flight, against the fake server.

    uv run python bench/per_call_cpu.py [--per-category 40] [--concurrency 64]
        [--latency 0.2] [--rounds 3] [--against OTHER_CHECKOUT] [--profile]

The fake server (a separate process) answers every request with a text reply after
a fixed latency. The run is BFCL's single-turn categories (one call per sample) and
multi-turn ones (a text reply ends a turn: one call per user turn, each carrying the
entry's whole tool list), through ``harness run``'s own code. Measured is the CPU of
the event-loop thread while the episodes run, are scored and written (planning, data
loading and the final score files apart; the tool and scoring threads apart, as
environment code), divided by the model calls of the records.

With ``--against``, the same measurement runs on another checkout of the harness
(e.g. the main branch), in rounds alternating with this one on the same machine,
and the ratio of the medians is printed (this checkout / the other): what a change
to the per-call path saves.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_server_throughput import start_server  # noqa: E402

SINGLE_TURN = ["simple_python", "multiple", "parallel", "parallel_multiple", "live_multiple"]
MULTI_TURN = ["multi_turn_base", "multi_turn_miss_param", "multi_turn_long_context"]
TARGET_MS = 0.7  # harness CPU per model call at 64 in flight


def model_calls(run_dir: Path) -> int:
    """The model calls of a run's records (its trajectories' usage, every role)."""
    from harness.store.run_store import read_records

    total = 0
    for record in read_records(run_dir / "samples.jsonl").latest.values():
        usage = (record.get("trajectory") or {}).get("usage") or {}
        total += sum(int(role.get("calls") or 0) for role in usage.values())
    return total


def measure(args: argparse.Namespace) -> dict[str, float]:
    """One run in this process: loop-thread CPU and model calls while it ran."""
    from harness import RunConfig
    from harness.evaluate.plan import plan_run
    from harness.models.redact import environment_read_once

    server, url = start_server(args.latency)
    try:
        # As run_suite runs a run: the environment's credentials read once.
        with tempfile.TemporaryDirectory() as folder, environment_read_once():
            suite = Path(folder) / "per_call.yaml"
            suite.write_text(
                "name: per-call\nentries:\n  - benchmark: bfcl\n"
                f"    subsets: [{', '.join(SINGLE_TURN + MULTI_TURN)}]\n"
                f"    limit: {args.per_category}\n"
            )
            config = RunConfig(
                suite=str(suite),
                model="openai/fake-model",
                api_base=url,
                concurrency=args.concurrency,
                cache=False,
                progress=False,
                preflight=False,
                out=Path(folder) / "run",
            )
            run = plan_run(config)
            with run.session(time.monotonic(), "") as session:
                # Timed in CPU, not wall time: waiting for replies is not cost.
                profiler = cProfile.Profile(time.thread_time) if args.profile else None
                cpu0, wall0 = time.thread_time(), time.perf_counter()
                if profiler:
                    profiler.enable()
                asyncio.run(run.run_items(session))
                if profiler:
                    profiler.disable()
                cpu, wall = time.thread_time() - cpu0, time.perf_counter() - wall0
            calls = model_calls(config.out)
    finally:
        server.kill()
    if profiler:
        if os.environ.get("PER_CALL_PROFILE_OUT"):
            profiler.dump_stats(os.environ["PER_CALL_PROFILE_OUT"])
        stats = pstats.Stats(profiler).sort_stats("tottime")
        stats.print_stats(30)
        stats.sort_stats("cumulative").print_stats("harness|adapters", 45)
    return {"calls": calls, "cpu_s": cpu, "wall_s": wall, "ms_per_call": cpu / calls * 1000}


def child(checkout: Path, args: argparse.Namespace) -> dict[str, float]:
    """One measurement in a process of its own, importing the harness from ``checkout``."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    command = [sys.executable, __file__, "--child", "--per-category", str(args.per_category)]
    command += ["--concurrency", str(args.concurrency), "--latency", str(args.latency)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the measurement on {checkout} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-category", type=int, default=40, help="samples per category")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout to compare with")
    parser.add_argument("--profile", action="store_true", help="one run, profiled")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child or args.profile:
        result = measure(args)
        print(json.dumps(result))
        return
    here = Path(__file__).resolve().parents[1]
    checkouts = [here] + ([args.against.resolve()] if args.against else [])
    runs: dict[Path, list[dict[str, float]]] = {c: [] for c in checkouts}
    for _ in range(args.rounds):
        for checkout in checkouts:
            runs[checkout].append(child(checkout, args))
    medians = {}
    for checkout, results in runs.items():
        medians[checkout] = statistics.median(r["ms_per_call"] for r in results)
        spread = ", ".join(f"{r['ms_per_call']:.3f}" for r in results)
        print(
            f"{checkout}: {medians[checkout]:.3f} ms harness CPU per model call "
            f"(rounds: {spread}; {results[0]['calls']:.0f} calls, "
            f"{statistics.median(r['wall_s'] for r in results):.1f} s each; "
            f"target <= {TARGET_MS} ms: {'met' if medians[checkout] <= TARGET_MS else 'not met'})"
        )
    if args.against:
        ratio = medians[here] / medians[args.against.resolve()]
        print(f"ratio {here.name} / {args.against.name}: {ratio:.2f}")


if __name__ == "__main__":
    main()
