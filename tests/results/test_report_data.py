"""The report's sample store: repeated values once, references resolved back, chunks
compressed in a form the browser can inflate."""

from __future__ import annotations

import base64
import json
import zlib

from harness.report import samples as report_data
from harness.report.samples import REF, pack_samples, resolve

SYSTEM = "You are a customer service agent. " * 40  # a long prompt every sample shares
TOOLS = [
    {"type": "function", "function": {"name": f"tool_{i}", "parameters": {}}} for i in range(9)
]


def detail(n: int, trial: int) -> dict:
    return {
        "status": "ok",
        "score": {"passed": n % 2 == 0, "details": {"rubrics": [{"met": True, "why": "x" * 70}]}},
        "trajectory": {
            "tools": TOOLS,
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"Task {n}: please change my reservation " * 3},
                {"role": "assistant", "content": f"Trial {trial} of task {n} replies. " * 3},
            ],
        },
    }


def entries_of(packed) -> list:
    entries: list = []
    for chunk in packed.chunks:
        entries.extend(json.loads(report_data.inflate_text(chunk)))
    return entries


def test_every_sample_resolves_to_itself():
    details = [detail(n, t) for n in range(20) for t in range(3)]
    packed = pack_samples(details)
    entries = entries_of(packed)
    assert [resolve(entries, root) for root in packed.roots] == details


def test_each_repeated_value_is_stored_once():
    details = [detail(n, t) for n in range(20) for t in range(3)]
    packed = pack_samples(details)
    texts = [json.dumps(e, ensure_ascii=False) for e in entries_of(packed)]
    assert sum(t.count(SYSTEM) for t in texts) == 1
    assert sum(t.count('"tool_0"') for t in texts) == 1
    # A task's first user message is shared by its three trials; each reply is its own.
    first_user = "Task 7: please change my reservation " * 3
    assert sum(t.count(first_user) for t in texts) == 1
    assert sum(t.count("Trial 1 of task 7 replies. ") for t in texts) == 3  # once, in full
    # 60 roots, one system prompt, one tool list (its parts only inside it), 20 user
    # messages, one rubric list, and the system message that holds the shared prompt.
    assert len(entries_of(packed)) < 60 + 30


def test_strings_that_look_like_references_survive():
    tricky = [
        {"a": REF + "0", "b": [REF + REF + "x", REF], "c": "plain"},
        {"a": REF + "0", "b": [REF + REF + "x", REF], "c": "plain"},
    ]
    packed = pack_samples(tricky)
    entries = entries_of(packed)
    assert [resolve(entries, root) for root in packed.roots] == tricky


def test_chunks_are_zlib_streams_of_bounded_size(monkeypatch):
    monkeypatch.setattr(report_data, "CHUNK_CHARS", 2_000)
    details = [{"text": f"sample {n} " + "word " * 200} for n in range(50)]
    packed = pack_samples(details)
    assert len(packed.chunks) > 10 and packed.chunk_starts[0] == 0
    assert packed.chunk_starts == sorted(packed.chunk_starts)
    for chunk in packed.chunks:
        # The deflate format ("deflate" for DecompressionStream): a zlib header.
        data = zlib.decompress(base64.b64decode(chunk))
        assert len(data) < 2_000 + 1_100
    entries = entries_of(packed)
    assert [resolve(entries, root) for root in packed.roots] == details


def test_each_distinct_value_is_prepared_once_and_oversized_samples_are_sealed():
    seen: list[str] = []

    def prepare(value, depth):
        seen.append(json.dumps(value, ensure_ascii=False))
        return value

    big = {"status": "ok", "trajectory": {"messages": [{"content": "y" * 5_000}]}}
    details = [detail(n, t) for n in range(5) for t in range(2)] + [big]
    packed = pack_samples(details, prepare, 4_000, lambda d: {"note": "too large to show"})
    assert sum(text.count(SYSTEM) for text in seen) == 1  # masked and cut once, not ten times
    entries = entries_of(packed)
    assert [resolve(entries, root) for root in packed.roots[:-1]] == details[:-1]
    assert resolve(entries, packed.roots[-1]) == {"note": "too large to show"}
