"""The report's sample store: every distinct value once, compressed in chunks.

A run's records repeat themselves: every sample of a task set carries the same
system prompt and tool list, trials of one task start with the same messages, and
cost and usage blocks differ in a few numbers. The store keeps one copy of each
repeated value and compresses the rest:

- **Entries.** Each sample's detail is one entry. A value (object, array or string
  of at least ``MIN_SHARED_CHARS`` characters of JSON) that occurs more than once
  across the report becomes an entry of its own, and every place that held it holds
  a reference instead: the string ``REF`` + the entry's number. A data string that
  itself starts with ``REF`` is written with one more ``REF`` in front. Shared
  entries may reference other shared entries (a repeated conversation and, inside
  it, a message repeated elsewhere).
- **Chunks.** Entries are written in order of first use as JSON arrays of about
  ``CHUNK_CHARS`` characters, each compressed with zlib ("deflate", which the
  browser's ``DecompressionStream`` reads) and embedded as base64. The viewer
  inflates a chunk only when a sample in it (or a value it references) is opened.

Base64 holds no markup character, so no record text can close its block or become
markup, whatever it contains. ``read_samples`` decodes a page back to the samples
(tests, and anyone who wants the data of a report).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from harness.boundary.json_value import JsonList, JsonObject, JsonSequence, JsonValue
from harness.boundary.sanitise import dumps_safe

REF = "\u0000"
# A reference as JSON writes it (a value, so never followed by ":" as a key is).
_REFS_IN_JSON = re.compile(r'"\\u0000(\d+)"(?!:)')
MIN_SHARED_CHARS = 64  # a shorter value costs less written again than referenced
MAX_SHARED_DEPTH = 8  # values nested deeper are shared only as part of a parent
CHUNK_CHARS = 128_000  # uncompressed JSON per chunk: a few ms to inflate and parse
COMPRESS_LEVEL = 9


def _json(value: object) -> str:
    return dumps_safe(value, separators=(",", ":"), default=str)


# Only for content keys: standard JSON is not needed there (the output uses _json).
_KEY_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


def _digest(value: object) -> bytes | None:
    """A content key for a value worth sharing, None for one too small to share."""
    if isinstance(value, str):
        if len(value) < MIN_SHARED_CHARS:
            return None
        data = b"s" + value.encode("utf-8", "surrogatepass")
    elif isinstance(value, (dict, list)) and value:
        try:
            text = _KEY_ENCODER.encode(value)
        except (TypeError, ValueError, RecursionError):
            text = _json(value)
        if len(text) < MIN_SHARED_CHARS:
            return None
        data = (b"o" if isinstance(value, dict) else b"a") + text.encode("utf-8", "surrogatepass")
    else:
        return None
    return hashlib.blake2b(data, digest_size=16).digest()


_UNSEEN = object()


def _children(value: object) -> Iterable[object]:
    if isinstance(value, dict):
        return value.values()
    return value if isinstance(value, list) else ()


def _escape_strings(value: object) -> object:
    """A copy with every string that starts with REF given a second REF (rare: only
    values whose JSON holds a NUL character are walked)."""
    if isinstance(value, str):
        return REF + value if value.startswith(REF) else value
    if isinstance(value, list):
        return [_escape_strings(v) for v in value]
    if isinstance(value, dict):
        return {k: _escape_strings(v) for k, v in value.items()}
    return value


def _escape_detail(detail: Mapping[str, object]) -> dict[str, object]:
    return {k: _escape_strings(v) for k, v in detail.items()}


class _Packer:
    """Two passes over the sample details: count every shareable value, then write
    entries with repeated values replaced by references."""

    def __init__(self) -> None:
        self.counts: Counter[bytes] = Counter()
        self.entry_of: dict[bytes, int] = {}
        self.entries: list[object] = []
        self.depths: list[int] = []  # where each entry's value first sat in its sample
        # The first pass's digests by object: the second pass visits the same objects
        # (the details stay alive meanwhile), so it serialises nothing again.
        self.digests: dict[int, bytes | None] = {}

    def digest(self, value: object) -> bytes | None:
        if isinstance(value, str):
            # Hashing a string costs less than remembering its digest.
            return None if len(value) < MIN_SHARED_CHARS else _digest(value)
        if not isinstance(value, (dict, list)):
            return None
        known = self.digests.get(id(value), _UNSEEN)
        if known is _UNSEEN:
            known = self.digests[id(value)] = _digest(value)
        return known  # type: ignore[return-value]

    def count(self, value: object, depth: int) -> None:
        key = self.digest(value)
        if key is None:
            return  # small: whatever it holds is smaller still
        seen = self.counts[key]
        self.counts[key] = seen + 1
        # A repeat's parts were counted at its first occurrence.
        if seen == 0 and depth < MAX_SHARED_DEPTH and not isinstance(value, str):
            for child in _children(value):
                self.count(child, depth + 1)

    def add_sample(self, detail: Mapping[str, object]) -> int:
        number = self._new_entry(0)
        self.entries[number] = {k: self._value(v, 1) for k, v in detail.items()}
        return number

    def add_sealed(self, detail: object) -> int:
        """A sample written whole, sharing nothing (already cut to size)."""
        number = self._new_entry(0)
        self.entries[number] = detail
        return number

    def _new_entry(self, depth: int) -> int:
        self.entries.append(None)  # its number is taken before its parts get theirs
        self.depths.append(depth)
        return len(self.entries) - 1

    def _value(self, value: object, depth: int) -> object:
        key = self.digest(value)
        if key is None:
            return value
        if self.counts[key] > 1:
            return REF + str(self._shared(key, value, depth))
        return self._inside(value, depth)

    def _inside(self, value: object, depth: int) -> object:
        """The value with its repeated parts replaced (its own copy of each container)."""
        if isinstance(value, str) or depth >= MAX_SHARED_DEPTH:
            return value
        if isinstance(value, dict):
            return {k: self._value(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list):
            return [self._value(v, depth + 1) for v in value]
        return value

    def _shared(self, key: bytes, value: object, depth: int) -> int:
        number = self.entry_of.get(key)
        if number is None:
            number = self.entry_of[key] = self._new_entry(depth)
            self.entries[number] = self._inside(value, depth)
        return number

    def resolved_sizes(self, texts: list[str]) -> list[int]:
        """Each entry's JSON size with its references filled in (shared parts counted
        at every use), from the entries' own texts."""
        sizes: list[int | None] = [None] * len(texts)

        def size(number: int) -> int:  # references nest no deeper than MAX_SHARED_DEPTH
            known = sizes[number]
            if known is None:
                refs = _REFS_IN_JSON.findall(texts[number])
                known = sizes[number] = len(texts[number]) + sum(size(int(r)) for r in refs)
            return known

        return [size(number) for number in range(len(texts))]


