"""Phases of a strategy run and the monitor of its real environments.

A strategy run is in a *phase* (a context variable, so concurrent samples never
see each other's phase): ``committed`` for the real episode the benchmark scores,
``rehearsal`` while a strategy imagines attempts. ``RealEnvironmentMonitor``
builds and wraps a sample's real environments: it counts their calls per phase
for the cost record, and refuses and records any build or call made during a
rehearsal (harness/strategies/sandbox.py keeps rehearsals in a simulated world).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from contextvars import ContextVar

from harness.task.contract import Environment, WrappedEnvironment
from harness.types import ToolCall, ToolResult

REHEARSAL = "rehearsal"
COMMITTED = "committed"
PHASES = (REHEARSAL, COMMITTED)

_phase: ContextVar[str] = ContextVar("harness_strategy_phase", default=COMMITTED)


def current_phase() -> str:
    return _phase.get()


def rehearsal_active() -> bool:
    return _phase.get() == REHEARSAL


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """Run the body (and every task it starts) in the given phase."""
    if name not in PHASES:
        raise ValueError(f"unknown phase {name!r}")
    token = _phase.set(name)
    try:
        yield
    finally:
        _phase.reset(token)


class SandboxViolation(RuntimeError):
    """The real environment was reached during a rehearsal."""


class RealEnvironmentMonitor:
    """Builds and wraps the real environments of one sample run."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.violations: list[str] = []

    def build(self, make_environment: Callable[[], Environment]) -> Environment:
        if rehearsal_active():
            self.violations.append("make_environment")
            raise SandboxViolation("the real environment may not be built during rehearsal")
        return make_environment()

    def wrap(self, environment: Environment) -> Environment:
        return MonitoredEnvironment(environment, self)

    def check(self, what: str) -> None:
        self.calls[current_phase()] += 1
        if rehearsal_active():
            self.violations.append(what)
            raise SandboxViolation(f"real environment reached during rehearsal: {what}")


class MonitoredEnvironment(WrappedEnvironment):
    """A real environment whose calls are counted per phase and refused in rehearsal."""

    def __init__(self, inner: Environment, monitor: RealEnvironmentMonitor):
        super().__init__(inner)
        self.monitor = monitor

    async def execute(self, call: ToolCall) -> ToolResult:
        self.monitor.check(f"execute {call.name}")
        return await self.inner.execute(call)

    def execute_user_call(self, call: ToolCall) -> ToolResult:
        self.monitor.check(f"user call {call.name}")
        return self.inner.execute_user_call(call)
