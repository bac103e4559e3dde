"""Files of an official checkout, verified against the git blob ids of a release.

Some official code and data is not on the package index: a user clones it at a
tag or commit and names the clone. An adapter that reads such a checkout pins the
blob id (what ``git ls-tree`` and ``git hash-object`` print) of every file it
reads or runs, and refuses a checkout whose files differ, naming the first one,
instead of silently mixing versions. A folder the benchmark reads whole (every
file in it) is closed: a file added there is refused too. Blob ids work on any copy of the files, a
clone or an unpacked archive, without git.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

# Files are hashed in pieces of this size: a pinned file may be large (a
# database, an index), and reading one whole would hold it all in memory.
CHUNK_BYTES = 1 << 20


def blob_id(path: Path) -> str:
    """The git blob id of a file (what ``git hash-object`` prints), read in chunks."""
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        digest = hashlib.sha1(b"blob %d\0" % size)  # noqa: S324 - git's own id, not security
        read = 0
        while chunk := handle.read(CHUNK_BYTES):
            digest.update(chunk)
            read += len(chunk)
    if read != size:  # changed while it was read: not the file that was sized
        return "changed while read"
    return digest.hexdigest()


def first_difference(
    root: Path, files: Iterable[tuple[str, str]], closed_folders: Iterable[str] = ()
) -> str | None:
    """The first of ``files`` ((path in the repository, blob id) pairs) that is
    missing or differs under ``root``, as one phrase; None when all are the same.

    ``closed_folders`` are folders the benchmark reads whole (it lists them, as
    a folder of one file per task or per document): each must hold the listed
    files and nothing else, or an added file would be read as part of the release.
    """
    files = tuple(files)
    for relative, expected in files:
        path = root / relative
        if not path.is_file():
            return f"{relative} is missing"
        if blob_id(path) != expected:
            return f"{relative} differs"
    listed = {relative for relative, _ in files}
    for folder in closed_folders:
        if not (root / folder).is_dir():
            return f"{folder} is missing"
        for entry in sorted(entry.name for entry in (root / folder).iterdir()):
            if f"{folder}/{entry}" not in listed:
                return f"{folder}/{entry} is not part of the release (an extra file)"
    return None
