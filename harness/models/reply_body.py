"""Reading an HTTP reply body within a size cap, while it streams.

A Content-Length check alone lets a chunked reply (no length) or a compressed
one (a small gzip bomb that inflates to gigabytes) be read whole. Here the body
is read in pieces and decompressed here, not by the HTTP library, with zlib's
``max_length``, so neither the bytes on the wire nor the decompressed bytes can
pass the cap: the read stops as soon as either would.

Both model clients read through ``read_capped_pieces`` with the caps below: the
direct client through http1.py (which caps the bytes on the wire as they arrive)
and ``decompressed``, litellm through the httpx transport of capped_transport.py.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator

from harness.models.base import ModelError

# Replies larger than this (on the wire or decompressed) are refused while they
# stream: a runaway server must not exhaust memory.
MAX_REPLY_BYTES = 64 * 1024 * 1024
# Of an error reply only the start is kept (its message is cut to 1000 chars anyway).
MAX_ERROR_BYTES = 64 * 1024
# Encodings the clients ask for and can decode themselves.
ACCEPT_ENCODING = "gzip, deflate"
READ_PIECE_BYTES = 64 * 1024
# wbits that accept both gzip and zlib headers.
_GZIP_OR_ZLIB = 32 + zlib.MAX_WBITS


class ReplyTooLarge(ModelError):
    """The reply (on the wire or decompressed) is over the cap; never retried."""

    def __init__(self, limit: int):
        super().__init__(f"reply larger than {limit} bytes", transient=False)


def _decoder(encoding: str) -> zlib._Decompress | None:
    name = encoding.strip().lower()
    if name in ("", "identity"):
        return None
    if name in ("gzip", "x-gzip", "deflate"):
        return zlib.decompressobj(_GZIP_OR_ZLIB)
    raise ModelError(f"reply uses an unsupported content encoding '{name[:40]}'", transient=False)


async def read_capped_pieces(
    pieces: AsyncIterator[bytes],
    content_length: int | None,
    content_encoding: str,
    limit: int,
    truncate: bool = False,
) -> bytes:
    """The (decompressed) body whose raw bytes ``pieces`` yields, at most ``limit`` bytes.

    Over the cap: raises ReplyTooLarge, or with ``truncate`` returns the first
    ``limit`` bytes (for error texts, of which only the start is kept). The
    caller closes the connection: the rest of the body is never read.
    """
    if not truncate and (content_length or 0) > limit:
        raise ReplyTooLarge(limit)
    decoder = _decoder(content_encoding)
    body = bytearray()
    received = 0
    async for piece in pieces:
        received += len(piece)
        if decoder is None:
            data = piece
        else:
            try:
                data = decoder.decompress(piece, limit + 1 - len(body))
            except zlib.error as exc:
                raise ModelError(f"reply body does not decompress: {exc}", transient=True) from None
            if decoder.unconsumed_tail:  # more output waiting than the cap leaves room for
                data += b"\0"
        body += data
        if len(body) > limit or received > limit:
            if truncate:
                return bytes(body[:limit])
            raise ReplyTooLarge(limit)
    if decoder is not None:
        body += decoder.flush(READ_PIECE_BYTES)
        if len(body) > limit:
            if truncate:
                return bytes(body[:limit])
            raise ReplyTooLarge(limit)
    return bytes(body)


async def decompressed(body: bytes, encoding: str, limit: int, truncate: bool = False) -> bytes:
    """A body read whole (within ``limit`` on the wire), decompressed within
    ``limit`` (``read_capped_pieces``; over it: ``ReplyTooLarge``, or with
    ``truncate`` the first ``limit`` bytes)."""
    if _decoder(encoding) is None:
        return body if len(body) <= limit or not truncate else body[:limit]
    return await read_capped_pieces(_one_piece(body), len(body), encoding, limit, truncate)


async def _one_piece(body: bytes) -> AsyncIterator[bytes]:
    yield body
