"""One line of ``samples.jsonl``: the ``Record`` of one (sample, trial).

``Record.to_dict`` / ``Record.from_dict`` are the one serialisation of a record
(the store writes and reads lines with them; merge copies them). The on-disk
form is a JSON object whose keys are the field names; keys a reader does not
know (written by another version) are kept in ``extra`` and written back as
they were, and keys an older version did not write are None. A model's reply is
stored once: a reply's message points at its turn (store/replies.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import Any, Literal

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
# The key a regrade that failed adds to an ``ok`` record (its reason): the record
# keeps its status, and counts as a scoring error until a regrade succeeds.
REGRADE_ERROR_KEY = "score_error"


def record_key(benchmark: str, subset: str, sample_id: str, trial: int) -> str:
    return f"{benchmark}/{subset}/{sample_id}#{trial}"


def has_type(value: Any, types: tuple[type, ...]) -> bool:
    # bool is an int to Python, never to a reader of a count or a trial.
    return isinstance(value, types) and not (isinstance(value, bool) and bool not in types)


def split_known(
    data: dict[str, Any], names: tuple[str, ...]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the entries of a JSON object that ``names`` name, the others): a typed
    object's fields, and the keys of another version that it keeps to write back."""
    known = {name: data[name] for name in names if name in data}
    return known, {name: value for name, value in data.items() if name not in names}


def record_problem(data: Any) -> str | None:
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
    status: str = OK  # a RecordStatus: ok, infra_error or score_error
    error: dict[str, Any] | str | None = None
    score: dict[str, Any] | None = None  # types.Score.to_dict()
    metadata: dict[str, Any] | None = None
    load_options: dict[str, Any] | None = None
    started_at: str | None = None
    latency_s: float | None = None
    trajectory: dict[str, Any] | None = None  # types.Trajectory.to_dict()
    extra: dict[str, Any] = field(default_factory=dict)  # keys of other versions

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def passed(self) -> bool | None:
        """The score's pass/fail, or None when unscored."""
        if self.score is None or "passed" not in self.score:
            return None
        return bool(self.score["passed"])

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        data.update(self.extra)
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Record:
        """RecordError (with the reason) if ``data`` is not a record."""
        return parse_record(data)


def parse_record(data: Any) -> Record:
    """The one validating reader of a record: a parsed line as a Record (each reply
    stored once put back in full, store/replies.py), or RecordError naming the first field that
    does not fit its shape."""
    problem = (expand_record(data) if isinstance(data, dict) else None) or record_problem(data)
    if problem is not None:
        raise RecordError(problem)
    values, extra = split_known(data, _FIELD_NAMES)
    return Record(**values, extra=extra)


_FIELD_NAMES = tuple(f.name for f in fields(Record) if f.name != "extra")
