"""How many model calls a BFCL entry's episode makes in a row, estimated from the
entry (``Adapter.expected_model_calls``: the run starts the longest first).

- single-turn categories: one reply;
- multi-turn: per user turn, a reply per gold call (a model often calls one at a
  time) and the text reply that ends the turn;
- memory: per user turn of the prerequisite conversations and of the question,
  a memory tool call and a text reply;
- web search: a few searches and page fetches, then the answer (the entry holds
  only the answer, so the same guess for each).
"""

from __future__ import annotations

from .categories import Kind, kind_of
from .data import Entry

WEB_SEARCH_CALLS = 6.0
CALLS_PER_MEMORY_TURN = 2


def expected_model_calls(entry: Entry) -> float:
    kind = kind_of(entry.category)
    if kind is Kind.MULTI_TURN:
        gold_calls = sum(len(turn) for turn in entry.gold_turns())
        return float(len(entry.turns) + gold_calls)
    if kind is Kind.MEMORY:
        turns = len(entry.turns) + sum(len(p.turns) for p in entry.prerequisites)
        return float(CALLS_PER_MEMORY_TURN * turns)
    if kind is Kind.WEB_SEARCH:
        return WEB_SEARCH_CALLS
    return 1.0
