"""The results store: one folder per run.

``manifest.json`` says what produced the numbers (model, settings, versions);
``samples.jsonl`` holds one record per (sample, trial), appended as each finishes.
The file is append-only: a record that is retried later is appended again and the
last record of a key wins. A kill can leave at most a torn last line, which
reading skips and the next append closes off.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.boundary import dumps_safe
from harness.errors import ConfigError
from harness.models.redact import mask, may_need_masking

MANIFEST = "manifest.json"
SAMPLES = "samples.jsonl"
SCORES = "scores.json"
LOCK = ".lock"

OK = "ok"


def record_key(benchmark: str, subset: str, sample_id: str, trial: int) -> str:
    return f"{benchmark}/{subset}/{sample_id}#{trial}"


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON so that readers see the old file or the new one, never half;
    credentials masked first."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(dumps_safe(mask(data), indent=2, default=str), encoding="utf-8")
    os.replace(tmp, path)


# The fields every reader relies on, and their types (None allowed where listed).
_RECORD_FIELDS: dict[str, tuple[type, ...]] = {
    "key": (str,),
    "benchmark": (str,),
    "subset": (str,),
    "sample_id": (str, int),
    "trial": (int,),
    "status": (str,),
}
_RECORD_OPTIONAL: dict[str, tuple[type, ...]] = {
    "score": (dict,),
    "error": (dict, str),
    "trajectory": (dict,),
    "metadata": (dict,),
}
# Manifest entries readers use, and their types when present (None is allowed).
_MANIFEST_FIELDS: dict[str, tuple[type, ...]] = {
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
    "last_summary": (dict,),
}


# scores.json entries readers use (it is derived: `harness score` rebuilds it).
_SCORES_FIELDS: dict[str, tuple[type, ...]] = {
    "benchmarks": (dict,),
    "records": (dict,),
    "settings": (dict,),
    "usage": (dict,),
    "missing_samples": (dict,),
    "regrade": (dict,),
    "versions": (dict,),
}


def _has_type(value: Any, types: tuple[type, ...]) -> bool:
    # bool is an int to Python, never to a reader of a count or a trial.
    return isinstance(value, types) and not (isinstance(value, bool) and bool not in types)


def record_problem(record: Any) -> str | None:
    """Why a parsed samples.jsonl line is not a record, or None."""
    if not isinstance(record, dict):
        return f"a JSON {type(record).__name__}, not a record"
    for name, types in _RECORD_FIELDS.items():
        if not _has_type(record.get(name), types):
            return f"'{name}' missing or not {' or '.join(t.__name__ for t in types)}"
    for name, types in _RECORD_OPTIONAL.items():
        if record.get(name) is not None and not _has_type(record[name], types):
            return f"'{name}' is not {' or '.join(t.__name__ for t in types)}"
    return None


def _shape_problem(data: Any, fields: dict[str, tuple[type, ...]]) -> str | None:
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not an object"
    for name, types in fields.items():
        value = data.get(name)
        if value is not None and not _has_type(value, types):
            return f"'{name}' is not {' or '.join(t.__name__ for t in types)}"
    return None


def manifest_problem(manifest: Any) -> str | None:
    """Why a parsed manifest.json is not a manifest, or None."""
    return _shape_problem(manifest, _MANIFEST_FIELDS)


@dataclass
class LoadedRecords:
    latest: dict[str, dict[str, Any]]  # key -> last record
    torn_lines: int


def read_records(path: Path) -> LoadedRecords:
    """Every record of a samples.jsonl, the last one per key, skipping torn lines.

    A line that is not JSON is torn (a kill mid-write) and skipped. A line that
    is JSON but not a record means the file was damaged or written by something
    else: ConfigError, naming the line, rather than a crash in whatever reads it.
    """
    latest: dict[str, dict[str, Any]] = {}
    torn = 0
    if not path.exists():
        return LoadedRecords(latest, 0)
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                torn += 1
                continue
            problem = record_problem(record)
            if problem is not None:
                raise ConfigError(f"{path} line {number}: {problem}; the file is damaged")
            latest[record["key"]] = record
    return LoadedRecords(latest, torn)


class RunStore:
    """A run folder, opened by one writer at a time."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._lock_handle = None
        self._samples_handle = None

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST

    @property
    def samples_path(self) -> Path:
        return self.root / SAMPLES

    @property
    def scores_path(self) -> Path:
        return self.root / SCORES

    def exists(self) -> bool:
        return self.manifest_path.is_file()

    def read_manifest(self) -> dict[str, Any]:
        if not self.exists():
            raise ConfigError(f"{self.root} is not a run folder (no {MANIFEST})")
        try:
            manifest = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except (ValueError, RecursionError) as exc:  # not JSON, or not UTF-8
            reason = str(exc).splitlines()[0][:200]
            raise ConfigError(f"{self.manifest_path}: unreadable manifest ({reason})") from None
        problem = manifest_problem(manifest)
        if problem is not None:
            raise ConfigError(f"{self.manifest_path}: not a run manifest ({problem})")
        return manifest

    def read_scores(self) -> dict[str, Any]:
        """scores.json; ConfigError (rebuild it with `harness score`) if damaged."""
        rebuild = f"rebuild it with: harness score {self.root}"
        try:
            scores = json.loads(self.scores_path.read_text(encoding="utf-8"))
        except (ValueError, RecursionError):
            raise ConfigError(f"{self.scores_path} is not readable JSON; {rebuild}") from None
        problem = _shape_problem(scores, _SCORES_FIELDS)
        if problem is None:
            benchmarks = scores["benchmarks"] or {}
            if not all(isinstance(entry, dict) for entry in benchmarks.values()):
                problem = "a benchmark entry is not an object"
        if problem is not None:
            raise ConfigError(f"{self.scores_path} is damaged ({problem}); {rebuild}")
        return scores

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.manifest_path, manifest)

    def records(self) -> dict[str, dict[str, Any]]:
        return read_records(self.samples_path).latest

    def iter_records(self) -> Iterator[dict[str, Any]]:
        yield from self.records().values()

    def open_for_append(self) -> None:
        """Take the run's lock and open samples.jsonl for appending."""
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock_handle = open(self.root / LOCK, "w")  # noqa: SIM115 - held for the run
        try:
            fcntl.flock(self._lock_handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_handle.close()
            self._lock_handle = None
            raise ConfigError(f"{self.root} is in use by another harness process") from None
        self._close_torn_tail()
        self._samples_handle = self.samples_path.open("a", encoding="utf-8")

    def _close_torn_tail(self) -> None:
        # A kill mid-write can leave a last line without its newline; end it so
        # the next record starts on a line of its own (the torn line is skipped).
        if not self.samples_path.exists() or self.samples_path.stat().st_size == 0:
            return
        with self.samples_path.open("rb+") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                handle.write(b"\n")

    def append(self, record: dict[str, Any]) -> None:
        """Append one record as one line and push it to the OS at once.

        The line is always standard JSON in valid UTF-8 (harness.boundary.dumps_safe:
        invalid text replaced, non-finite numbers and over-deep values as text),
        with credentials masked (harness.models.redact.mask).
        """
        if self._samples_handle is None:
            raise RuntimeError("RunStore.open_for_append() first")
        line = dumps_safe(record, default=str)
        if may_need_masking(line):  # one search over the line; rarely true
            line = dumps_safe(mask(record), default=str)
        self._samples_handle.write(line + "\n")
        self._samples_handle.flush()
        if os.fstat(self._samples_handle.fileno()).st_nlink == 0:
            # The file (or its folder) was removed under the run: writing on would
            # lose every record without a word.
            raise FileNotFoundError(
                errno.ENOENT, "the run's records were removed", str(self.samples_path)
            )

    def close(self) -> None:
        """Flush, sync and release the lock; the lock is released even when the
        disk refuses the flush (the error still propagates)."""
        try:
            if self._samples_handle is not None:
                handle, self._samples_handle = self._samples_handle, None
                try:
                    handle.flush()
                    os.fsync(handle.fileno())
                finally:
                    with contextlib.suppress(OSError):  # the flush error is the one to report
                        handle.close()
        finally:
            self._release_lock()

    def _release_lock(self) -> None:
        if self._lock_handle is not None:
            fcntl.flock(self._lock_handle, fcntl.LOCK_UN)
            self._lock_handle.close()
            self._lock_handle = None
