"""The results store: one folder per run.

``manifest.json`` says what produced the numbers (model, settings, versions);
``samples.jsonl`` holds one record per (sample, trial), appended as each finishes.
The file is append-only: a record that is retried later is appended again and the
last record of a key wins. A kill can leave at most a torn last line, which
reading skips and the next append closes off.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.boundary import dumps_safe
from harness.errors import ConfigError
from harness.models.redact import mask

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


@dataclass
class LoadedRecords:
    latest: dict[str, dict[str, Any]]  # key -> last record
    torn_lines: int


def read_records(path: Path) -> LoadedRecords:
    """Every record of a samples.jsonl, the last one per key, skipping torn lines."""
    latest: dict[str, dict[str, Any]] = {}
    torn = 0
    if not path.exists():
        return LoadedRecords(latest, 0)
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                torn += 1
                continue
            if isinstance(record, dict) and "key" in record:
                latest[record["key"]] = record
            else:
                torn += 1
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
            return json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{self.manifest_path}: unreadable manifest ({exc})") from None

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
        line = dumps_safe(mask(record), default=str)
        self._samples_handle.write(line + "\n")
        self._samples_handle.flush()

    def close(self) -> None:
        if self._samples_handle is not None:
            self._samples_handle.flush()
            os.fsync(self._samples_handle.fileno())
            self._samples_handle.close()
            self._samples_handle = None
        if self._lock_handle is not None:
            fcntl.flock(self._lock_handle, fcntl.LOCK_UN)
            self._lock_handle.close()
            self._lock_handle = None
