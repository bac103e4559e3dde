"""Tool calls are bounded: run off the event loop within a time budget, and the
expensive simulator calls refused by their arguments before they run."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time

import pytest

from harness.boundary.tool_budget import ToolBudgetExceeded, run_tool_call


def spin(seconds: float) -> str:
    """Pure Python busy work (it lets the interpreter switch threads)."""
    end = time.monotonic() + seconds
    count = 0
    while time.monotonic() < end:
        count += 1
    return "spun"


async def ticking(during) -> tuple[object, int]:
    """Run ``during`` while a ticker counts how often the loop gets to run it."""
    ticks = 0
    stop = False

    async def ticker():
        nonlocal ticks
        while not stop:
            ticks += 1
            await asyncio.sleep(0.01)

    task = asyncio.create_task(ticker())
    try:
        result = await during
    except Exception as exc:  # returned for the assertions
        result = exc
    stop = True
    await task
    return result, ticks


def test_a_call_over_budget_is_an_error_and_the_loop_keeps_running():
    start = time.monotonic()
    result, ticks = asyncio.run(ticking(run_tool_call(spin, 3.0, timeout_s=0.3)))
    assert isinstance(result, ToolBudgetExceeded)
    assert time.monotonic() - start < 1.5
    assert ticks >= 5  # the loop was not held while the tool spun


def test_calls_queued_behind_a_stuck_call_still_run_and_time_only_counts_running():
    release = threading.Event()

    async def go():
        # The stuck call blocks (without using the CPU) until released; the calls
        # queued behind it wait longer than their own budget, which must not count.
        stuck = asyncio.create_task(run_tool_call(release.wait, 30, timeout_s=0.5))
        await asyncio.sleep(0.05)
        queued = [asyncio.create_task(run_tool_call(str, i, timeout_s=0.3)) for i in range(3)]
        return await asyncio.gather(stuck, *queued, return_exceptions=True)

    try:
        stuck, *queued = asyncio.run(go())
    finally:
        release.set()
    assert isinstance(stuck, ToolBudgetExceeded)
    assert queued == ["0", "1", "2"]


def test_cancelling_the_caller_returns_at_once():
    async def go():
        task = asyncio.create_task(run_tool_call(spin, 1.0, timeout_s=30))
        await asyncio.sleep(0.05)
        start = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - start

    assert asyncio.run(go()) < 0.2


def test_a_call_that_never_returns_does_not_keep_the_process_from_exiting():
    # The abandoned call blocks forever; the process still exits once its work is
    # done (a ThreadPoolExecutor's worker would be joined at exit, for ever).
    code = (
        "import asyncio, threading\n"
        "from harness.boundary.tool_budget import ToolBudgetExceeded, run_tool_call\n"
        "async def go():\n"
        "    try:\n"
        "        await run_tool_call(threading.Event().wait, timeout_s=0.2)\n"
        "    except ToolBudgetExceeded:\n"
        "        print('over budget', flush=True)\n"
        "    print(await run_tool_call(str, 7), flush=True)  # the next call, on a fresh worker\n"
        "asyncio.run(go())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["over", "budget", "7"]


# --- BFCL's math simulator ------------------------------------------------------------


@pytest.fixture(scope="module")
def math_api():
    from harness.adapters.bfcl.simulators import SimulatorSet

    return SimulatorSet(["MathAPI"], {})


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("power", {"base": 2, "exponent": 10**8}),
        ("power", {"base": -7, "exponent": 10**6}),
        ("square_root", {"number": 2, "precision": 10**9}),
        ("logarithm", {"value": 5, "base": 2, "precision": 10**9}),
        ("round_number", {"number": 5, "decimal_places": -(10**9)}),
    ],
)
def test_expensive_math_calls_are_refused_before_they_run(math_api, name, kwargs):
    from harness.adapters.bfcl.executor import execute_string
    from harness.adapters.bfcl.simulators import Call

    start = time.monotonic()
    text, failed = math_api.execute(Call(name, kwargs))
    assert failed and text.startswith("Error during execution:")
    # The execution strings the episode and the scorer run take the same guard.
    rendered = ", ".join(f"{key}={value!r}" for key, value in kwargs.items())
    text, failed = execute_string(f"{name}({rendered})", math_api)
    assert failed and ("not supported" in text or "more than" in text), text
    assert time.monotonic() - start < 0.5


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("power", {"base": 2, "exponent": 10}),
        ("power", {"base": 2.5, "exponent": 10**8}),  # float overflow: the official error
        ("power", {"base": 1, "exponent": 10**8}),
        ("power", {"base": 10, "exponent": 4000}),
        ("square_root", {"number": 2, "precision": 50}),
        ("logarithm", {"value": 100, "base": 10, "precision": 20}),
        ("round_number", {"number": 3.14159, "decimal_places": 2}),
        ("round_number", {"number": 123456, "decimal_places": -3}),
    ],
)
def test_legitimate_math_calls_give_the_official_results(math_api, name, kwargs):
    from harness.adapters.bfcl.simulators import Call, format_result, simulator_class

    official = simulator_class("MathAPI")()
    try:
        expected = format_result(getattr(official, name)(**kwargs)), False
    except Exception as exc:
        expected = f"Error during execution: {exc}", True
    assert math_api.execute(Call(name, kwargs)) == expected


# --- tau2's calculate -----------------------------------------------------------------


@pytest.mark.parametrize(
    "expression",
    [
        "*".join(["999999**100"] * 40),
        "*".join(["999999**100"] * 40_000),  # about 1 MB
        "9**9**9**9",
        "(" * 5000 + "2" + ")" * 5000,
        "*".join(["987654321987654321"] * 2000),
    ],
)
def test_expensive_calculate_expressions_are_refused(expression):
    from harness.adapters.tau2.environment import unsafe_call_reason

    start = time.monotonic()
    assert unsafe_call_reason("calculate", {"expression": expression}) is not None
    assert time.monotonic() - start < 0.5


@pytest.mark.parametrize(
    "expression", ["(150.5 + 20) * 0.9", "2**10", "999999**100 * 3", "12 * 34 * 56 / 7", "1 - -2"]
)
def test_ordinary_calculate_expressions_pass(expression):
    from harness.adapters.tau2.environment import unsafe_call_reason

    assert unsafe_call_reason("calculate", {"expression": expression}) is None
