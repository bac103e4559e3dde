"""Teacher forcing: every gold user turn starts again from the gold history.

For the i-th gold user message the model's context is replaced by the gold
messages before it (system policy, earlier gold user turns, gold assistant replies
and gold tool outputs), then that user message is added; the model then runs its
own tool loop until it answers without tool calls. Its messages of that turn are
the prediction; the next turn again starts from the gold history. An item that
ends on a user message (e.g. "###STOP###") still gets that turn, as in the
official inference script, which calls the model after every user message.
"""

from __future__ import annotations

from harness.task.contract import UserSource, UserTurn
from harness.types import Message

from .gold import GoldTurn
from .replay import ReplayEnvironment


class GoldHistoryUser(UserSource):
    """Plays the gold user messages, each with its gold history as the model's context."""

    def __init__(self, turns: list[GoldTurn], environment: ReplayEnvironment | None = None):
        self._turns = list(turns)
        self._environment = environment
        self._next = 0

    async def next_turn(self, transcript: list[Message]) -> UserTurn | None:
        if self._next >= len(self._turns):
            return None
        turn = self._turns[self._next]
        if self._environment is not None:
            self._environment.begin_turn(self._next)
        self._next += 1
        return UserTurn(history=list(turn.history), messages=[dict(turn.user_message)])
