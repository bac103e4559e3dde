"""`make demo` shows the harness's own lines only, none wider than 100 columns, and no
library's warning.

The demo is the smoke suite with the built-in oracle (BFCL and tau2); it and a
regrade of it run here as the Makefile runs them, each a process of its own from
the repository root. tau2 logs ``No .env file found`` through loguru when its
utils module is imported (adapters/tau2/package.py silences its logger before any
of its modules is imported); litellm, pydantic and Python's warnings module must
stay quiet too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

# A logging or warnings-module line of any library: loguru's "| WARNING |",
# logging's "WARNING:name:", "UserWarning: ...", "DeprecationWarning" ...
WARNING = re.compile(r"WARNING|Warning")


def _third_party_warnings(text: str) -> list[str]:
    # "harness: ..." lines are the harness's own messages.
    return [
        line
        for line in text.splitlines()
        if WARNING.search(line) and not line.startswith("harness:")
    ]


def test_the_demo_and_its_regrade_print_no_third_party_warning(tmp_path):
    # As `make demo` runs it: the run folder named relative to where the command runs.
    out = "results/smoke-oracle"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONWARNINGS"}
    for args in (["run", "--suite", "smoke", "--model", "oracle", "--out", out],
                 ["score", out]):  # fmt: skip
        process = subprocess.run(
            [sys.executable, "-m", "harness.cli", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        text = process.stdout + process.stderr
        assert process.returncode == 0, text[-3000:]
        assert _third_party_warnings(text) == [], args
        # A terminal of 100 columns shows every line whole (the compact table).
        assert max(map(len, text.splitlines())) <= 100, text
    assert "τ²-Bench" in text  # the leaderboard, with the tau2 column the warning came with


def test_a_library_warning_line_would_be_found():
    assert _third_party_warnings(
        "2026-12-02 12:54:04.234 | WARNING  | tau2.utils.utils:<module>:52 - No .env file found\n"
        "/x/y.py:3: DeprecationWarning: old\n"
        "harness: WARNING: both runs evaluated the same weights\n"
        "| model | BFCL-v4 |\n"
    ) == [
        "2026-12-02 12:54:04.234 | WARNING  | tau2.utils.utils:<module>:52 - No .env file found",
        "/x/y.py:3: DeprecationWarning: old",
    ]
