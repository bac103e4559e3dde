"""bench/official_runners.py without the official runners: the replay server's
fallback reply, the comparison line and the one-line skip when a runner is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import official_runners  # noqa: E402
from replay_book import ReplayHandler, ReplyBook, reply_of, request_key  # noqa: E402

from harness.testing.fake_server import Reply  # noqa: E402
from harness.types import AssistantTurn  # noqa: E402


def test_with_a_fallback_the_replay_server_answers_every_request_and_counts_apart():
    recorded = {"messages": [{"role": "user", "content": "recorded"}]}
    book = ReplyBook()
    book.add(request_key(recorded), reply_of(AssistantTurn(content="from the book")))
    handler = ReplayHandler(book, Reply.text("fallback"))
    assert handler(recorded).content == "from the book"
    other = handler({"messages": [{"role": "user", "content": "never recorded"}]})
    assert other.status == 200 and other.content == "fallback"
    counts = handler.counts()
    assert (counts["served"], counts["fell_back"], counts["unmatched"]) == (1, 1, 0)


def test_the_line_gives_both_sides_and_flags_unequal_work():
    ours = official_runners.Measured(wall_s=10.0, cpu_s=5.0, requests=100)
    theirs = official_runners.Measured(wall_s=25.0, cpu_s=20.0, requests=100)
    line = official_runners.comparison_line("tau2 airline", ours, theirs)
    assert "2.50x faster" in line and "4.00x less CPU" in line and "differ" not in line
    fewer = official_runners.Measured(wall_s=25.0, cpu_s=20.0, requests=90)
    assert "request counts differ" in official_runners.comparison_line("x", ours, fewer)


def test_a_missing_official_runner_is_one_line_and_exit_0(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "official_runners.py"),
            "--runners",
            "bfcl",
            "--bfcl-python",
            str(tmp_path / "no-such-python"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"official_runners: skipped, bfcl: no Python at {tmp_path / 'no-such-python'} "
        "(--bfcl-python: BFCL's environment)"
    ]
