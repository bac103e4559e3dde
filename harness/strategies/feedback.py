"""Augmented environment feedback: error results rewritten into actionable advice.

``wrap_environment(env, sample)`` returns an environment that behaves like ``env``
except that error results say what was wrong and what to do next. This changes
the benchmark (the agent gets help the published setting does not give), so runs
with it are diagnostic and carry ``env_feedback: augmented`` in their manifest.

Rules, in order:

- BFCL multi-turn (three simulator classes; the rest unchanged):
  travel booking: airport codes are checked against the supported list before a
  flight is priced, naming the invalid ones and the tools that list airports or
  find a city's airport; a missing route names both airports; an unknown currency
  pair lists the supported currency codes.
  vehicle control: the unavailable weather service points to the other
  temperature tool; an unknown zipcode pair points to the zipcode lookup.
  file system: a path argument containing "/" is refused (only names in the
  current directory; ``cd`` moves one level at a time); a file command on a
  directory says so; not-found errors say "in the current directory";
  invalid-character errors list the forbidden characters.
- every benchmark: an unknown tool lists the valid tool names; a schema violation
  names the argument and the expected type or values; an unknown id suggests the
  lookup tools for it.

Refusals happen before the call reaches ``env`` (the real simulator would fail on
the same input, so no state differs). Each rewrite is recorded in ``rewrites``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from harness.strategies.rehearser import (
    parse_json_value,
    result_status,
    schema_problem,
    tool_parameters,
)
from harness.task import Environment, Sample
from harness.types import ToolCall, ToolResult, ToolSchema

# The currencies of BFCL's TravelAPI.compute_exchange_rate (every rate is quoted
# against USD).
BFCL_CURRENCIES = ("USD", "RMB", "EUR", "JPY", "GBP", "CAD", "AUD", "INR", "RUB", "BRL", "MXN")
# Characters BFCL's file system refuses in file and directory names.
BFCL_FORBIDDEN_CHARS = '|/\\?%*:"><'
# File-system commands and their path arguments (no "/" allowed in them).
BFCL_PATH_ARGUMENTS = {
    "cd": ("folder",),
    "mkdir": ("dir_name",),
    "touch": ("file_name",),
    "echo": ("file_name",),
    "wc": ("file_name",),
    "sort": ("file_name",),
    "grep": ("file_name",),
    "tail": ("file_name",),
    "rm": ("file_name",),
    "rmdir": ("dir_name",),
    "mv": ("source", "destination"),
    "cp": ("source", "destination"),
    "diff": ("file_name1", "file_name2"),
}
# Commands that only work on files (a directory name fails with "not found").
BFCL_FILE_COMMANDS = {"cat", "wc", "sort", "grep", "tail", "diff"}
LOOKUP_VERBS = ("get", "find", "search", "list", "lookup", "fetch", "query", "check")


@cache
def bfcl_airports() -> tuple[str, ...]:
    """BFCL's supported airport codes, from its travel simulator (empty if absent)."""
    try:
        from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.travel_booking import (
            TravelAPI,
        )
    except ImportError:
        return ()
    return tuple(TravelAPI().list_all_airports())


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


def refusal(message: str) -> ToolResult:
    return ToolResult(json.dumps({"error": message}, ensure_ascii=False), True)


@dataclass
class Advice:
    rule: str
    message: str
    replace: bool = False


# ---------------------------------------------------------------- BFCL rules


def _bfcl_precheck(call: ToolCall) -> tuple[str, ToolResult] | None:
    args = call.arguments or {}
    if call.name == "get_flight_cost":
        airports = bfcl_airports()
        wrong = [
            f"{key}={args.get(key)!r}"
            for key in ("travel_from", "travel_to")
            if airports and isinstance(args.get(key), str) and args.get(key) not in airports
        ]
        if wrong:
            return "bfcl.airport_codes", refusal(
                f"Invalid airport code(s): {', '.join(wrong)}. Use list_all_airports to see "
                "the supported airport codes, or get_nearest_airport_by_city to find the "
                "airport of a city."
            )
    for key in BFCL_PATH_ARGUMENTS.get(call.name, ()):
        value = args.get(key)
        if isinstance(value, str) and "/" in value:
            return "bfcl.path_in_argument", refusal(
                f"{call.name}: '{value}' is a path. Only names in the current directory are "
                "allowed; use cd to move one directory at a time (cd .. goes up)."
            )
    return None


