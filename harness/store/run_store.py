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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from harness.boundary.atomic import write_atomic
from harness.boundary.collector import collector_paused
from harness.boundary.json_read import read_json
from harness.boundary.json_value import JsonMapping, JsonObject
from harness.boundary.sanitise import dumps_safe
from harness.errors import ConfigError
from harness.models.redact import mask, may_need_masking
from harness.store.inputs import INPUTS, InputsFile, SampleInput
from harness.store.manifest import Manifest, manifest_problem
from harness.store.records import OK, Record, record_key, record_problem
from harness.store.replies import compact_record, expand_record
from harness.store.scores import ScoresFile, scores_problem
from harness.store.shared_append import SharedAppender

__all__ = [
    "OK",
    "Manifest",
    "Record",
    "RunStore",
    "manifest_problem",
    "read_records",
    "record_key",
    "write_json_atomic",
]

MANIFEST = "manifest.json"
SAMPLES = "samples.jsonl"
SCORES = "scores.json"
LOCK = ".lock"


RUN_FILES = (MANIFEST, SAMPLES, SCORES, LOCK, INPUTS)


def check_not_a_folder(path: Path) -> None:
    """ConfigError, one line, when a run file's name is taken by something that is
    not a file (a folder): opening it would fail as an OS error, the same on
    every rerun, so it is the command to fix, not a failure to resume."""
    if path.exists() and not path.is_file():
        kind = "a folder" if path.is_dir() else "not a regular file"
        raise ConfigError(
            f"{path} is {kind}; a run folder's {path.name} must be a file "
            "(move it away, or use another --out folder)"
        )


def write_json_atomic(path: Path, data: object) -> None:
    """Write JSON so that readers see the old file or the new one, never half;
    the held secrets masked first."""
    write_atomic(path, dumps_safe(mask(data), indent=2, default=str))


def scores_text(data: JsonMapping) -> str:
    """scores.json's text: indented by two spaces, except that each of its records
    is one line (``"key": {...}``). A large run's thousands of records indented
    took most of the file's lines, and json encodes indented text in Python, ~5x
    slower than compact text (0.14 s against 0.03 s at 4,448 records)."""
    records = data.get("records")
    if not isinstance(records, dict) or not records:
        return dumps_safe(data, indent=2, default=str)
    head = {key: value for key, value in data.items() if key != "records"}
    head["records"] = {}
    text = dumps_safe(head, indent=2, default=str)
    empty = '"records": {}\n}'
    assert text.endswith(empty)  # the last key, empty: what is spliced in below
    lines = ",\n".join(
        f"    {dumps_safe(str(key))}: {dumps_safe(value, default=str)}"
        for key, value in records.items()
    )
    return text[: -len(empty)] + '"records": {\n' + lines + "\n  }\n}"


@dataclass
class LoadedRecords:
    # key -> last record, in its JSON form (Record.to_dict), as the exporters read
    # it; scoring, the reports and merging read Records (``typed``).
    latest: dict[str, dict[str, Any]]
    torn_lines: int

    def typed(self) -> dict[str, Record]:
        return {key: Record.from_dict(data) for key, data in self.latest.items()}


def read_records(path: Path, conversation: bool = True) -> LoadedRecords:
    """Every record of a samples.jsonl, the last one per key, skipping torn lines.

    ``conversation=False`` leaves each trajectory's conversation out as the lines
    are read (CONVERSATION: its messages, turns, earlier contexts and final state):
    aggregating a run reads the scores, statuses, usage and notes, never those,
    which are most of a record's size (a run's records, read whole, take about five
    times the file's size in memory).

    A line that is not JSON is torn (a kill mid-write) and skipped. A line that
    is JSON but not a record means the file was damaged or written by something
    else: ConfigError, naming the line, rather than a crash in whatever reads it.
    """
    latest: dict[str, dict[str, Any]] = {}
    torn = 0
    check_not_a_folder(path)
    if not path.exists():
        return LoadedRecords(latest, 0)
    # Paused, the collector does not walk the records read so far each time the
    # reading has made enough objects: that was half the time of a large read.
    with path.open("rb") as handle, collector_paused():
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = read_json(line)
            except (ValueError, RecursionError):
                if line.decode("utf-8", "replace").strip():  # (blank as text: not torn)
                    torn += 1
                continue
            if not conversation:  # before the check: what is left out is not read
                _drop_conversation(record)
            elif isinstance(record, dict):
                problem = expand_record(record)  # each reply stored once, read in full
                if problem is not None:
                    raise ConfigError(f"{path} line {number}: {problem}; the file is damaged")
            problem = record_problem(record)
            if problem is not None:
                raise ConfigError(f"{path} line {number}: {problem}; the file is damaged")
            latest[record["key"]] = record
    return LoadedRecords(latest, torn)


