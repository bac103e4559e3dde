"""Scoring of the single-turn categories (AST, irrelevance, relevance).

The model gets one reply; its calls are recorded, never executed. AST categories
go through the official ``ast_checker``; irrelevance passes when the reply holds
no decodable call, relevance when it holds at least one (the official rule:
a reply that fails to decode counts as "no call").
"""

from __future__ import annotations

from typing import Any

from harness.types import Message, Score, Trajectory

from . import official
from .categories import Kind, kind_of, language_of
from .data import Entry
from .decode import Decoded, DecodeError, decode_message
from .official import FC_REGISTRY_NAME, PROMPT_REGISTRY_NAME


def first_reply(trajectory: Trajectory) -> Message | None:
    for message in trajectory.messages:
        if message.get("role") == "assistant":
            return message
    return None


def decode_reply(trajectory: Trajectory, prompt_mode: bool, language: str) -> Decoded:
    reply = first_reply(trajectory)
    if reply is None:
        raise DecodeError("no model reply")
    return decode_message(reply, prompt_mode, language)


def check_ast(entry: Entry, decoded: Decoded, prompt_mode: bool) -> dict[str, Any]:
    checker = official.module("bfcl_eval.eval_checker.ast_eval.ast_checker")
    enums = official.module("bfcl_eval.constants.enums")
    language = enums.Language(language_of(entry.category))
    registry_name = PROMPT_REGISTRY_NAME if prompt_mode else FC_REGISTRY_NAME
    try:
        return checker.ast_checker(
            entry.checker_functions,
            decoded,
            entry.ground_truth,
            language,
            entry.category,
            registry_name,
        )
    except Exception as exc:  # odd model values must fail the entry, not the run
        return {"valid": False, "error": [f"checker raised {type(exc).__name__}: {exc}"]}


def is_empty(decoded: Decoded) -> bool:
    return official.module("bfcl_eval.utils").is_empty_output(decoded)


def score_single_turn(entry: Entry, trajectory: Trajectory, prompt_mode: bool) -> Score:
    kind = kind_of(entry.category)
    try:
        decoded: Decoded | None = decode_reply(trajectory, prompt_mode, language_of(entry.category))
        decode_error = None
    except DecodeError as exc:
        decoded, decode_error = None, str(exc)

    details: dict[str, Any] = {"decoded": decoded}
    if decode_error:
        details["decode_error"] = decode_error

    if kind is Kind.AST:
        if decoded is None:
            passed = False
            details["error_type"] = "ast_decoder:decoder_failed"
        else:
            result = check_ast(entry, decoded, prompt_mode)
            passed = bool(result.get("valid"))
            if not passed:
                details["error"] = result.get("error")
                details["error_type"] = result.get("error_type")
    else:
        made_call = decoded is not None and not is_empty(decoded)
        passed = not made_call if kind is Kind.IRRELEVANCE else made_call
    return Score(passed=passed, reward=float(passed), details=details)
