"""Test helpers that ship with the harness (``harness.testing.fake_server``: a fake
OpenAI-compatible server for tests and benches)."""
