"""The best possible schedule of a set of episodes, for bench/full_suite.py.

An episode's model calls run one after another (each call's request holds the
previous reply), so no client finishes a set of episodes with ``slots`` in flight
sooner than the best schedule of those chains. Given each call's latency, a chain
takes the sum of its calls' latencies; taking the chains in a fixed order, each on
the first slot that frees (what a pool of ``slots`` workers does), gives the
makespan of that order. Two orders are of interest: the runner's (the order it
starts the episodes in) and the longest chains first (the classic rule that keeps
one long chain from running alone at the end).

Posting every call independently (the bench's earlier yardstick) is the same
computation with each call as a chain of its own: the bound no client replaying
whole episodes can reach when some chains are long.

Not a bench of its own: tests/bench/test_schedule.py checks it.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def makespan(chains: Iterable[float], slots: int) -> float:
    """Seconds until the last chain ends when the chains (each its seconds), in
    this order, each start on the first of ``slots`` slots to free."""
    if slots < 1:
        raise ValueError(f"slots must be at least 1, not {slots}")
    free_at = [0.0] * slots  # a heap: when each slot frees
    end = 0.0
    for seconds in chains:
        start = heapq.heappop(free_at)
        finish = start + seconds
        heapq.heappush(free_at, finish)
        end = max(end, finish)
    return end


def chain_seconds(latencies: Sequence[Sequence[float]]) -> list[float]:
    """Each episode's chain: the sum of its calls' latencies."""
    return [sum(calls) for calls in latencies]


@dataclass(frozen=True)
class Schedule:
    """The makespans of one set of episodes at one concurrency, in seconds."""

    independent: float  # every call posted on its own, in order
    in_order: float  # whole episodes in the given (the runner's) order
    longest_first: float  # whole episodes, the longest chain first

    def ratio(self, seconds: float) -> float:
        """A time's ratio to the best in-order schedule (1.0: as fast as possible)."""
        return self.in_order / seconds if seconds > 0 else 0.0


def best_schedule(latencies: Sequence[Sequence[float]], slots: int) -> Schedule:
    """``latencies``: per episode, in the runner's order, its calls' latencies."""
    chains = chain_seconds(latencies)
    return Schedule(
        independent=makespan((call for calls in latencies for call in calls), slots),
        in_order=makespan(chains, slots),
        longest_first=makespan(sorted(chains, reverse=True), slots),
    )
