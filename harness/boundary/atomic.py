"""The one way a file is written: whole or not at all, and nothing left behind.

Every file a command writes (a run's manifest and scores.json, a merged
samples.jsonl, the report, the paper's tables, every figure, the exports) is
written to a temporary file beside it and renamed over it when complete, so a
reader sees the old file or the new one, never half of one. When the write
fails (a full disk, a removed folder, an interrupt) the temporary is removed
before the error goes on: no ``.NAME.tmp`` files accumulate beside a run.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def open_atomic(path: Path, mode: str = "w") -> Iterator[IO]:
    """A handle (``"w"``: UTF-8 text, ``"wb"``: bytes) on a temporary beside
    ``path`` that replaces ``path`` when the block ends without an error; on any
    error the temporary is removed and the error raised as it was."""
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', not {mode!r}")
    path = Path(path)
    # Created as open() creates files (0o666 less the umask), under a name of its own.
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        encoding = "utf-8" if mode == "w" else None
        with os.fdopen(descriptor, mode, encoding=encoding) as handle:
            yield handle
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def write_atomic(path: Path, content: str | bytes) -> None:
    """Write ``content`` (text as UTF-8) to ``path`` by ``open_atomic``."""
    with open_atomic(path, "w" if isinstance(content, str) else "wb") as handle:
        handle.write(content)
