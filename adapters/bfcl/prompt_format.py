"""BFCL's own prompt mode for text-only endpoints.

What the model sees is what BFCL's prompting handlers send:
- BFCL's default system prompt (built by the package from the entry's function
  docs, names as written), merged in front of an existing first system message;
- every earlier reply as the plain text the model wrote;
- the execution results of a reply as one user message holding the Python
  ``repr`` of ``[{"role": "tool", "name": <call>, "content": <result>}, ...]``;
- in miss_func, the held-out turn as the held-out docs followed by BFCL's
  "more functions" message (the system prompt keeps the initial functions).

A reply is read as BFCL reads it (decode.py): in single-turn categories with
its AST decoder (Java/JavaScript syntax for those categories; the calls are
only recorded), elsewhere with its execution decoder, whose execution strings
are what the environment runs. A reply that does not decode, or decodes to no
call, has no calls, which ends the turn as in BFCL.
"""

from __future__ import annotations

import copy
import json

from harness.models.calls import format_python_call
from harness.models.prompt_format import PromptFormat
from harness.types import Message, ToolCall, ToolSchema

from . import official
from .categories import Kind, kind_of, language_of
from .data import Entry
from .decode import (
    DecodeError,
    decode_prompt_ast,
    decoded_to_tool_calls,
    executable_calls,
)
from .multi_turn import PromptModeCall, more_functions_message

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
            decoded = decode_prompt_ast(text, self.language)
        except DecodeError:
            return text, []
        calls = decoded_to_tool_calls(decoded, CALL_ID_PREFIX)
        if kind_of(self.entry.category) in (Kind.AST, Kind.IRRELEVANCE, Kind.RELEVANCE):
            return text, calls  # recorded, never executed
        execution = executable_calls(text, prompt_mode=True)
        if execution is None or len(execution) != len(calls):
            return text, []  # BFCL ends the turn at a reply it cannot execute
        return text, [
            PromptModeCall(
                id=call.id,
                name=call.name,
                arguments=call.arguments,
                raw_arguments=call.raw_arguments,
                execution=string,
            )
            for call, string in zip(calls, execution, strict=True)
        ]

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

    def _user_text(self, message: Message, user_turn: int) -> object:
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
        """The reply as text, and the call text of each of its tool-call ids
        (BFCL names each result by its execution string)."""
        calls = [item for item in message.get("tool_calls") or []]
        content = message.get("content") or ""
        texts = executable_calls(content, prompt_mode=True) if content else None
        if texts is None or len(texts) != len(calls):
            # The reply came from elsewhere (e.g. a function-calling turn): use its calls.
            decoded: list[dict[str, dict[str, object]]] = [
                {call["function"]["name"]: _arguments(call["function"].get("arguments"))}
                for call in calls
            ]
            texts = self._call_texts(decoded)
            if not content and decoded:
                content = "[" + ", ".join(texts) + "]"
        ids = {str(call.get("id")): text for call, text in zip(calls, texts, strict=False)}
        return content, ids

    @staticmethod
    def _call_texts(decoded: list[dict[str, dict[str, object]]]) -> list[str]:
        # ``name(key=value, ...)`` with repr'd values (a plain repr keeps every
        # reply renderable; the package's writer fails on an empty dict).
        return [format_python_call(name, args) for item in decoded for name, args in item.items()]

    @staticmethod
    def _results_text(pending: list[tuple[str, str]]) -> str:
        utils = official.module("bfcl_eval.model_handler.utils")
        return utils.format_execution_results_prompting(
            {},
            [result for _, result in pending],
            {"model_responses_decoded": [t for t, _ in pending]},
        )


def _arguments(raw: object) -> dict[str, object]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
