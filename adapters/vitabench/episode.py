"""VitaBench's conversation protocol on top of the harness episode loop.

The benchmark's orchestrator passes one message at a time between agent, user
simulator and tools, and counts every pass (a "hop"): a user message, an agent
message, or the batch of tool results answering one agent message. It ends on

- ``user_stop``: the user's text contains a stop token (the message is kept);
- ``agent_stop``: the agent's text contains ``###STOP###`` (even in a message
  that also calls tools; those calls are never run);
- ``invalid_agent_message``: three attempts in a row gave neither text nor a tool call;
- ``max_steps``: the hop count reached ``max_steps`` (300 in the CLI); this wins
  over a stop in the same hop.

The conversation opens with the assistant greeting: it is recorded (hidden, so
the agent model never sees it) and it is the user simulator's first input.

The hop limit and the agent's stop token are the episode's stop rule
(``vita_stop_rule``), which the harness loop checks before every model reply and
every user turn, so both also hold inside the agent's tool loop; ``VitaUserSource``
applies the rest when the agent hands the turn back. One difference remains: when
a message that carries the stop token also calls tools, the loop has already run
those calls before the rule sees the message. The episode still ends there as
``agent_stop`` and the judge reads the conversation only up to that message, as
the benchmark stores it; only the end state, which the score does not use, can
differ.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod

from harness.task.contract import EpisodeLimits, UserSource, UserTurn
from harness.types import Message, Usage

AGENT_STOP = "###STOP###"
USER_STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
MAX_STEPS = 300  # the CLI's --max-steps default
MAX_AGENT_ATTEMPTS = 3

# Endings that the judge evaluates; every other ending scores 0 without a judge call.
JUDGED_TERMINATIONS = ("user_stop", "agent_stop")


def vita_limits(max_steps: int = MAX_STEPS) -> EpisodeLimits:
    """The harness limits of a VitaBench episode.

    The exact hop rule and the agent's stop token are the stop rule, checked
    before every model reply. ``max_steps`` here also caps the agent's model
    replies; every accepted reply is a hop, so it can only fire after the stop
    rule would have. The benchmark has no error cap (its ``too_many_errors``
    never fires) and no wall-clock limit.
    """
    return EpisodeLimits(
        single_step=False,
        max_steps_per_turn=None,
        max_steps=max_steps,
        max_messages=None,
        max_tool_errors=None,
        max_completion_tokens=None,
        wall_time_s=None,
        stop_rule=functools.partial(vita_stop_rule, max_steps=max_steps),
    )


def vita_stop_rule(transcript: list[Message], max_steps: int = MAX_STEPS) -> str | None:
    """The benchmark's hop limit and the agent's stop token, checked by the episode
    loop before every model reply (so also inside the agent's tool loop) and every
    user turn."""
    stop = first_agent_stop(transcript)
    counted = transcript if stop is None else transcript[: stop + 1]
    if count_hops(counted) >= max_steps:
        return "max_steps"
    if stop is not None:
        return "agent_stop"
    return None


def is_blank_agent_message(message: Message) -> bool:
    """An agent reply the benchmark would reject: no text and no tool call."""
    if message.get("role") != "assistant" or message.get("tool_calls"):
        return False
    content = message.get("content")
    return not (isinstance(content, str) and content.strip())


def first_agent_stop(transcript: list[Message]) -> int | None:
    """Index of the first agent message whose text carries the stop token."""
    for index, message in enumerate(transcript):
        if message.get("role") == "assistant" and not message.get("hidden"):
            if AGENT_STOP in text_of(message):
                return index
    return None


def conversation_messages(transcript: list[Message]) -> list[Message]:
    """The transcript as the benchmark stores it: the hidden greeting included,
    rejected (blank) agent attempts left out, and nothing after the agent's stop
    message (the harness loop runs the tool calls of a reply before the stop
    token is seen, and lets the agent answer them)."""
    stop = first_agent_stop(transcript)
    kept = transcript if stop is None else transcript[: stop + 1]
    return [message for message in kept if not is_blank_agent_message(message)]


def count_hops(transcript: list[Message]) -> int:
    """The benchmark's step count of a transcript (the greeting is the start
    state, not a hop; one batch of tool results is one hop)."""
    hops = 0
    previous_was_tool = False
    for message in transcript:
        if message.get("hidden") or is_blank_agent_message(message):
            continue
        is_tool = message.get("role") == "tool"
        if not (is_tool and previous_was_tool):
            hops += 1
        previous_was_tool = is_tool
    return hops


def trailing_blank_replies(transcript: list[Message]) -> int:
    count = 0
    for message in reversed(transcript):
        if not is_blank_agent_message(message):
            break
        count += 1
    return count


def text_of(message: Message | None) -> str:
    content = (message or {}).get("content")
    return content if isinstance(content, str) else ""


class Speaker(ABC):
    """Writes the user's next message (an LLM simulator or a script)."""

    name: str = "speaker"

    @abstractmethod
    async def reply(self, transcript: list[Message]) -> tuple[str, Usage | None]:
        """The user's next text, given the transcript so far (empty at the start)."""


class VitaUserSource(UserSource):
    """The user side of a VitaBench episode: protocol rules around a speaker."""

    def __init__(
        self,
        speaker: Speaker,
        greeting: str,
        agent_initial_messages: list[Message],
        max_steps: int = MAX_STEPS,
    ):
        self.speaker = speaker
        self.greeting = greeting
        self.agent_initial_messages = agent_initial_messages
        self.max_steps = max_steps

    def agent_context(self, transcript: list[Message]) -> list[Message]:
        """What the agent saw before its rejected attempts: a retry starts from it."""
        visible = [m for m in conversation_messages(transcript) if not m.get("hidden")]
        return [*self.agent_initial_messages, *visible]

    def ending_after_agent(self, transcript: list[Message]) -> UserTurn | None:
        """The turn that ends or retries the episode after the agent's reply, if any.

        The stop token ends the episode at the message that carries it, even when
        that message also called tools; the step limit is checked up to there."""
        ending = vita_stop_rule(transcript, self.max_steps)
        if ending is not None:
            return UserTurn(stop=ending)
        rejected = trailing_blank_replies(transcript)
        if rejected >= MAX_AGENT_ATTEMPTS:
            return UserTurn(stop="invalid_agent_message")
        if rejected:
            # Ask again from the same state: the rejected reply leaves the context.
            return UserTurn(history=self.agent_context(transcript))
        return None

    async def next_turn(self, transcript: list[Message]) -> UserTurn | None:
        if transcript:
            ending = self.ending_after_agent(transcript)
            if ending is not None:
                return ending
        text, usage = await self.speaker.reply(transcript)
        stop: str | None = None
        if any(token in text for token in USER_STOP_TOKENS):
            stop = "user_stop"
        if count_hops(transcript) + 1 >= self.max_steps:
            stop = "max_steps"
        hidden = [] if transcript else [{"role": "assistant", "content": self.greeting}]
        return UserTurn(
            messages=[{"role": "user", "content": text}], hidden=hidden, stop=stop, usage=usage
        )
