"""Strategy names on the command line to strategy objects.

    plain                      one real episode (the default)
    rehearsal-parallel:N       N independent rehearsals, then one real episode
    rehearsal-sequential:N     N rehearsals, each shown the earlier critiques
    self-consistency:K         K sampled replies per step, the majority executed

``options`` are the strategy settings (``settings.StrategySettings``), as strings
from ``--strategy-opt key=value`` or typed values from a YAML mapping.
``model_factory(name, api_base)`` builds the client of a rehearser or critic
model other than the model under test; it is called once, here, so a model that
cannot be reached fails before the run starts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from harness.errors import ConfigError
from harness.models.base import ModelClient
from harness.strategies.base import Strategy
from harness.strategies.plain import PlainStrategy
from harness.strategies.rehearsal import RehearsalStrategy
from harness.strategies.self_consistency import SelfConsistencyStrategy
from harness.strategies.settings import (
    REHEARSAL_ONLY,
    SAMPLING_ONLY,
    parse_settings,
)
from harness.strategies.world_model import probe_layers

ModelFactory = Callable[[str, str | None], ModelClient]

KNOWN = "plain, rehearsal-parallel:N, rehearsal-sequential:N, self-consistency:K"
REHEARSER_OPTIONS = {"rehearser_model", "rehearser_api_base", "think_switch", "max_examples"}


def _count(spec: str, arg: str, what: str) -> int:
    try:
        value = int(arg)
    except ValueError:
        raise ConfigError(f"strategy '{spec}' needs a whole number of {what} after ':'") from None
    if value < 1:
        raise ConfigError(f"strategy '{spec}': the number of {what} must be at least 1")
    return value


def _refuse(spec: str, given: set[str], options: set[str]) -> None:
    wrong = sorted(given & options)
    if wrong:
        raise ConfigError(f"strategy option(s) {', '.join(wrong)} do not apply to '{spec}'")


def _client(
    name: str | None, api_base: str | None, factory: ModelFactory | None
) -> ModelClient | None:
    """The client of a named model; None means the model under test."""
    if name is None:
        return None
    if factory is None:
        raise ConfigError(f"model '{name}' cannot be built here (no model factory given)")
    return factory(name, api_base)


def build_strategy(
    spec: str,
    options: Mapping[str, object] | None = None,
    model_factory: ModelFactory | None = None,
) -> Strategy:
    """The strategy for a ``--strategy`` value and its options."""
    given = set(options or {})
    settings = parse_settings(options)
    name, colon, arg = spec.strip().partition(":")
    rehearses = name in ("rehearsal-parallel", "rehearsal-sequential")
    if not rehearses and not settings.measure_world_model:
        # Without rehearsal or world-model measurement no rehearser is ever asked.
        _refuse(spec, given, REHEARSER_OPTIONS | {"max_prompt_chars"})
    if name == "plain" and not colon:
        _refuse(spec, given, REHEARSAL_ONLY | SAMPLING_ONLY)
        rehearser = _client(settings.rehearser_model, settings.rehearser_api_base, model_factory)
        return PlainStrategy(settings, rehearser, probe_layers(settings))
    if name == "self-consistency" and colon:
        _refuse(spec, given, REHEARSAL_ONLY)
        k = _count(spec, arg, "samples")
        rehearser = _client(settings.rehearser_model, settings.rehearser_api_base, model_factory)
        return SelfConsistencyStrategy(k, settings, rehearser)
    if rehearses and colon:
        n = _count(spec, arg, "rehearsals")
        mode = name.removeprefix("rehearsal-")
        rehearser = _client(settings.rehearser_model, settings.rehearser_api_base, model_factory)
        critic = _client(settings.critic_model, settings.critic_api_base, model_factory)
        return RehearsalStrategy(mode, n, settings, rehearser, critic)
    raise ConfigError(f"unknown strategy '{spec}' (known: {KNOWN})")
