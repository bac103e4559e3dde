"""Scoring of the single-turn categories (AST, irrelevance, relevance).

The model gets one reply; its calls are recorded, never executed. AST categories
go through the official ``ast_checker``; irrelevance passes when the reply holds
no decodable call, relevance when it holds at least one (the official rule:
a reply that fails to decode counts as "no call").
"""

from __future__ import annotations

from types import ModuleType

from harness.boundary.json_value import JsonValue
from harness.types import Score, Trajectory

from . import official
from .categories import Kind, kind_of, language_of
from .data import Entry
from .decode import Decoded, DecodeError, Result, decode_ast, jsonable, replies
from .official import FC_REGISTRY_NAME, PROMPT_REGISTRY_NAME


def first_result(trajectory: Trajectory, prompt_mode: bool) -> Result:
    """The entry's one model step as BFCL stores it ("" when there is none)."""
    found = replies(trajectory)
    return found[0].result(prompt_mode) if found else ""


def check_ast(entry: Entry, decoded: Decoded, prompt_mode: bool) -> dict[str, JsonValue]:
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


def _utils() -> ModuleType:
    return official.module("bfcl_eval.utils")


def is_empty(decoded: Decoded) -> bool:
    return bool(_utils().is_empty_output(decoded))


def score_single_turn(entry: Entry, trajectory: Trajectory, prompt_mode: bool) -> Score:
    """The official runner's rules: an AST entry fails when its step does not
    decode or does not decode to calls; (ir)relevance asks whether it decodes
    (always with the Python rules) to at least one call."""
    kind = kind_of(entry.category)
    language = language_of(entry.category) if kind is Kind.AST else "python"
    result = first_result(trajectory, prompt_mode)
    try:
        decoded: Decoded | None = decode_ast(result, prompt_mode, language)
        decode_error = None
    except DecodeError as exc:
        decoded, decode_error = None, str(exc)

    details: dict[str, JsonValue] = {"decoded": jsonable(decoded)}
    if decode_error:
        details["decode_error"] = decode_error

    if kind is Kind.AST:
        if decoded is None:
            passed = False
            details["error_type"] = "ast_decoder:decoder_failed"
        elif not _utils().is_function_calling_format_output(decoded):
            passed = False
            details["error_type"] = "ast_decoder:decoder_wrong_output_format"
        else:
            checked = check_ast(entry, decoded, prompt_mode)
            passed = bool(checked.get("valid"))
            if not passed:
                details["error"] = jsonable(checked.get("error"))
                details["error_type"] = checked.get("error_type")
    else:
        made_call = decoded is not None and not is_empty(decoded)
        passed = not made_call if kind is Kind.IRRELEVANCE else made_call
    return Score(passed=passed, reward=float(passed), details=details)
