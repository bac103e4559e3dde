"""Database hashes that depend only on the task: computed once per tau2 version.

The gold hashes (the databases after the task's gold actions, tau2's gold
environment) and the initial hashes (nothing executed) depend on nothing but
the tau2 code base (its data and tools), the domain's environment settings
(banking_knowledge's retrieval variant) and the task itself. Computing them
builds an environment and hashes its database: about a second per airline task.
They are kept on disk, one small JSON file per (kind, domain, settings, task
content), in the tau2 code base's cache folder (cache_files.py). The file name
is a digest of the task's full JSON, so an edited task never reads an old entry.
A file that cannot be read is computed again; a folder that cannot be written
only costs the recomputation.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .cache_files import cache_folder, write_json
from .domains import Domain, initialized_environment
from .shared_rows import database_hash, shares_rows

if TYPE_CHECKING:
    from tau2.data_model.tasks import Task
    from tau2.environment.environment import Environment as Tau2Env
    from tau2.environment.toolkit import ToolKitBase

Hashes = tuple[str | None, str | None]  # (agent database, user database)

FORMAT = 1  # bump when what is stored, or how it is computed, changes

_lock = threading.Lock()
_memory: dict[str, Hashes] = {}


def entry_key(kind: str, domain: Domain, task: Task) -> str:
    content = {
        "format": FORMAT,
        "kind": kind,
        "domain": domain.name,
        "task": task.model_dump(mode="json"),
    }
    if domain.retrieval is not None:
        content["retrieval"] = domain.retrieval
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read(path: Path) -> Hashes | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        agent, user = data["agent_db"], data["user_db"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not all(value is None or isinstance(value, str) for value in (agent, user)):
        return None
    return agent, user


def _write(path: Path, hashes: Hashes) -> None:
    write_json(path, {"agent_db": hashes[0], "user_db": hashes[1]})


def clear_memory() -> None:
    """Forget the in-process copies (the disk entries stay)."""
    with _lock:
        _memory.clear()


def cached_hashes(kind: str, domain: Domain, task: Task, compute: Callable[[], Hashes]) -> Hashes:
    """The hashes of ``kind`` ("gold" or "initial") for a task: from memory, from disk,
    else computed and stored."""
    key = f"{domain.package.cache_name}/{entry_key(kind, domain, task)}"
    with _lock:
        found = _memory.get(key)
    if found is not None:
        return found
    path = cache_folder(domain.package) / domain.name / kind / f"{key.rsplit('/', 1)[1]}.json"
    found = _read(path)
    if found is None:
        found = compute()
        _write(path, found)
    with _lock:
        _memory[key] = found
    return found


def environment_hashes(env: Tau2Env) -> Hashes:
    """tau2's ``get_db_hash()`` and ``get_user_db_hash()``; a database sharing rows
    (shared_rows.py) is hashed from its rows' JSON computed once, to the same hash."""
    return _toolkit_hash(env.tools), _toolkit_hash(env.user_tools)


def _toolkit_hash(toolkit: ToolKitBase | None) -> str | None:
    if toolkit is None:
        return None
    if shares_rows(toolkit.db):
        return database_hash(toolkit.db)
    return toolkit.get_db_hash()


def initial_hashes(domain: Domain, task: Task) -> Hashes:
    """Database hashes of the task's initial state (nothing executed)."""
    return cached_hashes(
        "initial", domain, task, lambda: environment_hashes(initialized_environment(domain, task))
    )
