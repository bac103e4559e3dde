"""BFCL's own prompt mode for text-only endpoints.

What the model sees is what BFCL's prompting handlers send:
- BFCL's default system prompt (built by the package from the entry's function
  docs, names as written), merged in front of an existing first system message;
- every earlier reply as the plain text the model wrote;
- the execution results of a reply as one user message holding the Python
  ``repr`` of ``[{"role": "tool", "name": <call>, "content": <result>}, ...]``;
- in miss_func, the held-out turn as the held-out docs followed by BFCL's
  "more functions" message (the system prompt keeps the initial functions).

A reply is read as a Python list of calls (Java/JavaScript syntax for those
categories), see decode.py. A reply that does not decode has no calls, which
ends the turn as in BFCL.
"""

from __future__ import annotations

import copy
from typing import Any

from harness.calls import format_python_call
from harness.models.prompt_format import PromptFormat
from harness.types import Message, ToolCall, ToolSchema

from . import official
from .categories import Kind, kind_of, language_of
from .data import Entry
from .decode import Decoded, DecodeError, decode_prompt_text, decoded_to_tool_calls, tool_calls_of
from .multi_turn import more_functions_message

CALL_ID_PREFIX = "bfcl_prompt"


class BFCLPromptFormat(PromptFormat):
    name = "bfcl-prompt"

    def __init__(self, entry: Entry):
        self.entry = entry
        self.language = language_of(entry.category)

    # ------------------------------------------------------------- parse

    def parse(self, text: str) -> tuple[str | None, list[ToolCall]]:
        """The reply text is kept whole (BFCL's history and result files hold the
        raw text); the calls are what it decodes to."""
        try:
            decoded = decode_prompt_text(text, self.language)
        except DecodeError:
            return text, []
        return text, decoded_to_tool_calls(decoded, CALL_ID_PREFIX)

    # ------------------------------------------------------------- render

    def render(self, messages: list[Message], tools: list[ToolSchema]) -> list[Message]:
        rendered: list[Message] = []
        pending: list[tuple[str, str]] = []  # (call text, result) of the last reply
        call_texts: dict[str, str] = {}
        user_turn = -1

        def flush() -> None:
            if pending:
                rendered.append({"role": "user", "content": self._results_text(pending)})
                pending.clear()

        for message in messages:
            role = message.get("role")
            if role == "tool":
                text = call_texts.get(str(message.get("tool_call_id")), str(message.get("name")))
                pending.append((text, str(message.get("content"))))
                continue
            flush()
            if role == "assistant":
                content, texts = self._reply_text(message)
                call_texts.update(texts)
                rendered.append({"role": "assistant", "content": content})
            elif role == "user":
                user_turn += 1
                rendered.append({"role": "user", "content": self._user_text(message, user_turn)})
            else:
                rendered.append({"role": role, "content": message.get("content")})
        flush()
        return self._with_system_prompt(rendered)

    def _with_system_prompt(self, rendered: list[Message]) -> list[Message]:
        utils = official.module("bfcl_eval.model_handler.utils")
        functions = copy.deepcopy(self.entry.functions)
        return utils.system_prompt_pre_processing_chat_model(rendered, functions, self.entry.id)

    def _user_text(self, message: Message, user_turn: int) -> Any:
        held_out = self.entry.missed_function.get(user_turn)
        content = message.get("content")
        if (
            kind_of(self.entry.category) is Kind.MULTI_TURN
            and held_out is not None
            and content == more_functions_message()
        ):
            prompts = official.module("bfcl_eval.constants.default_prompts")
            return prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING.format(
                functions=held_out
            )
        return content

    def _reply_text(self, message: Message) -> tuple[str, dict[str, str]]:
        """The reply as text, and the call text of each of its tool-call ids."""
        calls = tool_calls_of(message)
        content = message.get("content") or ""
        decoded: Decoded | None = None
        if content:
            try:
                decoded = decode_prompt_text(content, self.language)
            except DecodeError:
                decoded = None
        if decoded is None or len(decoded) != len(calls):
            # The reply came from elsewhere (e.g. a function-calling turn): use its calls.
            decoded = [{call.name: call.arguments or {}} for call in calls]
            if not content and decoded:
                content = "[" + ", ".join(self._call_texts(decoded)) + "]"
        texts = {
            call.id: text for call, text in zip(calls, self._call_texts(decoded), strict=False)
        }
        return content, texts

    @staticmethod
    def _call_texts(decoded: Decoded) -> list[str]:
        # BFCL writes each call as ``name(key=value, ...)`` with repr'd values. (The
        # package would write a dict whose values are all dicts as a nested call
        # and fails on an empty dict; a plain repr keeps every reply renderable.)
        return [format_python_call(name, args) for item in decoded for name, args in item.items()]

    @staticmethod
    def _results_text(pending: list[tuple[str, str]]) -> str:
        utils = official.module("bfcl_eval.model_handler.utils")
        return utils.format_execution_results_prompting(
            {},
            [result for _, result in pending],
            {"model_responses_decoded": [t for t, _ in pending]},
        )
