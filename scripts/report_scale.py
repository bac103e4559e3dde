"""Report size and open time on realistic records, at any number of samples.

    python scripts/report_scale.py RUN_DIR [--samples 10000] [--out DIR] [--chromium PATH]

Writes the report of RUN_DIR itself and, with --samples N, of its records replicated
to N samples (distinct ids, every message text made distinct per copy so that no
copy is a duplicate of another), then prints bytes per sample, build seconds and the
seconds until the page in headless Chromium has shown its list and first sample.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.report.html import ReportOptions, build_report

# The replication helper is the scale test's own (tests/fake_runs.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fake_runs import replicate_run  # noqa: E402


def open_seconds(report: Path, chromium: str, profile: Path) -> tuple[float, float]:
    """(the page's own time to show its list and first sample, Chromium's wall time)."""
    start = time.monotonic()
    done = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={profile}", "--virtual-time-budget=20000", "--dump-dom",
         report.as_uri()],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    wall = time.monotonic() - start
    ready = re.search(r'data-ready="(\d+)"', done.stdout)
    return (int(ready.group(1)) / 1000 if ready else float("nan")), wall


def measure(run_dir: Path, report: Path, chromium: str | None, profile: Path) -> dict[str, Any]:
    start = time.monotonic()
    summary = build_report([run_dir], report, ReportOptions(plots=False))
    result = {
        "samples": summary.samples,
        "bytes": summary.size_bytes,
        "bytes_per_sample": round(summary.size_bytes / max(1, summary.samples)),
        "records_bytes_per_sample": round(
            (run_dir / "samples.jsonl").stat().st_size / max(1, summary.samples)
        ),
        "build_s": round(time.monotonic() - start, 1),
    }
    if chromium:
        ready, wall = open_seconds(report, chromium, profile)
        result.update(open_s=round(ready, 2), chromium_wall_s=round(wall, 1))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--samples", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--chromium", default=shutil.which("chromium"))
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="report-scale-"))
    out.mkdir(parents=True, exist_ok=True)
    print(
        json.dumps(
            {
                "run": str(args.run_dir),
                **measure(args.run_dir, out / "report.html", args.chromium, out / "profile"),
            }
        )
    )
    if args.samples:
        big = replicate_run(args.run_dir, out / "replicated", args.samples)
        print(
            json.dumps(
                {
                    "run": f"{args.samples} replicated",
                    **measure(big, out / "replicated.html", args.chromium, out / "profile"),
                }
            )
        )


if __name__ == "__main__":
    main()
