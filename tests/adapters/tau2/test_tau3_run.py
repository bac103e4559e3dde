"""tau3 through the command line: a run, its regrade, and tau2-bench v1.0.1's rule for a
simulation its code aborts, against the fake OpenAI server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support import REPO
from tau3_support import checkout_or_skip

from harness.testing.fake_server import FakeServer, Reply

pytestmark = pytest.mark.slow

SUITE = """
name: tau3-check
user_model: scripted
judge_model: stub
entries:
  - benchmark: tau3
    subsets: [airline, retail]
    limit: 1
  - benchmark: tau3
    subsets: [banking_knowledge]
    limit: 1
    options: {retrieval: bm25}
"""


def harness(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("TAU2_DATA_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )


def records(run_dir) -> list[dict]:
    lines = (run_dir / "samples.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_a_tau3_run_records_its_task_set_and_regrades_with_it(tmp_path):
    checkout = checkout_or_skip()
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    run_dir = tmp_path / "run"
    done = harness(
        "run",
        "--suite",
        str(suite),
        "--model",
        "oracle",
        "--quiet",
        "--data-dir",
        f"tau3={checkout}",
        "--out",
        str(run_dir),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["versions"]["tau3.task_set"] == "v1.0.1"
    assert manifest["versions"]["tau3.commit"].startswith("fc0055dc4e0a")
    # The first retail and banking tasks carry no NL assertion: no judge is built.
    assert manifest["judge_model"] is None
    first = {r["key"]: r["score"]["reward"] for r in records(run_dir)}
    assert first and set(first.values()) == {1.0}
    regraded = harness("score", str(run_dir), cwd=tmp_path)
    assert regraded.returncode == 0, regraded.stderr
    # Only how the score was computed changed (live state, then a replay): no score did.
    assert f"regraded {len(first)} records (0 changed, 0 failed)" in regraded.stderr.replace(
        "\n  ", " "
    )
    again = json.loads((run_dir / "scores.json").read_text())["records"]
    assert {key: entry["score"]["reward"] for key, entry in again.items()} == first
    # The regrade replayed the stored transcripts on tau2-bench v1.0.1's environments.
    sources = {entry["score"]["details"].get("state_source") for entry in again.values()}
    assert sources <= {"replay", None} and "replay" in sources
    banking = next(r for r in records(run_dir) if r["subset"] == "banking_knowledge")
    assert banking["metadata"]["retrieval"] == "bm25"
    # Every τ³ column names the user simulator and the retrieval the numbers were made with.
    board = harness("leaderboard", str(run_dir), cwd=tmp_path)
    assert board.returncode == 0, board.stderr
    assert "τ³-Bench (v1.0.1) [user scripted; retrieval bm25] tau2_mean" in board.stdout
    assert "τ³-Bench (v1.0.1) [user scripted; retrieval bm25] (tau3" in board.stdout


def test_a_malformed_call_is_run_again_then_binned_as_tau2_bench_does(tmp_path):
    """Every reply holds a tool call whose arguments are not JSON: tau2-bench v1.0.1
    runs the simulation 4 times in all, asking the model each time, then bins it."""
    checkout = checkout_or_skip()
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: malformed\nuser_model: scripted\nentries:\n"
        "  - benchmark: tau3\n    subsets: [telecom]\n    limit: 1\n"
    )
    run_dir = tmp_path / "run"
    with FakeServer() as server:
        server.set_handler(lambda request: Reply.calls(("get_customer_by_phone", '{"phone": ')))
        done = harness(
            "run",
            "--suite",
            str(suite),
            "--model",
            "openai/fake-model",
            "--api-base",
            server.url,
            "--no-preflight",
            "--quiet",
            "--data-dir",
            f"tau3={checkout}",
            "--out",
            str(run_dir),
            cwd=tmp_path,
        )
        first_requests = [r for r in server.chat_requests if len(r.body["messages"]) == 3]
    assert done.returncode == 0, done.stderr
    (record,) = records(run_dir)
    assert record["status"] == "ok"
    score = record["score"]
    assert score["excluded"].startswith("infrastructure_error")
    assert score["details"]["attempts"] == 4
    void = record["trajectory"]["extra"]["void_attempts"]
    assert [v["attempt"] for v in void] == [1, 2, 3]
    assert all(v["reason"] == "malformed_arguments (assistant)" for v in void)
    assert len(first_requests) == 4  # the model was asked again on every attempt
    scores = json.loads((run_dir / "scores.json").read_text())
    tau3 = scores["benchmarks"]["tau3"]
    assert tau3["counts"]["excluded"] == 1
    assert tau3["subsets"]["telecom"]["n_excluded"] == 1
    assert tau3["subsets"]["telecom"]["n_infra_errors"] == 0  # the harness's own, apart
    assert any("binned as infrastructure errors" in note for note in tau3["notes"])
    lines = done.stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if " ran, " in line]
    # The counts: two lines, the second with the errors.
    assert len(starts) == 1, done.stderr
    counts = lines[starts[0] + 1]
    assert "0 infrastructure errors, 1 binned by the benchmark's rule" in counts, done.stderr
    board = harness("leaderboard", str(run_dir), cwd=tmp_path)
    assert board.returncode == 0 and "left out by the benchmark's rule" in board.stdout
    assert "binned by rule" in board.stdout, board.stdout


def test_another_checkout_is_refused_in_one_line_with_exit_2(tmp_path):
    from harness.adapters.tau2 import checkout

    source = checkout_or_skip()
    clone = tmp_path / "clone"
    for relative, _ in checkout.pinned().files:
        path = clone / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(source / relative)
    policy = clone / "data/tau2/domains/airline/policy.md"
    text = policy.read_text()
    policy.unlink()
    policy.write_text(text + "\nAlways refund.\n")
    done = harness(
        "run",
        "--suite",
        "tau3-offline",
        "--model",
        "oracle",
        "--data-dir",
        f"tau3={clone}",
        "--out",
        str(tmp_path / "run"),
        cwd=tmp_path,
    )
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "data/tau2/domains/airline/policy.md differs" in lines[0]
    assert REPO.exists()


def test_a_regrade_replays_tasks_whose_setup_changes_the_environment():
    """Telecom tasks that start from a line suspended for an overdue bill: the replay
    of a stored transcript runs the task's initialization once, as tau2-bench does."""
    import asyncio
    import json as json_module

    from harness.adapters.tau2 import Tau3Adapter
    from harness.strategies.plain import PlainStrategy
    from harness.task.contract import Services
    from harness.types import SamplingParams, Trajectory

    checkout = checkout_or_skip()
    adapter = Tau3Adapter()
    task_id = "[service_issue]airplane_mode_on|overdue_bill_suspension[PERSONA:None]"
    (sample,) = adapter.load("telecom", ids=[task_id], data_dir=checkout)
    assert adapter.task_of(sample).initial_state.initialization_actions
    trajectory = asyncio.run(
        PlainStrategy().run(sample, adapter.oracle(sample), Services(), SamplingParams())
    )
    first = adapter.score_now(sample, trajectory, Services())
    stored = Trajectory.from_dict(json_module.loads(json_module.dumps(trajectory.to_dict())))
    regraded = adapter.score_now(sample, stored, Services())
    assert regraded.details["state_source"] == "replay"
    assert first.reward == regraded.reward == 1.0


