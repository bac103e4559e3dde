"""Agentic categories: memory (kv, vector, rec_sum) and web search.

Memory, as one episode per question. As in BFCL, the 20-step cap ends only the
conversation it happens in (the memory is kept and the next conversation starts). Officially each backend first runs the
scenario's prerequisite conversations with the model under test (the model
stores what it learns through the memory tools; each conversation starts a
fresh chat whose system prompt shows the current core memory, and the memory is
written to a snapshot file after each), and every question of that scenario then
starts from the final snapshot in a fresh chat. Here a question's episode plays
the same sequence itself: the scenario's prerequisite conversations in order,
each in a fresh context (``UserTurn.history``), then the question in a fresh
context, all against one memory instance that carries the state forward exactly
as the snapshot files do. Each question therefore pays for its own prerequisite
conversations (about 7 per scenario), and the memory a question sees comes from
its own episode's conversations (same procedure, independent draws).

Web search is one question answered after searching (SerpAPI + page fetches).

Both are scored offline by the official ``agentic_checker``: one of the possible
answers must appear in the model's last step of the question that does not
decode to function calls (that step's result as BFCL stores it: text, or the
FC call list whose arguments failed to decode).
"""

from __future__ import annotations

import copy

from harness.boundary.json_value import JsonValue
from harness.task.contract import Environment, UserSource, UserTurn
from harness.types import Message, Score, Trajectory

from . import official
from .data import Entry
from .decode import Result, executable_calls, jsonable
from .multi_turn import BFCLEnvironment, turn_replies


def memory_class(entry: Entry) -> str:
    return entry.involved_classes[0]


def with_memory_prompt(
    entry: Entry, turns: list[list[Message]], env: BFCLEnvironment
) -> list[list[Message]]:
    """The conversation's turns with BFCL's memory system prompt (showing the
    memory's current core content) added to the first turn."""
    utils = official.module("bfcl_eval.model_handler.utils")
    instance = env.simulators.instances[memory_class(entry)]
    return utils.add_memory_instruction_system_prompt(
        copy.deepcopy(turns), entry.category, entry.scenario, instance
    )


class MemoryConversations(UserSource):
    """Prerequisite conversations first, then the scored question, each in a
    fresh context. The system prompt of each conversation is built when it
    starts, from the memory as the previous conversations left it."""

    def __init__(self, entry: Entry, env: BFCLEnvironment, step_cap: int | None = None):
        self._env = env
        self._step_cap = step_cap
        self._entry = entry
        self._conversations = [*entry.prerequisites, entry]
        self._conversation = 0
        self._turn = 0
        self._turns: list[list[Message]] = []

    async def next_turn(self, transcript: list[Message]) -> UserTurn | None:
        if self._turn > 0 and self._step_cap is not None and capped(transcript, self._step_cap):
            # BFCL's step cap ends the conversation (its memory is kept); the next starts.
            self._conversation += 1
            self._turn = 0
        if self._conversation >= len(self._conversations):
            return None
        current = self._conversations[self._conversation]
        if self._turn == 0:
            self._turns = with_memory_prompt(self._entry, current.turns, self._env)
        messages = self._turns[self._turn]  # already a fresh copy
        fresh_context = self._turn == 0
        self._turn += 1
        if self._turn >= len(self._turns):
            self._conversation += 1
            self._turn = 0
        return UserTurn(messages=messages, history=[] if fresh_context else None)


def capped(transcript: list[Message], step_cap: int) -> bool:
    """Whether the last user turn ran into the step cap: ``step_cap`` replies, the
    last of which had its calls executed (a last reply in text ended the turn)."""
    replies = 0
    for message in reversed(transcript):
        role = message.get("role")
        if role == "user" and not message.get("hidden"):
            break
        replies += role == "assistant"
    return replies >= step_cap and bool(transcript) and transcript[-1].get("role") == "tool"


def memory_user(entry: Entry, env: Environment, step_cap: int | None = None) -> MemoryConversations:
    if not isinstance(env, BFCLEnvironment):
        raise TypeError("memory episodes need the BFCL environment")
    return MemoryConversations(entry, env, step_cap)


def question_turn_count(entry: Entry) -> int:
    """User turns in a complete episode (prerequisites + question)."""
    return sum(len(p.turns) for p in entry.prerequisites) + len(entry.turns)


def final_answer(step_results: list[Result], prompt_mode: bool) -> Result | None:
    """The last step that does not decode to calls (None if every step did)."""
    answer = None
    for result in step_results:
        if executable_calls(result, prompt_mode) is None:
            answer = result
    return answer


def score_agentic(entry: Entry, trajectory: Trajectory, prompt_mode: bool) -> Score:
    turns = turn_replies(trajectory)
    details: dict[str, JsonValue] = {
        "turns_reached": len(turns),
        "termination": trajectory.termination,
    }
    # Memory: each conversation starts from a fresh context, the question is the
    # last one (the step cap may cut a prerequisite conversation short).
    if entry.prerequisites:
        reached = len(trajectory.context_resets) == len(entry.prerequisites) + 1
    else:
        reached = len(turns) == len(entry.turns)
    reached = reached and trajectory.termination == "completed"
    if not reached or len(entry.turns) != 1:
        details["error_type"] = "agentic:inference_error"
        return Score(passed=False, reward=0.0, details=details)
    answer = final_answer([reply.result(prompt_mode) for reply in turns[-1]], prompt_mode)
    details["answer"] = jsonable(answer)
    if not answer:
        details["error_type"] = "agentic:no_last_message"
        return Score(passed=False, reward=0.0, details=details)
    checker = official.module("bfcl_eval.eval_checker.agentic_eval.agentic_checker")
    result = checker.agentic_checker(answer, entry.ground_truth)
    passed = bool(result.get("valid"))
    if not passed:
        details["error_type"] = result.get("error_type")
    return Score(passed=passed, reward=float(passed), details=details)
