"""An episode's final environment state, taken from the live environment.

tau2's evaluator replays every tool call of a transcript on a fresh environment
to get the predicted database. The episode's own environment already ran exactly
those calls, so at the end of the episode (``Environment.final_state``) it hashes
its databases and runs the task's assertions once, and the first scoring uses
that instead of replaying. Two guards keep this exact:

- the state carries a digest of the calls that reached tau2 (requestor, name,
  arguments, in order); scoring uses it only when the digest equals that of the
  calls it would replay (the transcript up to where tau2 ends the episode), else
  it replays;
- only the scoring that follows the episode in the same process uses it: a state
  is "fresh" once, by its token. A stored run regraded later (``harness score``),
  or a second scoring of the same transcript, replays as tau2 does, so a regrade
  still checks the record against tau2's own environment.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from harness.boundary.json_value import JsonMapping, JsonObject, JsonValue, list_field

from .gold_cache import Hashes
from .json_fields import int_value

KIND = "tau2-live-state"
MAX_FRESH = 100_000  # tokens kept for scoring; older ones fall back to replay

_lock = threading.Lock()
_fresh: OrderedDict[str, None] = OrderedDict()


class CallDigest:
    """A running digest of the calls an environment ran, in order."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.count = 0

    def add(self, requestor: str, name: str, arguments: Mapping[str, object]) -> None:
        line = json.dumps([requestor, name, arguments], sort_keys=True, default=str)
        self._hash.update(line.encode("utf-8", errors="replace") + b"\n")
        self.count += 1

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def digest_of(calls: Iterable[tuple[str, str, Mapping[str, object]]]) -> tuple[str, int]:
    digest = CallDigest()
    for requestor, name, arguments in calls:
        digest.add(requestor, name, arguments)
    return digest.hexdigest(), digest.count


@dataclass(frozen=True)
class LiveState:
    """What scoring needs of the live environment at the end of an episode."""

    calls_digest: str
    n_calls: int
    hashes: Hashes | None  # None when the task's reward does not compare databases
    env_assertions: list[bool] = field(default_factory=list)
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    def to_dict(self) -> JsonObject:
        hashes: JsonValue = list(self.hashes) if self.hashes is not None else None
        assertions: JsonValue = list(self.env_assertions)
        return {
            "kind": KIND,
            "token": self.token,
            "calls_digest": self.calls_digest,
            "n_calls": self.n_calls,
            "db_hashes": hashes,
            "env_assertions": assertions,
        }

    @classmethod
    def from_dict(cls, data: JsonMapping) -> LiveState:
        hashes = data.get("db_hashes")
        return cls(
            calls_digest=str(data["calls_digest"]),
            n_calls=int_value(data["n_calls"]),
            hashes=None if hashes is None else _hashes(hashes),
            env_assertions=[bool(v) for v in list_field(data.get("env_assertions"))],
            token=str(data["token"]),
        )


def _hashes(value: JsonValue) -> Hashes:
    """The (agent, user) database hashes as ``to_dict`` wrote them."""
    if not isinstance(value, list) or len(value) < 2:
        raise TypeError(f"not a pair of database hashes: {value!r}")
    agent, user = value[0], value[1]
    if not (agent is None or isinstance(agent, str)) or not (user is None or isinstance(user, str)):
        raise TypeError(f"not a pair of database hashes: {value!r}")
    return agent, user


def register(state: LiveState) -> JsonObject:
    """Mark a state fresh for the next scoring; returns it as the episode's final_state."""
    with _lock:
        _fresh[state.token] = None
        while len(_fresh) > MAX_FRESH:
            _fresh.popitem(last=False)
    return state.to_dict()


def take(final_state: object) -> LiveState | None:
    """The live state of a trajectory if it is fresh (once), else None."""
    if not isinstance(final_state, dict) or final_state.get("kind") != KIND:
        return None
    with _lock:
        if _fresh.pop(str(final_state.get("token")), "missing") == "missing":
            return None
    try:
        return LiveState.from_dict(final_state)
    except (KeyError, TypeError, ValueError, IndexError):
        return None
