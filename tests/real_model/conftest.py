"""The real-model tier's figures, shown in pytest's summary (before its last line)."""

from __future__ import annotations

from real_model_tier import REPORT


def pytest_terminal_summary(terminalreporter) -> None:
    ran = [
        report
        for outcome in ("passed", "failed", "error")
        for report in terminalreporter.stats.get(outcome, [])
        if "tests/real_model/" in getattr(report, "nodeid", "")
    ]
    if ran and REPORT.is_file():
        terminalreporter.section("real-model tier")
        terminalreporter.write_line(REPORT.read_text(encoding="utf-8"))
