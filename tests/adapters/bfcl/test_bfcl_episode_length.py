"""BFCL's estimate of an episode's model calls in a row (the run starts the longest first)."""

from __future__ import annotations

from harness.adapters.bfcl import BFCLAdapter

ADAPTER = BFCLAdapter()


def test_single_turn_entries_are_one_call():
    for category in ("simple_python", "parallel_multiple", "live_irrelevance"):
        sample = ADAPTER.load(category, limit=1)[0]
        assert ADAPTER.expected_model_calls(sample) == 1


def test_multi_turn_counts_the_turns_and_their_gold_calls():
    samples = ADAPTER.load("multi_turn_base", limit=20)
    for sample in samples:
        entry = sample.gold
        gold_calls = sum(len(calls) for calls in entry.ground_truth)
        assert ADAPTER.expected_model_calls(sample) == len(entry.turns) + gold_calls
    first = samples[0]  # 4 turns, 10 gold calls in the published data
    assert (len(first.gold.turns), ADAPTER.expected_model_calls(first)) == (4, 14)
    estimates = {ADAPTER.expected_model_calls(s) for s in samples}
    assert len(estimates) > 3  # the entries are told apart, not given one number


def test_memory_counts_its_prerequisite_conversations_and_outranks_multi_turn():
    memory = ADAPTER.load("memory_kv", limit=1)[0]
    turns = len(memory.gold.turns) + sum(len(p.turns) for p in memory.gold.prerequisites)
    assert turns > 50
    assert ADAPTER.expected_model_calls(memory) == 2 * turns
    longest_multi_turn = max(
        ADAPTER.expected_model_calls(s) for s in ADAPTER.load("multi_turn_long_context")
    )
    assert ADAPTER.expected_model_calls(memory) > longest_multi_turn
