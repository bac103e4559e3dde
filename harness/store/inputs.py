"""``inputs.jsonl``: what each sample of a run was given, once per sample (not per trial).

A record keeps what happened after a sample's first messages; this file keeps
those first messages (system prompt or policy, the user's question or first
turn), the tool list and the benchmark's gold view (``Adapter.gold_view``), so
that a run folder on its own, copied anywhere, says what the model was asked and
what was expected.

What a task set shares (a policy, a tool list) is written once: a line
``{"shared": DIGEST, "value": ...}`` holds it, and an input line holds
``{"$shared": DIGEST}`` in its place. The file is append-only like samples.jsonl:
a shared line always comes before the first input that refers to it, a torn last
line is skipped, and the last input line of a sample wins. A run folder written
before this file existed has none; every reader takes that as "input not kept".
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from harness.boundary.json_value import JsonMapping, JsonObject, JsonValue
from harness.boundary.sanitise import dumps_safe
from harness.models.redact import mask, may_need_masking
from harness.store.shared_append import SharedAppender
from harness.types import Message, ToolSchema

INPUTS = "inputs.jsonl"
SHARED_REF = "$shared"
# A value shorter than this (as JSON) costs less written again than referenced.
MIN_SHARED_CHARS = 100
# Tool lists whose reference is kept (the oldest dropped): well above the samples in flight.
MAX_TOOL_LISTS = 4096


@dataclass
class SampleInput:
    """One sample's input as the run kept it (shared parts filled in when read)."""

    key: str  # benchmark/subset/sample_id (a record's key without its trial)
    benchmark: str
    subset: str
    sample_id: str
    messages: list[Message] = field(default_factory=list)
    tools: list[ToolSchema] = field(default_factory=list)
    gold: JsonObject = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "key": self.key,
            "benchmark": self.benchmark,
            "subset": self.subset,
            "sample_id": self.sample_id,
            "messages": self.messages,
            "tools": self.tools,
            "gold": self.gold,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SampleInput:
        """``data``: a line of the file as read (not checked: each entry as it is)."""
        return cls(
            key=str(data["key"]),
            benchmark=str(data.get("benchmark", "")),
            subset=str(data.get("subset", "")),
            sample_id=str(data.get("sample_id", "")),
            messages=list(data.get("messages") or []),
            tools=list(data.get("tools") or []),
            gold=dict(data.get("gold") or {}),
        )

    @property
    def tool_names(self) -> list[str]:
        return [tool_name(tool) for tool in self.tools]


def tool_name(tool: object) -> str:
    """The name of an OpenAI-format tool schema (or "?")."""
    if isinstance(tool, dict):
        function = tool.get("function")
        named = function if isinstance(function, dict) else tool
        return str(named.get("name") or "?")
    return "?"


def task_key(record_key: str) -> str:
    """A record's key without its trial: the key of its sample's input."""
    head, hash_mark, trial = record_key.rpartition("#")
    return head if hash_mark and trial.isdigit() else record_key


def digest_of(value: object) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def _line(data: Mapping[str, object], text: str | None = None) -> str:
    """One line of the file: standard JSON, the run's held secrets masked.
    ``text``: ``dumps_safe(data, default=str)`` when the caller has it already."""
    line = dumps_safe(data, default=str) if text is None else text
    if may_need_masking(line):
        line = dumps_safe(mask(data), default=str)
    return line


