"""Files of an official checkout, verified against the git blob ids of a release.

Some official code and data is not on the package index: a user clones it at a
tag or commit and names the clone. An adapter that reads such a checkout pins the
blob id (what ``git ls-tree`` and ``git hash-object`` print) of every file it
reads or runs, and refuses a checkout whose files differ, naming the first one,
instead of silently mixing versions. Blob ids work on any copy of the files, a
clone or an unpacked archive, without git.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path


def blob_id(path: Path) -> str:
    """The git blob id of a file (what ``git hash-object`` prints)."""
    data = path.read_bytes()
    digest = hashlib.sha1(b"blob %d\0" % len(data))  # noqa: S324 - git's own id, not security
    digest.update(data)
    return digest.hexdigest()


def first_difference(root: Path, files: Iterable[tuple[str, str]]) -> str | None:
    """The first of ``files`` ((path in the repository, blob id) pairs) that is
    missing or differs under ``root``, as one phrase; None when all are the same."""
    for relative, expected in files:
        path = root / relative
        if not path.is_file():
            return f"{relative} is missing"
        if blob_id(path) != expected:
            return f"{relative} differs"
    return None
