"""A fake OpenAI-compatible chat server for tests and benches.

It speaks just enough HTTP/1.1 (keep-alive, Content-Length or chunked request
bodies) over the standard library's asyncio streams to stand in for vLLM, SGLang
or an API provider on 127.0.0.1:

- ``POST /v1/chat/completions`` (and ``/chat/completions``): answers with a
  ``chat.completion`` object, an HTTP error, a slow reply or a dropped connection,
  as scripted;
- a run's preflight request (header ``X-Harness-Preflight``) gets
  ``preflight_reply`` (default: a text reply) and is kept apart from
  ``chat_requests``;
- ``POST /v1/embeddings``: a deterministic vector per input text (words hashed);
- ``GET /v1/models`` (one entry: ``model_name`` and the ``model_card`` fields),
  ``GET /health``, and ``GET /props`` (llama.cpp's server) when ``props`` is given.

What each request gets is decided, in this order, by: the queue of scripted
replies (``enqueue``), the seeded fail-fraction draw, the handler function
(request JSON -> Reply), and finally a plain text reply. Every request is recorded.

In-process use (the server runs in a background thread with its own event loop,
so it also serves synchronous code)::

    with FakeServer(latency=0.05) as server:
        server.enqueue(Reply.rate_limited(retry_after=0.1), Reply.text("hi"))
        ...  # point a client at server.url
        assert len(server.requests) == 2

As a process (benches, process tests)::

    python -m harness.testing.fake_server --port 0 --latency 0.2

prints ``FAKE_SERVER_URL http://127.0.0.1:<port>/v1`` once it listens.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import dataclasses
import hashlib
import json
import random
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from harness.boundary.json_value import JsonList, JsonMapping, JsonObject, JsonValue

# A request head (request line + headers) larger than this is refused.
MAX_HEAD_BYTES = 64 * 1024
FAIL_KINDS = ("429", "500", "timeout")
# The header of a run's preflight request (lower case, as headers are recorded).
PREFLIGHT_HEADER = "x-harness-preflight"

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    413: "Payload Too Large",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


@dataclass
class Reply:
    """What the server answers to one chat request.

    ``tool_calls`` are OpenAI ``tool_calls`` entries; their ``arguments`` string is
    sent as it is, so malformed JSON can be scripted. ``status`` other than 200
    sends an OpenAI-style error body with ``error``. ``delay`` waits before
    answering (on top of the server's latency); ``drop`` closes the connection
    without a response; ``body`` sends these bytes verbatim as a 200 body;
    ``chunks`` sends these pieces as a chunked body (with ``status``) (a generator can stream a
    body far larger than memory). Either can carry ``Content-Encoding`` in
    ``headers`` (e.g. a gzip bomb).
    """

    content: str | None = "ok"
    tool_calls: JsonList = field(default_factory=list)
    reasoning_content: str | None = None
    finish_reason: str | None = None
    status: int = 200
    error: str = "scripted error"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False
    body: bytes | None = None
    chunks: Iterable[bytes] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @classmethod
    def text(cls, content: str, reasoning: str | None = None) -> Reply:
        return cls(content=content, reasoning_content=reasoning)

    @classmethod
    def calls(cls, *calls: tuple[str, JsonMapping | str], content: str | None = None) -> Reply:
        """Tool calls from (name, arguments) pairs; a str argument is sent verbatim."""
        entries: JsonList = []
        for index, (name, arguments) in enumerate(calls):
            raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
            entries.append(
                {
                    "id": f"call_fake_{index}",
                    "type": "function",
                    "function": {"name": name, "arguments": raw},
                }
            )
        return cls(content=content, tool_calls=entries)

    @classmethod
    def rate_limited(cls, retry_after: float | None = 1.0) -> Reply:
        headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
        return cls(status=429, error="Rate limit reached, slow down.", headers=headers)

    @classmethod
    def http_error(cls, status: int, message: str = "scripted error") -> Reply:
        return cls(status=status, error=message)

    @classmethod
    def server_error(cls, status: int = 500) -> Reply:
        return cls(status=status, error="The server had an error.")

    @classmethod
    def slow(cls, delay: float, reply: Reply | None = None) -> Reply:
        return dataclasses.replace(reply if reply is not None else cls(), delay=delay)

    @classmethod
    def dropped(cls) -> Reply:
        return cls(drop=True)


@dataclass
class RecordedRequest:
    """One request as the server received it (``body`` is None if not JSON)."""

    method: str
    path: str  # without the query
    headers: dict[str, str]
    body: JsonValue
    received_at: float
    query: str = ""  # what followed "?" in the request target


Handler = Callable[[JsonObject], Reply]


class _BadRequest(Exception):
    pass


def _estimate_tokens(value: object) -> int:
    """A deterministic stand-in for a tokenizer: about four characters a token."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return max(1, len(text) // 4)


def completion_body(request: JsonMapping, reply: Reply, serial: int) -> JsonObject:
    """The ``chat.completion`` object for a 200 reply."""
    message: JsonObject = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    if reply.reasoning_content is not None:
        message["reasoning_content"] = reply.reasoning_content
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    prompt_tokens = reply.prompt_tokens
    if prompt_tokens is None:
        prompt_tokens = _estimate_tokens(request.get("messages") or [])
    completion_tokens = reply.completion_tokens
    if completion_tokens is None:
        completion_tokens = _estimate_tokens([reply.content, reply.tool_calls])
    return {
        "id": f"chatcmpl-fake-{serial}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(request.get("model") or "fake-model"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


EMBEDDING_DIMENSIONS = 16


def embedding_of(text: str) -> list[float]:
    """A deterministic unit vector for a text: texts sharing words point alike."""
    vector = [0.0] * EMBEDDING_DIMENSIONS
    for word in text.lower().split():
        digest = hashlib.sha256(word.encode("utf-8", errors="replace")).digest()
        vector[digest[0] % EMBEDDING_DIMENSIONS] += 1.0
    norm = sum(v * v for v in vector) ** 0.5 or 1.0
    return [v / norm for v in vector]


def embeddings_body(request: JsonMapping) -> dict[str, object]:
    """An OpenAI ``embeddings`` answer: one vector per input text."""
    given = request.get("input")
    texts = [given] if isinstance(given, str) else given if isinstance(given, list) else []
    as_base64 = request.get("encoding_format") == "base64"  # the OpenAI SDK's default

    def encoded(vector: list[float]) -> list[float] | str:
        if not as_base64:
            return vector
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")

    return {
        "object": "list",
        "model": request.get("model", "fake-embedding"),
        "data": [
            {"object": "embedding", "index": i, "embedding": encoded(embedding_of(str(t)))}
            for i, t in enumerate(texts)
        ],
        "usage": {"prompt_tokens": 0, "total_tokens": 0},
    }


def _error_body(status: int, message: str) -> JsonObject:
    kind = "rate_limit_error" if status == 429 else "invalid_request_error"
    if status >= 500:
        kind = "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": status}}


