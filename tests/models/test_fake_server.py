"""The fake OpenAI-compatible server itself (standard-library HTTP client)."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest

from harness.testing.fake_server import FakeServer, Reply


def request(url: str, method: str, path: str, body=None, headers=None, timeout=5.0):
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    payload = json.dumps(body).encode() if body is not None else None
    conn.request(
        method, path, body=payload, headers={"Content-Type": "application/json", **(headers or {})}
    )
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, dict(response.getheaders()), data


def chat(server, **body):
    return request(
        server.url, "POST", "/v1/chat/completions", {"model": "m", "messages": [], **body}
    )


def test_routes_and_recording():
    with FakeServer(model_name="served") as server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/v1")
        assert request(server.url, "GET", "/health")[0] == 200
        status, _, data = request(server.url, "GET", "/v1/models")
        assert status == 200 and json.loads(data)["data"][0]["id"] == "served"
        assert request(server.url, "GET", "/nope")[0] == 404
        status, _, data = chat(server, messages=[{"role": "user", "content": "hi"}])
        reply = json.loads(data)
        assert status == 200 and reply["choices"][0]["message"]["content"] == "ok"
        assert reply["usage"]["total_tokens"] > 0
        assert request(server.url, "POST", "/chat/completions", {"messages": []})[0] == 200
        assert [r.path for r in server.requests] == [
            "/health",
            "/v1/models",
            "/nope",
            "/v1/chat/completions",
            "/chat/completions",
        ]
        assert server.chat_requests[0].body["messages"][0]["content"] == "hi"


def test_scripted_queue_then_handler():
    with FakeServer() as server:
        server.set_handler(lambda req: Reply.text(f"saw {len(req['messages'])}"))
        server.enqueue(Reply.rate_limited(retry_after=2), Reply.calls(("f", '{"a": ')))
        status, headers, _ = chat(server)
        assert status == 429 and headers["Retry-After"] == "2"
        status, _, data = chat(server)
        call = json.loads(data)["choices"][0]["message"]["tool_calls"][0]
        assert call["function"] == {"name": "f", "arguments": '{"a": '}
        assert (
            json.loads(chat(server, messages=[{}, {}])[2])["choices"][0]["message"]["content"]
            == "saw 2"
        )


def test_latency_slow_reply_and_drop():
    with FakeServer(latency=0.1) as server:
        started = time.monotonic()
        chat(server)
        assert time.monotonic() - started >= 0.1
        server.enqueue(Reply.dropped())
        with pytest.raises((ConnectionError, http.client.RemoteDisconnected)):
            chat(server)
        server.enqueue(Reply.slow(3.0))
        with pytest.raises((socket.timeout, TimeoutError)):
            request(server.url, "POST", "/v1/chat/completions", {"messages": []}, timeout=0.3)


def test_fail_fraction_is_seeded():
    def outcomes(seed):
        with FakeServer(fail_fraction=0.5, fail_kinds=["429", "500"], seed=seed) as server:
            return [chat(server)[0] for _ in range(20)]

    first, again, other = outcomes(3), outcomes(3), outcomes(4)
    assert first == again and first != other
    assert set(first) == {200, 429, 500}


def test_rejects_unknown_fail_kind():
    with pytest.raises(ValueError):
        FakeServer(fail_kinds=["explode"])


def test_bad_requests_get_400():
    with FakeServer() as server:
        parts = urlsplit(server.url)
        with socket.create_connection((parts.hostname, parts.port), timeout=5) as sock:
            sock.sendall(b"GARBAGE\r\n\r\n")
            assert sock.recv(100).startswith(b"HTTP/1.1 400")
        status, _, _ = request(server.url, "POST", "/v1/chat/completions", None)
        assert status == 400
        assert chat(server, stream=True)[0] == 400


def test_chunked_request_body():
    with FakeServer() as server:
        parts = urlsplit(server.url)
        body = json.dumps({"messages": [{"role": "user", "content": "chunky"}]}).encode()
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
        conn.request(
            "POST",
            "/v1/chat/completions",
            body=iter([body[:10], body[10:]]),
            headers={"Transfer-Encoding": "chunked"},
            encode_chunked=True,
        )
        assert conn.getresponse().status == 200
        conn.close()
        assert server.chat_requests[0].body["messages"][0]["content"] == "chunky"


@pytest.mark.slow
def test_runs_as_a_module():
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.testing.fake_server", "--port", "0", "--latency", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("FAKE_SERVER_URL http://127.0.0.1:")
        url = line.split()[1]
        status, _, data = request(url, "POST", "/v1/chat/completions", {"messages": []})
        assert status == 200 and json.loads(data)["object"] == "chat.completion"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_stopping_closes_a_connection_accepted_just_before_the_stop():
    """A connection the kernel accepted while the loop was busy, and the stop queued
    behind it: its task has not run when the loop stops. The socket must still close;
    left open, a client waits on it until its own timeout (600 s for litellm)."""
    server = FakeServer()
    server.start()
    assert server._loop is not None
    server._loop.call_soon_threadsafe(time.sleep, 0.5)  # the loop is busy ...
    client = socket.create_connection((server.host, server.port), timeout=10)
    server.stop()  # ... and the stop is queued behind the accept
    client.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
    client.settimeout(5)
    try:
        answer = client.recv(1024)
    except ConnectionResetError:
        answer = b""
    except TimeoutError:
        pytest.fail("the connection stayed open after the server stopped")
    finally:
        client.close()
    assert answer == b""
