"""Run folders as the viewer reads them: incrementally, while a run may still write.

``samples.jsonl`` is append-only (harness/store/run_store.py), so a folder is read
from where the last read stopped: only whole lines (a line without its newline is
still being written and waits for the next read). The last record of a key wins, as
everywhere else. Only each record's list row and the byte offset of its line are
kept; a sample's detail is read again from that line when it is opened, so a long run
costs the viewer little memory.

A file that shrank or was replaced (a rewritten run folder) is read again from the
start, and ``RunFolders.reset_version`` says so to pages that hold older rows.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import ConfigError
from harness.report.html import PAGE_SIZE
from harness.report.sample_list import (
    INDEX_COLUMNS,
    Names,
    SampleOrder,
    SampleRow,
    natural_key,
    sample_order,
    sample_row,
)
from harness.store.inputs import INPUTS, SampleInput, read_inputs, task_key
from harness.store.records import Record
from harness.store.run_store import MANIFEST, SAMPLES

ENTRY = INDEX_COLUMNS.index("entry")


@dataclass
class WatchedRun:
    name: str  # distinct among the viewer's runs
    folder: Path
    offset: int = 0  # bytes of samples.jsonl read so far
    file_id: tuple[int, int] | None = None  # (device, inode) of the file read
    lines: dict[str, int] = field(default_factory=dict)  # key -> offset of its last line
    rows: dict[str, SampleRow] = field(default_factory=dict)  # key -> its list row
    order: dict[str, SampleOrder] = field(default_factory=dict)  # key -> its sort key

    @property
    def samples_path(self) -> Path:
        return self.folder / SAMPLES

    def info(self) -> dict[str, str]:
        """What the run list shows: name, model, state and folder."""
        manifest = read_manifest(self.folder)
        model = manifest.get("model")
        name = model.get("name") if isinstance(model, dict) else None
        if manifest.get("finished_at"):
            state = "finished"
        elif not self.rows:
            state = "no records yet"
        else:
            state = "not finished"
        return {"name": self.name, "model": name or "?", "state": state, "folder": str(self.folder)}


def read_manifest(folder: Path) -> dict[str, object]:
    """The run's manifest, or {} while it is missing or being replaced."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def is_run_folder(folder: Path) -> bool:
    """A run folder, one that is still being written included (records but no manifest yet)."""
    return (folder / MANIFEST).is_file() or (folder / SAMPLES).is_file()


@dataclass
class FoundRuns:
    folders: list[Path]
    skipped: list[Path]  # named folders that are neither a run nor a folder of runs


def find_run_folders(paths: list[Path]) -> FoundRuns:
    """The run folders ``paths`` name: a run folder, or a folder whose sub-folders are
    runs (a sweep: its runs in natural order, step_2 before step_10). A path that is
    neither is skipped (a glob over results/ may name other folders); ConfigError,
    one line, when no run is left."""
    found = FoundRuns([], [])
    for path in paths:
        if is_run_folder(path):
            found.folders.append(path)
            continue
        inside = [p for p in path.iterdir() if is_run_folder(p)] if path.is_dir() else []
        if inside:
            found.folders.extend(sorted(inside, key=lambda p: natural_key(p.name)))
        else:
            found.skipped.append(path)
    if not found.folders:
        names = ", ".join(str(p) for p in found.skipped)
        raise ConfigError(f"{names}: not a run folder (no {MANIFEST} or {SAMPLES}), nor a sweep")
    return found


def distinct_run_names(folders: list[Path]) -> list[str]:
    """Each folder's name, with " (2)" and so on for a name already taken."""
    seen: dict[str, int] = {}
    names = []
    for folder in folders:
        name = folder.resolve().name or str(folder)
        count = seen[name] = seen.get(name, 0) + 1
        names.append(name if count == 1 else f"{name} ({count})")
    return names


