"""The reply-size cap holds while the body streams: chunked, compressed, and decompressed,
through the direct client and through litellm."""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib

import pytest

from harness.models import openai_http
from harness.models.base import ModelError
from harness.models.litellm_client import LITELLM_HANDLER_PROVIDERS, LiteLLMClient
from harness.models.openai_http import OpenAIHTTPClient
from harness.models.reply_body import MAX_REPLY_BYTES, ReplyTooLarge
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


# -- the same cap through litellm (--client litellm) ---------------------------------

# Providers of both kinds: litellm reads the first through the OpenAI SDK
# (litellm.aclient_session), the second through its own handler (the ``client``
# argument); capped_transport.py serves both.
SDK_PROVIDERS = ["openai", "custom_openai", "deepinfra", "perplexity"]
HANDLER_PROVIDERS = ["hosted_vllm", "deepseek", "mistral", "openrouter", "together_ai"]


def ask_litellm(server: FakeServer, model: str = "openai/fake-model", **kwargs) -> object:
    async def go():
        client = LiteLLMClient(model, api_base=server.url, timeout=60, **kwargs)
        try:
            return await client.complete([{"role": "user", "content": "hi"}], [], SamplingParams())
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_litellm_reads_through_the_capped_transport_for_both_kinds_of_provider():
    assert set(HANDLER_PROVIDERS) <= LITELLM_HANDLER_PROVIDERS
    assert not set(SDK_PROVIDERS) & LITELLM_HANDLER_PROVIDERS
    with FakeServer() as server:
        for provider in SDK_PROVIDERS + HANDLER_PROVIDERS:
            server.enqueue(Reply.text(f"via {provider}"), Reply(chunks=CountingChunks(100)))
            turn = ask_litellm(server, f"{provider}/fake-model", api_key="test-key")
            assert turn.content == f"via {provider}"
            with pytest.raises(ReplyTooLarge):
                ask_litellm(server, f"{provider}/fake-model", api_key="test-key")


@pytest.mark.parametrize("model", ["openai/fake-model", "hosted_vllm/fake-model"])
@pytest.mark.parametrize("kind", ["chunked", "content_length", "gzip", "chunked_gzip"])
def test_litellm_refuses_an_oversized_reply_as_the_direct_client_does(model, kind):
    chunks = CountingChunks(100)
    replies = {
        "chunked": Reply(chunks=chunks),
        "content_length": Reply(body=b" " * (100 * MB)),
        "gzip": Reply(body=gzip_bomb(400), headers={"Content-Encoding": "gzip"}),
        "chunked_gzip": Reply(chunks=[gzip_bomb(400)], headers={"Content-Encoding": "gzip"}),
    }
    with FakeServer() as server:
        server.enqueue(replies[kind])
        with pytest.raises(ReplyTooLarge, match=f"larger than {MAX_REPLY_BYTES}") as caught:
            ask_litellm(server, model)
        # Refused once, not retried by litellm or the OpenAI SDK as a dropped connection.
        assert len(server.chat_requests) == 1
    assert caught.value.transient is False
    assert chunks.sent < 90


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_litellm_reads_compressed_replies_under_the_cap(encoding):
    body = ok_body("compressed fine")
    body = gzip.compress(body) if encoding == "gzip" else zlib.compress(body)
    with FakeServer() as server:
        server.enqueue(Reply(body=body, headers={"Content-Encoding": encoding}))
        assert ask_litellm(server).content == "compressed fine"


def test_litellm_keeps_only_the_start_of_a_huge_error_body():
    chunks = CountingChunks(400)
    with FakeServer() as server:
        server.enqueue(Reply(status=500, chunks=chunks))
        with pytest.raises(ModelError) as caught:
            ask_litellm(server)
    assert not isinstance(caught.value, ReplyTooLarge)
    assert chunks.sent < 40


def test_a_reply_litellm_read_without_the_cap_is_refused():
    # mock_response: litellm answers without any HTTP, as it does for a provider
    # it reads with a client of its own; such a reply never passed the cap.
    with FakeServer() as server:
        with pytest.raises(ModelError, match="without the reply-size cap") as caught:
            ask_litellm(server, extra_kwargs={"mock_response": "uncapped"})
    assert caught.value.transient is False
