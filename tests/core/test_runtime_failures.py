"""The machine failing a run (SIGTERM, a full disk, the folder removed) is one
line on stderr; every record written before stays, and a rerun resumes."""

from __future__ import annotations

import errno
import os
import shutil
import signal
from pathlib import Path

import pytest
from support import harness_process, toy_reply, wait_for_lines

from harness.cli import main
from harness.store.run_store import RunStore, read_records
from harness.testing.fake_server import FakeServer


def run_argv(suite: Path, url: str, out: Path, *extra: str) -> list[str]:
    return ["run", "--suite", str(suite), "--model", "openai/fake-model", "--api-base", url,
            "--trials", "3", "--concurrency", "2", "--no-cache", "--quiet", "--out", str(out),
            *extra]  # fmt: skip


@pytest.mark.slow
def test_sigterm_without_serve_flushes_says_one_line_and_exits_143(toy_suite, tmp_path):
    out = tmp_path / "run"
    with FakeServer(latency=0.1, handler=toy_reply) as server:
        argv = run_argv(toy_suite, server.url, out)
        process = harness_process(argv)
        samples = out / "samples.jsonl"
        wait_for_lines(samples, 3)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
        assert process.returncode == 143, err
        assert err.strip().splitlines() == ["harness: terminated; rerun the same command to resume"]
        kept = read_records(samples).latest
        assert 3 <= len(kept) < 24, "the signal must land mid-run"
        # The rerun finishes the rest; nothing that was written is done again.
        assert main(argv) == 0
    done = read_records(samples).latest
    assert len(done) == 24 and all(r["status"] == "ok" for r in done.values())
    for key, record in kept.items():
        assert done[key]["started_at"] == record["started_at"]


def test_a_full_disk_is_one_line_keeps_what_was_written_and_resumes(
    toy_suite, tmp_path, monkeypatch, capsys
):
    out = tmp_path / "run"
    real_append = RunStore.append
    written = []

    def append_until_full(self, record):
        if len(written) >= 4:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.samples_path))
        real_append(self, record)
        written.append(record.key)

    with FakeServer(handler=toy_reply) as server:
        argv = run_argv(toy_suite, server.url, out)
        monkeypatch.setattr(RunStore, "append", append_until_full)
        assert main(argv) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "No space left on device" in err[0] and "resume" in err[0]
        assert set(read_records(out / "samples.jsonl").latest) == set(written)
        monkeypatch.setattr(RunStore, "append", real_append)
        assert main(argv) == 0
    done = read_records(out / "samples.jsonl").latest
    assert len(done) == 24 and all(r["status"] == "ok" for r in done.values())


def test_a_run_folder_removed_mid_run_is_one_line_and_a_rerun_starts_again(
    toy_suite, tmp_path, monkeypatch, capsys
):
    out = tmp_path / "run"
    real_append = RunStore.append

    def remove_folder_then_append(self, record):
        real_append(self, record)
        shutil.rmtree(self.root, ignore_errors=True)

    with FakeServer(handler=toy_reply) as server:
        argv = run_argv(toy_suite, server.url, out)
        monkeypatch.setattr(RunStore, "append", remove_folder_then_append)
        code = main(argv)
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 1 and len(err) == 1 and "records were removed" in err[0], err
        monkeypatch.setattr(RunStore, "append", real_append)
        assert main(argv) == 0
    assert len(read_records(out / "samples.jsonl").latest) == 24