# What only a regrade, the report's transcripts and the exports read of a trajectory.
CONVERSATION = ("messages", "turns", "reset_histories", "final_state")


def _drop_conversation(record: object) -> None:
    trajectory = record.get("trajectory") if isinstance(record, dict) else None
    if isinstance(trajectory, dict):
        for name in CONVERSATION:
            trajectory.pop(name, None)


def record_line(record: Record) -> str:
    """A record as one line of samples.jsonl (no newline): standard JSON in valid
    UTF-8 (harness.boundary.sanitise.dumps_safe), each model reply once (its message
    points at its turn: store/replies.py), the run's held secrets masked (by value
    only: the trajectory keeps what the model sent and the benchmark gave it)."""
    data = record.to_dict()
    line = dumps_safe(compact_record(data), default=str)
    if may_need_masking(line):  # one search over the line for the held secrets; rarely true
        # Masked first: one form of a call's arguments is left out only when the
        # masked other gives it back.
        line = dumps_safe(compact_record(mask(data)), default=str)
    return line


class RunStore:
    """A run folder, opened by one writer at a time: one process (``open_for_append``),
    or the worker processes of one run, while the process that started them holds
    the folder's lock (``open_as_worker``)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._lock_handle: TextIO | None = None
        self._samples_handle: TextIO | SharedAppender | None = None
        self._inputs: InputsFile | None = None

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST

    @property
    def samples_path(self) -> Path:
        return self.root / SAMPLES

    @property
    def scores_path(self) -> Path:
        return self.root / SCORES

    @property
    def inputs_path(self) -> Path:
        return self.root / INPUTS

    def exists(self) -> bool:
        return self.manifest_path.is_file()

    def check_files(self) -> None:
        """Each of the run's files that is there is a file (check_not_a_folder)."""
        for name in RUN_FILES:
            check_not_a_folder(self.root / name)

    def read_manifest(self) -> JsonObject:
        check_not_a_folder(self.manifest_path)
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

    def read_scores(self) -> JsonObject:
        """scores.json in its JSON form (ScoresFile.to_dict); ConfigError (rebuild
        it with `harness score`) if damaged."""
        rebuild = f"rebuild it with: harness score {self.root}"
        try:
            # A large run's scores.json holds every record's scores (MBs): read as
            # samples.jsonl is (json_read), without the collector walking it.
            raw = self.scores_path.read_bytes()
            raw.decode("utf-8")  # damaged bytes: not readable (read_json would replace them)
            with collector_paused():
                scores = read_json(raw)
        except (ValueError, RecursionError):
            raise ConfigError(f"{self.scores_path} is not readable JSON; {rebuild}") from None
        problem = scores_problem(scores)
        if problem is not None or not isinstance(scores, dict):
            raise ConfigError(f"{self.scores_path} is damaged ({problem}); {rebuild}")
        return scores

    def load_scores(self) -> ScoresFile:
        """scores.json as a ScoresFile (ConfigError as read_scores)."""
        return ScoresFile.from_dict(self.read_scores())

    def write_scores(self, scores: ScoresFile) -> None:
        """Write scores.json (atomically, the held secrets masked): indented, each
        record's entry on a line of its own (``scores_text``)."""
        write_atomic(self.scores_path, scores_text(mask(scores.to_dict())))

    def load_manifest(self) -> Manifest:
        """manifest.json as a Manifest (ConfigError as read_manifest)."""
        return Manifest.from_dict(self.read_manifest())

    def write_manifest(self, manifest: Manifest | JsonMapping) -> None:
        if not isinstance(manifest, Manifest):
            manifest = Manifest.from_dict(manifest)
        self.root.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.manifest_path, manifest.to_dict())

    def records(self, conversation: bool = True) -> dict[str, dict[str, Any]]:
        """The last record of each key, in its JSON form (``conversation``: see read_records)."""
        return read_records(self.samples_path, conversation).latest

    def load_records(self, conversation: bool = True) -> dict[str, Record]:
        """The last record of each key, as a Record (``conversation``: see read_records)."""
        return read_records(self.samples_path, conversation).typed()

    def open_for_append(self) -> None:
        """Take the run's lock and open samples.jsonl for appending."""
        self.check_files()
        self.root.mkdir(parents=True, exist_ok=True)
        lock = self._lock_handle = open(self.root / LOCK, "w")  # noqa: SIM115 - held for the run
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            self._lock_handle = None
            raise ConfigError(f"{self.root} is in use by another harness process") from None
        self._close_torn_tail()
        self._samples_handle = self.samples_path.open("a", encoding="utf-8")
        self._inputs = InputsFile(self.inputs_path)
        self._inputs.open()

    def open_as_worker(self) -> None:
        """Open samples.jsonl and inputs.jsonl for appending beside the run's other
        worker processes (harness/store/shared_append.py). The lock is not taken:
        the process that started the workers holds it for them, and it has closed
        off a torn last line before they started."""
        self.check_files()
        self._samples_handle = SharedAppender(self.samples_path)
        self._inputs = InputsFile(self.inputs_path, shared=True)
        self._inputs.open()

    def has_input(self, key: str) -> bool:
        """Whether the sample's input (``key``: its task key) is in inputs.jsonl."""
        return self._inputs is not None and self._inputs.has(key)

    def append_input(self, sample_input: SampleInput) -> None:
        """Keep one sample's input in inputs.jsonl (harness.store.inputs)."""
        if self._inputs is None:
            raise RuntimeError("RunStore.open_for_append() first")
        self._inputs.add(sample_input)

    def _close_torn_tail(self) -> None:
        # A kill mid-write can leave a last line without its newline; end it so
        # the next record starts on a line of its own (the torn line is skipped).
        if not self.samples_path.exists() or self.samples_path.stat().st_size == 0:
            return
        with self.samples_path.open("rb+") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                handle.write(b"\n")

    def append(self, record: Record) -> None:
        """Append one record as one line and push it to the OS at once.

        The line is always standard JSON in valid UTF-8 (harness.boundary.sanitise.dumps_safe:
        invalid text replaced, non-finite numbers and over-deep values as text),
        with the held secrets masked (harness.models.redact.mask).
        """
        if self._samples_handle is None:
            raise RuntimeError("RunStore.open_for_append() first")
        line = record_line(record)
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
            if self._inputs is not None:
                inputs, self._inputs = self._inputs, None
                with contextlib.suppress(OSError):  # the records' flush error matters more
                    inputs.close()
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

    def discard_unstarted(self, folder_was_there: bool) -> None:
        """Take back what opening a new run (one without a manifest) wrote: its
        manifest, its empty samples.jsonl and inputs.jsonl, its lock, and the folder when it is
        empty and was not there before; after it failed before its first sample:
        only runs are results.
        Anything else in the folder (a started server's log) stays. Call after
        ``close``."""
        written = [self.manifest_path, self.root / LOCK]
        if self.samples_path.is_file() and self.samples_path.stat().st_size == 0:
            written.append(self.samples_path)  # records adopted (--adopt) stay
        if self.inputs_path.is_file() and self.inputs_path.stat().st_size == 0:
            written.append(self.inputs_path)
        for path in written:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        if not folder_was_there:
            with contextlib.suppress(OSError):  # not empty: left as it is
                self.root.rmdir()

    def _release_lock(self) -> None:
        if self._lock_handle is not None:
            fcntl.flock(self._lock_handle, fcntl.LOCK_UN)
            self._lock_handle.close()
            self._lock_handle = None
