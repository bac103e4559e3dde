"""BFCL-v4 categories: names, kinds, sizes and the groups of the official aggregate."""

from __future__ import annotations

from enum import Enum

NON_LIVE_AST = [
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
]
LIVE_AST = ["live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"]
MULTI_TURN = [
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
]
MEMORY = ["memory_kv", "memory_vector", "memory_rec_sum"]
WEB_SEARCH = ["web_search_base", "web_search_no_snippet"]

ALL_CATEGORIES = [
    *NON_LIVE_AST,
    "irrelevance",
    *LIVE_AST,
    "live_irrelevance",
    "live_relevance",
    *MULTI_TURN,
    *MEMORY,
    *WEB_SEARCH,
]

# Entries per category in the published data (bfcl-eval 2026.3.23). The Live
# summary is weighted by these counts.
CATEGORY_SIZES = {
    "simple_python": 400,
    "simple_java": 100,
    "simple_javascript": 50,
    "multiple": 200,
    "parallel": 200,
    "parallel_multiple": 200,
    "irrelevance": 240,
    "live_simple": 258,
    "live_multiple": 1053,
    "live_parallel": 16,
    "live_parallel_multiple": 24,
    "live_irrelevance": 884,
    "live_relevance": 16,
    "multi_turn_base": 200,
    "multi_turn_miss_func": 200,
    "multi_turn_miss_param": 200,
    "multi_turn_long_context": 200,
    "memory_kv": 155,
    "memory_vector": 155,
    "memory_rec_sum": 155,
    "web_search_base": 100,
    "web_search_no_snippet": 100,
}


class Kind(str, Enum):
    """How a category is run and scored."""

    AST = "ast"  # one reply, calls checked against possible answers
    IRRELEVANCE = "irrelevance"  # one reply, passes when no call is made
    RELEVANCE = "relevance"  # one reply, passes when a call is made
    MULTI_TURN = "multi_turn"  # scripted turns, calls executed, state + response checks
    MEMORY = "memory"  # prerequisite conversations, then a question answered in text
    WEB_SEARCH = "web_search"  # one question answered in text after live web searches


def kind_of(category: str) -> Kind:
    if category in NON_LIVE_AST or category in LIVE_AST:
        return Kind.AST
    if category in ("irrelevance", "live_irrelevance"):
        return Kind.IRRELEVANCE
    if category == "live_relevance":
        return Kind.RELEVANCE
    if category in MULTI_TURN:
        return Kind.MULTI_TURN
    if category in MEMORY:
        return Kind.MEMORY
    if category in WEB_SEARCH:
        return Kind.WEB_SEARCH
    raise KeyError(f"unknown BFCL category: {category}")


def is_category(category: str) -> bool:
    try:
        kind_of(category)
    except KeyError:
        return False
    return True


def is_single_turn(category: str) -> bool:
    return kind_of(category) in (Kind.AST, Kind.IRRELEVANCE, Kind.RELEVANCE)


def language_of(category: str) -> str:
    """The language of the function docs: python, java or javascript."""
    if category == "simple_java":
        return "java"
    if category == "simple_javascript":
        return "javascript"
    return "python"


def result_folder(category: str) -> str:
    """The official result-file folder of a category (relative to the model folder)."""
    if category in MEMORY:
        return f"agentic/memory/{category[len('memory_') :]}"
    if category in WEB_SEARCH:
        return "agentic"
    if category in MULTI_TURN:
        return "multi_turn"
    if category.startswith("live_"):
        return "live"
    return "non_live"
