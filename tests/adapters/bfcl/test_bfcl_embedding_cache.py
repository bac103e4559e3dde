"""memory_vector's stores embed each single text once per process (embedding_cache.py)."""

from __future__ import annotations

import importlib.util

import pytest

from harness.adapters.bfcl import embedding_cache
from harness.adapters.bfcl.embedding_cache import EmbeddingCache, cached_store_class


class Vector(list):
    def copy(self):
        return Vector(self)


class CountingStore:
    """Stands in for BFCL's VectorStore: the same constructor and _embed."""

    embedded: list = []

    def __init__(self, max_size, max_entry_length):
        self.max_size, self.max_entry_length = max_size, max_entry_length
        self._store = {}

    def _embed(self, text):
        CountingStore.embedded.append(text)
        return Vector([len(t) for t in text] if isinstance(text, list) else [len(text)])


@pytest.fixture
def fresh_cache(monkeypatch):
    cache = EmbeddingCache(limit=2)
    monkeypatch.setattr(embedding_cache, "CACHE", cache)
    CountingStore.embedded = []
    return cache


def test_single_texts_are_embedded_once_batches_always(fresh_cache):
    store = cached_store_class(CountingStore)(5, 100)
    other = cached_store_class(CountingStore)(5, 100)
    assert store._embed("note") == [4] and other._embed("note") == [4]
    assert CountingStore.embedded == ["note"] and fresh_cache.hits == 1
    # A batch (BFCL's snapshot loader) goes to the encoder as it is.
    assert store._embed(["a", "bb"]) == [1, 2] and store._embed(["a", "bb"]) == [1, 2]
    assert CountingStore.embedded == ["note", ["a", "bb"], ["a", "bb"]]
    # A caller changing its vector does not change the kept one.
    store._embed("note").append(99)
    assert other._embed("note") == [4]


def test_least_recently_used_is_dropped(fresh_cache):
    store = cached_store_class(CountingStore)(5, 100)
    for text in ["a", "b", "a", "c", "b"]:
        store._embed(text)
    # Limit 2: "b" was dropped when "c" came ("a" had been used again), so it is embedded twice.
    assert CountingStore.embedded == ["a", "b", "c", "b"]


def test_fresh_instances_get_caching_stores_with_the_same_limits(fresh_cache):
    class Memory:
        def __init__(self):
            self.core_memory = CountingStore(7, 300)
            self.archival_memory = CountingStore(50, 2000)

    memory = Memory()
    embedding_cache.use_cached_embeddings(memory)
    assert isinstance(memory.core_memory, CountingStore)
    assert (memory.core_memory.max_size, memory.archival_memory.max_entry_length) == (7, 2000)
    memory.core_memory._store[0] = "kept"
    with pytest.raises(ValueError, match="not empty"):
        embedding_cache.use_cached_embeddings(memory)


@pytest.mark.skipif(
    not (importlib.util.find_spec("sentence_transformers") and importlib.util.find_spec("faiss")),
    reason="needs the extra memory-vector",
)
def test_memory_vector_retrievals_are_unchanged():
    from harness.adapters.bfcl.simulators import Call, SimulatorSet

    texts = [f"customer {i} ordered item {i * 7}" for i in range(5)]
    results = []
    for _ in range(2):  # the second set's embeddings all come from the cache
        simulators = SimulatorSet(["MemoryAPI_vector"], {})
        for text in texts:
            simulators.execute(Call("archival_memory_add", {"text": text}))
        results.append(simulators.execute(Call("archival_memory_retrieve", {"query": "item 14"})))
    assert results[0] == results[1] and "item 14" in results[0][0]
