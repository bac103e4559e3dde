"""The benchmark's own prompt templates, read at run time from VitaBench's code.

VitaBench's official code (``vita``, MIT) keeps its prompts as YAML files beside
its code, one text per language (``chinese``, ``english``). Where they are found,
the adapter uses them instead of its own wording, so the agent, the user
simulator and the judge read exactly what the benchmark's code sends. Two places,
in this order:

- a checkout of the benchmark's repository (meituan-longcat/VitaBench at commit
  ``CHECKOUT_COMMIT``) named as the data folder (``--data-dir vitabench=PATH``):
  the one folder a user needs for all four task sets (``data/vita/domains/``) and
  the prompts (``src/vita/prompts/``). Its template files are checked against that
  commit's git blob ids: a checkout of another commit is refused in one line
  naming the first file that differs, never mixed;
- an installed ``vita`` package, located through the import system.

The files are read as data: the package itself is never imported (importing it
reads a model configuration and pulls in the benchmark's whole dependency tree).
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from harness.boundary.pinned import first_difference
from harness.errors import ConfigError

# Which official YAML file holds each of our three system prompts.
TEMPLATE_FILES = {
    "agent": "agent_system_prompt.yaml",
    "user": "user_system_prompt.yaml",
    "judge": "sliding_window_eval_template.yaml",
}
OFFICIAL_LANGUAGE = {"zh": "chinese", "en": "english"}
REPOSITORY = "https://github.com/meituan-longcat/VitaBench"
CHECKOUT_COMMIT = "96f3b8529d8ea38d330de2405af7e32a1454f6cd"
CHECKOUT_PROMPTS = "src/vita/prompts"
# The template files' git blob ids at CHECKOUT_COMMIT.
PINNED_TEMPLATES = {
    "agent_system_prompt.yaml": "3b20305d8067f03b56ed0990bf02d02f1f355482",
    "user_system_prompt.yaml": "a037e2ae5f291e80e20463f694bb56f58d1165ee",
    "sliding_window_eval_template.yaml": "40565c8b15a45ec57eed577a2b86e6c3792e2589",
}
CLONE_HINT = (
    f"git clone {REPOSITORY} PATH && git -C PATH checkout {CHECKOUT_COMMIT[:7]}, "
    "then --data-dir vitabench=PATH"
)


@dataclass(frozen=True)
class PromptOrigin:
    """Where the official templates were read: a checkout, or the installed package."""

    folder: Path
    kind: str  # "checkout" or "package"

    def describe(self) -> str:
        if self.kind == "checkout":
            return f"VitaBench checkout {self.folder.parents[2]} (commit {CHECKOUT_COMMIT[:7]})"
        return official_package_version()


def checkout_prompt_dir(data_dir: Path | None) -> Path | None:
    """The prompts folder of a VitaBench checkout named as the data folder, verified;
    None when the folder is not a checkout (a folder of task files only)."""
    if data_dir is None:
        return None
    root = Path(data_dir).expanduser()
    folder = root / CHECKOUT_PROMPTS
    if not folder.is_dir():
        return None
    pinned = [(f"{CHECKOUT_PROMPTS}/{name}", blob) for name, blob in PINNED_TEMPLATES.items()]
    problem = first_difference(root, pinned)
    if problem is not None:
        raise ConfigError(
            f"vitabench: {root} is not VitaBench at commit {CHECKOUT_COMMIT[:7]} ({problem}); "
            f"{CLONE_HINT}"
        )
    return folder.resolve()


def prompt_origin(data_dir: Path | None = None) -> PromptOrigin | None:
    """Where the official templates are: the checkout first, then the package."""
    folder = checkout_prompt_dir(data_dir)
    if folder is not None:
        return PromptOrigin(folder, "checkout")
    installed = official_prompt_dir()
    return None if installed is None else PromptOrigin(installed, "package")


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


def official_templates(language: str, data_dir: Path | None = None) -> dict[str, str] | None:
    """``{"agent": ..., "user": ..., "judge": ...}`` in ``language`` (``zh``/``en``)
    from a checkout named as ``data_dir`` or the installed package, or None."""
    origin = prompt_origin(data_dir)
    return None if origin is None else templates_in(origin.folder, language)


@functools.cache
def templates_in(folder: Path, language: str) -> dict[str, str] | None:
    from harness.config.validate import read_yaml

    templates = {}
    for role, name in TEMPLATE_FILES.items():
        data = read_yaml(folder / name, f"VitaBench prompt file {folder / name}")
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
