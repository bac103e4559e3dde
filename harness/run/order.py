"""The order a run starts its work in: the longest episodes first.

An episode's model calls run one after another, so a run ends no earlier than its
longest episode started plus that episode's length. Started last (load order puts
a benchmark's long multi-turn subsets after its short ones), a long episode runs
alone at the end while the other slots stand idle; started first, it overlaps the
short ones (longest-processing-time-first scheduling).

Each adapter estimates a sample's chain length (``Adapter.expected_model_calls``);
a sample without an estimate counts as one call. The sort is stable: samples of
equal estimate, and the trials of one sample, keep the order they were given in,
so a suite whose adapters give no estimate runs in load order as before. A resumed
run orders what is left by the same rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from harness.task.contract import Sample
from harness.task.registry import adapter_of

Item = TypeVar("Item")

# The estimate of a sample whose adapter gives none: the least an episode makes.
UNKNOWN_LENGTH = 1.0


def chain_length(sample: Sample) -> float:
    """The sample's estimated model calls in a row (UNKNOWN_LENGTH when unknown)."""
    estimate = adapter_of(sample).expected_model_calls(sample)
    return UNKNOWN_LENGTH if estimate is None else float(estimate)


def longest_first(items: Sequence[Item], sample_of: Callable[[Item], Sample]) -> list[Item]:
    """``items`` with the longest estimated episodes first (stable: ties keep their order).
    Each sample is estimated once, however many trials it has."""
    lengths: dict[str, float] = {}

    def length(item: Item) -> float:
        sample = sample_of(item)
        if sample.key not in lengths:
            lengths[sample.key] = chain_length(sample)
        return lengths[sample.key]

    return sorted(items, key=lambda item: -length(item))
