"""Fixtures of the model-layer tests."""

from __future__ import annotations

import pytest

from harness.testing.fake_server import FakeServer


@pytest.fixture(scope="module")
def server():
    """One fake OpenAI-compatible server for a whole test module."""
    with FakeServer() as fake:
        yield fake


@pytest.fixture
def fake(server):
    """The module's server as new: no requests seen, no handler, no latency."""
    server.clear()
    server.set_handler(None)
    server.latency = 0.0
    return server