@dataclass
class PackedSamples:
    roots: list[int]  # each sample's entry number, in sample order
    chunk_starts: list[int]  # the first entry number of each chunk
    chunks: list[str]  # base64 of each chunk's zlib-compressed JSON array
    entries: int
    json_chars: int  # the uncompressed JSON of every entry, for the record


class Prepare(Protocol):
    """Turns a value into what is shown; ``depth``: where it first sits in its sample."""

    def __call__(self, value: object, depth: int) -> object: ...


def _as_is(value: object, depth: int) -> object:
    return value


def pack_samples(
    details: Sequence[Mapping[str, object]],
    prepare: Prepare = _as_is,
    max_sample_chars: int = 0,
    seal: Callable[[Mapping[str, object]], object] | None = None,
) -> PackedSamples:
    """The details (JSON-ready values, one per sample) as shared, compressed chunks.

    ``prepare(value, depth)`` turns each distinct value into what is shown (masked,
    cut), once however often it occurs; ``depth`` is where the value first sits in
    its sample. A sample whose shown JSON would still be over ``max_sample_chars``
    (0: no bound) is replaced by ``seal(detail)``, written whole and sharing nothing.
    """
    texts_of = [_json(d) for d in details]
    details = [
        _escape_detail(d) if "\\u0000" in t else d for d, t in zip(details, texts_of, strict=True)
    ]
    packer = _Packer()
    for detail in details:
        for child in detail.values():
            packer.count(child, 1)
    roots = [packer.add_sample(detail) for detail in details]
    for number, value in enumerate(packer.entries):
        packer.entries[number] = prepare(value, packer.depths[number])
    texts = [_json(entry) for entry in packer.entries]
    if max_sample_chars and seal is not None:
        sizes = packer.resolved_sizes(texts)
        for position, root in enumerate(roots):
            if sizes[root] > max_sample_chars:
                sealed = _escape_strings(seal(details[position]))
                roots[position] = packer.add_sealed(sealed)
                texts.append(_json(sealed))
    chunk_starts: list[int] = []
    chunks: list[str] = []
    start = 0
    while start < len(texts):
        end, size = start, 0
        while end < len(texts) and (end == start or size + len(texts[end]) <= CHUNK_CHARS):
            size += len(texts[end]) + 1
            end += 1
        chunk_starts.append(start)
        chunks.append(compress_text("[" + ",".join(texts[start:end]) + "]"))
        start = end
    return PackedSamples(roots, chunk_starts, chunks, len(texts), sum(map(len, texts)))


