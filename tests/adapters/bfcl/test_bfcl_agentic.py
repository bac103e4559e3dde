"""BFCL agentic categories: memory episodes (prerequisite conversations, then the
question) and web search, scored by the official answer checker."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from harness.adapters.bfcl import BFCLAdapter
from harness.adapters.bfcl.adapter import MAX_STEPS_PER_TURN
from harness.adapters.bfcl.agentic import question_turn_count
from harness.adapters.bfcl.oracle import answer_text
from harness.models.base import ModelClient
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Services
from harness.types import AssistantTurn, SamplingParams, ToolCall, Trajectory

ADAPTER = BFCLAdapter()


def run(sample, model) -> Trajectory:
    trajectory = asyncio.run(PlainStrategy().run(sample, model, Services(), SamplingParams()))
    return Trajectory.from_dict(trajectory.to_dict())


def score(sample, trajectory):
    return asyncio.run(ADAPTER.score(sample, trajectory, Services()))


class NoteTaker(ModelClient):
    """Appends a note to the memory for every user message, then answers."""

    def __init__(self, answer: str):
        self.answer = answer
        self.contexts: list[list[dict]] = []
        self.notes = 0

    async def complete(self, messages, tools, params):
        self.contexts.append(list(messages))
        last = messages[-1]
        if last["role"] == "tool":
            return AssistantTurn(content="Noted.")
        if "What is my first name?" in str(last.get("content")):
            return AssistantTurn(content=self.answer)
        self.notes += 1
        note = f"note-{self.notes};"
        return AssistantTurn(tool_calls=[ToolCall("", "memory_append", {"text": note})])


def test_memory_episode_runs_prerequisites_then_the_question():
    sample = ADAPTER.load("memory_rec_sum", ids=["memory_rec_sum_0-customer-0"])[0]
    entry = sample.gold
    assert len(entry.prerequisites) == 10
    model = NoteTaker("{'answer': 'Michael', 'context': 'you told me'}")
    trajectory = run(sample, model)
    assert trajectory.termination == "completed"

    users = [m for m in trajectory.messages if m["role"] == "user"]
    assert len(users) == question_turn_count(entry)
    # Every conversation starts in a fresh context with its own system prompt.
    assert len(trajectory.context_resets) == len(entry.prerequisites) + 1
    starts = [c for c in model.contexts if len(c) == 2 and c[0]["role"] == "system"]
    assert len(starts) == len(entry.prerequisites) + 1
    assert "There is no content in the memory at this point." in starts[0][0]["content"]
    # The question's prompt shows what the earlier conversations stored...
    question_system = starts[-1][0]["content"]
    assert f"note-{model.notes};" in question_system and "note-1;" in question_system
    # ...followed by the answer-format instructions of the agentic categories.
    assert question_system.index("note-1;") < question_system.index("For your final answer")
    assert score(sample, trajectory).passed


def test_memory_answers_are_checked_in_the_last_text_reply():
    sample = ADAPTER.load("memory_rec_sum", ids=["memory_rec_sum_0-customer-0"])[0]
    assert score(sample, run(sample, ADAPTER.oracle(sample))).passed
    assert not score(sample, run(sample, NoteTaker("{'answer': 'I do not know'}"))).passed


class CallsThenAnswers(ModelClient):
    """Calls a tool on the first ``calls`` replies, then answers with the gold."""

    name = "calls-then-answers"

    def __init__(self, entry, calls: int):
        self.entry, self.left = entry, calls

    async def complete(self, messages, tools, params) -> AssistantTurn:
        if self.left > 0:
            self.left -= 1
            return AssistantTurn(tool_calls=[ToolCall("", "memory_retrieve", {}, "{}")])
        return AssistantTurn(content=answer_text(self.entry))


def test_step_cap_ends_only_the_conversation_as_in_bfcl():
    """BFCL's 20-step cap in a memory conversation ends that conversation; the next
    one starts and the question is still asked (officially each is its own entry)."""
    sample = ADAPTER.load("memory_rec_sum", ids=["memory_rec_sum_0-customer-0"])[0]
    entry = sample.gold
    assert len(entry.prerequisites[0].turns) > 1
    trajectory = run(sample, CallsThenAnswers(entry, MAX_STEPS_PER_TURN))
    assert trajectory.termination == "completed"
    users = [m for m in trajectory.messages if m["role"] == "user"]
    # The first conversation's later turns were skipped; every other turn came.
    assert len(users) == question_turn_count(entry) - (len(entry.prerequisites[0].turns) - 1)
    assert score(sample, trajectory).passed
    # A model that never stops calling reaches the question but gives no answer.
    looping = run(sample, CallsThenAnswers(entry, 10_000))
    assert looping.termination == "completed"
    result = score(sample, looping)
    assert not result.passed and result.details["error_type"] == "agentic:no_last_message"


@pytest.mark.parametrize("category", ["memory_rec_sum", "web_search_base", "web_search_no_snippet"])
def test_oracle_passes_agentic(category):
    for sample in ADAPTER.load(category)[:3]:
        assert score(sample, run(sample, ADAPTER.oracle(sample))).passed


def test_web_search_samples_carry_the_snippet_setting():
    base = ADAPTER.load("web_search_base")[0].gold
    no_snippet = ADAPTER.load("web_search_no_snippet")[0].gold
    assert base.id == "web_search_base_0" and no_snippet.id == "web_search_no_snippet_0"
    assert base.initial_config == {"WebSearchAPI": {"show_snippet": True}}
    assert no_snippet.initial_config == {"WebSearchAPI": {"show_snippet": False}}
    assert base.turns[0][0]["role"] == "system"


def test_unavailable_reasons(monkeypatch):
    monkeypatch.delenv("SERPAPI_API_KEY", raising=False)
    assert "SERPAPI_API_KEY" in ADAPTER.unavailable_reason("web_search_base")
    monkeypatch.setenv("SERPAPI_API_KEY", "x")
    reason = ADAPTER.unavailable_reason("web_search_no_snippet")
    if importlib.util.find_spec("serpapi") is None:
        assert "serpapi" in reason
    has_bm25 = importlib.util.find_spec("rank_bm25") is not None
    assert (ADAPTER.unavailable_reason("memory_kv") is None) == has_bm25
    has_vector = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "faiss"))
    assert (ADAPTER.unavailable_reason("memory_vector") is None) == has_vector
    assert ADAPTER.unavailable_reason("memory_rec_sum") is None
    assert ADAPTER.unavailable_reason("multi_turn_base") is None
