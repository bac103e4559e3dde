"""FinMCP-Bench metrics: tool-name multisets, micro/macro P/R/F1 and exact matches.

Only tool NAMES are compared; arguments never enter the score. Per item, G and P
are the multisets of tool names over every gold / predicted assistant message:

    TP = sum_t min(P_t, G_t)    FP = sum_t max(P_t - G_t, 0)    FN = sum_t max(G_t - P_t, 0)

micro P/R/F1 pool TP/FP/FN over items (the paper's TP / TR / TF1); macro P/R/F1
average the per-item values. Any ratio with a zero denominator is 0, so an item
with no predicted call has precision 0 (the official script's rule).

Two exact-match rates:
- ``exact_match_ordered``: the flattened ordered name lists are equal (the
  official script's ``consist``, the published EMR).
- ``exact_match_grouped``: order is ignored inside each gold parallel group. The
  gold groups are the tool calls of one gold assistant message. The predicted
  flat list (in transcript order) must have the same length as the gold one, and
  cut into consecutive pieces of the gold group sizes, each piece must equal its
  gold group as a multiset. Predictions are grouped by the GOLD structure, not by
  the model's own messages, so a model that issues gold-parallel calls one per
  message is not penalised; hence ordered match implies grouped match.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from harness.task.estimators import Combine, Estimator, Metric, Sums, pooled, ratio
from harness.types import Message

# numerator / denominator, 0 when the denominator is not positive; elementwise on
# arrays, so the micro metrics below serve the bootstrap too.
safe_div = ratio


def message_tool_names(message: Message) -> list[str]:
    """The tool names of one assistant message's ``tool_calls``, in order."""
    names = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        names.append("" if name is None else str(name))
    return names


def tool_groups(messages: Iterable[Message]) -> list[list[str]]:
    """One group of names per assistant message that calls tools."""
    groups = []
    for message in messages:
        if message.get("role") != "assistant" or message.get("hidden"):
            continue
        names = message_tool_names(message)
        if names:
            groups.append(names)
    return groups


def tool_names(messages: Iterable[Message]) -> list[str]:
    """Every tool name called by the assistant messages, flattened in order."""
    return [name for group in tool_groups(messages) for name in group]


@dataclass(frozen=True)
class NameCounts:
    """TP / FP / FN of one item's predicted vs gold name multisets."""

    tp: int
    fp: int
    fn: int


def count_names(predicted: Sequence[str], gold: Sequence[str]) -> NameCounts:
    predicted_counts, gold_counts = Counter(predicted), Counter(gold)
    names = set(predicted_counts) | set(gold_counts)
    tp = sum(min(predicted_counts[n], gold_counts[n]) for n in names)
    fp = sum(max(predicted_counts[n] - gold_counts[n], 0) for n in names)
    fn = sum(max(gold_counts[n] - predicted_counts[n], 0) for n in names)
    return NameCounts(tp, fp, fn)


# Counts: numbers, or arrays of bootstrap sums (elementwise).
Counts = TypeVar("Counts", float, npt.NDArray[np.float64])


def precision_recall_f1(tp: Counts, fp: Counts, fn: Counts) -> tuple[Counts, Counts, Counts]:
    """Precision, recall and F1 from counts (numbers, or arrays of bootstrap sums)."""
    precision = safe_div(tp, tp + fp)
    recall = safe_div(tp, tp + fn)
    return precision, recall, safe_div(2 * precision * recall, precision + recall)


TOOL_COUNTS = ("tool_tp", "tool_fp", "tool_fn")


def _micro(which: int) -> Combine:
    """combine() of one micro metric: the pooled tool counts of every subset."""

    def combine(sums: Mapping[str, Sums], counts: Mapping[str, int]) -> Metric:
        total = pooled(sums)
        return precision_recall_f1(total[..., 0], total[..., 1], total[..., 2])[which]

    return combine


# Recomputed from per-task tool counts (items flagged error=true carry none; see
# harness.results.stats.trial_values), exactly as ``summarize`` pools them.
ESTIMATORS = {
    "micro_precision": Estimator(
        "micro P", TOOL_COUNTS, _micro(0), "micro precision of tool names"
    ),
    "micro_recall": Estimator("micro R", TOOL_COUNTS, _micro(1), "micro recall of tool names"),
    "micro_f1": Estimator("micro F1", TOOL_COUNTS, _micro(2), "micro F1 of tool names"),
}


def exact_match_ordered(predicted: Sequence[str], gold: Sequence[str]) -> bool:
    return list(predicted) == list(gold)


def exact_match_grouped(predicted: Sequence[str], gold_groups: Sequence[Sequence[str]]) -> bool:
    """Equal up to the order inside each gold parallel group (see module docstring)."""
    if len(predicted) != sum(len(group) for group in gold_groups):
        return False
    start = 0
    for group in gold_groups:
        piece = predicted[start : start + len(group)]
        if Counter(piece) != Counter(group):
            return False
        start += len(group)
    return True


@dataclass(frozen=True)
class ItemResult:
    """What aggregation needs of one scored item."""

    tp: int
    fp: int
    fn: int
    exact_ordered: bool
    exact_grouped: bool


def summarize(items: Sequence[ItemResult]) -> dict[str, float]:
    """Micro and macro P/R/F1 and both exact-match rates, as fractions in [0, 1]."""
    total_tp = sum(item.tp for item in items)
    total_fp = sum(item.fp for item in items)
    total_fn = sum(item.fn for item in items)
    micro_p, micro_r, micro_f1 = precision_recall_f1(total_tp, total_fp, total_fn)
    per_item = [precision_recall_f1(item.tp, item.fp, item.fn) for item in items]
    n = len(items)
    return {
        "micro_precision": micro_p,
        "micro_recall": micro_r,
        "micro_f1": micro_f1,
        "macro_precision": safe_div(sum(p for p, _, _ in per_item), n),
        "macro_recall": safe_div(sum(r for _, r, _ in per_item), n),
        "macro_f1": safe_div(sum(f for _, _, f in per_item), n),
        "exact_match_ordered": safe_div(sum(item.exact_ordered for item in items), n),
        "exact_match_grouped": safe_div(sum(item.exact_grouped for item in items), n),
        "tp": float(total_tp),
        "fp": float(total_fp),
        "fn": float(total_fn),
        "n": float(n),
    }
