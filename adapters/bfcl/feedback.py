"""BFCL's own augmented-feedback rules (``env_feedback: augmented``).

Applied by ``harness.strategies.feedback`` before its generic rules, through
``BFCLAdapter.feedback_rules()``; they only ever change runs that opted into
augmented feedback. Three multi-turn simulator classes get specific advice:

- travel booking: airport codes are checked against the supported list before a
  flight is priced, naming the invalid ones and the tools that list airports or
  find a city's airport; a missing route names both airports; an unknown currency
  pair lists the supported currency codes.
- vehicle control: the unavailable weather service points to the other
  temperature tool; an unknown zipcode pair points to the zipcode lookup.
- file system: a path argument containing "/" is refused (only names in the
  current directory; ``cd`` moves one level at a time); a file command on a
  directory says so; not-found errors say "in the current directory";
  invalid-character errors list the forbidden characters.
"""

from __future__ import annotations

import json
from functools import cache

from harness.task.contract import Advice, Environment, FeedbackRules, refusal
from harness.types import ToolCall, ToolResult

# The currencies of BFCL's TravelAPI.compute_exchange_rate (every rate is quoted
# against USD).
CURRENCIES = ("USD", "RMB", "EUR", "JPY", "GBP", "CAD", "AUD", "INR", "RUB", "BRL", "MXN")
# Characters BFCL's file system refuses in file and directory names.
FORBIDDEN_CHARS = '|/\\?%*:"><'
# File-system commands and their path arguments (no "/" allowed in them).
PATH_ARGUMENTS = {
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
FILE_COMMANDS = {"cat", "wc", "sort", "grep", "tail", "diff"}


@cache
def supported_airports() -> tuple[str, ...]:
    """The supported airport codes, from BFCL's travel simulator (empty if absent)."""
    try:
        from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.travel_booking import (
            TravelAPI,
        )
    except ImportError:
        return ()
    return tuple(TravelAPI().list_all_airports())


def _precheck(call: ToolCall) -> tuple[str, ToolResult] | None:
    args = call.arguments or {}
    if call.name == "get_flight_cost":
        airports = supported_airports()
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
    for key in PATH_ARGUMENTS.get(call.name, ()):
        value = args.get(key)
        if isinstance(value, str) and "/" in value:
            return "bfcl.path_in_argument", refusal(
                f"{call.name}: '{value}' is a path. Only names in the current directory are "
                "allowed; use cd to move one directory at a time (cd .. goes up)."
            )
    return None


def _advice(call: ToolCall, message: str, listing: list[str] | None) -> Advice | None:
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
            f"{', '.join(CURRENCIES)} (rates are quoted against USD).",
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
            f"Names may not contain any of these characters: {' '.join(FORBIDDEN_CHARS)}",
        )
    if "Is a directory" in message:
        return Advice("bfcl.is_directory", "It is a directory; file commands need a file name.")
    if "No such file" in message or "No such directory" in message:
        return _not_found(call, listing)
    return None


def _not_found(call: ToolCall, listing: list[str] | None) -> Advice:
    """A not-found error: the name is a directory (per the listing), or not here."""
    args = call.arguments or {}
    names = [v for k, v in args.items() if k in PATH_ARGUMENTS.get(call.name, ("file_name",))]
    names = [n for n in names if isinstance(n, str)]
    if call.name in FILE_COMMANDS:
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


async def _listing(probe: Environment | None) -> list[str] | None:
    """The current directory's entries, asked of ``probe`` (None: unknown)."""
    if probe is None:
        return None
    try:
        result = await probe.execute(
            ToolCall(id="feedback_probe", name="ls", arguments={"a": True})
        )
    except Exception:  # a failed probe only means less specific advice
        return None
    try:
        value = json.loads(result.content)  # the simulator's ls answers a JSON object
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict) and isinstance(value.get("current_directory_content"), list):
        return [str(item) for item in value["current_directory_content"]]
    return None


class BFCLFeedbackRules(FeedbackRules):
    def precheck(self, call: ToolCall) -> tuple[str, ToolResult] | None:
        return _precheck(call)

    async def advice(
        self, call: ToolCall, message: str, probe: Environment | None
    ) -> Advice | None:
        listing = None
        # Only a failed file command on an existing name needs the directory listing.
        if call.name in FILE_COMMANDS and "No such file" in message:
            listing = await _listing(probe)
        return _advice(call, message, listing)