def test_a_retail_run_builds_the_judge_and_scores_every_task(tmp_path):
    """Retail tasks carry NL assertions too: a run without banking_knowledge gets
    the judge it is given, and no record ends as a score error."""
    checkout = checkout_or_skip()
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: retail-only\nuser_model: scripted\nentries:\n"
        "  - benchmark: tau3\n    subsets: [retail]\n"
    )
    run_dir = tmp_path / "run"
    done = harness(
        "run",
        "--suite",
        str(suite),
        "--model",
        "oracle",
        "--judge-model",
        "stub",
        "--quiet",
        "--data-dir",
        f"tau3={checkout}",
        "--out",
        str(run_dir),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((run_dir / "manifest.json").read_text())["judge_model"] == "stub"
    scored = records(run_dir)
    assert len(scored) == 114
    assert all(r["status"] == "ok" and r["score"]["reward"] == 1.0 for r in scored)
    judged = [r for r in scored if r["score"]["details"].get("judge") == "stub"]
    assert len(judged) == 40


def test_a_run_needing_a_judge_and_given_none_is_refused_before_it_starts(tmp_path):
    checkout = checkout_or_skip()
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: retail-only\nuser_model: scripted\nentries:\n"
        "  - benchmark: tau3\n    subsets: [retail]\n    limit: 3\n"
    )
    run_dir = tmp_path / "run"
    done = harness(
        "run",
        "--suite",
        str(suite),
        "--model",
        "oracle",
        "--judge-model",
        "scripted",
        "--data-dir",
        f"tau3={checkout}",
        "--out",
        str(run_dir),
        cwd=tmp_path,
    )
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "judge model" in lines[0], done.stderr
    assert not (run_dir / "samples.jsonl").exists()


def test_the_judged_domains_are_those_whose_tasks_carry_assertions():
    from harness.adapters.tau2 import Tau3Adapter, nl_judge

    checkout = checkout_or_skip()
    adapter = Tau3Adapter()
    judged: dict[str, int] = {}
    for domain in ("airline", "retail", "telecom", "banking_knowledge"):
        options = {"retrieval": "bm25"} if domain == "banking_knowledge" else {}
        samples = adapter.load(domain, data_dir=checkout, options=options)
        judged[domain] = sum(adapter.needs_judge_for_sample(s) for s in samples)
    assert judged == {"airline": 0, "retail": 40, "telecom": 0, "banking_knowledge": 1}
    assert nl_judge.JUDGED_DOMAINS == {d for d, n in judged.items() if n}
    assert not adapter.needs_judge_for(["airline", "telecom"])
    assert adapter.needs_judge_for(["retail"])
