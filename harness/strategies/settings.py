"""The settings of the test-time strategies: one typed dataclass, parsed from options.

Options arrive either as ``key=value`` strings from the command line
(``--strategy-opt memory_chars=800``) or as typed values from a YAML file; both go
through ``parse_settings``. Every setting that changes a number is recorded in the
run manifest through ``Strategy.describe()``.
"""

from __future__ import annotations

import dataclasses
import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from harness.boundary.json_value import JsonObject
from harness.errors import ConfigError

FEEDBACK_MODES = ("standard", "augmented")
REHEARSAL_USERS = ("simulator", "rehearser")
MEMORY_POSITIONS = ("system", "first_user")
# Model names that mean "the model under test" for the rehearser and the critic.
SELF_MODEL_NAMES = ("", "self", "none", "default")


@dataclass
class StrategySettings:
    """Every strategy option. Not all apply to every strategy (see ``REHEARSAL_ONLY``)."""

    # -- any strategy -----------------------------------------------------
    # "augmented": rewrite environment errors into actionable feedback (non-standard).
    env_feedback: str = "standard"
    # Ask the rehearser to predict every real tool result before it is known.
    measure_world_model: bool = False
    # The rehearser model (None: the model under test) and its server.
    rehearser_model: str | None = None
    rehearser_api_base: str | None = None
    # Appended to every rehearser prompt (e.g. "/think" for thinking models).
    think_switch: str = ""
    # At most this many earlier real tool calls are shown to the rehearser as examples.
    max_examples: int = 8
    # Bound on the text of one rehearser/critic prompt (the middle is cut).
    max_prompt_chars: int = 60_000
    # -- rehearsal and self-consistency -----------------------------------
    # Sampling temperature of rehearsals / self-consistency votes (> 0).
    temperature: float = 0.7
    # -- rehearsal --------------------------------------------------------
    critic_model: str | None = None
    critic_api_base: str | None = None
    # Who plays a simulated user during rehearsal: the benchmark's simulator or the rehearser.
    rehearsal_user: str = "simulator"
    # Cap of the distilled memory (and of each critique shown in sequential mode), characters.
    memory_chars: int = 1500
    # Where the memory goes in the committed episode.
    memory_position: str = "system"
    # User turns the rehearser may play in one rehearsal (rehearsal_user=rehearser).
    max_user_turns: int = 10

    def to_dict(self) -> JsonObject:
        return dataclasses.asdict(self)

    @property
    def augmented_feedback(self) -> bool:
        return self.env_feedback == "augmented"


# Options that only make sense for the rehearsal strategies.
REHEARSAL_ONLY = {
    "critic_model",
    "critic_api_base",
    "rehearsal_user",
    "memory_chars",
    "memory_position",
    "max_user_turns",
}
# Options that only make sense where there is sampling to vary.
SAMPLING_ONLY = {"temperature"}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _coerce(name: str, kind: str, value: object) -> Any:
    """One option value as the field's type (strings from the command line included)."""
    optional = "None" in kind
    if value is None or (optional and isinstance(value, str) and value.strip().lower() == "none"):
        if optional:
            return None
        raise ConfigError(f"strategy option '{name}' needs a value")
    if kind.startswith("bool"):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ConfigError(f"strategy option '{name}' must be true or false, got {value!r}")
    if kind.startswith("int"):
        try:
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float | str)
                or (isinstance(value, float) and not value.is_integer())
            ):
                raise ValueError
            return int(value)
        except (TypeError, ValueError):
            raise ConfigError(
                f"strategy option '{name}' must be an integer, got {value!r}"
            ) from None
    if kind.startswith("float"):
        try:
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise ValueError
            number = float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"strategy option '{name}' must be a number, got {value!r}") from None
        if not math.isfinite(number):  # YAML's .nan and .inf, or "nan" on the command line
            raise ConfigError(f"strategy option '{name}' must be a finite number, got {value!r}")
        return number
    return str(value)


def parse_settings(options: Mapping[str, object] | None) -> StrategySettings:
    """Typed, validated settings from an options mapping (unknown keys are errors)."""
    options = dict(options or {})
    known = {f.name: str(f.type) for f in fields(StrategySettings)}
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ConfigError(
            f"unknown strategy option(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )
    values = {name: _coerce(name, known[name], value) for name, value in options.items()}
    settings = StrategySettings(**values)
    for name in ("rehearser_model", "critic_model"):
        model = getattr(settings, name)
        if model is not None and model.strip().lower() in SELF_MODEL_NAMES:
            setattr(settings, name, None)
    _validate(settings)
    return settings


def _validate(settings: StrategySettings) -> None:
    choices = {
        "env_feedback": FEEDBACK_MODES,
        "rehearsal_user": REHEARSAL_USERS,
        "memory_position": MEMORY_POSITIONS,
    }
    for name, allowed in choices.items():
        if getattr(settings, name) not in allowed:
            raise ConfigError(
                f"strategy option '{name}' must be one of {', '.join(allowed)}, "
                f"got {getattr(settings, name)!r}"
            )
    if not settings.temperature > 0:
        raise ConfigError("strategy option 'temperature' must be > 0 (else samples are identical)")
    for name in ("memory_chars", "max_prompt_chars", "max_user_turns"):
        if getattr(settings, name) < 1:
            raise ConfigError(f"strategy option '{name}' must be positive")
    if settings.max_examples < 0:
        raise ConfigError("strategy option 'max_examples' must be >= 0")


def derive_seed(base: int | None, tag: str, index: int) -> int:
    """A deterministic seed per (trial seed, purpose, index): distinct samples get
    distinct seeds, so neither the server nor the response cache repeats them."""
    return zlib.crc32(f"{base}:{tag}:{index}".encode()) & 0x7FFFFFFF
