"""Shared test fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import (
    SHARED_KINDS,
    SHARED_SKIP,
    TESTS,
    TOY_ADAPTER,
    TOY_SUITE,
    shared_missing,
    shared_path,
)

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data (HARNESS_SHARED_DATA): the VitaBench and FinMCP folders."""
    return shared_path("data")


def pytest_terminal_summary(terminalreporter) -> None:
    """One line for every test skipped for want of ../shared: what was missing, and
    where the tests look for it."""
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if isinstance(report.longrepr, tuple) and SHARED_SKIP in str(report.longrepr[2])
    ]
    if not skipped:
        return
    missing = sorted(shared_missing)
    what = ", ".join(SHARED_KINDS[kind][3] for kind in missing)
    variables = ", ".join(SHARED_KINDS[kind][0] for kind in missing).replace(
        "HARNESS_TAU2_CHECKOUT",
        "HARNESS_TAU2_CHECKOUT (also the tau2-bench clone of docs/running.md)",
    )
    terminalreporter.write_line(
        f"{len(skipped)} test{'s' * (len(skipped) != 1)} skipped: ../shared not found ({what}); "
        "they read benchmark data and official code that is not on the package index from "
        f"../shared beside the checkout, or HARNESS_SHARED (per part: {variables}); "
        "see docs/development.md"
    )


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
