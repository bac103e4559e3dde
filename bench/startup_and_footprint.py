"""Start-up time of the command line and size of the environment, against their targets.

    uv run python bench/startup_and_footprint.py

Prints the median wall time of ``harness --help`` (target < 1 s: lazy imports)
and the size of the virtual environment (target < 1 GB, no torch).
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

HELP_TARGET_S = 1.0
FOOTPRINT_TARGET_BYTES = 1_000_000_000


def help_seconds(repeats: int = 5) -> float:
    command = [sys.executable, "-m", "harness.cli", "--help"]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def folder_bytes(folder: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            if not path.is_symlink():
                total += path.stat().st_size
    return total


def main() -> None:
    seconds = help_seconds()
    environment = Path(sys.prefix)
    size = folder_bytes(environment)
    site = Path(sysconfig.get_paths()["purelib"])
    print(
        f"harness --help: {seconds:.3f} s (target < {HELP_TARGET_S} s, ratio {seconds / HELP_TARGET_S:.2f})"
    )
    print(
        f"environment {environment}: {size / 1e6:.0f} MB "
        f"(target < {FOOTPRINT_TARGET_BYTES / 1e6:.0f} MB, ratio {size / FOOTPRINT_TARGET_BYTES:.2f}); "
        f"site-packages {folder_bytes(site) / 1e6:.0f} MB"
    )
    print(f"torch installed: {importlib.util.find_spec('torch') is not None}")


if __name__ == "__main__":
    main()
