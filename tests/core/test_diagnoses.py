"""Diagnoses that name the cause: an --api-base without /v1, a server that
never answers the model-name check, an unreachable Hugging Face Hub."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from support import harness_process, toy_reply

from harness.cli import main
from harness.results.frames import run_folders
from harness.testing.fake_server import FakeServer, Reply


@contextmanager
def silent_server() -> Iterator[str]:
    """A server that accepts connections and never answers a byte (a busy
    one-slot server); yields its /v1 base URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        listener.close()


def run(suite, api_base, out, *extra) -> int:
    argv = ["run", "--suite", str(suite), "--model", "openai/fake-model", "--api-base"]
    argv += [api_base, "--quiet", "--no-cache", "--retry-delay", "0.01", "--out", str(out)]
    return main([*argv, *extra])


def test_an_api_base_without_v1_is_told_to_add_it(toy_suite, tmp_path, capsys):
    # The server answers under /v1 only: at the root, chat/completions is a 404.
    def only_under_v1(request: dict) -> Reply:
        return Reply.http_error(404, "Not Found")

    with FakeServer(handler=toy_reply, preflight_reply=only_under_v1) as server:
        root = server.url.removesuffix("/v1")
        code = run(toy_suite, root, tmp_path / "r")
    err = capsys.readouterr().err
    assert code == 2
    assert f"try --api-base {root}/v1" in err
    assert "tool-call parser" not in err


def test_a_404_at_a_v1_base_is_still_a_refusal_of_tools(toy_suite, tmp_path, capsys):
    with FakeServer(handler=toy_reply, preflight_reply=Reply.http_error(404, "no")) as server:
        code = run(toy_suite, server.url, tmp_path / "r")
    err = capsys.readouterr().err
    assert code == 2 and "refuses requests with tools" in err and "try --api-base" not in err


def test_a_server_that_never_answers_the_model_check_is_said_once_and_not_waited_for(
    toy_suite, tmp_path, capsys
):
    started = time.monotonic()
    with silent_server() as url:
        code = run(
            toy_suite, url, tmp_path / "r", "--timeout", "2", "--max-attempts", "1",
            "--limit", "1", "--local-server", "no",
        )  # fmt: skip
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err.splitlines()
    unchecked = [line for line in err if "did not answer GET /models" in line]
    assert len(unchecked) == 1 and "no answer within 5 s" in unchecked[0], err
    assert "'fake-model' is not checked" in unchecked[0]
    assert len([line for line in err if "did not answer the preflight" in line]) == 1
    # The samples time out (infrastructure errors): the run ends, it does not hang.
    assert code == 1 and elapsed < 40


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_unreachable_hub_is_one_line_within_seconds(tmp_path):
    # No network: the Hub's endpoint is a closed local port, and the Hub cache is empty.
    env = {**os.environ, "HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}"}
    env["HF_HOME"] = str(tmp_path / "hf")
    env.pop("HF_HUB_OFFLINE", None)
    argv = ["run", "--suite", "vitabench", "--model", "oracle", "--limit", "1"]
    started = time.monotonic()
    process = harness_process([*argv, "--out", str(tmp_path / "r")], env=env, cwd=tmp_path)
    out, err = process.communicate(timeout=60)
    elapsed = time.monotonic() - started
    assert process.returncode == 2 and elapsed <= 10, (elapsed, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) < 600, err
    assert "Hugging Face Hub" in lines[0] and "cannot be reached" in lines[0]
    assert "--data-dir" in lines[0] and "HF_HUB_OFFLINE=1" in lines[0]
    assert "4 subsets" in lines[0]  # said once for all of them
    assert not (tmp_path / "r").exists()


def test_with_hf_hub_offline_missing_data_is_one_line_at_once(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    argv = ["run", "--suite", "finmcp", "--model", "oracle", "--limit", "1"]
    process = harness_process([*argv, "--out", str(tmp_path / "r")], env=env, cwd=tmp_path)
    out, err = process.communicate(timeout=60)
    lines = err.strip().splitlines()
    assert process.returncode == 2 and len(lines) == 1, err
    assert "3 subsets" in lines[0] and "HF_HUB_OFFLINE is set" in lines[0]
    assert "--data-dir" in lines[0]


def test_not_run_subsets_with_the_same_reason_are_one_line():
    from harness.run.suite_samples import NotRun, not_run_lines

    not_run = [NotRun("b", s, "no data") for s in ("s1", "s2", "s3", "s4", "s5")]
    not_run.append(NotRun("b", "s6", "needs a key"))
    assert not_run_lines(not_run) == [
        "5 subsets (b/s1, b/s2, b/s3, b/s4, ...): no data",
        "b/s6: needs a key",
    ]


def test_a_run_that_fails_its_preflight_leaves_no_run_behind(toy_suite, tmp_path, capsys):
    refusal = Reply.http_error(400, "no tools here")
    results = tmp_path / "results"
    with FakeServer(handler=toy_reply) as server:
        server.enqueue(Reply.http_error(500, "one infrastructure error, run again on resume"))
        assert run(toy_suite, server.url, results / "good", "--max-attempts", "1") == 1
        server.preflight_reply = refusal
        assert run(toy_suite, server.url, results / "refused") == 2
        # A folder that was there before (with a file of its own) keeps that file.
        (results / "kept").mkdir()
        (results / "kept" / "notes.txt").write_text("mine")
        assert run(toy_suite, server.url, results / "kept") == 2
        # A run that has started is not taken back when a later resume is refused.
        assert run(toy_suite, server.url, results / "good", "--max-attempts", "1") == 2
    assert not (results / "refused").exists()
    assert sorted(p.name for p in (results / "kept").iterdir()) == ["notes.txt"]
    assert (results / "good" / "manifest.json").is_file()
    # The runs a leaderboard over the folder finds: the started one only.
    assert run_folders([results]) == [results / "good"]
