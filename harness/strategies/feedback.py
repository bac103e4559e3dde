"""Augmented environment feedback: error results rewritten into actionable advice.

``wrap_environment(env, sample)`` returns an environment that behaves like ``env``
except that error results say what was wrong and what to do next. This changes
the benchmark (the agent gets help the published setting does not give), so runs
with it are diagnostic and carry ``env_feedback: augmented`` in their manifest.

Rules, in order:

- the benchmark's own rules, from its adapter (``Adapter.feedback_rules()``): a
  precheck that may refuse a call before it runs, then advice on its errors;
- every benchmark: an unknown tool lists the valid tool names; a schema violation
  names the argument and the expected type or values; an unknown id suggests the
  lookup tools for it.

Refusals happen before the call reaches ``env`` (the real environment would fail
on the same input, so no state differs). Each rewrite is recorded in ``rewrites``.
"""

from __future__ import annotations

import json
import re

from harness.boundary.json_value import JsonObject
from harness.boundary.tool_checks import (
    parse_json_value,
    result_status,
    schema_problem,
    tool_parameters,
)
from harness.task.contract import Advice, Environment, FeedbackRules, Sample, WrappedEnvironment
from harness.types import ToolCall, ToolResult, ToolSchema

LOOKUP_VERBS = ("get", "find", "search", "list", "lookup", "fetch", "query", "check")


def error_text(content: str) -> str:
    """The error message inside a result (a JSON ``error`` field, or the text)."""
    ok, value = parse_json_value(content) if content.strip()[:1] == "{" else (False, None)
    if ok and isinstance(value, dict) and "error" in value:
        return str(value["error"])
    return content


def with_advice(content: str, message: str, replace: bool = False) -> str:
    """``content`` carrying ``message``: inside the JSON ``error`` field when the
    result is such an object (keeping the format the agent knows), else appended."""
    ok, value = parse_json_value(content) if content.strip()[:1] == "{" else (False, None)
    if ok and isinstance(value, dict) and "error" in value:
        old = str(value["error"])
        value["error"] = message if replace else f"{old.rstrip('.')}. {message}"
        return json.dumps(value, ensure_ascii=False)
    if replace:
        return f"Error: {message}"
    return f"{content.rstrip()} {message}"


# ---------------------------------------------------------------- generic rules


def _stem(key: str) -> str:
    key = re.sub(r"(?i)[_-]?ids?$", "", key)
    return key.lower().strip("_")


def _lookup_tools(tool_names: list[str], stem: str) -> list[str]:
    lookups = [n for n in tool_names if n.lower().startswith(LOOKUP_VERBS)]
    related = [n for n in lookups if stem and stem in n.lower()]
    return (related or lookups)[:5]


_NOT_FOUND = re.compile(r"not found|does not exist|doesn't exist|no such|unknown|invalid", re.I)


def generic_advice(call: ToolCall, message: str, tools: list[ToolSchema]) -> Advice | None:
    table = tool_parameters(tools)
    names = sorted(table)
    if names and call.name not in table:
        return Advice(
            "generic.unknown_tool",
            f"'{call.name}' is not a tool here. Valid tools: {', '.join(names)}.",
        )
    schema = table.get(call.name)
    if schema and call.arguments is not None:
        problem = schema_problem(call.arguments, schema, "")
        if problem:
            return Advice("generic.schema", f"Argument problem: {problem}.")
    if _NOT_FOUND.search(message):
        for key, value in (call.arguments or {}).items():
            if re.search(r"(?i)(^|_)id$|Id$", key) and isinstance(value, str | int):
                found = _lookup_tools(names, _stem(key))
                if found:
                    return Advice(
                        "generic.unknown_id",
                        f"Check {key}={value!r}: look the right value up first with "
                        f"{' or '.join(found)}.",
                    )
    return None


# ---------------------------------------------------------------- the wrapper


def rules_for(benchmark: str) -> FeedbackRules | None:
    """The feedback rules the benchmark's adapter contributes, if any."""
    from harness.task.registry import find_adapter

    adapter = find_adapter(benchmark)
    return adapter.feedback_rules() if adapter is not None else None


class AugmentedFeedbackEnvironment(WrappedEnvironment):
    """``inner`` with error results rewritten (see the module docstring).

    ``probe``: an environment the benchmark's rules may ask about the current
    state (the real one; None in rehearsal, where asking would cost a simulated
    call). Its calls never reach the agent's transcript.
    """

    def __init__(
        self,
        inner: Environment,
        sample: Sample,
        probe: Environment | None = None,
        rules: FeedbackRules | None = None,
    ):
        super().__init__(inner)
        self.tools = list(sample.tools)
        self.rules = rules if rules is not None else rules_for(sample.benchmark)
        self.probe = probe
        self.rewrites: list[JsonObject] = []

    async def execute(self, call: ToolCall) -> ToolResult:
        refused = self.rules.precheck(call) if self.rules is not None else None
        if refused is not None:
            rule, result = refused
            self._record(call, rule, "(not executed)", result.content)
            return result
        result = await self.inner.execute(call)
        if result_status(result.content, result.is_error) != "error":
            return result
        advice = await self._advice(call, error_text(result.content))
        if advice is None:
            return result
        content = with_advice(result.content, advice.message, advice.replace)
        self._record(call, advice.rule, result.content, content)
        return ToolResult(content, True)

    async def _advice(self, call: ToolCall, message: str) -> Advice | None:
        if self.rules is not None:
            advice = await self.rules.advice(call, message, self.probe)
            if advice is not None:
                return advice
        return generic_advice(call, message, self.tools)

    def _record(self, call: ToolCall, rule: str, before: str, after: str) -> None:
        self.rewrites.append({"tool": call.name, "rule": rule, "before": before, "after": after})


def wrap_environment(
    env: Environment, sample: Sample, probe: Environment | None = None
) -> AugmentedFeedbackEnvironment:
    """``env`` with augmented feedback (apply when ``env_feedback == "augmented"``)."""
    return AugmentedFeedbackEnvironment(env, sample, probe)
