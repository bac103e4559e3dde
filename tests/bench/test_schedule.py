"""The best possible schedule of episode chains (bench/schedule.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from schedule import Schedule, best_schedule, chain_seconds, makespan  # noqa: E402


def test_chains_in_order_take_the_first_free_slot():
    # Two slots: 3 and 1 start at once; 1 ends, 2 starts at 1 and ends at 3; 4 starts at 3.
    assert makespan([3, 1, 2, 4], 2) == pytest.approx(7)
    # One slot: everything in a row.
    assert makespan([3, 1, 2, 4], 1) == pytest.approx(10)
    # More slots than chains: the longest chain.
    assert makespan([3, 1, 2, 4], 8) == pytest.approx(4)
    assert makespan([], 4) == 0


def test_a_slot_count_below_one_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        makespan([1.0], 0)


def test_the_long_chain_last_is_what_longest_first_saves():
    # Eight one-call episodes, then one of eight calls, at 0.2 s a call, 4 in flight.
    latencies = [[0.2]] * 8 + [[0.2] * 8]
    schedule = best_schedule(latencies, 4)
    # In order: two rounds of short ones (0.4 s), then the long one alone (1.6 s).
    assert schedule.in_order == pytest.approx(2.0)
    # Longest first: the long one runs while the others fill the three other slots.
    assert schedule.longest_first == pytest.approx(1.6)
    # Every call independently: 16 calls on 4 slots.
    assert schedule.independent == pytest.approx(0.8)
    assert schedule.ratio(2.5) == pytest.approx(0.8)


def test_chains_are_the_sums_of_their_calls():
    assert chain_seconds([[0.1, 0.2], [], [0.5]]) == pytest.approx([0.3, 0.0, 0.5])


def test_no_order_beats_independent_posting_nor_loses_to_one_slot():
    latencies = [[0.1 * (i % 5 + 1)] * (i % 7 + 1) for i in range(40)]
    total = sum(map(sum, latencies))
    for slots in (1, 3, 16, 64):
        s = best_schedule(latencies, slots)
        assert s.independent <= s.longest_first + 1e-9
        assert s.independent <= s.in_order + 1e-9
        assert max(s.in_order, s.longest_first) <= total + 1e-9
    one = best_schedule(latencies, 1)
    assert one.in_order == pytest.approx(total) == pytest.approx(one.longest_first)


def test_a_ratio_of_nothing_is_zero():
    assert Schedule(1.0, 2.0, 1.5).ratio(0.0) == 0.0
