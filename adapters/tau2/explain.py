"""What a τ² task expects (its gold view) and why a simulation failed, in plain words.

The reward's parts (database check, gold actions, environment assertions, what the
agent had to tell the user) are booleans in the score's details; these texts name
the gold action, assertion or piece of information behind each failed one.
"""

from __future__ import annotations

import json

from harness.boundary.json_value import JsonList, JsonMapping, JsonObject, list_field, object_field
from harness.types import Score, Trajectory

from .json_fields import objects_field

MAX_SHOWN_CHARS = 160
MAX_LINES = 12
# How a simulation ends normally (the user or the agent said it was done).
NORMAL_ENDINGS = ("user_stop", "agent_stop")


def _short(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_SHOWN_CHARS else text[: MAX_SHOWN_CHARS - 1] + "…"


def _call(action: JsonMapping) -> str:
    arguments = object_field(action.get("arguments"))
    shown = ", ".join(f"{k}={_short(v)}" for k, v in arguments.items())
    return f"{action.get('name')}({shown})"


def _assertion(assertion: JsonMapping) -> str:
    arguments = object_field(assertion.get("arguments"))
    shown = ", ".join(f"{k}={_short(v)}" for k, v in arguments.items())
    name = assertion.get("func_name") or assertion.get("name") or "?"
    return f"{name}({shown})"


def _criteria(task: JsonMapping) -> JsonMapping:
    criteria = task.get("evaluation_criteria")
    return criteria if isinstance(criteria, dict) else {}


def gold_view(task: JsonMapping) -> JsonObject:
    """The task's gold: the user's scenario, the gold actions, assertions and outputs."""
    criteria = _criteria(task)
    view: JsonObject = {}
    scenario = object_field(task.get("user_scenario")).get("instructions")
    if scenario:
        view["user scenario"] = scenario
    view["reward basis"] = criteria.get("reward_basis")
    actions = objects_field(criteria.get("actions"))
    if actions:
        gold_actions: JsonList = [
            {"requestor": a.get("requestor"), "call": _call(a)} for a in actions
        ]
        view["gold actions"] = gold_actions
    if criteria.get("env_assertions"):
        assertions: JsonList = [_assertion(a) for a in objects_field(criteria["env_assertions"])]
        view["environment assertions"] = assertions
    if criteria.get("communicate_info"):
        view["expected outputs (told to the user)"] = criteria["communicate_info"]
    if criteria.get("nl_assertions"):
        view["judged assertions"] = criteria["nl_assertions"]
    return {k: v for k, v in view.items() if v not in (None, [], {})}


def _agent_calls(trajectory: Trajectory) -> list[str]:
    return [call.name for call in trajectory.assistant_tool_calls()]


def explain_failure(task: JsonMapping, trajectory: Trajectory, score: Score) -> str:
    details = score.details
    criteria = _criteria(task)
    lines: list[str] = []
    termination = details.get("termination")
    if termination and termination not in NORMAL_ENDINGS:
        lines.append(f"the simulation ended early: {termination}")
    actions = objects_field(criteria.get("actions"))
    checks = details.get("action_checks") or []
    missed = [a for a, ok in zip(actions, checks, strict=False) if not ok]
    if details.get("db_match") is False:
        made = sorted(set(_agent_calls(trajectory)))
        lines.append(
            "the database at the end differs from the one the gold actions produce "
            f"(the agent called: {', '.join(made) or 'no tool'})"
        )
    for action in missed:
        who = "the user's" if action.get("requestor") == "user" else "the agent's"
        lines.append(f"{who} gold action not made as expected: {_call(action)}")
    assertions = objects_field(criteria.get("env_assertions"))
    for assertion, ok in zip(assertions, details.get("env_assertions") or [], strict=False):
        if not ok:
            lines.append(f"environment assertion failed: {_assertion(assertion)}")
    infos = list_field(criteria.get("communicate_info"))
    for info, ok in zip(infos, details.get("communicate_checks") or [], strict=False):
        if not ok:
            lines.append(f"the agent did not tell the user: {_short(info)}")
    judged = list_field(criteria.get("nl_assertions"))
    for statement, met in zip(judged, details.get("nl_assertions") or [], strict=False):
        if met is False:
            lines.append(f"judged assertion not met: {_short(statement)}")
    if details.get("note"):
        lines.append(str(details["note"]))
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES] + [f"… and {len(lines) - MAX_LINES} more"]
    return "\n".join(lines)
