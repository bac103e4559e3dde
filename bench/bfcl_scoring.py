"""BFCL scoring, ours against the official evaluator's, on the same stored records.

    python bench/bfcl_scoring.py [--suite bfcl-v4-offline] [--limit N] [--keep DIR]

1. Runs the ``oracle`` model over the suite (``harness.run_suite``, what
   ``harness run --model oracle`` runs: episodes scored live, records written
   to a run folder).
2. Our scoring alone: regrades the records as stored (``harness score``'s
   regrade, data reloaded cold) and aggregates them.
3. The official scoring alone: exports the same stored records to BFCL's result
   files (as ``harness export-bfcl`` does) and runs the official evaluator
   (``bfcl_eval`` eval_runner, scoring only) on them in a subprocess, as
   scripts/bfcl_official_parity.py does.
4. Prints both scoring wall times with their ratio (target: harness / official
   <= 1.0), and per category the live, regraded and official accuracies.

Exits 1 when any verdict differs: a regraded verdict that is not the live one,
an entry the official evaluator fails and the regrade passes or the other way
round, an entry count or a headline number that differs. The official side's
time includes its interpreter's start-up and imports; ours includes reloading
the benchmark data.

The official side runs with the harness's stand-in for the package's model
registry (see harness.adapters.bfcl.official); it needs ``openai`` importable.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import io
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from bfcl_official_parity import percent, run_official  # noqa: E402

from harness import RunConfig, run_suite  # noqa: E402
from harness.adapters.bfcl import data as bfcl_data  # noqa: E402
from harness.adapters.bfcl import tools as bfcl_tools  # noqa: E402
from harness.cli import main as harness_main  # noqa: E402
from harness.run.scoring import aggregate_records, regrade  # noqa: E402
from harness.store.records import Record  # noqa: E402
from harness.store.run_store import RunStore  # noqa: E402
from harness.task.contract import Services  # noqa: E402

HEADLINES = ("overall", "non_live", "live", "hallucination", "multi_turn", "agentic")


def _cold() -> None:
    """Every scoring starts cold, like the official evaluator's fresh process."""
    bfcl_data._load_category.cache_clear()
    bfcl_tools._converted.cache_clear()


def run_oracle(
    suite_name: str, limit: int | None, run_dir: Path
) -> tuple[list[dict], list[dict], dict, float]:
    """(the stored records, the categories not run, the scores the run printed,
    seconds): the live run, as ``harness run --model oracle`` makes it."""
    _cold()
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        summary = run_suite(
            RunConfig(
                suite=suite_name,
                model="oracle",
                limit=limit,
                out=run_dir,
                concurrency=16,
                cache=False,
                progress=False,
            )
        )
    elapsed = time.perf_counter() - started
    if summary.infra_errors or summary.score_errors:
        print(f"warning: {summary.infra_errors} infra errors, {summary.score_errors} score errors")
    not_run = [
        {"benchmark": n.benchmark, "subset": n.subset, "reason": n.reason} for n in summary.not_run
    ]
    records = list(RunStore(run_dir).records().values())
    return records, not_run, summary.scores["benchmarks"], elapsed


def regrade_stored(records: list[dict]) -> tuple[list[dict], float]:
    """(the records regraded from what was stored, seconds): our scoring alone."""
    copies = [Record.from_dict(record) for record in copy.deepcopy(records)]
    _cold()
    started = time.perf_counter()
    stats = asyncio.run(regrade(copies, Services()))
    elapsed = time.perf_counter() - started
    if stats.failed:
        print(f"warning: {stats.failed} records could not be regraded")
    return [record.to_dict() for record in copies], elapsed


def failed_ids(records: list[dict]) -> dict[str, set[str]]:
    failed: dict[str, set[str]] = {}
    for record in records:
        failed.setdefault(record["subset"], set())
        if not (record.get("score") or {}).get("passed"):
            failed[record["subset"]].add(str(record["sample_id"]))
    return failed


def accuracy(scores: dict, category: str) -> float | None:
    return scores["bfcl"]["subsets"].get(category, {}).get("metrics", {}).get("accuracy")


def as_percent(value: object) -> float:
    """An official percentage ("97.63%") or one of our fractions, as a percentage."""
    if isinstance(value, str):
        return float(value.strip().rstrip("%"))
    return 100 * float(str(value))


