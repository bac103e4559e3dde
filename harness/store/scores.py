"""One ``scores.json``: what `harness score` made of a run, as a ``ScoresFile``.

``ScoresFile.to_dict`` is what the file holds (RunStore.write_scores writes it,
standard JSON with two-space indents) and ``ScoresFile.from_dict`` reads it back
(RunStore.load_scores), so that what is written and what is read are one type.
The file is derived: `harness score` rebuilds it from the records. A reader
checks the entries it uses (``scores_problem``); keys of another version are
kept in ``extra`` and written back as they were, and entries an older version
did not write read as empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.boundary.json_value import JsonObject, JsonValue
from harness.store.manifest import shape_problem
from harness.store.shapes import SCORED_RECORD, MapOf

# Entries readers use, and their types when present (None is allowed).
_SHAPE: dict[str, tuple[type, ...]] = {
    "benchmarks": (dict,),
    "records": (dict,),
    "settings": (dict,),
    "usage": (dict,),
    "missing_samples": (dict,),
    "regrade": (dict,),
    "versions": (dict,),
}

# The order of the file's keys (``regrade_overrides`` only when a regrade had them).
_KEYS = (
    "run_id",
    "scored_at",
    "regrade",
    "regrade_overrides",
    "settings",
    "versions",
    "benchmarks",
    "missing_samples",
    "usage",
    "costs",
    "world_model",
    "records",
)


class ScoresError(ValueError):
    """A JSON value that is not a scores.json (the reason is the message)."""


def scores_problem(data: object) -> str | None:
    """Why a parsed scores.json is not one, or None: the first entry a reader
    uses that does not have its type."""
    problem = shape_problem(data, _SHAPE)
    if problem is not None or not isinstance(data, dict):
        return problem or "not an object"
    benchmarks = data.get("benchmarks") or {}
    if not all(isinstance(entry, dict) for entry in benchmarks.values()):
        return "a benchmark entry is not an object"
    return MapOf(SCORED_RECORD).problem(data.get("records") or {}, "records")


@dataclass
class ScoredRecord:
    """What scores.json keeps of one record: its status and score as scored last,
    and why its last regrade failed (None when it did not)."""

    status: str | None
    score: JsonObject | None
    score_error: str | JsonObject | None = None

    def to_dict(self) -> JsonObject:
        return {"status": self.status, "score": self.score, "score_error": self.score_error}


@dataclass
class ScoresFile:
    """A run's scores.json: each benchmark's official aggregates (``benchmarks``,
    BenchmarkResult.to_dict() with its counts), the settings and versions it was
    made with, the regrade's counts and each record's current status and score."""

    run_id: str | None = None
    scored_at: str | None = None
    regrade: dict[str, int] = field(default_factory=dict)  # RegradeStats: regraded, changed, failed
    # The load options a regrade was asked for (benchmark -> options), when any.
    regrade_overrides: dict[str, JsonObject] | None = None
    settings: JsonObject = field(default_factory=dict)
    versions: JsonObject | None = None
    benchmarks: dict[str, JsonObject] = field(default_factory=dict)
    missing_samples: dict[str, dict[str, int]] = field(default_factory=dict)
    usage: dict[str, dict[str, int]] = field(default_factory=dict)
    costs: JsonObject = field(default_factory=dict)
    world_model: JsonObject = field(default_factory=dict)
    records: dict[str, ScoredRecord] = field(default_factory=dict)
    extra: JsonObject = field(default_factory=dict)  # keys of other versions

    def to_dict(self) -> JsonObject:
        data: JsonObject = {
            "run_id": self.run_id,
            "scored_at": self.scored_at,
            "regrade": dict(self.regrade),
        }
        if self.regrade_overrides is not None:
            data["regrade_overrides"] = dict(self.regrade_overrides)
        data.update(
            {
                "settings": self.settings,
                "versions": self.versions,
                "benchmarks": dict(self.benchmarks),
                "missing_samples": {
                    bench: dict(subsets) for bench, subsets in self.missing_samples.items()
                },
                "usage": {role: dict(counts) for role, counts in self.usage.items()},
                "costs": self.costs,
                "world_model": self.world_model,
                "records": {key: entry.to_dict() for key, entry in self.records.items()},
            }
        )
        data.update(self.extra)
        return data

    @classmethod
    def from_dict(cls, data: object) -> ScoresFile:
        """ScoresError (with the reason) if ``data`` is not a scores.json."""
        problem = scores_problem(data)
        if problem is not None or not isinstance(data, dict):
            raise ScoresError(problem or "not an object")
        overrides = data.get("regrade_overrides")
        return cls(
            run_id=_text(data.get("run_id")),
            scored_at=_text(data.get("scored_at")),
            regrade=_counts(data.get("regrade")),
            regrade_overrides=_objects(overrides) if isinstance(overrides, dict) else None,
            settings=_object(data.get("settings")),
            versions=data.get("versions"),
            benchmarks=_objects(data.get("benchmarks")),
            missing_samples=_count_table(data.get("missing_samples")),
            usage=_count_table(data.get("usage")),
            costs=_object(data.get("costs")),
            world_model=_object(data.get("world_model")),
            records={key: _scored(entry) for key, entry in _object(data.get("records")).items()},
            extra={key: value for key, value in data.items() if key not in _KEYS},
        )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _object(value: object) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _objects(value: object) -> dict[str, JsonObject]:
    return {key: entry for key, entry in _object(value).items() if isinstance(entry, dict)}


def _counts(value: object) -> dict[str, int]:
    return {
        key: count
        for key, count in _object(value).items()
        if isinstance(count, int) and not isinstance(count, bool)
    }


def _count_table(value: object) -> dict[str, dict[str, int]]:
    return {key: _counts(entry) for key, entry in _objects(value).items()}


def _scored(entry: JsonValue) -> ScoredRecord:
    found = _object(entry)
    status, score, error = found.get("status"), found.get("score"), found.get("score_error")
    return ScoredRecord(
        status=_text(status),
        score=score if isinstance(score, dict) else None,
        score_error=error if isinstance(error, str | dict) else None,
    )
