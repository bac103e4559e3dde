"""A probe (models listing, /props, preflight) sends a URL's password to no proxy.

A listening fake proxy records every byte it is sent and answers 502; the
server is a FakeServer on 127.0.0.1. With ``NO_PROXY=127.0.0.1`` the probes go
straight to the server (the run is not refused); without it they go through the
proxy, with the password in no byte of the request line or headers.
"""

from __future__ import annotations

import base64
import socket
import threading

import pytest
from support import toy_reply

from harness.cli import main
from harness.models.preflight import preflight
from harness.models.probes import probe_target
from harness.models.server_info import probe_server
from harness.testing.fake_server import FakeServer

USER = "probeuser"
PASSWORD = "plant-probe-pass-0036"


class FakeProxy:
    """A TCP listener that keeps what each connection sends and answers 502."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.received = b""
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with connection:
                connection.settimeout(2)
                data = b""
                try:
                    while b"\r\n\r\n" not in data:
                        chunk = connection.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    connection.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass
                with self._lock:
                    self.received += data

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def proxy(monkeypatch):
    fake = FakeProxy()
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.setenv(name, fake.url)
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    yield fake
    fake.close()


def with_password(url: str) -> str:
    return url.replace("http://", f"http://{USER}:{PASSWORD}@", 1)


def test_userinfo_becomes_a_basic_header_and_leaves_the_url():
    target = probe_target(f"http://{USER}:p%40ss@127.0.0.1:9/v1?k=1")
    assert target.url == "http://127.0.0.1:9/v1?k=1"
    expected = base64.b64encode(f"{USER}:p@ss".encode()).decode()
    assert target.headers == {"Authorization": f"Basic {expected}"}
    assert probe_target("http://127.0.0.1:9/v1").headers == {}


def test_no_proxy_host_is_probed_directly_with_basic_auth(proxy, monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with FakeServer(model_name="m") as server:
        api_base = with_password(server.url)
        info = probe_server(api_base)
        findings = preflight(api_base, "m", "auto", timeout=5)
        seen = [request.headers.get("authorization", "") for request in server.requests]
    assert info.reachable and info.model_ids() == ["m"]
    assert findings.unreachable is None
    basic = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert seen and all(header == basic for header in seen)
    assert proxy.received == b""


def test_a_proxied_probe_carries_no_password_in_its_url(proxy):
    with FakeServer(model_name="m") as server:
        probe_server(with_password(server.url))
        preflight(with_password(server.url), "m", "auto", timeout=5)
    assert b"GET http://127.0.0.1:" in proxy.received  # it did go through the proxy
    assert proxy.received.count(PASSWORD.encode()) == 0
    assert f"{USER}:".encode() not in proxy.received


def test_a_run_with_a_proxy_and_no_proxy_is_not_refused(proxy, toy_suite, tmp_path, monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with FakeServer(handler=toy_reply, model_name="m") as server:
        code = main(
            ["run", "--suite", str(toy_suite), "--model", "openai/m", "--quiet",
             "--api-base", with_password(server.url), "--limit", "1",
             "--out", str(tmp_path / "run"), "--no-cache"]
        )  # fmt: skip
    assert code == 0
    assert proxy.received.count(PASSWORD.encode()) == 0
