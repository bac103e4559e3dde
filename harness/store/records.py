"""One line of ``samples.jsonl``: the ``Record`` of one (sample, trial).

``Record.to_dict`` / ``Record.from_dict`` are the one serialisation of a record
(the store writes and reads lines with them; merge copies them). The on-disk
form is a JSON object whose keys are the field names; keys a reader does not
know (written by another version) are kept in ``extra`` and written back as
they were, and keys an older version did not write are None. A model's reply is
stored once: a reply's message points at its turn (store/replies.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import Literal, TypeVar

from harness.boundary.json_value import JsonObject
from harness.store.replies import expand_record
from harness.store.shapes import RECORD


def now_iso() -> str:
    """The time now in UTC, as records and manifests write it."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# A record's status: scored (``ok``), the model or its server kept failing
# (``infra_error``: counted apart, run again on resume), or the scorer failed
# (``score_error``). The one place these words are spelled.
RecordStatus = Literal["ok", "infra_error", "score_error"]
OK: RecordStatus = "ok"
INFRA_ERROR: RecordStatus = "infra_error"
SCORE_ERROR: RecordStatus = "score_error"
STATUSES: tuple[RecordStatus, ...] = (OK, INFRA_ERROR, SCORE_ERROR)
# The key a regrade that failed adds to an ``ok`` record (its reason: the field
# ``Record.score_error``): the record keeps its status, and counts as a scoring
# error until a regrade succeeds.
REGRADE_ERROR_KEY = "score_error"

_V = TypeVar("_V")


def record_key(benchmark: str, subset: str, sample_id: str, trial: int) -> str:
    return f"{benchmark}/{subset}/{sample_id}#{trial}"


def has_type(value: object, types: tuple[type, ...]) -> bool:
    # bool is an int to Python, never to a reader of a count or a trial.
    return isinstance(value, types) and not (isinstance(value, bool) and bool not in types)


def split_known(
    data: Mapping[str, _V], names: tuple[str, ...]
) -> tuple[dict[str, _V], dict[str, _V]]:
    """(the entries of a JSON object that ``names`` name, the others): a typed
    object's fields, and the keys of another version that it keeps to write back."""
    known = {name: data[name] for name in names if name in data}
    return known, {name: value for name, value in data.items() if name not in names}


def record_problem(data: object) -> str | None:
    """Why a parsed samples.jsonl line is not a record, or None: the first field,
    at any level a reader reads, that does not have its type (store/shapes.py)."""
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not a record"
    return RECORD.problem(data, "")


class RecordError(ValueError):
    """A JSON object that is not a record (the reason is the message)."""


@dataclass
class Record:
    key: str  # benchmark/subset/sample_id#trial
    benchmark: str
    subset: str
    sample_id: str | int
    trial: int
    seed: int | None = None
    # A RecordStatus (ok, infra_error or score_error); the text of another
    # version's status is kept as it was written.
    status: str = OK
    error: JsonObject | str | None = None
    score: JsonObject | None = None  # types.Score.to_dict()
    metadata: JsonObject | None = None
    load_options: JsonObject | None = None
    started_at: str | None = None
    latency_s: float | None = None
    trajectory: JsonObject | None = None  # types.Trajectory.to_dict()
    # Why the last regrade of an ``ok`` record failed (REGRADE_ERROR_KEY): set by
    # scoring and read back from scores.json, never written to samples.jsonl.
    score_error: str | JsonObject | None = None
    extra: JsonObject = field(default_factory=dict)  # keys of other versions

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def passed(self) -> bool | None:
        """The score's pass/fail, or None when unscored."""
        if self.score is None or "passed" not in self.score:
            return None
        return bool(self.score["passed"])

    def to_dict(self) -> JsonObject:
        data: JsonObject = {
            "key": self.key,
            "benchmark": self.benchmark,
            "subset": self.subset,
            "sample_id": self.sample_id,
            "trial": self.trial,
            "seed": self.seed,
            "status": self.status,
            "error": self.error,
            "score": self.score,
            "metadata": self.metadata,
            "load_options": self.load_options,
            "started_at": self.started_at,
            "latency_s": self.latency_s,
            "trajectory": self.trajectory,
        }
        if self.score_error is not None:
            data[REGRADE_ERROR_KEY] = self.score_error
        data.update(self.extra)
        return data

    @classmethod
    def from_dict(cls, data: object) -> Record:
        """RecordError (with the reason) if ``data`` is not a record."""
        return parse_record(data)


def _object(value: object) -> JsonObject | None:
    return value if isinstance(value, dict) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: object) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _whole(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_record(data: object) -> Record:
    """The one validating reader of a record: a parsed line as a Record (each reply
    stored once put back in full, store/replies.py), or RecordError naming the first field that
    does not fit its shape."""
    problem = (expand_record(data) if isinstance(data, dict) else None) or record_problem(data)
    if problem is not None or not isinstance(data, dict):
        raise RecordError(problem or "not a record")
    values, extra = split_known(data, _FIELD_NAMES)
    error = values.get("error")
    sample_id = values["sample_id"]
    score_error = values.get(REGRADE_ERROR_KEY)
    if REGRADE_ERROR_KEY in values and not isinstance(score_error, str | dict):
        extra[REGRADE_ERROR_KEY] = score_error  # another version's: kept as it was
        score_error = None
    return Record(
        key=values["key"],
        benchmark=values["benchmark"],
        subset=values["subset"],
        sample_id=sample_id if isinstance(sample_id, str) else int(sample_id),
        trial=int(values["trial"]),
        seed=_whole(values.get("seed")),
        status=values["status"],
        error=error if isinstance(error, str) else _object(error),
        score=_object(values.get("score")),
        metadata=_object(values.get("metadata")),
        load_options=_object(values.get("load_options")),
        started_at=_text(values.get("started_at")),
        latency_s=_number(values.get("latency_s")),
        trajectory=_object(values.get("trajectory")),
        score_error=score_error,
        extra=extra,
    )


_FIELD_NAMES = tuple(f.name for f in fields(Record) if f.name != "extra")
