"""BFCL's multi-turn simulator classes, driven without evaluating any text.

The official executor builds a Python call string from the model's output and
``eval()``s it. Here a call is a name plus literal arguments, and it reaches only
a public method (no leading "_") of one of the entry's involved classes, found
the way the official executor maps method names to instances (the last class
listed wins a name clash). Anything else (unknown names, dunder or private
names, dotted names, bad arguments, exceptions inside the simulator) comes back
as the error text the official executor produces for a failed call.
"""

from __future__ import annotations

import copy
import inspect
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from harness.boundary.json_value import JsonMapping, JsonValue

from . import embedding_cache, embedding_model, official

# The official executor refuses these names before evaluating a call (none of
# the simulator classes has such a public method; kept for identical results).
REFUSED_NAMES = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})

# Classes whose state starts from the package's defaults rather than initial_config.
STATELESS_CLASSES = frozenset({"MathAPI"})
MEMORY_CLASSES = frozenset({"MemoryAPI_kv", "MemoryAPI_vector", "MemoryAPI_rec_sum"})


@dataclass
class Call:
    """One call to execute: literal positional arguments only for trusted gold calls."""

    name: str
    kwargs: dict[str, object] = field(default_factory=dict)
    args: list[object] = field(default_factory=list)

    def text(self) -> str:
        """The call as BFCL writes it in execution lists: ``name(a=1,b='x')``."""
        parts = [repr(value) for value in self.args]
        parts += [f"{key}={value!r}" for key, value in self.kwargs.items()]
        return f"{self.name}({','.join(parts)})"


def simulator_class(class_name: str) -> type:
    """The official simulator class of that name (only names the package maps)."""
    config = official.module("bfcl_eval.constants.executable_backend_config")
    module_name = config.CLASS_FILE_PATH_MAPPING.get(class_name)
    if module_name is None:
        raise KeyError(f"unknown BFCL simulator class: {class_name}")
    if class_name == "MemoryAPI_vector":  # its module loads the embedding model at import
        embedding_model.use_bundled_model(official.cache_dir() / "embedding-model")
    return getattr(official.module(module_name), class_name)


def format_result(value: object) -> str:
    """A method's return value as the official executor turns it into text."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


# Bounds on the math simulator's arguments. Its power, square_root, logarithm
# and round_number run model numbers straight into Python, decimal and mpmath:
# power(2, 10**8) or square_root(2, 10**9) would compute for minutes and take
# gigabytes in one C call that no timeout can interrupt. Results longer than
# Python prints as text, and precisions beyond these, are refused as errors;
# no BFCL task comes near them.
MAX_RESULT_DIGITS = 4_300
MAX_PRECISION = 1_000
MAX_NEGATIVE_ROUNDING = 4_300


class ExpensiveCallRefused(Exception):
    """A math call whose arguments are over the bounds above (its text is the reason)."""


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) else None


def math_call_refusal(
    name: str, kwargs: Mapping[str, object], args: Sequence[object]
) -> str | None:
    """Why a MathAPI call is too expensive to run, or None (see the bounds above)."""
    names: dict[str, tuple[str, ...]] = {
        "power": ("base", "exponent"),
        "square_root": ("number", "precision"),
    }
    names |= {
        "logarithm": ("value", "base", "precision"),
        "round_number": ("number", "decimal_places"),
    }
    params = names.get(name)
    if params is None:
        return None
    values = {**dict(zip(params, args, strict=False)), **kwargs}
    if name == "power":
        base, exponent = _integer(values.get("base")), _integer(values.get("exponent"))
        if base is None or exponent is None or exponent <= 0 or abs(base) <= 1:
            return None  # float arithmetic, a fraction or a trivial power: fast
        if exponent * math.log10(abs(base)) > MAX_RESULT_DIGITS:
            return f"the result would have more than {MAX_RESULT_DIGITS} digits"
        return None
    if name in ("square_root", "logarithm"):
        precision = _integer(values.get("precision"))
        if precision is not None and precision > MAX_PRECISION:
            return f"precision above {MAX_PRECISION} digits is not supported"
        return None
    places = _integer(values.get("decimal_places"))
    if isinstance(values.get("number"), int) and places is not None:
        if places < -MAX_NEGATIVE_ROUNDING:
            return f"rounding to more than {MAX_NEGATIVE_ROUNDING} places left is not supported"
    return None


class SimulatorSet:
    """Fresh instances of an entry's involved classes and the methods they offer."""

    def __init__(
        self,
        involved_classes: list[str],
        initial_config: JsonMapping,
        long_context: bool = False,
    ):
        # The official simulator objects (only the package's checkers read them).
        self.instances: dict[str, object] = {}
        self._methods: dict[str, Callable[..., object]] = {}
        for class_name in involved_classes:
            instance = simulator_class(class_name)()
            if class_name == "MemoryAPI_vector":
                embedding_cache.use_cached_embeddings(instance)
            # Memory backends start empty without their file-based loader; the
            # memory episode keeps one instance across its conversations instead
            # of writing and reading snapshot files.
            if class_name not in STATELESS_CLASSES and class_name not in MEMORY_CLASSES:
                scenario = copy.deepcopy(initial_config.get(class_name, {}))
                instance._load_scenario(scenario, long_context=long_context)
            self.instances[class_name] = instance
            for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not name.startswith("_"):
                    self._methods[name] = method

    def method_names(self) -> list[str]:
        return sorted(self._methods)

    def has_method(self, name: str) -> bool:
        return name in self._methods

    def call_method(
        self, name: str, args: Sequence[object], kwargs: Mapping[str, object]
    ) -> object:
        """Call one public method by name; its raw return value (raises what it
        raises, and ExpensiveCallRefused for math arguments over the bounds)."""
        method = self._methods[name]
        if type(getattr(method, "__self__", None)).__name__ in STATELESS_CLASSES:
            refusal = math_call_refusal(name, kwargs, args)
            if refusal is not None:
                raise ExpensiveCallRefused(refusal)
        return method(*args, **kwargs)

    def execute(self, call: Call) -> tuple[str, bool]:
        """Run one call; returns (result text, whether it failed)."""
        if call.name in REFUSED_NAMES:
            return f"Error during execution: Function call {call.name} is not allowed.", True
        method = self._methods.get(call.name)
        if method is None:
            # What eval() reports for a name that is not defined.
            return f"Error during execution: name '{call.name}' is not defined", True
        if not all(isinstance(key, str) for key in call.kwargs):
            return "Error during execution: keywords must be strings", True
        try:
            value = self.call_method(call.name, call.args, call.kwargs)
            return format_result(value), False
        except Exception as exc:  # any failure inside a simulator is the model's problem
            return f"Error during execution: {exc}", True

    def public_state(self) -> dict[str, dict[str, object]]:
        """Public attributes of each instance (what the state check compares)."""
        return {
            name: {key: value for key, value in vars(instance).items() if not key.startswith("_")}
            for name, instance in self.instances.items()
        }


def to_jsonable(value: object, depth: int = 0) -> JsonValue:
    """A JSON-safe copy of simulator state (objects become their text form)."""
    if depth > 50:
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(key): to_jsonable(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [to_jsonable(item, depth + 1) for item in value]
    return str(value)
