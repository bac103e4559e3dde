"""The run manifest: everything that affects a number, written before the first sample.

``Manifest.to_dict`` / ``Manifest.from_dict`` are the one serialisation of
``manifest.json``. Keys a reader does not know (another version's) are kept in
``extra`` and written back; keys an older version did not write are None.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from dataclasses import dataclass, field, fields
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from harness import __version__
from harness.boundary.json_value import JsonMapping, JsonObject
from harness.errors import ConfigError
from harness.store.records import has_type, split_known

# Settings that must match for a rerun to resume a run folder (anything else,
# such as --limit or --trials, may change between resumes).
IDENTITY_KEYS = (
    "model",
    "strategy",
    "sampling",
    "user_model",
    "judge_model",
    "env_feedback",
    "suite_name",
)


def package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def git_sha() -> str:
    root = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    sha = out.stdout.strip()
    if out.returncode != 0 or not sha:
        return "unknown"
    dirty = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        timeout=5,
    ).stdout.strip()
    return sha + ("-dirty" if dirty else "")


def base_versions() -> dict[str, str]:
    return {
        "harness": __version__,
        "harness_git": git_sha(),
        "python": platform.python_version(),
        "litellm": package_version("litellm"),
        "platform": f"{sys.platform}-{platform.machine()}",
    }


def identity(manifest: JsonMapping) -> JsonObject:
    return {key: manifest.get(key) for key in IDENTITY_KEYS}


def check_resumable(old: JsonMapping, new: JsonMapping, run_dir: Path) -> None:
    """Refuse to mix two different runs in one folder."""
    before, after = identity(old), identity(new)
    changed = [key for key in IDENTITY_KEYS if before.get(key) != after.get(key)]
    if changed:
        raise ConfigError(
            f"{run_dir} holds a run with different {', '.join(changed)}; use another --out folder"
        )


# Entries readers use, and their types when present (None is allowed).
SHAPE: dict[str, tuple[type, ...]] = {
    "model": (dict,),
    "model_client": (dict,),
    "sampling": (dict,),
    "strategy": (dict,),
    "env_feedback": (str,),
    "suite_name": (str,),
    "suite": (dict,),
    "trials": (int,),
    "user_model": (str,),
    "judge_model": (str,),
    "versions": (dict,),
    "planned": (dict,),
    "planned_full": (dict,),
    "not_run": (list,),
    "shard": (str,),
    "server": (dict,),
    "fingerprint": (dict,),
    "active_spans": (list,),
    "server_spans": (list,),
    "last_summary": (dict,),
}


def shape_problem(data: object, shape: dict[str, tuple[type, ...]]) -> str | None:
    """Why parsed JSON is not an object whose entries have the ``shape``'s types."""
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not an object"
    for name, types in shape.items():
        value = data.get(name)
        if value is not None and not has_type(value, types):
            return f"'{name}' is not {' or '.join(t.__name__ for t in types)}"
    return None


def manifest_problem(data: object) -> str | None:
    """Why a parsed manifest.json is not a manifest, or None."""
    return shape_problem(data, SHAPE)


class ManifestError(ValueError):
    """A JSON value that is not a manifest (the reason is the message)."""


@dataclass
class Manifest:
    """What produced a run's numbers. Fields below ``shard`` are written only
    when set (a served checkpoint, the run's progress, a merge)."""

    run_id: str | None = None
    created_at: str | None = None
    model: JsonObject | None = None  # name, api_base, prompt_mode, tool_choice
    model_client: JsonObject | None = None
    sampling: JsonObject | None = None  # types.SamplingParams.to_dict()
    strategy: JsonObject | None = None  # Strategy.describe()
    env_feedback: str | None = None
    suite_name: str | None = None
    suite: dict[str, Any] | None = None
    trials: int | None = None
    limit: int | None = None
    seed: int | None = None
    user_model: str | None = None
    judge_model: str | None = None
    data_dir: str | dict[str, str] | None = None  # DataDirs.to_manifest()
    versions: dict[str, str] | None = None
    planned: dict[str, dict[str, int]] | None = None  # this shard's samples per subset
    planned_full: dict[str, dict[str, int]] | None = None  # the whole run's
    not_run: list[JsonObject] | None = None
    cache: str | None = None
    cache_scope: str | None = None
    fingerprint: dict[str, Any] | None = None
    shard: str | None = None
    # A served checkpoint (serve.EndpointPlan.manifest_entries)
    server: JsonObject | None = None
    checkpoint: str | None = None
    step: int | None = None
    # Progress
    active_spans: list[dict[str, Any]] | None = None
    # Each start-to-stop of the run's own server (serve.EndpointPlan.serving):
    # kind, seconds, GPUs held; the leaderboard's GPU-seconds.
    server_spans: list[dict[str, Any]] | None = None
    resumed_at: str | None = None
    finished_at: str | None = None
    last_summary: JsonObject | None = None
    # A merge of shards (harness merge)
    merged_from: list[str] | None = None
    merge_gaps: JsonObject | None = None
    shards: list[dict[str, Any]] | None = None
    extra: JsonObject = field(default_factory=dict)  # keys of other versions

    def to_dict(self) -> JsonObject:
        data: JsonObject = {}
        for name in _FIELD_NAMES:
            value = getattr(self, name)
            # A served run always names its step (None: the checkpoint names none).
            always = name in _ALWAYS or (name == "step" and self.server is not None)
            if always or value is not None:
                data[name] = value
        data.update(self.extra)
        return data

    @classmethod
    def from_dict(cls, data: object) -> Manifest:
        """ManifestError (with the reason) if ``data`` is not a manifest."""
        problem = manifest_problem(data)
        if problem is not None or not isinstance(data, dict):
            raise ManifestError(problem or "not an object")
        values, extra = split_known(data, _FIELD_NAMES)
        return cls(**values, extra=extra)

    def add_active_span(self, started_at: str, seconds: float) -> None:
        """Add one invocation's time: the leaderboard's wall time is the sum of
        these spans (a resume with nothing to do adds none)."""
        spans = self.active_spans = list(self.active_spans or [])
        spans.append({"started_at": started_at, "seconds": round(seconds, 3)})


_FIELD_NAMES = tuple(f.name for f in fields(Manifest) if f.name != "extra")
_ALWAYS = frozenset(_FIELD_NAMES[: _FIELD_NAMES.index("shard") + 1])
