"""Appending lines to a file that several processes of one run write at once.

The worker processes of a run (harness/evaluate/workers.py) append records to the
run's one samples.jsonl (and inputs to its inputs.jsonl). Each append takes an
exclusive ``flock`` on the file, writes its lines with one ``os.write`` on an
``O_APPEND`` descriptor, and lets go: lines of two writers never interleave. A
worker killed mid-write can leave a last line without its newline; the next
writer sees that (the file's last byte) and ends it first, so its own line
starts on a line of its own and only the killed worker's torn line is lost
(readers skip it, and the run redoes that pair on resume).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class SharedAppender:
    """One process's append handle on a file other processes append to as well."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)

    def fileno(self) -> int:
        if self._fd is None:
            raise ValueError(f"{self.path} is closed")
        return self._fd

    def write(self, text: str) -> None:
        """Append ``text`` (whole lines), after a newline if the last writer left none."""
        fd = self.fileno()
        data = text.encode("utf-8", "surrogatepass")
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data
            view = memoryview(data)
            while view:  # a regular file takes it in one write; a short one is finished
                view = view[os.write(fd, view) :]
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def flush(self) -> None:
        """Nothing to flush: every write goes to the OS at once."""

    def sync(self) -> None:
        os.fsync(self.fileno())

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)