def _bfcl_advice(call: ToolCall, message: str, listing: list[str] | None) -> Advice | None:
    args = call.arguments or {}
    name = call.name
    if name == "book_flight" and "airport code" in message:
        return Advice(
            "bfcl.airport_codes",
            "Use list_all_airports to see the supported airport codes, or "
            "get_nearest_airport_by_city to find the airport of a city.",
        )
    if name == "get_flight_cost" and "No available route" in message:
        return Advice(
            "bfcl.missing_route",
            f"No flight route from {args.get('travel_from')} to {args.get('travel_to')} is "
            "available. Check both airport codes with list_all_airports or "
            "get_nearest_airport_by_city.",
            replace=True,
        )
    if name == "compute_exchange_rate" and "exchange rate" in message:
        return Advice(
            "bfcl.currency_pair",
            f"No exchange rate between {args.get('base_currency')} and "
            f"{args.get('target_currency')}. Supported currency codes: "
            f"{', '.join(BFCL_CURRENCIES)} (rates are quoted against USD).",
            replace=True,
        )
    if name == "get_outside_temperature_from_weather_com":
        return Advice(
            "bfcl.weather_service",
            "The weather.com service is unavailable; use get_outside_temperature_from_google "
            "to get the outside temperature.",
            replace=True,
        )
    if name == "estimate_distance" and "not found" in message:
        return Advice(
            "bfcl.zipcodes",
            f"No distance is known between {args.get('cityA')!r} and {args.get('cityB')!r}. "
            "Both must be zipcodes: look each city's zipcode up with get_zipcode_based_on_city.",
            replace=True,
        )
    if "Invalid character" in message:
        return Advice(
            "bfcl.invalid_character",
            f"Names may not contain any of these characters: {' '.join(BFCL_FORBIDDEN_CHARS)}",
        )
    if "Is a directory" in message:
        return Advice("bfcl.is_directory", "It is a directory; file commands need a file name.")
    if "No such file" in message or "No such directory" in message:
        return _bfcl_not_found(call, listing)
    return None


def _bfcl_not_found(call: ToolCall, listing: list[str] | None) -> Advice:
    """A not-found error: the name is a directory (per the listing), or not here."""
    args = call.arguments or {}
    names = [v for k, v in args.items() if k in BFCL_PATH_ARGUMENTS.get(call.name, ("file_name",))]
    names = [n for n in names if isinstance(n, str)]
    if call.name in BFCL_FILE_COMMANDS:
        present = listing or []
        directories = [n for n in names if n in present]
        if directories:
            return Advice(
                "bfcl.is_directory",
                f"'{directories[0]}' is a directory in the current directory, not a file; "
                f"{call.name} needs a file name (use cd to enter a directory).",
                replace=True,
            )
    shown = ", ".join(f"'{n}'" for n in names) or "the name"
    return Advice(
        "bfcl.not_found",
        f"{call.name}: {shown} not found in the current directory. Use ls to see the current "
        "directory, find to search below it, and cd to move one directory at a time.",
        replace=True,
    )


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


class AugmentedFeedbackEnvironment(Environment):
    """``inner`` with error results rewritten (see the module docstring).

    ``probe``: an environment to ask for the current directory listing when a BFCL
    file command fails (the real one; None in rehearsal, where asking would cost a
    simulated call). Its calls never reach the agent's transcript.
    """

    def __init__(self, inner: Environment, sample: Sample, probe: Environment | None = None):
        self.inner = inner
        self.tools = list(sample.tools)
        self.bfcl = sample.benchmark == "bfcl"
        self.probe = probe
        self.rewrites: list[dict[str, Any]] = []

    async def execute(self, call: ToolCall) -> ToolResult:
        if self.bfcl:
            refused = _bfcl_precheck(call)
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
        listing: list[str] | None = None
        # Only a failed file command on an existing name needs the directory listing.
        if self.bfcl and call.name in BFCL_FILE_COMMANDS and "No such file" in message:
            listing = await self._listing()
        if self.bfcl:
            advice = _bfcl_advice(call, message, listing)
            if advice is not None:
                return advice
        return generic_advice(call, message, self.tools)

    async def _listing(self) -> list[str] | None:
        if self.probe is None:
            return None
        try:
            result = await self.probe.execute(
                ToolCall(id="feedback_probe", name="ls", arguments={"a": True})
            )
        except Exception:  # a failed probe only means less specific advice
            return None
        ok, value = parse_json_value(result.content)
        if (
            ok
            and isinstance(value, dict)
            and isinstance(value.get("current_directory_content"), list)
        ):
            return [str(item) for item in value["current_directory_content"]]
        return None

    def _record(self, call: ToolCall, rule: str, before: str, after: str) -> None:
        self.rewrites.append({"tool": call.name, "rule": rule, "before": before, "after": after})

    def final_state(self) -> Any:
        return self.inner.final_state()


def wrap_environment(
    env: Environment, sample: Sample, probe: Environment | None = None
) -> AugmentedFeedbackEnvironment:
    """``env`` with augmented feedback (apply when ``env_feedback == "augmented"``)."""
    return AugmentedFeedbackEnvironment(env, sample, probe)
