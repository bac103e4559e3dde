"""memory_vector's vector stores, each text embedded once per process.

BFCL's memory_vector backend embeds every text it stores or searches for with
all-MiniLM-L6-v2 (``VectorStore._embed``, on the CPU). Each question's episode
here replays its scenario's prerequisite conversations (agentic.py), so the same
texts would be embedded again for every question of a scenario: in a
memory_vector run that was most of the CPU time (a deterministic model's 30
questions embedded one scenario's notes 30 times). The encoder is deterministic,
so an embedding kept from an earlier call is the one the call would compute:
results are unchanged. Only single texts are kept; a batch (BFCL's snapshot
loader) is embedded as published.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Protocol

# Embeddings kept (384 floats each: 100,000 are about 150 MB).
MAX_KEPT = 100_000


class Vector(Protocol):
    """An embedding as kept here: only copied (BFCL's are numpy arrays)."""

    def copy(self) -> Vector: ...


class EmbeddingCache:
    """Text -> embedding (a 1 x dim float32 array), least recently used dropped first."""

    def __init__(self, limit: int = MAX_KEPT):
        self.limit = limit
        self.hits = 0
        self.misses = 0
        self._kept: OrderedDict[str, Vector] = OrderedDict()
        self._lock = threading.Lock()  # tool calls of several episodes share it

    def get(self, text: str) -> Vector | None:
        with self._lock:
            vector = self._kept.get(text)
            if vector is None:
                self.misses += 1
                return None
            self._kept.move_to_end(text)
            self.hits += 1
            return vector.copy()

    def put(self, text: str, vector: Vector) -> None:
        with self._lock:
            self._kept[text] = vector.copy()
            self._kept.move_to_end(text)
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)


CACHE = EmbeddingCache()


_STORE_CLASSES: dict[type, type] = {}


def cached_store_class(base: type) -> type:
    """``base`` (BFCL's VectorStore) whose single-text embeddings come from CACHE
    (one subclass per base)."""
    if base not in _STORE_CLASSES:
        _STORE_CLASSES[base] = _subclass(base)
    return _STORE_CLASSES[base]


def _subclass(base: Any) -> type:  # a class only known at run time
    class CachedVectorStore(base):
        def _embed(self, text: object) -> object:
            if not isinstance(text, str):
                return super()._embed(text)
            vector = CACHE.get(text)
            if vector is None:
                vector = super()._embed(text)
                CACHE.put(text, vector)
            return vector

    CachedVectorStore.__name__ = CachedVectorStore.__qualname__ = base.__name__
    return CachedVectorStore


def use_cached_embeddings(instance: object) -> None:
    """Give a fresh MemoryAPI_vector instance empty stores of the caching class
    (same limits), in place of the empty ones its constructor made."""
    for attribute in ("core_memory", "archival_memory"):
        store = getattr(instance, attribute)
        if store._store:  # only a fresh instance: nothing stored would be lost
            raise ValueError(f"{attribute} is not empty")
        cls = cached_store_class(type(store))
        setattr(instance, attribute, cls(store.max_size, store.max_entry_length))
