"""The pending samples of a run shared by its worker processes: each takes the
next one when it has room for it.

Dealing each worker a fixed share up front left one worker idle while the other
finished: the estimate of an episode's cost orders the work but does not weigh it,
and a core the machine slows (another tenant, a noisy neighbour) held its whole
share back. Taken in turn, the samples start in the run's one order (the longest
first) whichever worker runs them, and the workers end within one sample's
trials of each other.

The turn is a counter in a small file that the workers share: ``take`` locks it
(``flock``), reads the next index, writes it plus one. Each worker opens the file
itself: a lock belongs to an open file, and one opened before a fork would be
shared by the copies and exclude neither. A worker killed after taking a sample
leaves its unwritten pairs missing from samples.jsonl, so a rerun runs them, as
for any pair a dead worker did not write.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path

_WIDTH = 8  # bytes of the counter


def new_counter() -> Path:
    """A fresh counter file (at 0) in the system's temporary folder, for one run."""
    fd, name = tempfile.mkstemp(prefix="harness-claims-")
    os.close(fd)
    return Path(name)


class ClaimCounter:
    """One process's handle on a counter: ``take`` gives each index below
    ``count`` to one taker only, in order, then None."""

    def __init__(self, path: Path, count: int):
        self.count = count
        self._fd = os.open(path, os.O_RDWR)

    def take(self) -> int | None:
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            stored = os.pread(self._fd, _WIDTH, 0)
            index = int.from_bytes(stored, "little") if len(stored) == _WIDTH else 0
            if index >= self.count:
                return None
            os.pwrite(self._fd, (index + 1).to_bytes(_WIDTH, "little"), 0)
            return index
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self._fd)
