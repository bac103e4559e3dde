"""Suites: which benchmarks, subsets, samples and trials one run covers (tasks/*.yaml)."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.boundary.json_value import JsonObject
from harness.errors import ConfigError
from harness.models.redact import add_config_secrets

if TYPE_CHECKING:
    from harness.task.contract import Adapter

PACKAGE_DIR = Path(__file__).resolve().parents[1]
# The repository's tasks/ folder is the source of truth; a built wheel carries a
# copy inside the package (hatch_build.py), so an installed harness finds them too.
PACKAGED_SUITES_DIR = PACKAGE_DIR / "suite_data"
SUITES_DIR = PACKAGE_DIR.parent / "tasks"


@dataclass
class SuiteEntry:
    benchmark: str
    subsets: list[str] | str = "all"
    limit: int | None = None
    ids: list[str] | None = None
    options: dict[str, object] = field(default_factory=dict)


@dataclass
class Suite:
    name: str
    entries: list[SuiteEntry]
    description: str = ""
    trials: int = 1
    # Defaults for the simulated user and the judge (the command line overrides them).
    user_model: str | None = None
    judge_model: str | None = None
    source: str = ""
    sha256: str = ""

    def to_dict(self) -> JsonObject:
        return asdict(self)


def suite_dirs() -> list[Path]:
    """Where suites are looked up by name: the installed package's copy, then the
    checkout's tasks/ folder (only a checkout has pyproject.toml beside it)."""
    dirs = [PACKAGED_SUITES_DIR]
    if (PACKAGE_DIR.parent / "pyproject.toml").is_file():
        dirs.append(SUITES_DIR)
    return [d for d in dirs if d.is_dir()]


def available_suites() -> list[str]:
    names: set[str] = set()
    for folder in suite_dirs():
        if folder.is_dir():
            names.update(path.stem for path in folder.glob("*.yaml"))
    return sorted(names)


def _resolve(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        return path
    for folder in suite_dirs():
        candidate = folder / f"{name_or_path}.yaml"
        if candidate.is_file():
            return candidate
    known = ", ".join(available_suites()) or "none"
    raise ConfigError(f"unknown suite '{name_or_path}' (known: {known})")


SUITE_KEYS = {"name", "description", "trials", "user_model", "judge_model", "entries"}
# More trials than this in a suite file is a typo (the command line has the same bound).
MAX_SUITE_TRIALS = 10_000


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _entry(raw: object, where: str) -> SuiteEntry:
    if not isinstance(raw, dict) or "benchmark" not in raw:
        raise ConfigError(f"{where}: each entry needs a 'benchmark'")
    if not isinstance(raw["benchmark"], str) or not raw["benchmark"].strip():
        raise ConfigError(f"{where}: 'benchmark' must be a benchmark name")
    unknown = set(raw) - {"benchmark", "subsets", "limit", "ids", "options"}
    if unknown:
        raise ConfigError(f"{where}: unknown entry keys {sorted(unknown)}")
    subsets = raw.get("subsets", "all")
    if not (
        subsets == "all"
        or (isinstance(subsets, list) and subsets and all(isinstance(s, str) for s in subsets))
    ):
        raise ConfigError(f"{where}: 'subsets' must be 'all' or a list of names")
    limit = raw.get("limit")
    if limit is not None and (not _is_int(limit) or limit < 1):
        raise ConfigError(f"{where}: 'limit' must be a positive integer")
    options = raw.get("options") or {}
    if not isinstance(options, dict):
        raise ConfigError(f"{where}: 'options' must be a mapping")
    add_config_secrets(options)  # a judge key or a URL with a password among the options
    ids = raw.get("ids")
    if ids is not None and not (
        isinstance(ids, list) and all(isinstance(i, (str, int)) for i in ids)
    ):
        raise ConfigError(f"{where}: 'ids' must be a list of sample ids")
    return SuiteEntry(
        benchmark=str(raw["benchmark"]),
        subsets=subsets,
        limit=limit,
        ids=[str(i) for i in ids] if ids else None,
        options=options,
    )


def check_entry_options(entry: SuiteEntry, where: str) -> None:
    """The entry's options are ones its benchmark takes (``Adapter.known_options``),
    checked when the suite is read: before a server starts or a sample loads."""
    _entry_adapter(entry).check_options(entry.options, where)


def _entry_adapter(entry: SuiteEntry) -> Adapter:
    from harness.task.registry import get_adapter

    return get_adapter(entry.benchmark)


def _entry_subsets(entry: SuiteEntry) -> set[str]:
    if entry.subsets == "all":
        return set(_entry_adapter(entry).subsets())
    return set(entry.subsets)


def check_entries_disjoint(entries: list[SuiteEntry], where: str) -> None:
    """Two entries may not ask for the same sample: a run holds one record per
    benchmark, subset, sample and trial, so the second entry's records would
    overwrite the first's (and its options replace the first's). Entries of one
    benchmark are disjoint when their subsets are, or when both name ids and no
    id is in both."""
    for later in range(len(entries)):
        for earlier in range(later):
            first, second = entries[earlier], entries[later]
            if first.benchmark != second.benchmark:
                continue
            shared = _entry_subsets(first) & _entry_subsets(second)
            if first.ids is not None and second.ids is not None:
                if not set(first.ids) & set(second.ids):
                    continue
            if shared:
                raise ConfigError(
                    f"{where}: entries {earlier + 1} and {later + 1} both ask for "
                    f"{first.benchmark} {', '.join(sorted(shared)[:3])}"
                    f"{' ...' if len(shared) > 3 else ''}: a run keeps one record per sample "
                    "and trial, so run the second configuration as a run of its own"
                )


def load_suite(name_or_path: str) -> Suite:
    """Read and validate a suite by name (tasks/<name>.yaml) or path."""
    from harness.config.validate import read_yaml

    path = _resolve(name_or_path)
    raw = read_yaml(path, str(path))
    text = path.read_text(encoding="utf-8")  # read_yaml has checked it is text
    if not isinstance(raw, dict) or not isinstance(raw.get("entries"), list) or not raw["entries"]:
        raise ConfigError(f"{path}: a suite needs a non-empty 'entries' list")
    unknown = sorted(str(key) for key in set(raw) - SUITE_KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown suite keys {unknown} (known: {sorted(SUITE_KEYS)})")
    trials = raw.get("trials", 1)
    if not _is_int(trials) or not 1 <= trials <= MAX_SUITE_TRIALS:
        raise ConfigError(f"{path}: 'trials' must be an integer from 1 to {MAX_SUITE_TRIALS}")
    for key in ("name", "user_model", "judge_model"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise ConfigError(f"{path}: '{key}' must be text")
    entries = [_entry(item, f"{path} entry {i + 1}") for i, item in enumerate(raw["entries"])]
    for index, entry in enumerate(entries):
        check_entry_options(entry, f"{path} entry {index + 1}")
    check_entries_disjoint(entries, str(path))
    return Suite(
        name=str(raw.get("name") or path.stem),
        description=str(raw.get("description") or ""),
        trials=trials,
        user_model=raw.get("user_model"),
        judge_model=raw.get("judge_model"),
        entries=entries,
        source=str(path),
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )
