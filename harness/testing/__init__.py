"""Test helpers that ship with the harness (``harness.testing.fake_server``: a fake
OpenAI-compatible server for tests and benches; ``check_adapter``: a conformance
check of an adapter against the task contract, see docs/adapters.md)."""

from harness.testing.conformance import ConformanceError, ConformanceReport, check_adapter

__all__ = ["ConformanceError", "ConformanceReport", "check_adapter"]