def compress_text(text: str) -> str:
    """Text as base64 of its zlib stream (what ``DecompressionStream("deflate")`` reads)."""
    data = zlib.compress(text.encode("utf-8", "surrogatepass"), COMPRESS_LEVEL)
    return base64.b64encode(data).decode("ascii")


def inflate_text(data: str) -> str:
    return zlib.decompress(base64.b64decode(data)).decode("utf-8", "surrogatepass")


# --- reading a report back ----------------------------------------------------------------


def _block(page: str, block_id: str) -> str:
    found = re.search(
        rf'<script type="[^"]+" id="{re.escape(block_id)}">(.*?)</script>', page, re.S
    )
    if found is None:
        raise ValueError(f"the page has no block {block_id!r}")
    return found.group(1)


def read_index(page: str) -> JsonObject:
    """The sample index of a report page (runs, benchmarks, subsets, rows, chunks)."""
    index = json.loads(inflate_text(_block(page, "sample-index")))
    if not isinstance(index, dict):
        raise ValueError("the page's sample index is not an object")
    return index


def read_entries(page: str) -> JsonList:
    """Every entry of a report page, references left as they are written."""
    index = read_index(page)
    entries: JsonList = []
    for number in range(len(_list(index, "chunks"))):
        entries.extend(json.loads(inflate_text(_block(page, f"c{number}"))))
    return entries


def resolve(entries: JsonSequence, number: int) -> JsonValue:
    """Entry ``number`` with every reference replaced by its value."""

    def build(value: JsonValue) -> JsonValue:
        if isinstance(value, str):
            if value.startswith(REF):
                rest = value[1:]
                return rest if rest.startswith(REF) else build(entries[int(rest)])
            return value
        if isinstance(value, list):
            return [build(v) for v in value]
        if isinstance(value, dict):
            return {k: build(v) for k, v in value.items()}
        return value

    return build(entries[number])


def _list(index: JsonObject, name: str) -> JsonList:
    value = index.get(name)
    if not isinstance(value, list):
        raise ValueError(f"the page's sample index has no list {name!r}")
    return value


def _entry_number(row: JsonValue, position: int) -> int:
    number = row[position] if isinstance(row, list) and position < len(row) else None
    if not isinstance(number, int):
        raise ValueError(f"a sample row holds no entry number: {row!r}")
    return number


def read_samples(page: str) -> list[JsonValue]:
    """Every sample detail of a report page, in the index's order."""
    index = read_index(page)
    entries = read_entries(page)
    position = _list(index, "columns").index("entry")
    return [resolve(entries, _entry_number(row, position)) for row in _list(index, "rows")]
