"""The benchmark's own prompt templates, read at run time from an installed ``vita``.

VitaBench's official package (``vita``, MIT) keeps its prompts as YAML files
beside its code, one text per language (``chinese``, ``english``). When that
package is importable, the adapter uses them instead of its own wording, so the
agent, the user simulator and the judge read exactly what the benchmark's code
sends. The files are located through the import system and read as data: the
package itself is never imported (importing it reads a model configuration and
pulls in the benchmark's whole dependency tree).
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

# Which official YAML file holds each of our three system prompts.
TEMPLATE_FILES = {
    "agent": "agent_system_prompt.yaml",
    "user": "user_system_prompt.yaml",
    "judge": "sliding_window_eval_template.yaml",
}
OFFICIAL_LANGUAGE = {"zh": "chinese", "en": "english"}


@functools.cache
def official_prompt_dir() -> Path | None:
    """The ``prompts`` folder of the installed official package, or None.

    A package named ``vita`` counts only when it has every template file, so an
    unrelated package of the same name is not mistaken for the benchmark."""
    try:
        spec = importlib.util.find_spec("vita")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location) / "prompts"
        if all((folder / name).is_file() for name in TEMPLATE_FILES.values()):
            return folder
    return None


@functools.cache
def official_templates(language: str) -> dict[str, str] | None:
    """``{"agent": ..., "user": ..., "judge": ...}`` in ``language`` (``zh``/``en``)
    from the installed package, or None when it is not installed."""
    folder = official_prompt_dir()
    if folder is None:
        return None
    import yaml

    templates = {}
    for role, name in TEMPLATE_FILES.items():
        data = yaml.safe_load((folder / name).read_text(encoding="utf-8"))
        text = data.get(OFFICIAL_LANGUAGE[language]) if isinstance(data, dict) else None
        if not isinstance(text, str):
            return None  # not the layout this adapter knows: use our own wording
        templates[role] = text
    return templates


def official_package_version() -> str:
    """``vita <version>`` of the installed package whose prompts are used."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"vita {version('vita')}"
    except PackageNotFoundError:
        return "vita (version unknown)"
