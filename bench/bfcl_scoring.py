"""BFCL scoring cost: the harness's oracle run + scoring vs the official evaluator.

    python bench/bfcl_scoring.py [--suite bfcl-v4-offline] [--limit N] [--keep DIR]

1. Runs the ``oracle`` model over the suite with the harness runner (episodes and
   scoring, records written to a run folder) and aggregates the scores.
2. Exports the records to BFCL's result files and runs the official evaluator
   (``bfcl_eval`` eval_runner, scoring only) on them in a subprocess, as
   scripts/bfcl_official_parity.py does.
3. Prints both wall times with their ratio (target: harness / official <= 1.0),
   and the per-category accuracies side by side.

The official side runs with the harness's stand-in for the package's model
registry (see harness.adapters.bfcl.official); it needs ``openai`` importable.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from bfcl_official_parity import percent, run_official  # noqa: E402

from harness.adapters.bfcl import BFCLAdapter, export_bfcl  # noqa: E402
from harness.adapters.bfcl import data as bfcl_data  # noqa: E402
from harness.adapters.bfcl import tools as bfcl_tools  # noqa: E402
from harness.runner import Runner, plan_suite  # noqa: E402
from harness.scoring import aggregate_records  # noqa: E402
from harness.store import RunStore  # noqa: E402
from harness.strategies.base import PlainStrategy  # noqa: E402
from harness.suites import load_suite  # noqa: E402
from harness.task import Services  # noqa: E402
from harness.types import SamplingParams  # noqa: E402


def run_oracle(suite_name: str, limit: int | None, run_dir: Path) -> tuple[list[dict], dict, float]:
    # Every repeat starts cold, like the official evaluator's fresh process.
    bfcl_data._load_category.cache_clear()
    bfcl_tools._converted.cache_clear()
    adapter = BFCLAdapter()
    started = time.perf_counter()
    plan = plan_suite(load_suite(suite_name), limit=limit)
    store = RunStore(run_dir)
    store.open_for_append()
    try:
        runner = Runner(
            store,
            PlainStrategy(),
            adapter.oracle,
            Services(),
            SamplingParams(),
            concurrency=16,
            load_options=plan.load_options,
        )
        summary = asyncio.run(runner.run(plan.samples, trials=1))
    finally:
        store.close()
    records = list(store.records().values())
    not_run = [
        {"benchmark": n.benchmark, "subset": n.subset, "reason": n.reason} for n in plan.not_run
    ]
    scores = aggregate_records(records, not_run)
    elapsed = time.perf_counter() - started
    if summary.infra_errors or summary.score_errors:
        print(f"warning: {summary.infra_errors} infra errors, {summary.score_errors} score errors")
    return records, scores, elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="bfcl-v4-offline")
    parser.add_argument("--limit", type=int, help="first N entries per category")
    parser.add_argument("--keep", type=Path, help="keep the run, export and scores here")
    parser.add_argument("--repeat", type=int, default=1, help="best of N timings per side")
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="bfcl-bench-"))
    run_dir = work / "run"
    ours_s = float("inf")
    for _ in range(args.repeat):
        if run_dir.exists():
            shutil.rmtree(run_dir)
        records, scores, seconds = run_oracle(args.suite, args.limit, run_dir)
        ours_s = min(ours_s, seconds)
    (work / "scores.json").write_text(json.dumps({"benchmarks": scores}, indent=2, default=str))

    export_dir = work / "export"
    if export_dir.exists():
        shutil.rmtree(export_dir)
    export_bfcl(records, export_dir)
    model = next((export_dir / "result").iterdir()).name
    categories = sorted({record["subset"] for record in records})
    official_s = float("inf")
    for _ in range(args.repeat):
        started = time.perf_counter()
        official, headline = run_official(export_dir, model, categories, python=None)
        official_s = min(official_s, time.perf_counter() - started)
    our_failed: dict[str, set[str]] = {}
    for record in records:
        if not (record.get("score") or {}).get("passed"):
            our_failed.setdefault(record["subset"], set()).add(record["sample_id"])

    ours = scores["bfcl"]
    print(f"entries: {len(records)}   categories: {len(categories)}")
    print(f"harness oracle run + scoring : {ours_s:8.2f} s")
    print(f"official evaluator (scoring) : {official_s:8.2f} s")
    print(f"ratio harness / official     : {ours_s / official_s:8.2f}")
    print()
    print(f"{'category':28} {'entries':>7} {'official %':>11} {'harness %':>10}  same failed ids")
    for category in categories:
        theirs = official.get(category, {})
        mine = ours["subsets"].get(category, {}).get("metrics", {}).get("accuracy")
        same = set(theirs.get("failed_ids", [])) == our_failed.get(category, set())
        print(
            f"{category:28} {theirs.get('total_count', '-'):>7} {percent(theirs.get('accuracy')):>11}"
            f" {percent(mine):>10}  {'yes' if same else 'NO'}"
        )
    print()
    for name in ("overall", "non_live", "live", "hallucination", "multi_turn", "agentic"):
        print(
            f"{name:28} {percent(headline.get(name)):>19} {percent(ours['headline'].get(name)):>10}"
        )
    print(f"\nfiles in {work}" if args.keep else "")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