class FakeServer:
    """The fake server; use as a context manager or call start() / stop()."""

    def __init__(
        self,
        latency: float = 0.0,
        fail_fraction: float = 0.0,
        fail_kinds: Iterable[str] = FAIL_KINDS,
        seed: int = 0,
        timeout_delay: float = 30.0,
        handler: Handler | None = None,
        model_name: str = "fake-model",
        model_card: JsonMapping | None = None,
        preflight_reply: Reply | Handler | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        record_bodies: bool = True,
        props: JsonMapping | None = None,
    ):
        kinds = tuple(fail_kinds)
        unknown = [kind for kind in kinds if kind not in (*FAIL_KINDS, "drop")]
        if unknown:
            raise ValueError(f"unknown fail kinds {unknown}; choose from {FAIL_KINDS + ('drop',)}")
        self.latency = latency
        self.fail_fraction = fail_fraction
        self.fail_kinds = kinds
        self.timeout_delay = timeout_delay
        self.handler = handler
        self.model_name = model_name
        # Extra fields of the model's /v1/models entry (e.g. root, created).
        self.model_card = dict(model_card or {})
        # llama.cpp's /props answer (e.g. default_generation_settings.n_ctx); None: 404.
        self.props = props
        # What a run's preflight request gets (models/preflight.py); it never
        # takes a scripted reply, a failure draw or the handler's answer.
        self.preflight_reply = preflight_reply
        self.host = host
        self.port = port
        self.record_bodies = record_bodies
        self._random = random.Random(seed)
        self._queue: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._serial = 0
        self._server: asyncio.base_events.Server | None = None
        self._closing = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL clients use (ends in /v1)."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """The chat requests of the run itself (a run's preflight request is apart)."""
        return [
            r
            for r in self.requests
            if r.path.endswith("/chat/completions") and PREFLIGHT_HEADER not in r.headers
        ]

    @property
    def preflight_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if PREFLIGHT_HEADER in r.headers]

    def enqueue(self, *replies: Reply) -> None:
        """Replies for the next chat requests, in order (before any other rule)."""
        with self._lock:
            self._queue.extend(replies)

    def set_handler(self, handler: Handler | None) -> None:
        self.handler = handler

    def clear(self) -> None:
        """Forget recorded requests and queued replies."""
        with self._lock:
            self._requests.clear()
            self._queue.clear()

    def _choose_reply(self, request: JsonObject) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            failing = self.fail_fraction > 0 and self._random.random() < self.fail_fraction
            kind = self._random.choice(self.fail_kinds) if failing else None
        if kind == "429":
            return Reply.rate_limited(retry_after=0)
        if kind == "500":
            return Reply.server_error()
        if kind == "timeout":
            return Reply.slow(self.timeout_delay)
        if kind == "drop":
            return Reply.dropped()
        if self.handler is not None:
            return self.handler(request)
        return Reply.text("ok")

    # -- lifecycle -------------------------------------------------------

    def __enter__(self) -> FakeServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        """Listen in a background thread; returns once the port is open."""
        if self._thread is not None:
            raise RuntimeError("the fake server is already running")
        ready = threading.Event()
        failure: list[BaseException] = []
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._closing = False

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.listen())
            except BaseException as exc:  # reported to the starting thread
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.close())
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-openai-server", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            self._thread = None
            raise failure[0]

    def stop(self) -> None:
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._thread = None

    async def listen(self) -> None:
        """Open the listening socket on the current event loop."""
        self._server = await asyncio.start_server(
            self._on_connection, self.host, self.port, limit=MAX_HEAD_BYTES, backlog=1024
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and end every other task on the loop (the server owns its loop).

        Every task, not only the connections seen so far: a connection accepted just
        before the loop stopped has a task that has not run yet; left pending, it keeps
        its socket open after the loop closes and a client waits on it until its own
        timeout (600 s for the litellm client)."""
        self._closing = True
        if self._server is not None:
            self._server.close()
        current = asyncio.current_task()
        while others := [t for t in asyncio.all_tasks() if t is not current]:
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)

    # -- HTTP ------------------------------------------------------------

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            if not self._closing:
                await self._serve(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass  # the client went away or sent something we do not speak
        except asyncio.CancelledError:
            pass  # server shutdown
        finally:
            writer.transport.abort()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                return  # keep-alive connection closed between requests
            try:
                method, path, headers = _parse_head(head)
                body = await _read_body(reader, headers)
            except _BadRequest as exc:
                await _write(writer, 400, {}, json.dumps(_error_body(400, str(exc))).encode())
                return
            status, extra_headers, payload = await self._respond(method, path, headers, body)
            if payload is None:  # scripted connection drop
                return
            if isinstance(payload, bytes):
                await _write(writer, status, extra_headers, payload)
            else:
                await _write_chunked(writer, status, extra_headers, payload)
            if headers.get("connection", "").lower() == "close":
                return

    async def _respond(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes | Iterable[bytes] | None]:
        route, _, query = path.partition("?")
        route = route.rstrip("/")
        parsed: JsonValue = None
        if body:
            try:
                parsed = json.loads(body)
            except (ValueError, RecursionError):
                parsed = None
        with self._lock:
            self._serial += 1
            serial = self._serial
            self._requests.append(
                RecordedRequest(
                    method,
                    route,
                    headers,
                    parsed if self.record_bodies else None,
                    time.time(),
                    query,
                )
            )
        if route in ("/health", "/v1/health") and method == "GET":
            return 200, {}, b"{}"
        if route in ("/v1/models", "/models") and method == "GET":
            entry = {"id": self.model_name, "object": "model", **self.model_card}
            models = {"object": "list", "data": [entry]}
            return 200, {}, json.dumps(models).encode()
        if route == "/props" and method == "GET" and self.props is not None:
            return 200, {}, json.dumps(self.props).encode()
        if route in ("/v1/embeddings", "/embeddings") and method == "POST":
            if not isinstance(parsed, dict):
                return 400, {}, json.dumps(_error_body(400, "body is not a JSON object")).encode()
            return 200, {}, json.dumps(embeddings_body(parsed)).encode()
        if route not in ("/v1/chat/completions", "/chat/completions"):
            return 404, {}, json.dumps(_error_body(404, f"no route {route}")).encode()
        if method != "POST":
            return 405, {}, json.dumps(_error_body(405, "use POST")).encode()
        if not isinstance(parsed, dict):
            return 400, {}, json.dumps(_error_body(400, "body is not a JSON object")).encode()
        if parsed.get("stream"):
            message = "streaming is not supported by the fake server"
            return 400, {}, json.dumps(_error_body(400, message)).encode()
        if PREFLIGHT_HEADER in headers:
            chosen = self.preflight_reply or Reply.text("ok")
            reply = chosen if isinstance(chosen, Reply) else chosen(parsed)
        else:
            reply = self._choose_reply(parsed)
        wait = self.latency + reply.delay
        if wait > 0:
            await asyncio.sleep(wait)
        if reply.drop:
            return 0, {}, None
        if reply.chunks is not None:
            return reply.status, reply.headers, reply.chunks
        if reply.status != 200:
            return (
                reply.status,
                reply.headers,
                json.dumps(_error_body(reply.status, reply.error)).encode(),
            )
        if reply.body is not None:
            return 200, reply.headers, reply.body
        payload = json.dumps(completion_body(parsed, reply, serial), ensure_ascii=False)
        return 200, reply.headers, payload.encode("utf-8", errors="surrogatepass")


def _parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _BadRequest(f"bad request line {lines[0][:100]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise _BadRequest(f"bad header line {line[:100]!r}")
        headers[name.strip().lower()] = value.strip()
    return parts[0].upper(), parts[1], headers


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        chunks: list[bytes] = []
        while True:
            size_line = await reader.readuntil(b"\r\n")
            try:
                size = int(size_line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise _BadRequest("bad chunk size") from None
            if size == 0:
                await reader.readuntil(b"\r\n")  # trailer end (no trailers expected)
                return b"".join(chunks)
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise _BadRequest("bad Content-Length") from None
    if length < 0:
        raise _BadRequest("bad Content-Length")
    return await reader.readexactly(length) if length else b""


async def _write(
    writer: asyncio.StreamWriter, status: int, headers: dict[str, str], payload: bytes
) -> None:
    reason = _REASONS.get(status, "Status")
    lines = [
        f"HTTP/1.1 {status} {reason}",
        "Content-Type: application/json",
        f"Content-Length: {len(payload)}",
        "Connection: keep-alive",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)
    await writer.drain()


async def _write_chunked(
    writer: asyncio.StreamWriter, status: int, headers: dict[str, str], chunks: Iterable[bytes]
) -> None:
    reason = _REASONS.get(status, "Status")
    lines = [
        f"HTTP/1.1 {status} {reason}",
        "Content-Type: application/json",
        "Transfer-Encoding: chunked",
        "Connection: keep-alive",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    for chunk in chunks:
        if chunk:
            writer.write(f"{len(chunk):x}\r\n".encode("ascii") + chunk + b"\r\n")
            await writer.drain()  # the client reads (or gives up) as it goes
    writer.write(b"0\r\n\r\n")
    await writer.drain()


async def _serve_forever(server: FakeServer) -> None:
    await server.listen()
    print(f"FAKE_SERVER_URL {server.url}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible chat server (testing).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per chat reply")
    parser.add_argument("--fail-fraction", type=float, default=0.0)
    parser.add_argument("--fail-kinds", default=",".join(FAIL_KINDS))
    parser.add_argument("--timeout-delay", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model-name", default="fake-model")
    parser.add_argument(
        "--no-record", action="store_true", help="do not keep request bodies (long benches)"
    )
    args = parser.parse_args(argv)
    server = FakeServer(
        latency=args.latency,
        fail_fraction=args.fail_fraction,
        fail_kinds=[kind for kind in args.fail_kinds.split(",") if kind],
        seed=args.seed,
        timeout_delay=args.timeout_delay,
        model_name=args.model_name,
        host=args.host,
        port=args.port,
        record_bodies=not args.no_record,
    )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_forever(server))


if __name__ == "__main__":
    main()
