"""Every bench script loads: `make bench` runs them all in a row, and one that no
longer imports (a name moved in the harness) stops the whole bench."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"

# Each script's module body run in one interpreter, under a name other than
# __main__: its imports and definitions load, its measurement does not start.
LOADS = """
import runpy, sys
failed = []
for path in sys.argv[1:]:
    try:
        runpy.run_path(path, run_name="bench_script")
    except BaseException as exc:
        failed.append(f"{path}: {type(exc).__name__}: {exc}")
print("\\n".join(failed))
"""


def test_every_bench_script_loads():
    scripts = sorted(str(path) for path in BENCH.glob("*.py"))
    assert len(scripts) >= 10
    done = subprocess.run(
        [sys.executable, "-c", LOADS, *scripts],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=BENCH.parent,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "", done.stdout