def same_number(official: object, ours: object) -> bool:
    """The same number at the official table's two decimals (both missing: same)."""
    if official in (None, "") or ours is None:
        return official in (None, "") and ours is None
    return abs(as_percent(official) - as_percent(ours)) < 0.005 + 1e-9


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="bfcl-v4-offline")
    parser.add_argument("--limit", type=int, help="first N entries per category")
    parser.add_argument("--keep", type=Path, help="keep the run, export and scores here")
    parser.add_argument("--repeat", type=int, default=1, help="best of N timings per side")
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="bfcl-bench-"))
    run_dir = work / "run"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    records, not_run, live, run_s = run_oracle(args.suite, args.limit, run_dir)

    ours_s = float("inf")
    for _ in range(args.repeat):
        regraded, seconds = regrade_stored(records)
        ours_s = min(ours_s, seconds)
    ours = aggregate_records([Record.from_dict(r) for r in regraded], not_run)
    (work / "scores.json").write_text(
        json.dumps({"live": live, "regraded": ours}, indent=2, default=str)
    )

    # The export of the stored records, as `harness export-bfcl` writes it.
    export_dir = work / "export"
    if export_dir.exists():
        shutil.rmtree(export_dir)
    with contextlib.redirect_stderr(io.StringIO()):
        code = harness_main(["export-bfcl", str(run_dir), str(export_dir)])
    if code != 0:
        raise SystemExit(f"harness export-bfcl failed (exit {code})")
    model = next((export_dir / "result").iterdir()).name
    categories = sorted({record["subset"] for record in records})
    official_s = float("inf")
    for _ in range(args.repeat):
        started = time.perf_counter()
        official, headline = run_official(export_dir, model, categories, python=None)
        official_s = min(official_s, time.perf_counter() - started)

    live_failed, our_failed = failed_ids(records), failed_ids(regraded)
    counts = {c: sum(1 for r in records if r["subset"] == c) for c in categories}
    problems: list[str] = []
    print(f"entries: {len(records)}   categories: {len(categories)}")
    print(f"harness oracle run (episodes, scored live) : {run_s:8.2f} s")
    print(f"harness scoring (regrade of stored records): {ours_s:8.2f} s")
    print(f"official scoring (evaluator on the export) : {official_s:8.2f} s")
    print(f"ratio harness / official scoring           : {ours_s / official_s:8.2f}")
    print()
    print(
        f"{'category':26} {'entries':>7} {'live %':>7} {'regrade %':>9} {'official %':>10}"
        "  live=regrade  regrade=official"
    )
    for category in categories:
        theirs = official.get(category, {})
        their_failed = set(theirs.get("failed_ids", []))
        mine = accuracy(ours, category)
        flips = live_failed[category] ^ our_failed[category]
        differ = our_failed[category] ^ their_failed
        if flips:
            problems.append(f"{category}: regrade differs from live on {sorted(flips)}")
        if differ:
            problems.append(f"{category}: official differs from regrade on {sorted(differ)}")
        if theirs.get("total_count") != counts[category]:
            problems.append(
                f"{category}: official scored {theirs.get('total_count')} of {counts[category]}"
            )
        if not same_number(theirs.get("accuracy"), mine):
            problems.append(f"{category}: official {theirs.get('accuracy')} vs regrade {mine}")
        print(
            f"{category:26} {counts[category]:>7} {percent(accuracy(live, category)):>7}"
            f" {percent(mine):>9} {percent(theirs.get('accuracy')):>10}"
            f"  {'yes' if not flips else f'NO ({len(flips)})':>11}"
            f"  {'yes' if not differ else f'NO ({len(differ)})':>15}"
        )
    print()
    print(f"{'headline':26} {'live %':>15} {'regrade %':>9} {'official %':>10}")
    for name in HEADLINES:
        mine = ours["bfcl"]["headline"].get(name)
        if not same_number(live["bfcl"]["headline"].get(name), mine):
            problems.append(f"headline {name}: regrade {mine} vs live")
        if name in headline and not same_number(headline[name], mine):
            problems.append(f"headline {name}: official {headline[name]} vs regrade {mine}")
        print(
            f"{name:26} {percent(live['bfcl']['headline'].get(name)):>15} {percent(mine):>9}"
            f" {percent(headline.get(name)):>10}"
        )
    if args.keep:
        print(f"\nfiles in {work}")
    if problems:
        print(f"\nFAIL: {len(problems)} differences")
        for problem in problems:
            print(f"  {problem}")
        return 1
    print("\nOK: every live, regraded and official verdict and number agrees")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
