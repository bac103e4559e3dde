"""The recorded replies of bench/full_suite.py and the server that replays them.

Not a bench of its own (it measures nothing when run as a script): the pure parts of
the full-size bench live here so that tests/bench/test_full_suite.py can check them.

- ``request_key``: what identifies one chat request across runs: its messages and
  tools only, with the tool-call ids and every field that varies from run to run (the
  model name, the seed, sampling settings) left out and each call's arguments read as
  JSON, so that the request the harness sends to a server and the one the oracle was
  asked in-process give one key;
- ``ReplyBook``: key -> the oracle's reply (OpenAI message fields), kept as JSON Lines;
  two different replies to one key are a conflict (the server cannot tell them apart);
- ``ReplayHandler``: a ``harness.testing.fake_server`` handler that answers from the
  book and counts, loudly, the requests it has no reply for (or, given a fallback
  reply, answers them with it and counts them apart: bench/official_runners.py,
  where the official runners ask what no oracle recorded);
- ``serve``: the replay server as a process (``full_suite.py --phase serve``): it
  prints its URL and writes its counts to a JSON file twice a second;
- ``Target``: one target of the bench and whether it is met.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.models.openai_wire import chat_request
from harness.testing.fake_server import FakeServer, Reply
from harness.types import AssistantTurn, Message, SamplingParams, ToolSchema

# The model name the replay server serves (and the replay runs ask for).
SERVED_MODEL = "replay-oracle"
# Returned for a request the book has no reply for: not transient, so the run does
# not retry it for minutes; the sample fails and the bench reports it.
UNMATCHED_STATUS = 422
UNMATCHED_EXAMPLES = 5


def _arguments(text: Any) -> Any:
    """A call's arguments as JSON when they parse (the text may be spaced either way)."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _canonical_message(message: Message) -> dict[str, Any]:
    role = message.get("role")
    out: dict[str, Any] = {"role": role, "content": message.get("content") or ""}
    calls = message.get("tool_calls")
    if role == "assistant" and calls:
        out["tool_calls"] = [
            [
                (call.get("function") or {}).get("name"),
                _arguments((call.get("function") or {}).get("arguments")),
            ]
            for call in calls
        ]
    return out


def canonical_request(body: dict[str, Any]) -> str:
    """The canonical JSON of a chat request body's messages and tools (ids dropped)."""
    material = {
        "messages": [_canonical_message(m) for m in body.get("messages") or []],
        "tools": body.get("tools") or [],
    }
    return json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def request_key(body: dict[str, Any]) -> str:
    text = canonical_request(body)
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def wire_body(
    messages: list[Message], tools: list[ToolSchema], params: SamplingParams
) -> dict[str, Any]:
    """The body the harness's OpenAI-compatible client sends for this call."""
    return chat_request(SERVED_MODEL, messages, tools, params)


def reply_of(turn: AssistantTurn) -> dict[str, Any]:
    """The fields of an assistant turn that a server's reply carries."""
    return {
        "content": turn.content,
        "tool_calls": [call.to_openai() for call in turn.tool_calls],
        "reasoning": turn.reasoning,
        "finish_reason": turn.finish_reason,
    }


def as_server_reply(reply: dict[str, Any]) -> Reply:
    return Reply(
        content=reply.get("content"),
        tool_calls=list(reply.get("tool_calls") or []),
        reasoning_content=reply.get("reasoning"),
        finish_reason=reply.get("finish_reason"),
    )


@dataclass
class ReplyBook:
    """Recorded replies by request key; ``conflicts``: keys asked with two replies."""

    replies: dict[str, dict[str, Any]] = field(default_factory=dict)
    conflicts: set[str] = field(default_factory=set)

    def add(self, key: str, reply: dict[str, Any]) -> None:
        known = self.replies.get(key)
        if known is None:
            self.replies[key] = reply
        elif known != reply:
            self.conflicts.add(key)

    def save(self, path: Path) -> None:
        with path.open("w", encoding="utf-8") as out:
            for key, reply in self.replies.items():
                out.write(json.dumps({"key": key, "reply": reply}, ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, path: Path) -> ReplyBook:
        book = cls()
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                entry = json.loads(line)
                book.replies[entry["key"]] = entry["reply"]
        return book


@dataclass
class ReplayHandler:
    """Answers a chat request from the book; counts what it served and missed."""

    book: ReplyBook
    fallback: Reply | None = None  # the reply to a request the book has none for
    served: int = 0
    fell_back: int = 0
    unmatched: int = 0
    examples: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: dict[str, Any]) -> Reply:
        key = request_key(request)
        reply = self.book.replies.get(key)
        with self._lock:
            if reply is not None:
                self.served += 1
                return as_server_reply(reply)
            if self.fallback is not None:
                self.fell_back += 1
                return self.fallback
            self.unmatched += 1
            if len(self.examples) < UNMATCHED_EXAMPLES:
                last = (request.get("messages") or [{}])[-1]
                self.examples.append(f"{key[:12]}: last message {json.dumps(last)[:300]}")
        print(f"REPLAY SERVER: no recorded reply for request {key[:12]}", file=sys.stderr)
        return Reply.http_error(UNMATCHED_STATUS, f"replay server: no recorded reply ({key[:12]})")

    def counts(self) -> dict[str, Any]:
        with self._lock:
            return {
                "served": self.served,
                "fell_back": self.fell_back,
                "unmatched": self.unmatched,
                "examples": self.examples,
            }


def write_json_atomically(path: Path, value: Any) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(value), encoding="utf-8")
    os.replace(temporary, path)


async def _serve_forever(server: FakeServer, handler: ReplayHandler, stats: Path) -> None:
    await server.listen()
    print(f"REPLAY_SERVER_URL {server.url}", flush=True)
    try:
        while True:
            write_json_atomically(stats, {**handler.counts(), "pid": os.getpid()})
            await asyncio.sleep(0.5)
    finally:
        await server.close()


def serve(
    book_path: Path | None, latency: float, stats: Path, fallback: Reply | None = None
) -> None:
    """Run the replay server until killed (the ``serve`` phase of full_suite.py;
    official_runners.py's server has no book and a fallback reply)."""
    book = ReplyBook.load(book_path) if book_path is not None else ReplyBook()
    handler = ReplayHandler(book, fallback)
    server = FakeServer(
        latency=latency, handler=handler, model_name=SERVED_MODEL, record_bodies=False
    )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_forever(server, handler, stats))


# -- targets ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """``value`` against ``limit``: at most it (``at_most``) or at least it."""

    name: str
    value: float | None  # None: not measured (counts as not met)
    limit: float
    at_most: bool = True
    unit: str = ""

    @property
    def met(self) -> bool:
        if self.value is None:
            return False
        return self.value <= self.limit if self.at_most else self.value >= self.limit

    def line(self) -> str:
        shown = "not measured" if self.value is None else f"{self.value:.3g}{self.unit}"
        bound = f"{'<=' if self.at_most else '>='} {self.limit:g}{self.unit}"
        return f"{self.name:<58} {shown:>14}  {bound:<12} {'met' if self.met else 'NOT MET'}"


def target_table(targets: Iterable[Target]) -> list[str]:
    return [f"{'target':<58} {'measured':>14}  {'bound':<12} verdict"] + [t.line() for t in targets]


def exit_code(targets: Iterable[Target], score_mismatches: int, unmatched: int) -> int:
    """0 when every target is met, every score is the oracle's and no request went unmatched."""
    return 0 if all(t.met for t in targets) and not score_mismatches and not unmatched else 1
