"""tau2-bench v1.0.1's NL-assertion judge, through the harness's judge client.

Tasks with NL assertions in their reward basis (40 retail tasks, banking_knowledge's
task_102; none in airline or telecom) are graded in part by tau2's
``NLAssertionsEvaluator``: it asks an LLM (``DEFAULT_LLM_NL_ASSERTIONS``,
temperature 0) whether the conversation meets each assertion. Here the same request
goes to the run's judge model (``--judge-model``, default tau2-bench's):

- the system prompt and the user prompt are the checkout's own texts, read from
  ``evaluator/evaluator_nl_assertions.py`` with ``ast`` (a literal and an
  f-string of ``evaluate_nl_assertions``), never executed and never copied;
- the conversation is tau2's ``"{role}: {content}"`` lines of the trajectory's
  tau2 messages; the assertions are formatted as the f-string formats the list;
- the reply is read as tau2 reads it (``json.loads``; ``results[*].metExpectation``)
  and the NL part of the reward is 1 when every result is met.

A reply tau2 could not read makes scoring fail (the record's score error), as it
makes tau2's evaluation raise. ``--judge-model stub`` is an offline stand-in that
meets every assertion (named as such beside every score).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from harness.boundary import threadsafe_ast
from harness.boundary.json_value import JsonMapping, list_field, object_field
from harness.boundary.sanitise import loads_within_depth
from harness.models.base import ModelClient
from harness.task.contract import Services
from harness.types import AssistantTurn, Message, SamplingParams, Score

from .metrics import is_successful
from .transcript import Turn, to_tau2_messages

if TYPE_CHECKING:
    from tau2.data_model.tasks import Task

    from .domains import Domain

# The domains of v1.0.1 with a task graded by the judge (a test reads the task files).
JUDGED_DOMAINS = frozenset({"retail", "banking_knowledge"})


def task_is_judged(task: JsonMapping | None) -> bool:
    """Whether tau2's NL judge grades part of this task (a task dump, ``Sample.gold``):
    NL_ASSERTION in its reward basis and assertions to judge (tau2 asks no LLM for none)."""
    criteria = object_field((task or {}).get("evaluation_criteria"))
    basis = list_field(criteria.get("reward_basis"))
    return "NL_ASSERTION" in basis and bool(criteria.get("nl_assertions"))


# tau2-bench v1.0.1's DEFAULT_LLM_NL_ASSERTIONS (tau2/config.py; a test compares).
DEFAULT_JUDGE = "gpt-4.1-2025-04-14"
STUB_JUDGE = "stub"
EVALUATOR_MODULE = "evaluator.evaluator_nl_assertions"
EVALUATOR_CLASS = "NLAssertionsEvaluator"
EVALUATOR_METHOD = "evaluate_nl_assertions"


class JudgeError(RuntimeError):
    """The judge could not grade the assertions (no judge, or an unreadable reply)."""


def _method(domain: Domain) -> ast.FunctionDef:
    path = domain.package.source_file(EVALUATOR_MODULE)
    tree = threadsafe_ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == EVALUATOR_CLASS:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == EVALUATOR_METHOD:
                    return item
    raise LookupError(f"{EVALUATOR_CLASS}.{EVALUATOR_METHOD} not found in {path}")


def _assignment(method: ast.FunctionDef, name: str) -> ast.expr:
    for node in ast.walk(method):
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == name for target in node.targets
        ):
            return node.value
    raise LookupError(f"{name} is not assigned in {EVALUATOR_METHOD}")


def _render(node: ast.expr, values: Mapping[str, object]) -> str:
    """A string literal, or an f-string whose fields are plain names in ``values``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        raise ValueError("the judge prompt is not a string literal or an f-string")
    parts = []
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            parts.append(part.value)
        elif (
            isinstance(part, ast.FormattedValue)
            and isinstance(part.value, ast.Name)
            and part.value.id in values
            and part.conversion == -1
            and part.format_spec is None
        ):
            parts.append(f"{values[part.value.id]}")
        else:
            raise ValueError("the judge prompt has a field this reader does not know")
    return "".join(parts)


def trajectory_text(domain: Domain, greeting: str, turns: Sequence[Turn]) -> str:
    messages = to_tau2_messages(domain.package, greeting, turns)
    return "\n".join(f"{message.role}: {message.content}" for message in messages)


def judge_messages(domain: Domain, conversation: str, assertions: list[str]) -> list[Message]:
    method = _method(domain)
    values: dict[str, object] = {"trajectory_str": conversation, "nl_assertions": assertions}
    system = _render(_assignment(method, "system_prompt"), values)
    user = _render(_assignment(method, "user_prompt"), values)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def read_reply(text: str | None) -> list[bool]:
    """Each result's ``metExpectation``, read as tau2 reads the reply."""
    try:
        # tau2 reads it with json.loads; the depth bound only keeps a runaway reply
        # (thousands of nested brackets) a JudgeError instead of a RecursionError.
        data = loads_within_depth(text or "")
        return [bool(result["metExpectation"]) for result in data.get("results", [])]
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise JudgeError(f"the NL judge's reply is not tau2's JSON: {exc}") from None


async def apply(
    domain: Domain,
    task: Task,
    greeting: str,
    turns: Sequence[Turn],
    score: Score,
    services: Services,
) -> Score:
    """The score with the NL part of the reward multiplied in."""
    assertions = list(task.evaluation_criteria.nl_assertions or [])
    if services.judge_client is None:
        raise JudgeError(
            f"task {task.id} is graded by tau2's NL judge: give a judge model "
            f"(--judge-model; tau2-bench's is {DEFAULT_JUDGE}, offline stand-in: {STUB_JUDGE})"
        )
    messages = judge_messages(domain, trajectory_text(domain, greeting, turns), assertions)
    reply = await services.judge_client.complete(messages, [], SamplingParams(temperature=0.0))
    met = read_reply(reply.content)
    nl_reward = 1.0 if all(met) else 0.0  # tau2: all() of the results (1 when none)
    reward = score.reward * nl_reward
    details = dict(score.details)
    details["nl_assertions"] = met
    details["reward"] = reward
    details["reward_breakdown"] = {
        **(details.get("reward_breakdown") or {}),
        "NL_ASSERTION": nl_reward,
    }
    details["judge"] = services.judge_model
    checks_met = int(details.get("checks_met", 0)) + sum(met)
    checks_total = int(details.get("checks_total", 0)) + len(met)
    details.update(checks_met=checks_met, checks_total=checks_total)
    return Score(
        passed=is_successful(domain.package, reward),
        reward=reward,
        progress=checks_met / checks_total if checks_total else reward,
        details=details,
    )


class StubJudge(ModelClient):
    """An offline stand-in for tau2's NL judge: every assertion met."""

    name = STUB_JUDGE

    async def complete(self, messages, tools, params) -> AssistantTurn:
        text = messages[-1].get("content") or ""
        count = max(1, text.count("', '") + 1) if "expectedOutcomes:" in text else 1
        results = [
            {"expectedOutcome": f"assertion {i + 1}", "reasoning": "stub", "metExpectation": True}
            for i in range(count)
        ]
        return AssistantTurn(content=json.dumps({"results": results}), finish_reason="stop")


def builtin_judge(name: str) -> ModelClient | None:
    return StubJudge() if name == STUB_JUDGE else None
