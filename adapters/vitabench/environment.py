"""One VitaBench episode's world: the per-task database and the scenario's tools.

``execute`` turns every tool call into the text the benchmark shows the agent:

* the arguments are passed to the tool as keyword arguments, unchecked, so a
  wrong or missing name gives Python's own ``TypeError`` text;
* a refusal (failed precondition) is returned as its bare message, not an error;
* any other exception becomes ``"Error: " + message``, flagged as an error;
* an unknown tool gives ``Error: Tool '<name>' not found.``;
* a string result is returned as is; anything else is JSON-encoded with every
  number turned into its Python text (``32.0`` becomes ``"32.0"``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from harness.boundary.json_value import JsonList, JsonMapping, JsonObject, object_field
from harness.task.contract import Environment
from harness.types import ToolCall, ToolResult, ToolSchema

from .database import SCENARIOS, VitaDatabase, record_to_dict
from .schemas import tools_for
from .tools.common import Refusal
from .tools.delivery import DeliveryTools
from .tools.general import ToolKitBase
from .tools.instore import InStoreTools
from .tools.ota import OTATools

# Arguments larger than this (as JSON text) are refused before any tool runs, so a
# runaway model output cannot stall fuzzy matching.
MAX_ARGUMENTS_CHARS = 50_000

_LANGUAGES = {"zh": "zh", "chinese": "zh", "en": "en", "english": "en"}
_TOOLKITS: dict[str, type[ToolKitBase]] = {
    "general": ToolKitBase,
    "delivery": DeliveryTools,
    "instore": InStoreTools,
    "ota": OTATools,
}


def normalise_language(language: str) -> str:
    try:
        return _LANGUAGES[language.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"unknown VitaBench language {language!r}") from None


def _stringify_numbers(value: object) -> object:
    if isinstance(value, bool | int | float):
        return str(value)
    if isinstance(value, list | tuple):
        return [_stringify_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _stringify_numbers(v) for k, v in value.items()}
    return value


def serialise_result(value: object) -> str:
    """A tool's return value as the agent reads it."""
    if isinstance(value, str):
        return value
    return json.dumps(_stringify_numbers(value))


class VitaEnvironment(Environment):
    """A fresh VitaBench world for one (task, trial)."""

    def __init__(self, task: JsonMapping, scenario: str, language: str = "zh"):
        if scenario not in SCENARIOS:
            raise ValueError(
                f"unknown VitaBench scenario {scenario!r}; expected one of {SCENARIOS}"
            )
        self.task_id = str(task.get("id", ""))
        self.scenario = scenario
        self.language = normalise_language(language)
        self.db = VitaDatabase.build(object_field(task.get("environment")), scenario)
        self._specs = tools_for(scenario)
        toolkits = {domain: cls(self.db, self.language) for domain, cls in _TOOLKITS.items()}
        self._tools: dict[str, Callable[..., object]] = {
            spec.name: getattr(toolkits[spec.domain], spec.name) for spec in self._specs
        }

    # -- what the agent sees -----------------------------------------------------------

    def tool_schemas(self) -> list[ToolSchema]:
        return [spec.openai_schema() for spec in self._specs]

    def tool_names(self) -> list[str]:
        return [spec.name for spec in self._specs]

    # -- running tools -----------------------------------------------------------------

    async def execute(self, call: ToolCall) -> ToolResult:
        return self.run(call.name, call.arguments)

    def run(self, name: str, arguments: Mapping[str, object] | None) -> ToolResult:
        """Run one tool synchronously; never raises for bad input."""
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return ToolResult(f"Error: Tool '{name}' not found.", True)
        if not isinstance(arguments, dict):
            return ToolResult(f"Error: the arguments of '{name}' must be a JSON object.", True)
        if _arguments_size(arguments) > MAX_ARGUMENTS_CHARS:
            return ToolResult(
                f"Error: the arguments of '{name}' are longer than {MAX_ARGUMENTS_CHARS} characters.",
                True,
            )
        try:
            value = tool(**arguments)
        except Refusal as refusal:
            return ToolResult(refusal.message, False)
        except RecursionError:
            return ToolResult("Error: the arguments are nested too deeply.", True)
        except Exception as exc:  # every other failure is shown to the agent, as in the benchmark
            return ToolResult(f"Error: {exc}", True)
        try:
            return ToolResult(serialise_result(value), False)
        except (TypeError, ValueError) as exc:
            return ToolResult(f"Error: {exc}", True)

    # -- end state ---------------------------------------------------------------------

    def orders(self) -> list[JsonObject]:
        """The orders, table bookings and reservations created during the episode, in
        creation order, in the shape of the task data's records (with their end state)."""
        return [record_to_dict(record) for record in self.db.created]

    def final_state(self) -> JsonObject:
        """Every order, booking and reservation, split as the benchmark records them:
        ``old_states`` were last updated before the task's clock, ``new_states`` not."""
        old: JsonList = []
        new: JsonList = []
        for record in self.db.all_records():
            (old if record.update_time < self.db.time else new).append(record_to_dict(record))
        return {
            "scenario": self.scenario,
            "time": self.db.time,
            "old_states": old,
            "new_states": new,
        }


def _arguments_size(arguments: Mapping[str, object]) -> int:
    try:
        return len(json.dumps(arguments, ensure_ascii=False, default=str))
    except (TypeError, ValueError, RecursionError):
        return MAX_ARGUMENTS_CHARS + 1
