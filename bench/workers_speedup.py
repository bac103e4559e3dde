"""Worker processes against one process on a CPU-bound τ² slice (``--workers N``).

    uv run python bench/workers_speedup.py [--subsets airline,retail,telecom]
        [--limit N] [--trials 16] [--workers 2] [--concurrency 16] [--repeat 1]

The slice is τ²-Bench's original task set (every task of the three domains by
default, 278; ``--limit N`` per domain) played by the built-in oracle with the
scripted user: no model server and no network, so its time is
the harness's and the τ² environments' CPU (copying and hashing the domain
database), the work one process does on one core. Each measurement is a whole
``harness run`` command (planning, the workers' start, scoring) into a fresh
run folder, without a response cache; with ``--repeat R`` the two are run in
turn R times and the best time of each is kept. It prints both wall times, the
CPU seconds they used, the speed-up (one process's wall time over the
workers'), and checks that both runs wrote the same records. The target is
1.7x for two workers on a 2-core machine with the cores to itself (the load
average is printed first: other work on the machine lowers the ratio).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.store.run_store import read_records  # noqa: E402

TARGET = 1.7  # two workers on two cores, over one process


def comparable(records: dict[str, dict]) -> dict[str, tuple]:
    """What two runs of the same work must agree on, per record: its status, its
    score and its conversation (not its times, nor τ²'s per-run state token)."""
    return {
        key: (r["status"], r.get("score"), (r.get("trajectory") or {}).get("messages"))
        for key, r in records.items()
    }


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_run(suite: Path, out: Path, workers: int, concurrency: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ``harness run`` with ``workers`` processes."""
    command = [
        sys.executable,
        "-m",
        "harness.cli",
        "run",
        "--suite",
        str(suite),
        "--model",
        "oracle",
        "--user-model",
        "scripted",
        "--concurrency",
        str(concurrency),
        "--workers",
        str(workers),
        "--no-cache",
        "--quiet",
        "--out",
        str(out),
    ]
    cpu, start = children_cpu_s(), time.monotonic()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"harness run --workers {workers} failed:\n{done.stderr}")
    return wall, children_cpu_s() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subsets", default="airline,retail,telecom", help="τ² domains")
    parser.add_argument("--limit", type=int, help="tasks per domain (default: all)")
    # 4,448 pairs, ~25 s in one process. Airline's 50 tasks x 4 trials take ~2 s
    # now, less than a worker's start, which then decides the ratio; many trials
    # of few tasks make the end of the run (pass^k for every k) the larger part.
    parser.add_argument("--trials", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=16, help="in flight, over all workers")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, the best kept")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    cores = len(os.sched_getaffinity(0))
    print(f"{cores} cores, load average {load:.2f} (1 min) before the runs")
    with tempfile.TemporaryDirectory() as folder:
        suite = Path(folder) / "tau2-slice.yaml"
        limit = "" if args.limit is None else f"    limit: {args.limit}\n"
        suite.write_text(
            f"name: tau2-slice\ntrials: {args.trials}\nuser_model: scripted\n"
            f"entries:\n  - benchmark: tau2\n    subsets: [{args.subsets}]\n{limit}"
        )
        best: dict[int, tuple[float, float]] = {}
        for round_ in range(args.repeat):
            for workers in (1, args.workers):
                out = Path(folder) / f"w{workers}-r{round_}"
                wall, cpu = timed_run(suite, out, workers, args.concurrency)
                print(f"  --workers {workers}: {wall:.1f} s wall, {cpu:.1f} CPU-s")
                if workers not in best or wall < best[workers][0]:
                    best[workers] = (wall, cpu)
        one = read_records(Path(folder) / "w1-r0" / "samples.jsonl").latest
        many = read_records(Path(folder) / f"w{args.workers}-r0" / "samples.jsonl").latest
        same = comparable(one) == comparable(many)
    ratio = best[1][0] / best[args.workers][0]
    pairs = len(one)
    print(
        f"τ² {args.subsets}, {pairs} (sample, trial) pairs, oracle + scripted user, "
        f"concurrency {args.concurrency}"
    )
    print(f"one process:  {best[1][0]:.1f} s wall, {best[1][1]:.1f} CPU-s")
    print(
        f"{args.workers} workers:    {best[args.workers][0]:.1f} s wall, "
        f"{best[args.workers][1]:.1f} CPU-s"
    )
    print(f"records equal: {'yes' if same else 'NO'}")
    print(f"speed-up: {ratio:.2f}x (target {TARGET}x for 2 workers on 2 free cores)")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
