"""A small HTTP/1.1 client for the direct model client's chat requests.

The direct client (openai_http.py) posts one JSON body per model call and reads
one JSON reply. A general HTTP library builds request and reply objects, header
multidicts, cookie handling and timers around each of those; with 64 or 256
calls in flight that is a fifth of the harness's own CPU per call (aiohttp:
~220 µs per request against ~95 µs for this client, bench/http_client.py).
This module does only what the chat path needs:

- ``POST`` of a byte body with fixed headers, over kept-alive connections
  (``http://`` and ``https://``), one pool per event loop;
- a reply with ``Content-Length``, ``Transfer-Encoding: chunked``, or a body
  that ends when the server closes; interim ``1xx`` replies skipped;
- a cap on the bytes of a body while it arrives (over it: ``ReplyTooLarge``,
  or the first bytes kept for an error text); decompression is the caller's;
- a request on a kept-alive connection that the server closed meanwhile
  (nothing read back) is sent once more on a new connection, as HTTP clients do.

The request's bytes are written inside the call to ``post``: a task that handles
a reply sends its next request in the same pass of the event loop, before the
next reply's work (so replies that arrive together need no spacing out).

Failures are ``OSError``s: the connection's own, ``ServerDisconnected`` (closed
before the reply was complete) or ``BadHttpReply`` (not HTTP/1.x as it should be).
No proxies, redirects or cookies: the chat path uses none.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
import weakref
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

from harness.models.reply_body import ReplyTooLarge

# A reply head (status line + headers) larger than this is refused.
MAX_HEAD_BYTES = 64 * 1024
# A chunk-size line longer than this is refused (hex digits and extensions).
MAX_CHUNK_LINE_BYTES = 1024
# Idle connections kept per pool; more are closed when they come back.
MAX_IDLE_CONNECTIONS = 1024


class ServerDisconnected(ConnectionError):
    """The server closed the connection before its reply was complete."""

    def __init__(self, nothing_read: bool):
        super().__init__("Server disconnected before the reply was complete")
        self.nothing_read = nothing_read


class BadHttpReply(ConnectionError):
    """What came back is not an HTTP/1.x reply as it should be."""

    def __init__(self, what: str):
        super().__init__(f"bad HTTP reply: {what}")


@dataclass(frozen=True)
class Endpoint:
    """Where requests go: the connection's address and the request's first lines."""

    host: str
    port: int
    tls: bool
    target: str  # path and query, as sent in the request line
    host_header: str
    basic_auth: str | None  # user:password of the URL, as a header value

    @classmethod
    def from_url(cls, url: str) -> Endpoint:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        tls = parts.scheme == "https"
        port = parts.port or (443 if tls else 80)
        host = parts.hostname
        shown = f"[{host}]" if ":" in host else host  # an IPv6 address
        host_header = shown if port == (443 if tls else 80) else f"{shown}:{port}"
        target = quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
        if parts.query:
            target += "?" + quote(parts.query, safe="/%:@!$&'()*+,;=-._~?")
        basic_auth = None
        if parts.username is not None:
            user_password = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            basic_auth = "Basic " + base64.b64encode(user_password.encode()).decode("ascii")
        return cls(host, port, tls, target, host_header, basic_auth)


@dataclass
class HttpReply:
    status: int
    headers: dict[str, str]  # names in lower case; a repeated header's values joined by ", "
    body: bytes


class _ReplyReader:
    """Reads one reply from the bytes fed to it, in whatever pieces they come."""

    def __init__(self, body_limit: int, truncate: bool, error_body_limit: int | None):
        self.body_limit = body_limit
        self.truncate = truncate
        self.error_body_limit = error_body_limit
        self.buffer = bytearray()
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body = bytearray()
        self.keep_alive = True
        self.done = False
        self._state = "head"  # head, length, chunk-size, chunk-data, trailers, until-close
        self._left = 0  # bytes of the body (length) or of the chunk still to come

    def feed(self, data: bytes) -> None:
        self.buffer += data
        while not self.done and self._step():
            pass

    def closed(self) -> None:
        """The server closed the connection: a body read to the close ends here."""
        if self._state == "until-close":
            self.done = True
            self.keep_alive = False

    def _step(self) -> bool:
        """Advance over the buffered bytes; False when more bytes are needed."""
        state = self._state
        if state == "head":
            return self._read_head()
        if state == "length":
            taken = self._take(self._left)
            self._left -= taken
            if self._left == 0:
                self._finish()
            return taken > 0 and not self.done
        if state == "chunk-size":
            return self._read_chunk_size()
        if state == "chunk-data":
            if self._left > 0:
                self._left -= self._take(self._left)
                if self._left > 0:
                    return False
            if len(self.buffer) < 2:
                return False
            if self.buffer[:2] != b"\r\n":
                raise BadHttpReply("a chunk does not end with CRLF")
            del self.buffer[:2]
            self._state = "chunk-size"
            return True
        if state == "trailers":
            end = self.buffer.find(b"\r\n")
            if end < 0:
                self._check_line_length(len(self.buffer), "a trailer")
                return False
            del self.buffer[: end + 2]
            if end == 0:
                self._finish()
            return not self.done
        # until-close: everything up to the close is the body
        self._take(len(self.buffer))
        return False

    def _read_head(self) -> bool:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > MAX_HEAD_BYTES:
                raise BadHttpReply(f"its head is over {MAX_HEAD_BYTES} bytes")
            return False
        head = bytes(self.buffer[:end]).decode("latin-1")
        del self.buffer[: end + 4]
        status_line, *lines = head.split("\r\n")
        version, _, rest = status_line.partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not (code.isdigit() and len(code) == 3):
            raise BadHttpReply(f"status line {status_line[:80]!r}")
        status = int(code)
        if 100 <= status < 200:  # an interim reply (100 Continue, 103 Early Hints)
            return True
        headers: dict[str, str] = {}
        for line in lines:
            name, colon, value = line.partition(":")
            if not colon or not name or name != name.strip():
                raise BadHttpReply(f"header line {line[:80]!r}")
            name, value = name.lower(), value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        self.status, self.headers = status, headers
        connection = headers.get("connection", "").lower()
        self.keep_alive = "close" not in connection and (
            version != "HTTP/1.0" or "keep-alive" in connection
        )
        self._start_body(status, headers)
        return not self.done

    def _start_body(self, status: int, headers: dict[str, str]) -> None:
        coding = headers.get("transfer-encoding", "").lower()
        if self.error_body_limit is not None and not 200 <= status < 300:
            # Of an error reply only the start is kept; the rest is never read.
            self.body_limit, self.truncate = self.error_body_limit, True
        if status in (204, 304):
            self._finish()
        elif coding:
            if coding.rsplit(",", 1)[-1].strip() != "chunked":
                raise BadHttpReply(f"transfer encoding {coding[:40]!r}")
            self._state = "chunk-size"
        elif "content-length" in headers:
            lengths = {value.strip() for value in headers["content-length"].split(",")}
            length = lengths.pop() if len(lengths) == 1 else ""
            if not length.isdigit():
                raise BadHttpReply(f"content length {headers['content-length'][:40]!r}")
            self._left = int(length)
            if self._left > self.body_limit and not self.truncate:
                raise ReplyTooLarge(self.body_limit)
            self._state = "length"
            if self._left == 0:
                self._finish()
        else:
            self._state = "until-close"
            self.keep_alive = False

    def _read_chunk_size(self) -> bool:
        end = self.buffer.find(b"\r\n")
        if end < 0:
            self._check_line_length(len(self.buffer), "a chunk size line")
            return False
        self._check_line_length(end, "a chunk size line")
        line = bytes(self.buffer[:end]).split(b";", 1)[0].strip()
        del self.buffer[: end + 2]
        try:
            size = int(line, 16)
        except ValueError:
            raise BadHttpReply(f"chunk size {line[:20]!r}") from None
        if size < 0:
            raise BadHttpReply(f"chunk size {line[:20]!r}")
        self._left = size
        self._state = "chunk-data" if size else "trailers"
        return True

    def _check_line_length(self, length: int, what: str) -> None:
        if length > MAX_CHUNK_LINE_BYTES:
            raise BadHttpReply(f"{what} is over {MAX_CHUNK_LINE_BYTES} bytes")

    def _take(self, most: int) -> int:
        """Move up to ``most`` buffered bytes into the body, within the cap."""
        piece = self.buffer[:most]
        del self.buffer[: len(piece)]
        self.body += piece
        if len(self.body) > self.body_limit:
            if not self.truncate:
                raise ReplyTooLarge(self.body_limit)
            del self.body[self.body_limit :]
            self.keep_alive = False  # the rest is never read
            self._finish()
        return len(piece)

    def _finish(self) -> None:
        self.done = True
        if self.buffer:  # bytes past the reply: the connection is not clean
            self.keep_alive = False


@dataclass(frozen=True)
class _BodyLimits:
    body: int
    truncate: bool
    error_body: int | None


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection; one exchange at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._reader: _ReplyReader | None = None
        self._waiter: asyncio.Future[_ReplyReader] | None = None
        self._read_any = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def exchange(self, request: bytes, limits: _BodyLimits) -> asyncio.Future:
        """Send ``request``; the future gives the reader once the reply is read."""
        assert self.transport is not None
        loop = asyncio.get_running_loop()
        self._reader = _ReplyReader(limits.body, limits.truncate, limits.error_body)
        self._waiter = loop.create_future()
        self._read_any = False
        self.transport.write(request)
        return self._waiter

    def data_received(self, data: bytes) -> None:
        reader, waiter = self._reader, self._waiter
        if reader is None or waiter is None or waiter.done():
            self.close()  # bytes nobody asked for: the connection is not clean
            return
        self._read_any = True
        try:
            reader.feed(data)
        except (BadHttpReply, ReplyTooLarge) as exc:
            waiter.set_exception(exc)
            self.close()
            return
        if reader.done:
            self._reader = self._waiter = None
            waiter.set_result(reader)

    def eof_received(self) -> bool:
        return False  # close the transport; connection_lost settles the exchange

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        reader, waiter = self._reader, self._waiter
        self._reader = self._waiter = None
        if reader is None or waiter is None or waiter.done():
            return
        reader.closed()
        if reader.done:
            waiter.set_result(reader)
        else:
            waiter.set_exception(ServerDisconnected(nothing_read=not self._read_any))

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class ConnectionPool:
    """Kept-alive connections to one endpoint, for one event loop."""

    def __init__(self, endpoint: Endpoint, tls_context: ssl.SSLContext | None):
        self.endpoint = endpoint
        self.tls_context = tls_context
        self.closed = False
        self._idle: list[_Connection] = []

    async def post(self, head: bytes, body: bytes, limits: _BodyLimits) -> HttpReply:
        """Send ``head`` (request line and headers, blank line included) and
        ``body``; the reply, its body within ``limits``."""
        request = head + body
        while self._idle:
            connection = self._idle.pop()
            if connection.closed or connection.transport is None:
                continue
            if connection.transport.is_closing():
                connection.close()
                continue
            try:
                return await self._exchange(connection, request, limits)
            except ServerDisconnected as exc:
                if not exc.nothing_read:
                    raise
                # The server closed it while it was idle: send on a new one.
        return await self._exchange(await self._connect(), request, limits)

    async def _connect(self) -> _Connection:
        endpoint = self.endpoint
        loop = asyncio.get_running_loop()
        _, connection = await loop.create_connection(
            _Connection,
            endpoint.host,
            endpoint.port,
            ssl=self.tls_context if endpoint.tls else None,
        )
        return connection

    async def _exchange(
        self, connection: _Connection, request: bytes, limits: _BodyLimits
    ) -> HttpReply:
        try:
            reader = await connection.exchange(request, limits)
        except BaseException:  # a failure, a timeout, a cancel: the connection is spent
            connection.close()
            raise
        if reader.keep_alive and not connection.closed and not self.closed:
            if len(self._idle) < MAX_IDLE_CONNECTIONS:
                self._idle.append(connection)
            else:
                connection.close()
        else:
            connection.close()
        return HttpReply(reader.status, reader.headers, bytes(reader.body))

    def close(self) -> None:
        self.closed = True
        while self._idle:
            self._idle.pop().close()


class Http1Client:
    """POSTs to one URL from any event loop: a connection pool per loop."""

    def __init__(self, url: str, headers: dict[str, str]):
        self.endpoint = Endpoint.from_url(url)
        lines = [f"POST {self.endpoint.target} HTTP/1.1", f"Host: {self.endpoint.host_header}"]
        if self.endpoint.basic_auth and "authorization" not in {k.lower() for k in headers}:
            headers = {**headers, "Authorization": self.endpoint.basic_auth}
        lines += [f"{name}: {value}" for name, value in headers.items()]
        # Header values are sent as latin-1 (HTTP's own); the length comes per request.
        self._head_start = ("\r\n".join(lines) + "\r\nContent-Length: ").encode("latin-1")
        self._tls_context = ssl.create_default_context() if self.endpoint.tls else None
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ConnectionPool] = (
            weakref.WeakKeyDictionary()
        )

    def _pool(self) -> ConnectionPool:
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is None or pool.closed:
            pool = self._pools[loop] = ConnectionPool(self.endpoint, self._tls_context)
        return pool

    async def post(
        self,
        body: bytes,
        body_limit: int,
        truncate: bool = False,
        error_body_limit: int | None = None,
    ) -> HttpReply:
        """The reply to ``body``. Its body (as on the wire) at most ``body_limit``
        bytes: more is ``ReplyTooLarge``, or with ``truncate`` the first bytes; a
        reply that is not 2xx keeps its first ``error_body_limit`` bytes when given."""
        head = self._head_start + b"%d\r\n\r\n" % len(body)
        limits = _BodyLimits(body_limit, truncate, error_body_limit)
        return await self._pool().post(head, body, limits)

    def close(self) -> None:
        """Close this event loop's idle connections (the ones in use close when done)."""
        pool = self._pools.pop(asyncio.get_running_loop(), None)
        if pool is not None:
            pool.close()
