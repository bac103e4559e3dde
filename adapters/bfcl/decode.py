"""Model replies -> what BFCL's handlers store, and its two decoders.

A reply's **result** is what the official OpenAI handler writes to its result
file for one model step: in function-calling (FC) mode the list
``[{name: arguments_string}, ...]`` when the reply has tool calls (its text is
then ignored), else the reply text; in prompt mode always the reply text.
Every score and every export starts from these results, so that both read the
model's output exactly as BFCL does (the arguments string as the model sent it,
``""`` included).

The two official decoders, applied to a result:
- ``decode_ast`` (single-turn categories): FC parses each arguments string with
  ``json.loads`` (any JSON value; ``""`` fails); prompt mode normalises the text
  (strip backticks/newlines/spaces, wrap in brackets) and parses it as Python
  (``python_decoder``, BFCL's rules without eval) or, for Java/JavaScript, with
  the package's own tree-sitter parsers (they only read text);
- ``decode_execute`` (multi-turn, memory, web search): the calls as BFCL's
  execution strings ``name(arg=value,...)``, built by the package's own
  ``convert_to_function_call`` (FC) or ``decoded_output_to_execution_list``
  (prompt mode); both only ``repr`` values.
A decoder that fails raises DecodeError, as the official one raises.

Both decoders also refuse calls whose arguments nest more than
``boundary.MAX_DEPTH`` (100) deep, the bound every tool call of the harness is
parsed within: such a reply does not decode (see DEVIATIONS.md), so nothing deeper
reaches the checkers, the executor or the stored score details.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from harness.boundary.json_value import JsonValue
from harness.boundary.sanitise import MAX_WRITE_DEPTH, BoundsError, check_depth, loads_within_depth
from harness.types import AssistantTurn, Message, ToolCall, Trajectory

from . import official
from .python_decoder import PythonDecodeError, decode_python_calls

# Decoded calls: [{name: arguments}, ...], the arguments as the decoder read them
# (a JSON value in FC mode, a dict of Python values in prompt mode).
Decoded = list[dict[str, object]]
# One model step as BFCL stores it: [{name: arguments_string}, ...] or text.
Result = str | list[dict[str, str]]


class DecodeError(ValueError):
    """The reply holds no well-formed function calls."""


# ---------------------------------------------------------------- results


@dataclass
class Reply:
    """One assistant reply: its text and its tool calls as (name, raw arguments)."""

    content: str | None
    calls: list[tuple[str, str]]

    def result(self, prompt_mode: bool) -> Result:
        if prompt_mode or not self.calls:
            return self.content or ""
        return [{name: arguments} for name, arguments in self.calls]


def _calls_of_message(message: Message) -> list[tuple[str, str]]:
    calls = []
    for item in message.get("tool_calls") or []:
        function = item.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        calls.append((str(function.get("name") or ""), arguments))
    return calls


def replies(trajectory: Trajectory) -> list[Reply]:
    """The assistant replies of a transcript, in order. The raw arguments strings
    come from the parsed turns (the messages of records written before calls kept
    the model's text hold "{}" where the model sent ""), when the turns line up
    with the messages."""
    messages = [m for m in trajectory.messages if m.get("role") == "assistant"]
    turns = trajectory.turns
    aligned = len(turns) == len(messages)
    result = []
    for index, message in enumerate(messages):
        calls = _calls_of_message(message)
        if aligned and len(turns[index].tool_calls) == len(calls):
            calls = [(call.name, call.arguments_text()) for call in turns[index].tool_calls]
        result.append(Reply(message.get("content"), calls))
    return result


def reply_of_message(message: Message) -> Reply:
    return Reply(message.get("content"), _calls_of_message(message))


# ---------------------------------------------------------------- decode_ast


def _normalise_prompt_text(text: str) -> str:
    cleaned = text.strip("`\n ")
    if not cleaned.startswith("["):
        cleaned = "[" + cleaned
    if not cleaned.endswith("]"):
        cleaned = cleaned + "]"
    return cleaned


def decode_fc_ast(result: Result) -> Decoded:
    """The FC handler's decode_ast: each call's arguments through json.loads
    (within the nesting bound)."""
    try:
        decoded: Decoded = []
        for invoked in result:
            if not isinstance(invoked, dict):  # text: as the official code fails on it
                raise AttributeError(f"'{type(invoked).__name__}' object has no attribute 'keys'")
            name = list(invoked.keys())[0]
            decoded.append({name: loads_within_depth(invoked[name])})
        return decoded
    except (ValueError, TypeError, AttributeError, IndexError, RecursionError) as exc:
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None


def _check_decoded_depth(decoded: Decoded) -> Decoded:
    """The prompt decoders' calls, refused (DecodeError) when an argument value
    nests deeper than the bound (each call's arguments counted as FC's are)."""
    try:
        for item in decoded:
            for arguments in item.values() if isinstance(item, dict) else [item]:
                check_depth(arguments)
    except BoundsError as exc:
        raise DecodeError(f"BoundsError: {exc}") from None
    return decoded


def decode_prompt_ast(text: Result, language: str = "python") -> Decoded:
    """The prompt handler's decode_ast (default_decode_ast_prompting)."""
    if not isinstance(text, str):
        raise DecodeError("prompt-mode result is not text")
    cleaned = _normalise_prompt_text(text)
    if language == "python":
        try:
            return _check_decoded_depth(decode_python_calls(cleaned))
        except PythonDecodeError as exc:
            raise DecodeError(str(exc)) from None
    utils = official.module("bfcl_eval.model_handler.utils")
    enums = official.module("bfcl_eval.constants.enums")
    fmt = enums.ReturnFormat.JAVA if language == "java" else enums.ReturnFormat.JAVASCRIPT
    try:
        decoded = utils.ast_parse(cleaned, fmt, False)  # tree-sitter; never evaluates
    except Exception as exc:  # the parsers raise plain exceptions on bad text
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None
    return _check_decoded_depth(decoded)


def decode_ast(result: Result, prompt_mode: bool, language: str = "python") -> Decoded:
    if prompt_mode:
        return decode_prompt_ast(result, language)
    return decode_fc_ast(result)


# ---------------------------------------------------------------- decode_execute


def decode_execute(result: Result, prompt_mode: bool) -> list[str]:
    """The calls of one step as BFCL's execution strings (raises DecodeError)."""
    utils = official.module("bfcl_eval.model_handler.utils")
    try:
        if prompt_mode:
            decoded = decode_prompt_ast(result, "python")
            return utils.decoded_output_to_execution_list(decoded)
        _check_fc_depth(result)
        return utils.convert_to_function_call(result)
    except DecodeError:
        raise
    except (ValueError, TypeError, AttributeError, IndexError, RecursionError) as exc:
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None


def _check_fc_depth(result: Result) -> None:
    """BoundsError when an FC result's arguments (text, as convert_to_function_call
    parses it, or a value) nest deeper than the bound; its other failures are left
    to the official code."""
    for invoked in result if isinstance(result, list) else [result]:
        for value in invoked.values() if isinstance(invoked, dict) else []:
            if isinstance(value, str):
                try:
                    loads_within_depth(value)
                except BoundsError:
                    raise
                except ValueError:
                    continue  # not JSON: the official code raises its own error
            else:
                check_depth(value)


def is_empty_execute(execution: list[str]) -> bool:
    utils = official.module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    return bool(utils.is_empty_execute_response(execution))


def executable_calls(result: Result, prompt_mode: bool) -> list[str] | None:
    """The execution strings of a step, or None when BFCL would end the turn
    there (the step does not decode, or decodes to nothing)."""
    try:
        execution = decode_execute(result, prompt_mode)
    except DecodeError:
        return None
    return None if is_empty_execute(execution) else execution


def fc_reply_undecodable(turn: AssistantTurn) -> bool:
    """Whether BFCL's FC decoder fails on this reply's calls: an arguments string
    that json.loads rejects ("" included) or that is not a JSON object. BFCL then
    ends the turn without executing any of the reply's calls."""
    for call in turn.tool_calls:
        # The model's text as sent ("" included); a call built in code, its JSON.
        raw = call.arguments_text()
        try:
            value = loads_within_depth(raw)
        except ValueError:  # BoundsError included
            return True
        if not isinstance(value, dict):
            return True
    return False


# ---------------------------------------------------------------- tool calls


def decoded_to_tool_calls(decoded: Decoded, id_prefix: str = "call") -> list[ToolCall]:
    """Decoded calls as tool calls for the transcript (values JSON-rendered for
    display; scoring always decodes the reply text again)."""
    calls = []
    for index, item in enumerate(decoded):
        name, arguments = next(iter(item.items()))
        arguments = arguments if isinstance(arguments, dict) else {}
        shown = {str(key): value for key, value in arguments.items()}
        raw = json.dumps(shown, ensure_ascii=False, default=repr)
        calls.append(
            ToolCall(
                id=f"{id_prefix}_{index}",
                name=str(name),
                arguments=json.loads(raw),
                raw_arguments=raw,
            )
        )
    return calls


def jsonable(value: object, depth: int = 0) -> JsonValue:
    """Decoded values for the stored score details (tuples as lists, odd
    constants as their repr, keys as text). The decoders bound nesting at
    MAX_DEPTH; past MAX_WRITE_DEPTH (as every writer) a marker stands for the rest,
    so this walk cannot recurse out of the stack whatever it is given."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return (
            value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
        )
    if isinstance(value, (dict, list, tuple)) and depth >= MAX_WRITE_DEPTH:
        return "[nested too deep]"
    if isinstance(value, dict):
        return {str(key): jsonable(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item, depth + 1) for item in value]
    return repr(value)
