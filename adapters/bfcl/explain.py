"""What BFCL expects of an entry (its gold view) and why a reply failed, in plain words.

The official checkers give an error code and a terse message; a reader wants
"expected 2 calls, got 1: `spotify_play` missing" and which argument differed
from the accepted values. These texts only explain: the score is the checkers'.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from harness.boundary.json_value import JsonMapping, JsonValue
from harness.types import Score, Trajectory

from .categories import Kind, kind_of
from .data import Entry
from .decode import replies

MAX_SHOWN_CHARS = 120
MAX_LINES = 12


def _short(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_SHOWN_CHARS else text[: MAX_SHOWN_CHARS - 1] + "…"


def _offered(name: str) -> str:
    # Functions are offered (and called) with dots as underscores, as BFCL offers them.
    return name.replace(".", "_")


def _names(calls: Sequence[object]) -> list[str]:
    return [_offered(name) for call in calls if isinstance(call, dict) for name in call]


def _accepted(options: object) -> str:
    values = options if isinstance(options, list) else [options]
    shown = [_short(v) for v in values if v != ""]
    text = " | ".join(shown) if shown else "(any)"
    return text + (" (optional)" if "" in values else "")


def _readable_call(call: object) -> str:
    """``f(a=1 | 2, b=x (optional))``: one expected call with its accepted values."""
    if not isinstance(call, dict):
        return _short(call)
    texts = []
    for name, params in call.items():
        arguments = params.items() if isinstance(params, dict) else []
        texts.append(f"{_offered(name)}({', '.join(f'{k}={_accepted(v)}' for k, v in arguments)})")
    return "; ".join(texts)


def gold_view(entry: Entry) -> dict[str, JsonValue]:
    """The entry's gold as a reader wants it (what the checker compares against)."""
    kind = kind_of(entry.category)
    if kind is Kind.IRRELEVANCE:
        return {"expected": "no function call (none of the offered functions fits the request)"}
    if kind is Kind.RELEVANCE:
        return {"expected": "at least one function call"}
    if kind is Kind.AST:
        return {
            "expected calls": [_readable_call(call) for call in entry.gold_items()],
            "ground truth": entry.ground_truth,
        }
    if kind is Kind.MULTI_TURN:
        return {"expected calls per turn": entry.ground_truth}
    return {"possible answers": entry.ground_truth}


def _reply_text(trajectory: Trajectory) -> str:
    for reply in replies(trajectory):
        if reply.content:
            return reply.content
    return ""


def _no_call(trajectory: Trajectory) -> str:
    text = _reply_text(trajectory).strip()
    return f'it answered with text only: "{_short(text)}"' if text else "it gave no reply"


def _argument_lines(name: str, expected: JsonMapping, given: object) -> list[str]:
    if not isinstance(given, dict):
        return [f"`{name}`: arguments are not an object ({_short(given)})"]
    lines = []
    for param, accepted in expected.items():
        options = accepted if isinstance(accepted, list) else [accepted]
        if param not in given:
            if "" not in options:
                lines.append(f"`{name}`: argument `{param}` missing (expected {_short(options)})")
            continue
        if given[param] not in options:
            lines.append(
                f"`{name}`: argument `{param}` is {_short(given[param])}, "
                f"expected one of {_short([o for o in options if o != ''])}"
            )
    for param in given:
        if param not in expected:
            lines.append(f"`{name}`: unexpected argument `{param}`")
    return lines


def _count_line(expected: list[str], got: list[str]) -> str:
    line = f"expected {len(expected)} call(s), got {len(got)}"
    missing = [n for n in expected if n not in got or expected.count(n) > got.count(n)]
    extra = [n for n in got if n not in expected or got.count(n) > expected.count(n)]
    parts = []
    if missing:
        parts.append(", ".join(f"`{n}`" for n in dict.fromkeys(missing)) + " missing")
    if extra:
        parts.append(", ".join(f"`{n}`" for n in dict.fromkeys(extra)) + " not expected")
    return line + (": " + "; ".join(parts) if parts else "")


def _explain_ast(entry: Entry, trajectory: Trajectory, score: Score) -> list[str]:
    expected_calls = [c for c in entry.gold_items() if isinstance(c, dict)]
    expected = _names(expected_calls)
    decoded = score.details.get("decoded")
    if not isinstance(decoded, list) or not decoded:
        listed = ", ".join(f"`{n}`" for n in expected)
        return [
            f"no function call could be read from the reply ({_no_call(trajectory)}); "
            f"expected {len(expected)} call(s): {listed}"
        ]
    got = _names(decoded)
    lines = [] if sorted(got) == sorted(expected) else [_count_line(expected, got)]
    given_by_name: dict[str, list[object]] = {}
    for call in decoded:
        if isinstance(call, dict):
            for name, arguments in call.items():
                given_by_name.setdefault(_offered(name), []).append(arguments)
    for call in expected_calls:
        for dotted, params in call.items():
            name = _offered(dotted)
            candidates = given_by_name.get(name) or []
            if not candidates or not isinstance(params, dict):
                continue
            # Several calls of one function: explain against the closest one.
            diffs = min((_argument_lines(name, params, given) for given in candidates), key=len)
            lines.extend(diffs)
    if len(lines) == 0:
        lines.append("the calls and arguments match a reading of the gold; see the checker's error")
    return lines


def _explain_multi_turn(score: Score) -> list[str]:
    details = score.details
    lines = []
    turns = details.get("turns") or []
    failed = [t for t in turns if isinstance(t, dict) and not t.get("passed")]
    reached = details.get("turns_reached")
    if turns and isinstance(reached, int) and reached < len(turns):
        lines.append(
            f"the conversation stopped after {reached} of {len(turns)} turns "
            f"({details.get('termination')})"
        )
    for turn in failed[:MAX_LINES]:
        reason = str(turn.get("reason") or "")
        plain = {
            "multi_turn:empty_turn_model_response": "the model made no call in this turn",
            "multi_turn:instance_state_mismatch": "the tools' state after the turn differs "
            "from the gold calls' state",
            "multi_turn:execution_response_mismatch": "the results the gold calls produce were "
            "not all produced by the model's calls",
            "not reached": "not reached",
            "calls made": "calls made where none were expected",
        }.get(reason, reason)
        lines.append(f"turn {turn.get('turn')}: {plain}")
    return lines


def _explain_agentic(score: Score) -> list[str]:
    error = score.details.get("error_type")
    if error == "agentic:inference_error":
        return [
            f"the conversation did not reach its final question ({score.details.get('termination')})"
        ]
    if error == "agentic:no_last_message":
        return ["the last reply held no final answer (only calls or nothing)"]
    return [
        f"the final answer {_short(score.details.get('answer'))} matches none of the possible answers"
    ]


def explain_failure(entry: Entry, trajectory: Trajectory, score: Score) -> str:
    kind = kind_of(entry.category)
    if kind is Kind.IRRELEVANCE:
        got = _names(score.details.get("decoded") or [])
        lines = [f"expected no function call, got {len(got)}: " + ", ".join(f"`{n}`" for n in got)]
    elif kind is Kind.RELEVANCE:
        lines = [f"expected at least one function call; {_no_call(trajectory)}"]
    elif kind is Kind.AST:
        lines = _explain_ast(entry, trajectory, score)
    elif kind is Kind.MULTI_TURN:
        lines = _explain_multi_turn(score)
    else:
        lines = _explain_agentic(score)
    return "\n".join(lines[:MAX_LINES])
