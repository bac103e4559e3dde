"""`harness view`: run folders read while they grow, the JSON endpoints, and the
server's guards (local Host only, no path outside its routes)."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from fake_runs import make_run, record

from harness.cli import main
from harness.report.html import ReportOptions, build_report
from harness.report.sample_list import INDEX_COLUMNS, natural_key
from harness.report.samples import read_index
from harness.view.runs import RunFolders, find_run_folders
from harness.view.server import ViewerApp, make_server

KEY = INDEX_COLUMNS.index("key")
ENTRY = INDEX_COLUMNS.index("entry")
ERROR_KIND = INDEX_COLUMNS.index("error_kind")
WRONG_COUNT = "parallel_function_checker_no_order:wrong_count"


def bfcl_run(root: Path, name: str = "small") -> Path:
    """Samples parallel_0..parallel_11 (every third one fails with BFCL's error code),
    and one sample that raised; no scores.json (a run nobody scored yet)."""
    records = [
        record(
            "bfcl",
            "parallel",
            f"parallel_{n}",
            passed=n % 3 != 1,
            details={} if n % 3 != 1 else {"error_type": WRONG_COUNT},
        )
        for n in range(12)
    ]
    records.append(record("bfcl", "simple", "simple_0", status="infra_error"))
    run = make_run(root, name, records, {"bfcl": {"overall": 8 / 13}})
    (run / "scores.json").unlink()
    return run


def line(item: dict) -> str:
    return json.dumps(item) + "\n"


def test_natural_order_of_sample_ids():
    ids = ["s_10", "s_2", "s_1", "t", "s_02b", "s_2a"]
    assert sorted(ids, key=natural_key) == ["s_1", "s_2", "s_2a", "s_02b", "s_10", "t"]


def test_the_index_lists_samples_in_natural_order_with_error_kinds(tmp_path):
    index = RunFolders([bfcl_run(tmp_path)]).index()
    keys = [row[KEY] for row in index["rows"]]
    assert keys[:3] == ["bfcl/parallel/parallel_0#0", "bfcl/parallel/parallel_1#0",
                        "bfcl/parallel/parallel_2#0"]  # fmt: skip
    assert keys[9:13] == [
        "bfcl/parallel/parallel_9#0",
        "bfcl/parallel/parallel_10#0",
        "bfcl/parallel/parallel_11#0",
        "bfcl/simple/simple_0#0",
    ]
    kinds = {row[KEY]: index["error_kinds"][row[ERROR_KIND]] for row in index["rows"]}
    assert kinds["bfcl/parallel/parallel_4#0"] == WRONG_COUNT
    assert kinds["bfcl/parallel/parallel_3#0"] == ""
    assert kinds["bfcl/simple/simple_0#0"] == "ModelError"  # a sample that raised
    assert index["run_info"] == [
        {
            "name": "small",
            "model": "test-model",
            "state": "finished",
            "folder": str(tmp_path / "small"),
        }
    ]


def test_the_report_shares_the_row_layout_and_the_natural_order(tmp_path):
    out = tmp_path / "r.html"
    build_report([bfcl_run(tmp_path)], out, ReportOptions(n_boot=20, plots=False))
    index = read_index(out.read_text(encoding="utf-8"))
    served = RunFolders([tmp_path / "small"]).index()
    assert index["columns"] == served["columns"] == list(INDEX_COLUMNS)
    assert [r[KEY] for r in index["rows"]] == [r[KEY] for r in served["rows"]]
    assert index["error_kinds"] == served["error_kinds"] == ["", WRONG_COUNT, "ModelError"]


def test_a_run_being_written_is_followed_line_by_line(tmp_path):
    run = tmp_path / "live"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({"model": {"name": "m"}}))
    folders = RunFolders([run])
    empty = folders.index()
    assert empty["rows"] == [] and empty["run_info"][0]["state"] == "no records yet"

    samples = run / "samples.jsonl"
    first = line(record("tau2", "airline", "a_1", passed=False))
    second = line(record("tau2", "airline", "a_2"))
    samples.write_text(first + second[:40])  # the second line is still being written
    change = folders.changes(empty["version"])
    assert [r[KEY] for r in change["rows"]] == ["tau2/airline/a_1#0"]
    assert change["run_info"][0]["state"] == "not finished" and not change["reload"]

    with samples.open("a") as handle:
        handle.write(second[40:])
        handle.write(line(record("tau2", "airline", "a_1", passed=True)))  # a retry
    again = folders.changes(change["version"])
    assert sorted(r[KEY] for r in again["rows"]) == ["tau2/airline/a_1#0", "tau2/airline/a_2#0"]
    assert all(r[ENTRY] > change["version"] for r in again["rows"])
    assert folders.changes(again["version"])["rows"] == []
    # The retry won: one row per key, and the sample read is the last record.
    assert len(folders.index()["rows"]) == 2
    assert folders.record("live", "tau2/airline/a_1#0").score["passed"] is True

    # A rewritten (shorter) file is read again, and pages are told to reload.
    samples.write_text(second)
    reread = folders.changes(again["version"])
    assert reread["reload"] and [r[KEY] for r in folders.index()["rows"]] == ["tau2/airline/a_2#0"]


def test_sample_endpoint_masks_held_secrets_and_cuts_long_text(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_TEST_API_KEY", "envsecret-0123456789")
    messages = [{"role": "assistant", "content": "the key is envsecret-0123456789 " + "x" * 500}]
    run = make_run(
        tmp_path, "keys", [record("tau2", "retail", "k", messages=messages)], {"tau2": {}}
    )
    app = ViewerApp([run], max_chars=100)
    response = app.handle("/api/sample?run=keys&key=" + "tau2/retail/k%230")
    text = response.body.decode()
    assert response.status == 200 and "envsecret" not in text
    shown = json.loads(text)["trajectory"]["messages"][0]["content"]
    assert shown.startswith("the key is ***") and "[truncated: " in shown
    assert app.handle("/api/sample?run=keys&key=nope").status == 404
    assert app.handle("/api/rows?since=x").status == 400


@pytest.fixture
def served(tmp_path):
    """A viewer over one run, serving from a thread: (port, run folder)."""
    run = bfcl_run(tmp_path)
    server = make_server(ViewerApp([run]), 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_port, run
    server.shutdown()
    server.server_close()


def get(port: int, target: str, host: str | None = None) -> tuple[int, str, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.putrequest("GET", target, skip_host=True)
    connection.putheader("Host", host or f"127.0.0.1:{port}")
    connection.endheaders()
    response = connection.getresponse()
    body = response.read().decode("utf-8")
    connection.close()
    return response.status, body, dict(response.getheaders())


def test_server_answers_only_local_hosts_and_only_its_routes(served):
    port, run = served
    status, page, headers = get(port, "/")
    assert status == 200 and 'data-source="server"' in page
    assert "script-src 'nonce-" in headers["Content-Security-Policy"]
    assert "connect-src 'self'" in headers["Content-Security-Policy"]
    assert get(port, "/", host=f"localhost:{port}")[0] == 200
    # Another name for this machine (DNS rebinding) or another port: refused.
    assert get(port, "/api/index", host=f"attacker.example:{port}")[0] == 403
    assert get(port, "/api/index", host="127.0.0.1:1")[0] == 403
    # No file is served: a path outside the routes is 404, whatever it names.
    (run.parent / "secret.txt").write_text("do not serve")
    for target in (
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/small/samples.jsonl",
        "/api/sample?run=../secret.txt&key=x",
        "/api/sample?run=small&key=../../secret.txt",
    ):
        status, body, _ = get(port, target)
        assert status == 404 and "do not serve" not in body, target
    status, body, headers = get(port, "/api/index")
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert len(json.loads(body)["rows"]) == 13


def test_view_command_refuses_a_folder_that_is_not_a_run(tmp_path, capsys):
    (tmp_path / "notes").mkdir()
    assert main(["view", str(tmp_path / "notes")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a run folder" in err[0] and "notes" in err[0]


def test_a_sweep_folder_gives_its_runs_in_natural_order_and_others_are_skipped(tmp_path):
    sweep = tmp_path / "sweep"
    for step in (10, 2):
        make_run(sweep, f"step_{step}", [record("tau2", "airline", "a")], {"tau2": {}})
    starting = tmp_path / "starting"
    starting.mkdir()
    (starting / "samples.jsonl").write_text("")  # records, no manifest yet
    (tmp_path / "reference").mkdir()
    found = find_run_folders([sweep, starting, tmp_path / "reference"])
    assert found.folders == [sweep / "step_2", sweep / "step_10", starting]
    assert found.skipped == [tmp_path / "reference"]


@pytest.mark.slow
def test_view_command_prints_its_address_and_serves(tmp_path):
    run = bfcl_run(tmp_path)
    process = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "view", str(run)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = process.stdout.readline()
        assert first.startswith("harness view: 1 run(s) at http://127.0.0.1:"), first
        port = int(first.split("127.0.0.1:")[1].split("/")[0])
        status, body, _ = get(port, "/api/rows?since=0")
        assert status == 200 and len(json.loads(body)["rows"]) == 13
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_port_in_use_is_one_line(tmp_path, capsys):
    run = bfcl_run(tmp_path)
    taken = make_server(ViewerApp([run]), 0)
    try:
        assert main(["view", str(run), "--port", str(taken.server_port)]) == 2
    finally:
        taken.server_close()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"cannot listen on 127.0.0.1:{taken.server_port}" in err[0]
