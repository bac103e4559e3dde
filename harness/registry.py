"""Finding adapters by benchmark name.

The four built-in adapters and any third-party adapter register through the
``harness.adapters`` entry-point group; the built-in table below keeps the
harness working from a source checkout that was never installed.
"""

from __future__ import annotations

import importlib
import os
from functools import cache
from importlib.metadata import entry_points

from harness.errors import ConfigError
from harness.task import Adapter

ENTRY_POINT_GROUP = "harness.adapters"

BUILTIN_ADAPTERS = {
    "bfcl": "harness.adapters.bfcl:BFCLAdapter",
    "tau2": "harness.adapters.tau2:Tau2Adapter",
    "vitabench": "harness.adapters.vitabench:VitaBenchAdapter",
    "finmcp": "harness.adapters.finmcp:FinMCPAdapter",
}


# Adapters registered at run time (tests, notebooks): name -> "module:Class".
_registered: dict[str, str] = {}


def register_adapter(name: str, target: str) -> None:
    """Make an adapter class ("module:Class") available under a benchmark name."""
    _registered[name] = target
    get_adapter.cache_clear()


def _env_adapters() -> dict[str, str]:
    """``HARNESS_ADAPTERS="name=module:Class,..."``: local adapters without packaging."""
    targets = {}
    for item in os.environ.get("HARNESS_ADAPTERS", "").split(","):
        name, _, target = item.strip().partition("=")
        if name and ":" in target:
            targets[name.strip()] = target.strip()
    return targets


def _adapter_targets() -> dict[str, str]:
    targets = {**BUILTIN_ADAPTERS, **_env_adapters(), **_registered}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        targets.setdefault(entry.name, entry.value)
    return targets


def benchmark_names() -> list[str]:
    return sorted(_adapter_targets())


@cache
def get_adapter(name: str) -> Adapter:
    """The adapter instance for a benchmark name (one per process)."""
    targets = _adapter_targets()
    if name not in targets:
        raise ConfigError(f"unknown benchmark '{name}' (known: {', '.join(sorted(targets))})")
    module_name, _, class_name = targets[name].partition(":")
    module = importlib.import_module(module_name)
    adapter = getattr(module, class_name)()
    if not isinstance(adapter, Adapter):
        raise ConfigError(f"adapter '{name}' ({targets[name]}) is not a harness Adapter")
    return adapter
