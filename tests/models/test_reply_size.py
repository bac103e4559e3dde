"""The reply-size cap holds while the body streams: chunked, compressed, and decompressed."""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib

import pytest

from harness.models import openai_http
from harness.models.base import ModelError
from harness.models.openai_http import OpenAIHTTPClient
from harness.testing.fake_server import FakeServer, Reply, completion_body
from harness.types import SamplingParams

MB = 1 << 20


def gzip_bomb(inflated_mb: int) -> bytes:
    """A gzip body of about 1 KB per inflated MB of zeros (the trailer is not valid:
    a reader that honours the cap never gets that far)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = b"\0" * MB
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    return first + block * (inflated_mb - 1) + compressor.flush()


class CountingChunks:
    """``count`` pieces of ``size`` bytes, counting how many the server got to send."""

    def __init__(self, count: int, size: int = MB):
        self.count, self.size, self.sent = count, size, 0

    def __iter__(self):
        piece = b" " * self.size
        for _ in range(self.count):
            self.sent += 1
            yield piece


def ask(server: FakeServer) -> object:
    async def go():
        client = OpenAIHTTPClient("openai/fake-model", server.url, timeout=60)
        try:
            return await client.complete([{"role": "user", "content": "hi"}], [], SamplingParams())
        finally:
            await client.aclose()

    return asyncio.run(go())


def ok_body(text: str = "fine") -> bytes:
    return json.dumps(completion_body({}, Reply.text(text), 1)).encode()


def test_a_400_mb_chunked_reply_is_refused_after_the_cap(monkeypatch):
    monkeypatch.setattr(openai_http, "MAX_REPLY_BYTES", 4 * MB)
    chunks = CountingChunks(400)
    with FakeServer() as server:
        server.enqueue(Reply(chunks=chunks))
        with pytest.raises(ModelError, match="larger than") as caught:
            ask(server)
    assert caught.value.transient is False
    # The server stops once the client hangs up; socket buffers hold a few MB at most.
    assert chunks.sent < 40


def test_a_gzip_bomb_is_refused_by_its_decompressed_size():
    bomb = gzip_bomb(400)
    assert len(bomb) < 450_000
    with FakeServer() as server:
        server.enqueue(Reply(body=bomb, headers={"Content-Encoding": "gzip"}))
        with pytest.raises(ModelError, match=f"larger than {openai_http.MAX_REPLY_BYTES}"):
            ask(server)


def test_a_chunked_gzip_bomb_is_refused_too(monkeypatch):
    monkeypatch.setattr(openai_http, "MAX_REPLY_BYTES", 4 * MB)
    bomb = gzip_bomb(100)
    pieces = [bomb[i : i + 4096] for i in range(0, len(bomb), 4096)]
    with FakeServer() as server:
        server.enqueue(Reply(chunks=pieces, headers={"Content-Encoding": "gzip"}))
        with pytest.raises(ModelError, match="larger than"):
            ask(server)


@pytest.mark.parametrize("encoding", ["gzip", "deflate", None])
def test_compressed_and_chunked_replies_under_the_cap_read_as_before(encoding):
    body = ok_body("compressed fine")
    headers = {}
    if encoding == "gzip":
        body, headers = gzip.compress(body), {"Content-Encoding": "gzip"}
    elif encoding == "deflate":
        body, headers = zlib.compress(body), {"Content-Encoding": "deflate"}
    pieces = [body[i : i + 7] for i in range(0, len(body), 7)]
    with FakeServer() as server:
        server.enqueue(Reply(body=body, headers=headers), Reply(chunks=pieces, headers=headers))
        first, second = ask(server), ask(server)
    assert first.content == second.content == "compressed fine"


def test_an_unknown_encoding_and_a_corrupt_gzip_body_are_errors_not_crashes():
    with FakeServer() as server:
        server.enqueue(Reply(body=b"xx", headers={"Content-Encoding": "br"}))
        with pytest.raises(ModelError, match="unsupported content encoding"):
            ask(server)
        server.enqueue(Reply(body=b"not gzip at all", headers={"Content-Encoding": "gzip"}))
        with pytest.raises(ModelError, match="decompress"):
            ask(server)


def test_a_huge_error_body_is_cut_not_read_whole():
    chunks = CountingChunks(400)
    with FakeServer() as server:
        server.enqueue(Reply(status=500, chunks=chunks))
        with pytest.raises(ModelError):
            ask(server)
    assert chunks.sent < 40
