"""harness.models.http1: the direct client's HTTP/1.1 exchange, against a raw
server that sends scripted bytes (framings, interim replies, closes, bad heads)."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Callable

import pytest

from harness.models.http1 import (
    MAX_HEAD_BYTES,
    BadHttpReply,
    Endpoint,
    Http1Client,
    ServerDisconnected,
)
from harness.models.reply_body import ReplyTooLarge, decompressed

# What the server does with one request: the bytes it answers (None: close the
# connection without a word).
Answer = Callable[[bytes], bytes | None]


def ok(body: bytes, *headers: str) -> bytes:
    head = ["HTTP/1.1 200 OK", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class RawServer:
    """Answers each request (read whole: head and Content-Length body) with the
    next scripted answer; records the requests and the connections they came on."""

    def __init__(self, *answers: Answer | bytes | None, close_after_each: bool = False):
        self.answers = list(answers)
        self.close_after_each = close_after_each
        self.requests: list[bytes] = []
        self.connections = 0
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> RawServer:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    @property
    def url(self) -> str:
        assert self.server is not None
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1/chat/completions"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.answers:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                self.requests.append(head + await reader.readexactly(length))
                answer = self.answers.pop(0)
                data = answer(head) if callable(answer) else answer
                if data is None:
                    break
                writer.write(data)
                await writer.drain()
                if self.close_after_each:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


def post_all(server: RawServer, count: int = 1, **limits: object) -> list:
    """``count`` posts one after another through one client; each reply or error."""

    async def main() -> list:
        async with server:
            client = Http1Client(server.url, {"Content-Type": "application/json"})
            results: list = []
            for _ in range(count):
                try:
                    results.append(await client.post(b'{"a": 1}', **{"body_limit": 1000, **limits}))
                except Exception as exc:  # noqa: BLE001 - the test looks at it
                    results.append(exc)
            client.close()
            return results

    return asyncio.run(main())


def test_a_request_is_one_post_with_its_length_and_the_headers_given():
    server = RawServer(ok(b'{"x": 1}', "Content-Type: application/json"))
    (reply,) = post_all(server)
    assert (reply.status, reply.body) == (200, b'{"x": 1}')
    assert reply.headers["content-type"] == "application/json"
    head, body = server.requests[0].split(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/chat/completions HTTP/1.1"
    assert "Content-Length: 8" in lines and "Content-Type: application/json" in lines
    assert any(line.startswith("Host: 127.0.0.1:") for line in lines)
    assert body == b'{"a": 1}'


def test_connections_are_kept_alive_between_requests():
    server = RawServer(ok(b"1"), ok(b"2"), ok(b"3"))
    replies = post_all(server, 3)
    assert [r.body for r in replies] == [b"1", b"2", b"3"]
    assert server.connections == 1


def test_connection_close_and_http_1_0_are_not_reused():
    server = RawServer(
        ok(b"1", "Connection: close"), b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n2", ok(b"3")
    )
    replies = post_all(server, 3)
    assert [r.body for r in replies] == [b"1", b"2", b"3"]
    assert server.connections == 3


def test_a_chunked_reply_in_any_pieces_with_extensions_and_trailers():
    body = b'{"choices": []}'
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"5;name=x\r\n"
        + body[:5]
        + b"\r\n"
        + b"%x\r\n" % (len(body) - 5)
        + body[5:]
        + b"\r\n"
        + b"0\r\nX-Trailer: t\r\n\r\n"
    )
    server = RawServer(chunked, ok(b"next"))
    replies = post_all(server, 2)
    assert [r.body for r in replies] == [body, b"next"]
    assert server.connections == 1  # a clean chunked reply leaves the connection usable


def test_a_reply_read_to_the_close_when_it_has_no_length():
    server = RawServer(b"HTTP/1.1 200 OK\r\n\r\nall of it", close_after_each=True)
    (reply,) = post_all(server)
    assert reply.body == b"all of it"


def test_interim_replies_are_skipped():
    server = RawServer(b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b"done"))
    (reply,) = post_all(server)
    assert (reply.status, reply.body) == (200, b"done")


def test_a_kept_connection_the_server_closed_meanwhile_is_replaced_once():
    # The server answers and closes without saying so: the next request goes out
    # on the dead connection, reads nothing, and is sent again on a new one.
    server = RawServer(ok(b"1"), ok(b"2"), close_after_each=True)
    replies = post_all(server, 2)
    assert [r.body for r in replies] == [b"1", b"2"]
    assert server.connections == 2


def test_a_reply_cut_off_midway_is_a_disconnect_not_retried():
    server = RawServer(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\npart", close_after_each=True)
    (error,) = post_all(server)
    assert isinstance(error, ServerDisconnected) and not error.nothing_read
    assert "Server disconnected" in str(error)  # what the run's error kinds look for
    assert len(server.requests) == 1


def test_a_new_connection_closed_without_a_reply_is_an_error():
    (error,) = post_all(RawServer(None))
    assert isinstance(error, ServerDisconnected) and error.nothing_read


@pytest.mark.parametrize(
    "reply, what",
    [
        (b"SMTP ready\r\n\r\n", "status line"),
        (b"HTTP/1.1 2xx OK\r\n\r\n", "status line"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "header line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n", "content length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\n", "content length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "transfer encoding"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", "CRLF"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * (MAX_HEAD_BYTES + 10), "head is over"),
    ],
)
def test_what_is_not_http_is_a_bad_reply(reply, what):
    (error,) = post_all(RawServer(reply))
    assert isinstance(error, BadHttpReply) and what in str(error)


def test_a_body_over_the_cap_is_refused_by_length_and_while_it_streams():
    big = b"x" * 2000
    by_length, streamed = post_all(
        RawServer(ok(big), b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n" + big),
        2,
    )
    assert isinstance(by_length, ReplyTooLarge) and isinstance(streamed, ReplyTooLarge)


def test_an_error_reply_keeps_only_its_start_and_its_connection_is_dropped():
    text = b"e" * 5000
    error_reply = b"HTTP/1.1 500 Oops\r\nContent-Length: 5000\r\nRetry-After: 2\r\n\r\n" + text
    server = RawServer(error_reply, ok(b"fine"))
    first, second = post_all(server, 2, error_body_limit=100)
    assert (first.status, first.body, first.headers["retry-after"]) == (500, text[:100], "2")
    assert second.body == b"fine" and server.connections == 2


def test_repeated_headers_are_joined():
    (reply,) = post_all(RawServer(ok(b"", "Vary: a", "VARY: b")))
    assert reply.headers["vary"] == "a, b"


def _silent(head: bytes) -> bytes:
    return b""  # writes nothing: the client gives up first


def test_a_cancelled_request_drops_its_connection():
    async def main() -> tuple[int, bytes]:
        slow = RawServer(_silent, ok(b"later"))
        async with slow:
            client = Http1Client(slow.url, {})
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(client.post(b"{}", body_limit=100), 0.2)
            reply = await client.post(b"{}", body_limit=100)
            client.close()
            return slow.connections, reply.body

    connections, body = asyncio.run(main())
    assert body == b"later" and connections == 2


def test_endpoints_from_urls():
    plain = Endpoint.from_url("http://h:8000/v1/chat/completions?x=a b")
    assert (plain.host, plain.port, plain.tls, plain.host_header) == ("h", 8000, False, "h:8000")
    assert plain.target == "/v1/chat/completions?x=a%20b"
    tls = Endpoint.from_url("https://api.example/v1/chat/completions")
    assert (tls.port, tls.tls, tls.host_header) == (443, True, "api.example")
    six = Endpoint.from_url("http://[::1]:9/v1")
    assert (six.host, six.host_header) == ("::1", "[::1]:9")
    userinfo = Endpoint.from_url("http://me:p%40ss@h/v1")
    assert userinfo.basic_auth == "Basic bWU6cEBzcw=="  # me:p@ss
    with pytest.raises(ValueError):
        Endpoint.from_url("ftp://h/v1")


def test_the_urls_user_is_sent_as_basic_auth_unless_a_key_is_given():
    async def heads() -> list[bytes]:
        server = RawServer(ok(b"1"), ok(b"2"))
        async with server:
            url = server.url.replace("http://", "http://me:pw@")
            for headers in ({}, {"Authorization": "Bearer k"}):
                client = Http1Client(url, headers)
                await client.post(b"{}", body_limit=10)
                client.close()
            return server.requests

    basic, bearer = asyncio.run(heads())
    assert b"Authorization: Basic bWU6cHc=\r\n" in basic
    assert b"Authorization: Bearer k\r\n" in bearer and b"Basic" not in bearer


def test_decompressed_caps_what_a_small_body_inflates_to():
    bomb = gzip.compress(b"0" * 100_000)

    async def main() -> tuple[bytes, bytes]:
        with pytest.raises(ReplyTooLarge):
            await decompressed(bomb, "gzip", 1000)
        start = await decompressed(bomb, "gzip", 1000, truncate=True)
        plain = await decompressed(b"abc", "", 1000)
        return start, plain

    start, plain = asyncio.run(main())
    assert start == b"0" * 1000 and plain == b"abc"
