"""The reply cap for litellm: an httpx transport that reads each reply within it.

litellm reads a reply whole (the OpenAI SDK's ``response.read()``, its own
handler's ``aread()``) and lets httpx decompress it, so a 400 MB reply, chunked
or a gzip bomb, would be held in memory. ``CappedTransport`` sits under litellm's
httpx client: it reads the body of every reply itself, with reply_body.py's
reader and caps (the direct client's), and hands litellm a reply already read
and decompressed. Over the cap it raises ReplyTooLarge, which litellm wraps in
an exception of its own (a connection error, retried); ``CapWatch`` keeps the
original for the caller, so that the refusal is recorded as the direct client
records it, and says whether a call's reply came through the transport at all.

Underneath is litellm's own transport (``AsyncHTTPHandler.create_async_transport``:
its connection pool, TLS and proxy settings; it opens a new session when the
event loop changes and closes the old one).

How litellm is given the transport (both are litellm settings, not patches):
providers served through the OpenAI SDK build their SDK client around
``litellm.aclient_session``; the others take an ``AsyncHTTPHandler`` as the
``client`` argument of each call (``LITELLM_HANDLER_PROVIDERS`` in
litellm_client.py).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass

import httpx

from harness.models.base import ModelError
from harness.models.reply_body import (
    ACCEPT_ENCODING,
    MAX_ERROR_BYTES,
    MAX_REPLY_BYTES,
    read_capped_pieces,
)

# Headers that described the body as sent; the reply handed on is read and decoded.
_BODY_HEADERS = ("content-encoding", "content-length", "transfer-encoding")


@dataclass
class CapWatch:
    """What the transport saw of one model call: how many replies it read, and
    the error it raised (over the cap, an unknown encoding), before litellm
    wrapped it in one of its own."""

    replies: int = 0
    error: ModelError | None = None


_WATCH: contextvars.ContextVar[CapWatch | None] = contextvars.ContextVar(
    "harness_cap_watch", default=None
)


@contextlib.contextmanager
def watching() -> Iterator[CapWatch]:
    """Watch the model call made inside (tasks litellm starts for it inherit the
    watch: they copy this context, and the watch is one object)."""
    watch = CapWatch()
    token = _WATCH.set(watch)
    try:
        yield watch
    finally:
        _WATCH.reset(token)


def _litellm_transport() -> httpx.AsyncBaseTransport:
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    transport = AsyncHTTPHandler.create_async_transport()
    return transport if transport is not None else httpx.AsyncHTTPTransport()


async def _raw_pieces(stream: httpx.AsyncByteStream) -> AsyncIterator[bytes]:
    async for piece in stream:
        yield piece


class CappedTransport(httpx.AsyncBaseTransport):
    """Reads every reply within ``limit`` (an error reply: its first
    ``error_limit`` bytes) before handing it on; see the module docstring."""

    def __init__(
        self,
        limit: int = MAX_REPLY_BYTES,
        error_limit: int = MAX_ERROR_BYTES,
        inner: Callable[[], httpx.AsyncBaseTransport] = _litellm_transport,
    ):
        self.limit = limit
        self.error_limit = error_limit
        self._make_inner = inner
        self._inner: httpx.AsyncBaseTransport | None = None

    def _transport(self) -> httpx.AsyncBaseTransport:
        if self._inner is None:  # made on first use: litellm is imported by then
            self._inner = self._make_inner()
        return self._inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        # Only encodings reply_body.py decodes (httpx would offer br or zstd too).
        request.headers["Accept-Encoding"] = ACCEPT_ENCODING
        response = await self._transport().handle_async_request(request)
        watch = _WATCH.get()
        try:
            stream = response.stream
            assert isinstance(stream, httpx.AsyncByteStream)
            length = response.headers.get("Content-Length", "")
            error = response.status_code >= 400
            body = await read_capped_pieces(
                _raw_pieces(stream),
                int(length) if length.isdigit() else None,
                response.headers.get("Content-Encoding", ""),
                self.error_limit if error else self.limit,
                truncate=error,
            )
        except ModelError as exc:
            if watch is not None:
                watch.error = exc
            raise
        finally:
            await response.aclose()  # over the cap: hang up, the rest is never read
        if watch is not None:
            watch.replies += 1
        headers = [
            (name, value)
            for name, value in response.headers.multi_items()
            if name.lower() not in _BODY_HEADERS
        ]
        return httpx.Response(
            response.status_code,
            headers=headers,
            content=body,
            request=request,
            extensions={k: v for k, v in response.extensions.items() if k != "network_stream"},
        )

    async def aclose(self) -> None:
        """Close the connections (a later request opens new ones)."""
        transport, self._inner = self._inner, None
        if transport is not None:
            await transport.aclose()
