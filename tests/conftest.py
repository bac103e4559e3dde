"""Shared test fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import REPO, TESTS, TOY_ADAPTER, TOY_SUITE

# Benchmark data that is not on PyPI lives beside the project, never inside it.
SHARED_DATA = Path(os.environ.get("HARNESS_SHARED_DATA", REPO.parent / "shared" / "data"))

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"shared benchmark data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture
def toy_suite(monkeypatch, tmp_path) -> Path:
    """A suite of the toy adapter's two subsets, with the adapter registered for this
    process and for the harness processes a test starts, and no provider key set."""
    monkeypatch.setenv("HARNESS_ADAPTERS", TOY_ADAPTER)
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    suite = tmp_path / "toy.yaml"
    suite.write_text(TOY_SUITE)
    return suite