def _plain_text(value: object) -> str | None:
    """``dumps_safe(value, default=str)`` when its fast path gives it (standard JSON
    as it is, valid UTF-8), else None: then only the slow path's rules apply."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
        text.encode("utf-8")
    except (ValueError, TypeError, RecursionError, UnicodeEncodeError):
        return None
    return text


class InputsFile:
    """The writer of a run's inputs.jsonl: the run's one writer, or (``shared``)
    one of its worker processes, which append beside each other
    (harness/store/shared_append.py). Each worker runs samples of its own, so a
    sample's input is written once; a shared value may be written once per worker."""

    def __init__(self, path: Path, shared: bool = False):
        self.path = Path(path)
        self.shared = shared
        self._handle: TextIO | SharedAppender | None = None
        self._digests: set[str] = set()
        self._keys: set[str] = set()
        # Digest of each shared value written, by a hash of its (unsorted) text.
        self._digest_of_text: dict[bytes, str] = {}
        # What a tool list is written as, by the identity of its schema objects
        # (held, so that their ids are not reused): adapters build a tool list's
        # schemas once and never change them in place (models/request_text.py),
        # and samples offering the same tools share them, so the list is not
        # encoded again for every sample. None: written as it is (too short).
        self._tools_ref: dict[tuple[int, ...], tuple[tuple[object, ...], str | None]] = {}

    def open(self) -> None:
        """Open for appending, learning what an earlier run of the folder wrote."""
        for data in _lines(self.path):
            if "shared" in data:
                self._digests.add(str(data["shared"]))
            elif "key" in data:
                self._keys.add(str(data["key"]))
        if self.shared:  # the run's first process closed off a torn tail before
            self._handle = SharedAppender(self.path)
            return
        _close_torn_tail(self.path)
        self._handle = self.path.open("a", encoding="utf-8")

    def has(self, key: str) -> bool:
        return key in self._keys

    def add(self, sample_input: SampleInput) -> None:
        """Write one sample's input (its shared parts first, each once per file)."""
        if self._handle is None:
            raise RuntimeError("InputsFile.open() first")
        data = sample_input.to_dict()
        lines: list[str] = []
        data["tools"] = self._shared_tools(sample_input.tools, lines)
        data["messages"] = [
            self._shared(m, lines) if m.get("role") == "system" else m
            for m in sample_input.messages
        ]
        lines.append(_line(data))
        self._handle.write("".join(line + "\n" for line in lines))
        self._handle.flush()
        self._keys.add(sample_input.key)

    def _shared_tools(self, tools: object, lines: list[str]) -> object:
        """``_shared(tools, lines)``, worked out once per tool list."""
        if not tools or not isinstance(tools, list):
            return self._shared(tools, lines)
        key = tuple(map(id, tools))
        known = self._tools_ref.get(key)
        if known is None:
            shared = self._shared(tools, lines)
            digest = shared[SHARED_REF] if isinstance(shared, dict) else None
            if len(self._tools_ref) >= MAX_TOOL_LISTS:
                self._tools_ref.pop(next(iter(self._tools_ref)))
            self._tools_ref[key] = (tuple(tools), digest)
            return shared
        digest = known[1]
        return tools if digest is None else {SHARED_REF: digest}

    def _shared(self, value: object, lines: list[str]) -> object:
        if not value:
            return value
        text = _plain_text(value)
        if text is None:  # text JSON cannot hold as it is: written as it always was
            return self._shared_slowly(value, lines)
        if len(text) < MIN_SHARED_CHARS:
            return value
        # A value written before is known by its text: its digest (a sorted
        # encoding, as long as the value) is not worked out again.
        seen = hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()
        digest = self._digest_of_text.get(seen)
        if digest is None:
            digest = self._digest_of_text[seen] = digest_of(value)
        if digest not in self._digests:
            # dumps_safe of the whole line, its value's text spliced in.
            whole = f'{{"shared": {json.dumps(digest)}, "value": {text}}}'
            lines.append(_line({"shared": digest, "value": value}, whole))
            self._digests.add(digest)
        return {SHARED_REF: digest}

    def _shared_slowly(self, value: object, lines: list[str]) -> object:
        if len(dumps_safe(value, default=str)) < MIN_SHARED_CHARS:
            return value
        digest = digest_of(value)
        if digest not in self._digests:
            lines.append(_line({"shared": digest, "value": value}))
            self._digests.add(digest)
        return {SHARED_REF: digest}

    def close(self) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            try:
                handle.flush()
                os.fsync(handle.fileno())
            finally:
                handle.close()


def _close_torn_tail(path: Path) -> None:
    # As samples.jsonl: a kill mid-write leaves a last line without its newline.
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) != b"\n":
            handle.write(b"\n")


def _lines(path: Path) -> list[JsonObject]:
    """Every whole JSON object line of the file (torn or foreign lines skipped)."""
    if not path.is_file():
        return []
    out: list[JsonObject] = []
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                data: JsonValue = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(data, dict):
                out.append(data)
    return out


def _filled(value: JsonValue, shared: JsonMapping) -> JsonValue:
    if isinstance(value, dict) and set(value) == {SHARED_REF}:
        return shared.get(str(value[SHARED_REF]))
    return value


def read_inputs(run_dir: Path) -> dict[str, SampleInput]:
    """Each sample's input of a run folder, by task key ({} when the run kept none)."""
    shared: JsonObject = {}
    inputs: dict[str, SampleInput] = {}
    for data in _lines(Path(run_dir) / INPUTS):
        if "shared" in data:
            shared[str(data["shared"])] = data.get("value")
            continue
        key, messages = data.get("key"), data.get("messages")
        if isinstance(key, str):
            data["tools"] = _filled(data.get("tools"), shared)
            data["messages"] = (
                [_filled(m, shared) for m in messages] if isinstance(messages, list) else []
            )
            inputs[key] = SampleInput.from_dict(data)
    return inputs


def merge_inputs(run_dirs: list[Path], out: Path) -> int:
    """Write the inputs of several run folders (shards of one run) into ``out``'s
    inputs.jsonl, each sample once and each shared value once; the number of
    samples written. No file is written when no folder kept inputs."""
    merged: dict[str, SampleInput] = {}
    for run_dir in run_dirs:
        merged.update(read_inputs(run_dir))
    target = Path(out) / INPUTS
    if not merged:
        target.unlink(missing_ok=True)
        return 0
    tmp = target.with_name(f".{INPUTS}.tmp")
    tmp.unlink(missing_ok=True)
    writer = InputsFile(tmp)
    writer.open()
    try:
        for key in sorted(merged):
            writer.add(merged[key])
    finally:
        writer.close()
    tmp.replace(target)
    return len(merged)
