"""A clone without ../shared: what needs it is skipped, with one summary line saying
what was missing; under CI (CI=true) the same tests fail instead."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support import REPO, SHARED_SKIP

pytestmark = pytest.mark.slow  # a pytest session of its own

# A test reading the data through the fixture, the placeholder case of a
# parametrisation read at collection, and one needing the tau2-bench checkout.
TESTS = [
    "tests/adapters/vitabench/test_vitabench_tools_orders.py::test_reachable_counts",
    "tests/adapters/vitabench/test_vitabench_tools_orders.py::test_reachable_plans_place_the_required_orders",
    "tests/adapters/tau2/test_tau3_checkout.py::test_the_vendored_checkout_is_v1_0_1_file_by_file",
]
VARIABLES = (
    "HARNESS_SHARED",
    "HARNESS_SHARED_DATA",
    "HARNESS_TAU2_CHECKOUT",
    "HARNESS_VITA_SOURCE",
)


def session(empty, ci: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env.update(dict.fromkeys(VARIABLES, str(empty)))
    if ci:
        env["CI"] = "true"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", *TESTS]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def test_without_shared_the_tests_are_skipped_and_summed_up_in_one_line(tmp_path):
    done = session(tmp_path, ci=False)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("3 skipped"), done.stdout
    assert sum(SHARED_SKIP in line for line in lines if line.startswith("SKIPPED")) == 3
    summary = [line for line in lines if line.startswith("3 tests skipped: ../shared not found")]
    assert len(summary) == 1, done.stdout
    assert "VitaBench and FinMCP data, tau2-bench v1.0.1 checkout" in summary[0]
    assert "HARNESS_SHARED_DATA" in summary[0] and "HARNESS_TAU2_CHECKOUT" in summary[0]


def test_without_shared_in_ci_the_same_tests_fail(tmp_path):
    done = session(tmp_path, ci=True)
    assert done.returncode != 0
    assert "skipped" not in done.stdout.splitlines()[-1], done.stdout
    assert done.stdout.count(f"{SHARED_SKIP} VitaBench and FinMCP data not found") >= 2
    assert f"{SHARED_SKIP} tau2-bench v1.0.1 checkout not found" in done.stdout
    assert "tests skipped: ../shared not found" not in done.stdout
