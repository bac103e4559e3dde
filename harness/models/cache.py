"""A content-addressed cache of model replies on disk.

The key is the SHA-256 of the canonical JSON of everything that decides a reply:
the client's identity (model, api_base without credentials, prompt format,
tool_choice), the fingerprint of the weights (harness/models/fingerprint.py:
the same name and URL may serve other weights tomorrow), the messages, the
tools and the sampling parameters including the seed.

Where it lives: by default in the run folder (a crash or kill re-pays nothing,
and nothing crosses runs); a cache shared across runs only when asked for
(``--cross-run-cache`` or ``--cache-dir``), still keyed by the fingerprint. The value is
the AssistantTurn (and the provider's raw reply) as JSON, one file per entry in
sharded folders (``ab/abcdef....json``), written to a temporary file and renamed
so that a crash never leaves half an entry. An unreadable entry is treated as a
miss and overwritten. Only successful replies are stored.

A hit comes back with ``usage.cached_calls = 1`` and its token counts kept, so a
rerun after a crash pays for nothing twice while the records still show the
tokens the reply cost.

Sampling: with temperature > 0 the runner gives every trial its own seed, so
trials of one sample have different keys and do not collapse onto one cached
reply. Two calls with identical messages, tools, parameters and seed do share
an entry, which is the point of the cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.boundary.atomic import write_atomic
from harness.boundary.json_value import JsonObject
from harness.boundary.sanitise import dumps_safe
from harness.models.base import ModelClient, WrappedClient
from harness.models.redact import mask
from harness.types import AssistantTurn, Message, SamplingParams, ToolSchema

CACHE_FORMAT = 1
# The cache folder inside a run folder (the default scope).
RUN_CACHE_DIR = "cache"


@dataclass
class CacheStats:
    """Hits and misses of every cache of one run (shared by its clients)."""

    hits: int = 0
    misses: int = 0


def cache_key(
    identity: Mapping[str, object],
    messages: list[Message],
    tools: list[ToolSchema],
    params: SamplingParams,
) -> str:
    material = {
        "format": CACHE_FORMAT,
        "client": identity,
        "messages": messages,
        "tools": tools,
        "params": params.to_dict(),  # with the attempt from the second one on
    }
    canonical = json.dumps(
        material, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    return hashlib.sha256(canonical.encode("utf-8", errors="surrogatepass")).hexdigest()


class CachingClient(WrappedClient):
    """Serves repeated requests from ``cache_dir``; asks ``inner`` otherwise."""

    def __init__(
        self,
        inner: ModelClient,
        cache_dir: str | Path,
        identity: Mapping[str, object] | None = None,
        fingerprint: str | None = None,
        stats: CacheStats | None = None,
    ):
        super().__init__(inner)
        self.cache_dir = Path(cache_dir)
        self.identity = dict(identity if identity is not None else inner.cache_identity())
        if fingerprint is not None:
            self.identity["fingerprint"] = fingerprint
        self.hits = 0
        self.misses = 0
        self.stats = stats

    def path_for(self, key: str) -> Path:
        return self.cache_dir / key[:2] / f"{key}.json"

    def load(self, key: str) -> AssistantTurn | None:
        """The cached turn, or None when absent or unreadable."""
        try:
            data = json.loads(self.path_for(key).read_text(encoding="utf-8"))
            if data.get("format") != CACHE_FORMAT:
                return None
            turn = AssistantTurn.from_dict(data["turn"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        turn.raw = data.get("raw")
        return turn

    def store(self, key: str, turn: AssistantTurn) -> None:
        path = self.path_for(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Masked like a record, by value: a reply that echoes a held key is stored
        # without it; anything else stays, so a replay is the reply as it came.
        entry = mask({"format": CACHE_FORMAT, "turn": turn.to_dict(), "raw": turn.raw})
        text = dumps_safe(entry, default=str)
        write_atomic(path, text)

    async def complete(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> AssistantTurn:
        key = cache_key(self.identity, messages, tools, params)
        cached = self.load(key)
        if cached is not None:
            self.hits += 1
            if self.stats is not None:
                self.stats.hits += 1
            cached.usage.calls = max(cached.usage.calls, 1)
            cached.usage.cached_calls = 1
            return cached
        self.misses += 1
        if self.stats is not None:
            self.stats.misses += 1
        turn = await self.inner.complete(messages, tools, params)
        try:
            self.store(key, turn)
        except (OSError, TypeError, ValueError):
            pass  # a full disk or an odd reply must not fail the call; it is just not cached
        return turn

    def cache_identity(self) -> dict[str, object]:
        return self.identity

    def describe(self) -> JsonObject:
        return {**self.inner.describe(), "cache_dir": str(self.cache_dir)}
