"""What replaying a transcript gave, kept for the next transcript that replays the same.

A replay (evaluation.replay) runs a transcript's calls again on a fresh environment
in the task's initial state. What it yields (the database hashes, the task's
assertions on the replayed environment, the calls whose replayed output differs from
the recorded one) depends only on the tau2 code base, the domain's settings, the
task and the executed calls with their recorded answers, in order. A run of several
trials holds the same calls more than once wherever a model solves a task the same
way each time; a regrade of it then replays each distinct transcript once and gives
the others the same outcome, which a second replay would compute again.

Kept in this process only, bounded (least recently used first out); ``clear`` forgets
it (tests and the scoring bench, which time replays).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .gold_cache import Hashes, entry_key
from .transcript import CallRecord

if TYPE_CHECKING:
    from tau2.data_model.tasks import Task

    from .domains import Domain

MAX_OUTCOMES = 20_000  # a few hundred bytes each

_lock = threading.Lock()
_outcomes: OrderedDict[str, ReplayOutcome] = OrderedDict()


@dataclass(frozen=True)
class ReplayOutcome:
    """What scoring reads off a replayed environment."""

    hashes: Hashes | None  # None when the task's reward does not compare databases
    env_assertions: tuple[bool, ...]
    mismatches: tuple[str, ...]


def replay_key(domain: Domain, task: Task, calls: Sequence[CallRecord]) -> str:
    """A digest of everything a replay's outcome depends on."""
    content = [
        domain.package.cache_name,
        entry_key("replay", domain, task),  # the domain, its settings and the task's content
        [[r.requestor, r.call.name, r.call.arguments, r.result, r.result_is_error] for r in calls],
    ]
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()


def outcome(key: str, compute: Callable[[], ReplayOutcome]) -> ReplayOutcome:
    """The outcome kept under ``key``, else ``compute()``'s, then kept."""
    with _lock:
        found = _outcomes.get(key)
        if found is not None:
            _outcomes.move_to_end(key)
            return found
    computed = compute()  # outside the lock: a replay takes a fraction of a second
    with _lock:
        _outcomes[key] = computed
        while len(_outcomes) > MAX_OUTCOMES:
            _outcomes.popitem(last=False)
    return computed


def clear() -> None:
    with _lock:
        _outcomes.clear()
