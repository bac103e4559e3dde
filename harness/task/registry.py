"""Finding adapters by benchmark name.

Adapters register through the ``harness.adapters`` entry-point group (the
built-in ones in pyproject.toml, third-party ones in their own packages). A
source checkout that was never installed has no entry points; its built-in
adapters are then found as the packages under ``harness.adapters``, each holding
an ``Adapter`` subclass whose ``name`` is the package's name.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
from functools import cache
from importlib.metadata import entry_points

from harness.errors import ConfigError
from harness.task.contract import Adapter, Sample

ENTRY_POINT_GROUP = "harness.adapters"
PACKAGE = "harness.adapters"


# Adapters registered at run time (tests, notebooks): name -> "module:Class".
_registered: dict[str, str] = {}


def register_adapter(name: str, target: str) -> None:
    """Make an adapter class ("module:Class") available under a benchmark name."""
    _registered[name] = target
    get_adapter.cache_clear()


ENV_VARIABLE = "HARNESS_ADAPTERS"


def _env_adapters() -> dict[str, str]:
    """``HARNESS_ADAPTERS="name=module:Class,..."``: local adapters without packaging.

    ConfigError, one line, on an item of another shape or a module that is not
    there: ignored, it would leave the benchmark unknown for no stated reason."""
    targets = {}
    for item in os.environ.get(ENV_VARIABLE, "").split(","):
        if not item.strip():
            continue  # an empty variable, or a trailing comma
        name, _, target = (part.strip() for part in item.partition("="))
        module_name, _, class_name = target.partition(":")
        if not name or not module_name.strip() or not class_name.strip():
            raise ConfigError(
                f"{ENV_VARIABLE}: '{item.strip()}' is not NAME=MODULE:CLASS "
                "(comma-separated, e.g. mybench=my_package.adapter:MyAdapter)"
            )
        if not _module_exists(module_name.strip()):
            raise ConfigError(
                f"{ENV_VARIABLE}: {name}={target}: no module '{module_name.strip()}' "
                "can be imported here (is it on PYTHONPATH?)"
            )
        targets[name] = f"{module_name.strip()}:{class_name.strip()}"
    return targets


@cache
def _module_exists(module_name: str) -> bool:
    """Whether ``module_name`` can be found, without running it (its parent
    packages are imported, as any import of it would)."""
    try:
        return importlib.util.find_spec(module_name) is not None
    except (ImportError, ValueError):  # a parent that is missing or not a package
        return False


def _packaged_adapters() -> dict[str, str]:
    """The adapter packages shipped with the harness, by name (target: the package)."""
    import harness.adapters

    return {
        info.name: PACKAGE + "." + info.name
        for info in pkgutil.iter_modules(harness.adapters.__path__)
        if info.ispkg
    }


@cache
def _installed_targets() -> dict[str, str]:
    """Entry points, then shipped packages that have none (a never-installed checkout)."""
    targets = {entry.name: entry.value for entry in entry_points(group=ENTRY_POINT_GROUP)}
    for name, package in _packaged_adapters().items():
        targets.setdefault(name, package)
    return targets


def _adapter_targets() -> dict[str, str]:
    """name -> "module:Class" (or a package to search); run-time registrations win."""
    return {**_installed_targets(), **_env_adapters(), **_registered}


def benchmark_names() -> list[str]:
    return sorted(_adapter_targets())


def _adapter_class(name: str, target: str) -> type:
    module_name, _, class_name = target.partition(":")
    module = importlib.import_module(module_name)
    if class_name:
        if not hasattr(module, class_name):
            raise ConfigError(f"adapter '{name}': module {module_name} has no {class_name}")
        return getattr(module, class_name)
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, Adapter) and value.name == name:
            return value
    raise ConfigError(f"package {module_name} holds no adapter named '{name}'")


def find_adapter(name: str) -> Adapter | None:
    """The adapter of a benchmark name, or None when no adapter is registered for it
    (e.g. a published table's benchmark, or a run folder from elsewhere)."""
    if name not in _adapter_targets():
        return None
    return get_adapter(name)


def adapter_of(sample: Sample) -> Adapter:
    """The adapter a sample carries; one built by hand carries none: its benchmark's."""
    return sample.adapter if sample.adapter is not None else get_adapter(sample.benchmark)


@cache
def get_adapter(name: str) -> Adapter:
    """The adapter instance for a benchmark name (one per process)."""
    targets = _adapter_targets()
    if name not in targets:
        raise ConfigError(f"unknown benchmark '{name}' (known: {', '.join(sorted(targets))})")
    adapter = _adapter_class(name, targets[name])()
    if not isinstance(adapter, Adapter):
        raise ConfigError(f"adapter '{name}' ({targets[name]}) is not a harness Adapter")
    return adapter
