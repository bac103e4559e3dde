"""Cost accounting of one sample run, by phase (rehearsal, committed) and role.

Every model call a strategy makes goes through a ``MeteredClient`` that books it
under its role (actor, rehearser, critic) and the current phase. The user
simulator belongs to the adapter; its usage arrives with the user turns and is
booked from each episode's trajectory. Judges run at scoring time, after the
strategy, so the strategy books none (the role is listed so every record has the
same shape). Real environment calls come from ``RealEnvironmentMonitor``.

The stored record (``trajectory.extra["costs"]``)::

    {"rehearsal": {"actor": {calls, prompt_tokens, completion_tokens, cached_calls},
                   "rehearser": {...}, "critic": {...}, "user": {...}, "judge": {...},
                   "env_calls": 0, "wall_time_s": 1.2},
     "committed": {...}, "total": {...}}

``total`` is the sum of the two phases, field by field.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from harness.boundary.json_value import JsonObject
from harness.models.base import ModelClient, WrappedClient
from harness.strategies.monitor import COMMITTED, PHASES, REHEARSAL, current_phase
from harness.types import AssistantTurn, Usage

ROLES = ("actor", "rehearser", "critic", "user", "judge")


def call_usage(turn: AssistantTurn) -> Usage:
    """The usage of one model call; a reply always counts as at least one call
    (some clients leave ``calls`` at 0)."""
    usage = Usage()
    usage.add(turn.usage)
    usage.calls = max(usage.calls, 1)
    return usage


class CostLedger:
    """Usage by (phase, role), wall time and real environment calls by phase."""

    def __init__(self) -> None:
        self.usage: dict[str, dict[str, Usage]] = {p: {r: Usage() for r in ROLES} for p in PHASES}
        self.wall_time_s: dict[str, float] = {p: 0.0 for p in PHASES}
        self.env_calls: dict[str, int] = {p: 0 for p in PHASES}

    def add(self, phase: str, role: str, usage: Usage | None) -> None:
        if usage is None:
            return
        self.usage[phase].setdefault(role, Usage()).add(usage)

    def add_trajectory_roles(
        self, phase: str, usage_by_role: dict[str, Usage], roles: tuple
    ) -> None:
        """Book the roles an episode recorded itself (the user simulator's usage)."""
        for role in roles:
            self.add(phase, role, usage_by_role.get(role))

    def merge(self, other: CostLedger) -> None:
        for phase_name in PHASES:
            for role, usage in other.usage[phase_name].items():
                self.add(phase_name, role, usage)
            self.env_calls[phase_name] += other.env_calls[phase_name]

    @contextmanager
    def timed(self, phase_name: str) -> Iterator[None]:
        start = time.monotonic()
        try:
            yield
        finally:
            self.wall_time_s[phase_name] += time.monotonic() - start

    def role_usage(self, phase_name: str) -> dict[str, dict[str, int]]:
        return {role: usage.to_dict() for role, usage in self.usage[phase_name].items()}

    def phase_record(self, phase_name: str) -> JsonObject:
        """One phase's costs: usage counts by role, its env_calls and wall_time_s."""
        record: JsonObject = {
            role: _counts(counts) for role, counts in self.role_usage(phase_name).items()
        }
        record["env_calls"] = self.env_calls[phase_name]
        record["wall_time_s"] = round(self.wall_time_s[phase_name], 4)
        return record

    def record(self) -> JsonObject:
        """The stored cost record: both phases and their field-by-field sum."""
        phases = {name: self.phase_record(name) for name in (REHEARSAL, COMMITTED)}
        return {**phases, "total": self._total_record()}

    def _total_record(self) -> JsonObject:
        """The two phase records summed field by field, from the ledger's own
        counts (this runs for every sample: no pass over the written records).
        Keys in the order the old field-by-field sum gave them: rehearsal's roles,
        env_calls, wall_time_s, then the roles only committed has."""
        rehearsal, committed = self.usage[REHEARSAL], self.usage[COMMITTED]
        total: JsonObject = {role: self._role_total(role) for role in rehearsal}
        total["env_calls"] = self.env_calls[REHEARSAL] + self.env_calls[COMMITTED]
        # The sum of the two rounded phase times, as the phase records show them.
        wall_times = (round(self.wall_time_s[name], 4) for name in (REHEARSAL, COMMITTED))
        total["wall_time_s"] = round(sum(wall_times), 4)
        for role in committed:
            if role not in rehearsal:
                total[role] = self._role_total(role)
        return total

    def _role_total(self, role: str) -> JsonObject:
        usage = Usage()
        for phase_name in (REHEARSAL, COMMITTED):
            if role in self.usage[phase_name]:
                usage.add(self.usage[phase_name][role])
        return _counts(usage.to_dict())

    def total_by_role(self) -> dict[str, Usage]:
        """Usage by role over both phases (roles that made no call left out)."""
        totals: dict[str, Usage] = {}
        for phase_name in PHASES:
            for role, usage in self.usage[phase_name].items():
                if usage.calls or usage.prompt_tokens or usage.completion_tokens:
                    totals.setdefault(role, Usage()).add(usage)
        return totals


def _counts(counts: Mapping[str, int]) -> JsonObject:
    return dict(counts)


class MeteredClient(WrappedClient):
    """Books every call of the wrapped client under a role and the current phase."""

    def __init__(self, inner: ModelClient, role: str, ledger: CostLedger):
        super().__init__(inner)
        self.role = role
        self.ledger = ledger

    async def complete(self, messages, tools, params) -> AssistantTurn:
        turn = await self.inner.complete(messages, tools, params)
        usage = call_usage(turn)
        # The episode loop books the turn's usage under the actor; make it agree.
        turn.usage = usage
        self.ledger.add(current_phase(), self.role, usage)
        return turn
