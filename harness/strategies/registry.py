"""Strategy names on the command line (``--strategy plain``) to strategy objects."""

from __future__ import annotations

from harness.errors import ConfigError
from harness.strategies.base import PlainStrategy, Strategy


def build_strategy(spec: str) -> Strategy:
    """``plain`` today; ``name:arg`` forms are parsed here as strategies are added."""
    name, _, _arg = spec.partition(":")
    if name == "plain" and not _arg:
        return PlainStrategy()
    raise ConfigError(f"unknown strategy '{spec}' (known: plain)")
