"""Who writes the user's messages: the LLM simulator, or a script for offline runs.

The LLM simulator plays the task's persona with the task's hidden instructions.
Its context is the conversation seen from the other side ("role flip"): the
agent's text replies become ``user`` messages and its own earlier messages
become ``assistant`` messages, starting with the greeting. It never sees tool
calls, tool results, or the text of agent replies that carried tool calls.
"""

from __future__ import annotations

import re

from harness.models.base import ModelClient
from harness.task.contract import Environment
from harness.types import Message, SamplingParams, Usage

from .data import VitaTask
from .episode import Speaker, is_blank_agent_message, text_of
from .metrics import changed_records
from .prompts import SCRIPTED_USER, PromptSet, prompt_set

# The benchmark calls the simulator at temperature 0 and sends no seed.
USER_PARAMS = SamplingParams(temperature=0.0)


def flipped_conversation(transcript: list[Message], greeting: str) -> list[Message]:
    """The conversation from the simulator's side, greeting first."""
    flipped: list[Message] = [{"role": "user", "content": greeting}]
    for message in transcript:
        if message.get("hidden"):
            continue
        role = message.get("role")
        if role == "assistant":
            if message.get("tool_calls") or is_blank_agent_message(message):
                continue
            flipped.append({"role": "user", "content": text_of(message)})
        elif role == "user":
            flipped.append({"role": "assistant", "content": text_of(message)})
    return flipped


class LLMUser(Speaker):
    """The user simulator: a language model playing the task's persona."""

    name = "llm-user"

    def __init__(
        self, client: ModelClient, task: VitaTask, greeting: str, prompts: PromptSet | None = None
    ):
        self.client = client
        self.greeting = greeting
        prompts = prompts or prompt_set(task.language)
        self.system_prompt = prompts.user_system(task.persona, task.instructions)

    def context(self, transcript: list[Message]) -> list[Message]:
        system: Message = {"role": "system", "content": self.system_prompt}
        return [system, *flipped_conversation(transcript, self.greeting)]

    async def reply(self, transcript: list[Message]) -> tuple[str, Usage | None]:
        turn = await self.client.complete(self.context(transcript), [], USER_PARAMS)
        return turn.content or "", turn.usage


_ASKS_FOR_ID = re.compile(r"user\s*id|用户\s*id|用户编号", re.IGNORECASE)


class ScriptedUser(Speaker):
    """A deterministic user for offline runs and tests (``--user-model scripted``).

    It states the task's instructions first, then agrees to what the agent
    proposes (giving its user id when asked), and sends the stop token once the
    agent has created or changed an order, or after ``max_turns`` messages.
    """

    name = "scripted-user"

    def __init__(self, task: VitaTask, environment: Environment, max_turns: int = 5):
        self.task = task
        self.environment = environment
        self.max_turns = max_turns
        self.lines = SCRIPTED_USER[task.language]

    def orders_changed(self) -> bool:
        try:
            state = self.environment.final_state()
        except Exception:  # a broken state view just means "nothing to see yet"
            return False
        return bool(changed_records(state, self.task.initial_records))

    async def reply(self, transcript: list[Message]) -> tuple[str, Usage | None]:
        said = sum(1 for m in transcript if m.get("role") == "user" and not m.get("hidden"))
        if said == 0:
            return self.task.instructions, None
        if said + 1 >= self.max_turns or self.orders_changed():
            return self.lines["done"], None
        last = transcript[-1] if transcript else {}
        if _ASKS_FOR_ID.search(text_of(last)):
            return self.lines["user_id"].format(user_id=self.task.user_id), None
        return self.lines["agree"], None