class RunFolders:
    """The viewer's runs, re-read on demand; safe to use from many request threads."""

    def __init__(self, folders: list[Path]):
        self.runs = [
            WatchedRun(name, folder)
            for name, folder in zip(distinct_run_names(folders), folders, strict=True)
        ]
        self.names = Names()
        for run in self.runs:
            self.names.position("runs", run.name)
        self.version = 0  # grows with every row added or replaced
        self.reset_version = 0  # the version at which rows were last dropped
        self._lock = threading.Lock()
        # run name -> ((size, mtime) of its inputs.jsonl, its inputs by task key)
        self._inputs: dict[str, tuple[tuple[int, int], dict[str, SampleInput]]] = {}

    def refresh(self) -> None:
        with self._lock:
            for run in self.runs:
                self._read_new_lines(run)

    def _read_new_lines(self, run: WatchedRun) -> None:
        try:
            status = os.stat(run.samples_path)
        except OSError:
            return  # no records yet
        file_id = (status.st_dev, status.st_ino)
        if run.file_id is not None and (file_id != run.file_id or status.st_size < run.offset):
            self._forget(run)
        run.file_id = file_id
        if status.st_size == run.offset:
            return
        with run.samples_path.open("rb") as handle:
            handle.seek(run.offset)
            data = handle.read(status.st_size - run.offset)
        end = data.rfind(b"\n") + 1  # whole lines only: the rest is still being written
        start = 0
        while start < end:
            stop = data.index(b"\n", start)
            self._add_line(run, run.offset + start, data[start:stop])
            start = stop + 1
        run.offset += end

    def _add_line(self, run: WatchedRun, offset: int, line: bytes) -> None:
        record = parse_record(line)
        if record is None:
            return  # torn by a kill, or not a record: the run's readers skip it too
        self.version += 1
        run.lines[record.key] = offset
        run.order[record.key] = sample_order(record)
        run.rows[record.key] = sample_row(record, run.name, self.names, entry=self.version)

    def _forget(self, run: WatchedRun) -> None:
        run.offset, run.lines, run.rows, run.order = 0, {}, {}, {}
        self.version += 1
        self.reset_version = self.version

    def index(self) -> dict[str, object]:
        """Every row (runs in order, samples in natural order) and the name lists."""
        self.refresh()
        with self._lock:
            rows = [
                run.rows[key]
                for run in self.runs
                for key in sorted(run.rows, key=run.order.__getitem__)
            ]
            return {
                "columns": list(INDEX_COLUMNS),
                **self.names.as_dict(),
                "rows": rows,
                "page_size": PAGE_SIZE,
                "version": self.version,
                "run_info": [run.info() for run in self.runs],
            }

    def changes(self, since: int) -> dict[str, object]:
        """The rows added or replaced after version ``since``; ``reload`` when rows were
        dropped since then (the page then reads the whole index again)."""
        self.refresh()
        with self._lock:
            rows = [
                row
                for run in self.runs
                for row in run.rows.values()
                if isinstance(entry := row[ENTRY], int) and entry > since
            ]
            return {
                "version": self.version,
                "reload": since < self.reset_version,
                "rows": rows,
                **self.names.as_dict(),
                "run_info": [run.info() for run in self.runs],
            }

    def sample_input(self, run_name: str, key: str) -> SampleInput | None:
        """The input of ``key``'s sample in run ``run_name`` (None when the run kept
        none); the run's inputs are read again only when their file changed."""
        run = next((r for r in self.runs if r.name == run_name), None)
        if run is None:
            return None
        path = run.folder / INPUTS
        try:
            stat = path.stat()
        except OSError:
            return None
        stamp = (stat.st_size, stat.st_mtime_ns)
        with self._lock:
            cached = self._inputs.get(run.name)
        if cached is None or cached[0] != stamp:
            cached = (stamp, read_inputs(run.folder))
            with self._lock:
                self._inputs[run.name] = cached
        return cached[1].get(task_key(key))

    def record(self, run_name: str, key: str) -> Record | None:
        """The last record of ``key`` in run ``run_name``, read from its line."""
        self.refresh()
        with self._lock:
            run = next((r for r in self.runs if r.name == run_name), None)
            if run is None or key not in run.lines:
                return None
            offset = run.lines[key]
        with run.samples_path.open("rb") as handle:
            handle.seek(offset)
            return parse_record(handle.readline())


def parse_record(line: bytes) -> Record | None:
    try:
        data = json.loads(line.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None
    try:
        return Record.from_dict(data)  # checked there, its replies put back in full
    except (TypeError, ValueError):
        return None
