"""The one place where the official ``bfcl_eval`` package is imported.

Two things must happen before any ``bfcl_eval`` module is imported:

1. ``BFCL_PROJECT_ROOT`` must point at a folder of ours. The package creates its
   result, score and lock folders under that root at import time; unset, it would
   create them inside site-packages.
2. ``bfcl_eval.constants.model_config`` must not be imported for real. That module
   imports every vendor SDK (OpenAI, Anthropic, Google, Cohere, Mistral, ...) to
   build the model registry, and most of those SDKs are not installed. The
   checkers only read two things from it: the ``ModelConfig`` type and the
   ``MODEL_CONFIG_MAPPING`` registry (the AST checker asks a registry entry
   whether the model's tools had "." replaced by "_"). We register a small
   stand-in module under that name that holds exactly the registry entries the
   harness scores with. If the real module is already loaded (a full install
   that imported it first), it is left alone: the entries we use exist in the
   real registry under the same names with the same settings.

Nothing in the package is patched; everything else is imported as published.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

MODEL_CONFIG_MODULE = "bfcl_eval.constants.model_config"

# Registry keys of the official registry whose settings match how the harness
# presents tools: OpenAI-style function calling (names with "." sent as "_") and
# BFCL's own prompt mode (names kept as written). They are used only as keys for
# the checkers' settings lookup and as folder names in exports; they do not say
# which model produced the results.
FC_REGISTRY_NAME = "gpt-4o-2024-11-20-FC"
PROMPT_REGISTRY_NAME = "gpt-4o-2024-11-20"


@dataclass
class ModelConfig:
    """The fields of the official registry entry type (same names, same meaning)."""

    model_name: str
    display_name: str
    url: str
    org: str
    license: str
    model_handler: type | None
    input_price: float | None = None
    output_price: float | None = None
    is_fc_model: bool = True
    underscore_to_dot: bool = False


def registry_entries(model_handler: type | None = None) -> dict[str, ModelConfig]:
    """The registry entries the harness needs, as the official registry defines them.

    ``model_handler`` is the handler class for the official evaluator's runner;
    the checkers never use it, so in-process it stays None (importing the real
    handler would import a vendor SDK).
    """
    common = functools.partial(
        ModelConfig,
        model_name="gpt-4o-2024-11-20",
        url="https://openai.com/index/hello-gpt-4o/",
        org="OpenAI",
        license="Proprietary",
        model_handler=model_handler,
    )
    return {
        FC_REGISTRY_NAME: common(
            display_name="GPT-4o-2024-11-20 (FC)",
            is_fc_model=True,
            underscore_to_dot=True,
        ),
        PROMPT_REGISTRY_NAME: common(
            display_name="GPT-4o-2024-11-20 (Prompt)",
            is_fc_model=False,
            underscore_to_dot=False,
        ),
    }


def cache_dir() -> Path:
    """The folder the package may write to (results, scores, lock files)."""
    base = os.environ.get("HARNESS_CACHE_DIR") or str(Path.home() / ".cache" / "harness")
    return Path(base) / "bfcl"


def stand_in_model_config(model_handler: type | None = None) -> ModuleType:
    """A module that provides what the checkers import from the real model_config."""
    module = types.ModuleType(MODEL_CONFIG_MODULE)
    module.__doc__ = (
        "Stand-in for bfcl_eval.constants.model_config (see harness.adapters.bfcl.official)."
    )
    vars(module).update(
        ModelConfig=ModelConfig, MODEL_CONFIG_MAPPING=registry_entries(model_handler)
    )
    return module


def prepare(model_handler: type | None = None) -> None:
    """Make ``bfcl_eval`` importable without side effects in site-packages and
    without vendor SDKs. Idempotent; call before importing any ``bfcl_eval`` module."""
    if "BFCL_PROJECT_ROOT" not in os.environ:
        root = cache_dir()
        root.mkdir(parents=True, exist_ok=True)
        os.environ["BFCL_PROJECT_ROOT"] = str(root)
    if MODEL_CONFIG_MODULE not in sys.modules:
        sys.modules[MODEL_CONFIG_MODULE] = stand_in_model_config(model_handler)


def module(name: str) -> ModuleType:
    """Import one ``bfcl_eval`` module after ``prepare()``."""
    if not name.startswith("bfcl_eval"):
        raise ValueError(f"not a bfcl_eval module: {name}")
    prepare()
    return importlib.import_module(name)


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bfcl-eval")
    except PackageNotFoundError:
        return "unknown"
