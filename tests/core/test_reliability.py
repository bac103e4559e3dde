"""Nothing is lost: flaky servers, kills mid-run, missing keys (through the real network path)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from support import harness_process, toy_reply, wait_for_lines

from harness.cli import main
from harness.store.run_store import read_records
from harness.testing.fake_server import FakeServer


def records_of(run_dir: Path) -> dict:
    return read_records(run_dir / "samples.jsonl").latest


def comparable(record: dict) -> tuple:
    trajectory = record["trajectory"]
    return (record["status"], json.dumps(record["score"]), json.dumps(trajectory["messages"]))


def test_twenty_percent_failing_calls_lose_no_sample(toy_suite, tmp_path):
    with FakeServer(fail_fraction=0.2, timeout_delay=3.0, seed=7, handler=toy_reply) as server:
        code = main(
            [
                "run",
                "--suite",
                str(toy_suite),
                "--model",
                "openai/fake-model",
                "--api-base",
                server.url,
                "--trials",
                "3",
                "--concurrency",
                "8",
                "--timeout",
                "1",
                "--max-attempts",
                "12",
                "--retry-delay",
                "0.01",
                "--no-cache",
                "--local-server",
                "no",  # an API that hangs: abandon and re-send
                "--quiet",
                "--out",
                str(tmp_path / "run"),
            ]
        )
        served = len(server.chat_requests)
    records = records_of(tmp_path / "run")
    assert code == 0
    assert len(records) == 8 * 3
    assert all(r["status"] == "ok" and r["score"]["passed"] for r in records.values())
    assert served > 8 * 3 * 2  # failures happened and were retried


@pytest.mark.slow
def test_sigkill_mid_run_then_rerun_equals_an_uninterrupted_run(toy_suite, tmp_path):
    with FakeServer(latency=0.05, handler=toy_reply) as server:
        common = [
            "run",
            "--suite",
            str(toy_suite),
            "--model",
            "openai/fake-model",
            "--api-base",
            server.url,
            "--trials",
            "4",
            "--concurrency",
            "2",
            "--no-cache",
            "--quiet",
        ]
        killed_dir, clean_dir = tmp_path / "killed", tmp_path / "clean"
        process = harness_process([*common, "--out", str(killed_dir)])
        samples = killed_dir / "samples.jsonl"
        wait_for_lines(samples, 5)
        process.send_signal(signal.SIGKILL)
        process.wait()
        lines_at_kill = len(samples.read_text().splitlines())
        assert 5 <= lines_at_kill < 32, "the kill must land mid-run"
        rerun = harness_process([*common, "--out", str(killed_dir)])
        assert rerun.wait(timeout=120) == 0, rerun.stderr.read()
        clean = harness_process([*common, "--out", str(clean_dir)])
        assert clean.wait(timeout=120) == 0, clean.stderr.read()
    resumed, uninterrupted = records_of(killed_dir), records_of(clean_dir)
    assert len(resumed) == len(uninterrupted) == 32
    assert {k: comparable(r) for k, r in resumed.items()} == {
        k: comparable(r) for k, r in uninterrupted.items()
    }
    # No duplicates: every key has exactly one successful record in the file.
    ok_keys = [
        json.loads(line)["key"]
        for line in samples.read_text().splitlines()
        if line.strip().startswith("{") and '"status": "ok"' in line
    ]
    assert len(ok_keys) == len(set(ok_keys)) == 32


def test_a_missing_api_key_is_one_line_and_exit_code_2(toy_suite, capsys):
    assert main(["run", "--suite", str(toy_suite), "--model", "openai/gpt-4.1", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "OPENAI_API_KEY" in err


def test_api_keys_never_reach_the_run_folder(toy_suite, tmp_path, monkeypatch):
    secret = "sk-test-SECRET-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    with FakeServer(handler=toy_reply) as server:
        code = main(
            [
                "run",
                "--suite",
                str(toy_suite),
                "--model",
                "openai/fake-model",
                "--client",
                "litellm",
                "--api-base",
                server.url,
                "--limit",
                "1",
                "--no-cache",
                "--quiet",
                "--out",
                str(tmp_path / "run"),
            ]
        )
    assert code == 0
    # The key went to the server (litellm sends it) but nowhere into the run folder.
    assert any(secret in str(r.headers) for r in server.chat_requests)
    for path in (tmp_path / "run").iterdir():
        assert secret not in path.read_text(errors="replace"), path.name
