"""Checkpoint identity: the weights' fingerprint, the cache scope, and a new
checkpoint never getting an old checkpoint's answers."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.models.fingerprint import (
    MIB,
    check_same_weights,
    files_description,
    served_fingerprint,
)
from harness.models.server_info import ServerInfo, probe_server, self_description
from harness.store.run_store import read_records
from harness.testing.fake_server import FakeServer, Reply


@pytest.fixture
def toy_suite(toy_suite, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the cross-run cache's default place
    return toy_suite


def agent(label: str):
    """A toy agent whose final words say which server answered."""

    def reply(request: dict) -> Reply:
        messages = request["messages"]
        if messages[-1]["role"] == "tool":
            return Reply.text(f"answer from {label}")
        target = int(re.search(r"Reach (\d+)", messages[-1]["content"]).group(1))
        return Reply.calls(("add", {"n": target}))

    return reply


def run(suite: Path, url: str, out: Path, *extra: str) -> int:
    return main(
        [
            "run",
            "--suite",
            str(suite),
            "--model",
            "openai/step-model",
            "--api-base",
            url,
            "--quiet",
            "--retry-delay",
            "0.01",
            "--out",
            str(out),
            *extra,
        ]
    )


def final_words(run_dir: Path) -> set[str]:
    records = read_records(run_dir / "samples.jsonl").latest.values()
    return {r["trajectory"]["messages"][-1]["content"] for r in records}


def manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


def serve_one_after_the_other(suite, tmp_path, cards, *extra):
    """Checkpoint A, then checkpoint B under the same name and port; a run against each."""
    with FakeServer(model_name="step-model", model_card=cards[0], handler=agent("A")) as a:
        port, url = a.port, a.url
        assert run(suite, url, tmp_path / "run_a", *extra) == 0
    with FakeServer(
        model_name="step-model", model_card=cards[1], handler=agent("B"), port=port
    ) as b:
        assert b.url == url
        assert run(suite, url, tmp_path / "run_b", *extra) == 0
        served_b = len(b.chat_requests)
    return served_b, port


def test_same_name_and_url_other_weights_get_their_own_answers(toy_suite, tmp_path):
    # The worst case: both servers describe themselves identically. The default
    # cache lives in each run folder, so nothing crosses runs.
    served_b, _ = serve_one_after_the_other(toy_suite, tmp_path, [{}, {}])
    assert final_words(tmp_path / "run_a") == {"answer from A"}
    assert final_words(tmp_path / "run_b") == {"answer from B"}
    assert served_b > 0
    for name in ("run_a", "run_b"):
        assert manifest(tmp_path / name)["cache_scope"] == "run"
        assert (tmp_path / name / "cache").is_dir()
    assert not (tmp_path / "home" / ".cache").exists()


def test_the_cross_run_cache_never_mixes_weights(toy_suite, tmp_path, capsys):
    cards = [
        {"root": "/ckpt/step_100", "created": 1_700_000_000},
        {"root": "/ckpt/step_200", "created": 1_700_003_600},
    ]
    _, port = serve_one_after_the_other(toy_suite, tmp_path, cards, "--cross-run-cache")
    assert final_words(tmp_path / "run_a") == {"answer from A"}
    assert final_words(tmp_path / "run_b") == {"answer from B"}
    fp_a = manifest(tmp_path / "run_a")["fingerprint"]
    fp_b = manifest(tmp_path / "run_b")["fingerprint"]
    assert fp_a["id"] != fp_b["id"] and fp_a["source"] == "server"
    assert manifest(tmp_path / "run_b")["cache_scope"] == "cross-run"
    shared = tmp_path / "home" / ".cache" / "harness" / "responses"
    assert shared.is_dir()
    # The same weights again, in a new run folder: every reply from the shared cache.
    capsys.readouterr()
    with FakeServer(
        model_name="step-model", model_card=cards[1], handler=agent("C"), port=port
    ) as again:
        assert run(toy_suite, again.url, tmp_path / "run_b2", "--cross-run-cache") == 0
        assert again.chat_requests == []
    assert final_words(tmp_path / "run_b2") == {"answer from B"}
    summary = capsys.readouterr().err
    calls = sum(
        sum(u["calls"] for u in r["trajectory"]["usage"].values())
        for r in read_records(tmp_path / "run_b2" / "samples.jsonl").latest.values()
    )
    assert f"{calls} of {calls} model calls from the cache" in summary
    # ... and the leaderboard counts them in its cost columns.
    main(["leaderboard", str(tmp_path / "run_b2"), "--format", "json"])
    board = json.loads(capsys.readouterr().out)
    row = next(r for r in board["rows"] if r["run"] == "run_b2")
    assert row["cost"]["cached_calls"] == calls and row["fingerprint"] == fp_b["id"]


def test_a_model_the_server_does_not_serve_is_one_line_exit_2(toy_suite, tmp_path, capsys):
    with FakeServer(model_name="step-model") as server:
        code = main(
            ["run", "--suite", str(toy_suite), "--model", "openai/other", "--api-base",
             server.url, "--out", str(tmp_path / "r"), "--quiet"]
        )  # fmt: skip
        assert server.chat_requests == []
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "does not serve 'other'" in err[0] and "step-model" in err[0]


def test_resuming_with_other_weights_is_refused(toy_suite, tmp_path, capsys):
    with FakeServer(model_name="step-model", model_card={"root": "/a"}, handler=agent("A")) as a:
        assert run(toy_suite, a.url, tmp_path / "r") == 0
    with FakeServer(
        model_name="step-model", model_card={"root": "/b"}, handler=agent("B"), port=a.port
    ) as b:
        assert run(toy_suite, b.url, tmp_path / "r") == 2
    assert "holds answers of other weights" in capsys.readouterr().err
    # A server that did not answer said nothing about its weights: no refusal on that.
    old = {"fingerprint": {"id": "server:1"}}
    check_same_weights(old, {"fingerprint": {"id": "server:2", "unverified": True}}, "r")


def test_compare_warns_when_both_runs_have_the_same_weights(toy_suite, tmp_path, capsys):
    with FakeServer(model_name="step-model", handler=agent("A")) as server:
        assert run(toy_suite, server.url, tmp_path / "r1") == 0
        assert run(toy_suite, server.url, tmp_path / "r2", "--seed", "3") == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "r1"), str(tmp_path / "r2"), "--n-boot", "50"]) == 0
    captured = capsys.readouterr()
    fingerprint = manifest(tmp_path / "r1")["fingerprint"]["id"]
    assert "same weights" in captured.err and fingerprint in captured.out
    # The report and the markdown leaderboard show it too.
    assert main(["report", str(tmp_path / "r1"), "--out", str(tmp_path / "r.html")]) == 0
    assert f"weights {fingerprint}" in (tmp_path / "r.html").read_text()
    capsys.readouterr()
    assert main(["leaderboard", str(tmp_path / "r1")]) == 0
    board = capsys.readouterr().out
    assert fingerprint in board


def test_checkpoint_files_fingerprint(tmp_path):
    ckpt = tmp_path / "step_1"
    ckpt.mkdir()
    (ckpt / "config.json").write_text('{"hidden_size": 8}')
    weights = ckpt / "model.safetensors"
    weights.write_bytes(b"\0" * (3 * MIB))
    (ckpt / ".cache").mkdir()
    (ckpt / ".cache" / "lock").write_text("x")  # hidden: not part of the weights
    first = served_fingerprint(str(ckpt), {})
    assert first["source"] == "files" and first["checkpoint"] == {
        "files": 2,
        "bytes": 3 * MIB + 18,
    }
    assert served_fingerprint(str(ckpt), {})["id"] == first["id"]
    # A retrain rewrites the tail (or head) of the weights: another fingerprint.
    with weights.open("r+b") as handle:
        handle.seek(3 * MIB - 1)
        handle.write(b"\1")
    second = served_fingerprint(str(ckpt), {})
    assert second["id"] != first["id"]
    (ckpt / "config.json").write_text('{"hidden_size": 16}')
    third = served_fingerprint(str(ckpt), {})
    assert third["id"] != second["id"]
    assert served_fingerprint(str(ckpt), {}, revision="step-1")["id"] != third["id"]
    lora = tmp_path / "adapter.safetensors"
    lora.write_bytes(b"lora")
    assert served_fingerprint(str(ckpt), {"sql": str(lora)})["id"] != third["id"]
    assert files_description("org/hub-model") == {"hub_id": "org/hub-model"}


def test_a_served_checkpoint_is_fingerprinted_in_the_manifest(tmp_path):
    from harness.cli import build_parser
    from harness.commands.run import run_config
    from harness.models.fingerprint import run_fingerprint
    from harness.serving.plan import plan_endpoint

    gguf = tmp_path / "model-q4.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 100)
    args = build_parser().parse_args(
        ["run", "--suite", "smoke", "--serve", "llamacpp", "--checkpoint", str(gguf)]
    )
    plan = plan_endpoint(run_config(args), check_installed=False)
    fingerprint = run_fingerprint(plan.model, plan.api_base, spec=plan.spec)
    assert fingerprint["source"] == "files"
    assert fingerprint["id"] == served_fingerprint(str(gguf), {})["id"]


def test_what_a_server_says_about_its_weights():
    now = time.time()
    info = ServerInfo(
        "http://x/v1",
        True,
        models=[
            {"id": "m", "root": "/ckpt/7", "created": 1_700_000_000},
            {"id": "lora", "created": int(now)},
        ],
        props={"model_path": "/m.gguf", "chat_template": "{{x}}", "total_slots": 4},
    )
    described = self_description(info, "m", now)
    assert described["ids"] == ["lora", "m"]
    assert (described["root"], described["created"]) == ("/ckpt/7", 1_700_000_000)
    assert described["props"]["model_path"] == "/m.gguf"
    assert "total_slots" not in described["props"] and described["props"]["chat_template_sha256"]
    # vLLM's `created` is the time of the request, not of the weights: left out.
    assert "created" not in self_description(info, "lora", now)


def test_probe_reads_models_and_survives_no_server():
    with FakeServer(model_name="m", model_card={"root": "/r"}) as server:
        info = probe_server(server.url)
    assert info.reachable and info.model_ids() == ["m"] and info.models[0]["root"] == "/r"
    assert info.props is None  # the fake has no /props
    gone = probe_server(server.url, timeout=0.5)
    assert not gone.reachable and gone.model_ids() is None


def test_elapsed_is_the_whole_run_and_wall_time_sums_active_spans(
    toy_suite, tmp_path, capsys, monkeypatch
):
    import harness.run.suite_samples
    from harness.report.leaderboard import load_run

    slow_plan = harness.run.suite_samples.load_suite_samples

    def plan_slowly(*args, **kwargs):
        time.sleep(0.6)  # loading data takes time too; the summary must count it
        return slow_plan(*args, **kwargs)

    monkeypatch.setattr(harness.run.suite_samples, "load_suite_samples", plan_slowly)
    with FakeServer(model_name="step-model", handler=agent("A")) as server:
        assert run(toy_suite, server.url, tmp_path / "r") == 0
        capsys.readouterr()
        assert run(toy_suite, server.url, tmp_path / "r") == 0  # nothing left to do
    line = capsys.readouterr().err
    assert "0 ran, 8 already done" in line
    assert float(re.search(r" in (\d+\.\d)s", line).group(1)) >= 0.6
    last = manifest(tmp_path / "r")["last_summary"]
    assert last["command_s"] >= 0.6 > last["elapsed_s"]  # the runner's own time stays apart
    spans = manifest(tmp_path / "r")["active_spans"]
    assert len(spans) == 1 and spans[0]["seconds"] >= 0.6  # the no-op resume added none
    assert load_run(tmp_path / "r").cost.wall_s == spans[0]["seconds"]
