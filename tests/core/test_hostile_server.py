"""A hostile model server (harness/testing/hostile.py: every payload kind in turn)
against a real run over BFCL, τ², FinMCP and VitaBench, through the CLI in a
subprocess: no crash, nothing executed, every (sample, trial) recorded, peak
memory under 1 GB, the episode timeout honoured, and a report whose every sample
opens in Chromium."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from headless_browser import keep_artifact, open_every_sample
from support import TESTS

from harness.boundary.terminal import terminal_text
from harness.cli import main
from harness.report.html import ReportOptions, build_report
from harness.store.run_store import read_records
from harness.testing.fake_server import FakeServer, Reply
from harness.testing.hostile import KINDS, HostileHandler

EPISODE_TIMEOUT_S = 15.0


def hostile_suite(data: Path, trials: int) -> str:
    math_ids = ["multi_turn_base_15", "multi_turn_base_28", "multi_turn_base_31"]
    return json.dumps(
        {
            "name": "hostile",
            "trials": trials,
            "user_model": "scripted",
            "entries": [
                {"benchmark": "bfcl", "subsets": ["multi_turn_base"], "ids": math_ids},
                {"benchmark": "bfcl", "subsets": ["simple_python"], "limit": 2},
                {
                    "benchmark": "bfcl",
                    "subsets": ["multiple"],
                    "limit": 2,
                    "options": {"mode": "prompt"},
                },
                {"benchmark": "tau2", "subsets": ["airline", "retail"], "limit": 2},
                {
                    "benchmark": "finmcp",
                    "subsets": ["single_tool", "multi_turn"],
                    "limit": 2,
                    "options": {"data_dir": str(data / "finmcp")},
                },
                {
                    "benchmark": "vitabench",
                    "subsets": ["delivery"],
                    "limit": 2,
                    "options": {"language": "en", "data_dir": str(data / "vitabench")},
                },
            ],
        }
    )


# Runs the command after argv[1] as its own child, writes that child's peak RSS
# (KiB) to the file argv[1], and ends as the child ended. Why not wait4 on the CLI
# itself: Linux keeps a process's peak RSS across exec, so a child started straight
# from this pytest process reports at least pytest's own RSS at that moment (over
# 1.5 GB once an earlier test has loaded torch for memory_vector). A child of this
# small wrapper starts from the wrapper's few megabytes.
PEAK_RSS_WRAPPER = """
import os, signal, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
if code < 0:  # killed by a signal: end the same way
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def run_cli(args: list[str], cwd: Path) -> tuple[int, str, str, float, float]:
    """(exit code, stdout, stderr, peak RSS in MB, seconds) of one CLI process."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("OPENAI_API_KEY", None)
    start = time.monotonic()
    out, err, peak = cwd / "stdout.txt", cwd / "stderr.txt", cwd / "peak_rss_kib.txt"
    command = [sys.executable, "-c", PEAK_RSS_WRAPPER, str(peak)]
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.run(
            [*command, sys.executable, "-m", "harness.cli", *args],
            cwd=cwd,
            env=env,
            stdout=stdout,
            stderr=stderr,
            check=False,
        )
    return (
        process.returncode,
        out.read_text(errors="replace"),
        err.read_text(errors="replace"),
        int(peak.read_text()) / 1024,
        time.monotonic() - start,
    )


def test_the_peak_rss_is_the_commands_own_not_this_processs(tmp_path):
    # This process holds 300 MB more than a bare interpreter; the command it
    # measures does not, and its peak says so.
    ballast = bytearray(300 * 1024 * 1024)
    ballast[::4096] = b"x" * len(ballast[::4096])  # every page resident
    peak = tmp_path / "peak.txt"
    command = [sys.executable, "-c", PEAK_RSS_WRAPPER, str(peak), sys.executable, "-c", "pass"]
    assert subprocess.run(command, check=False).returncode == 0
    del ballast
    assert int(peak.read_text()) / 1024 < 100


pytestmark = pytest.mark.slow


@pytest.fixture(
    scope="module",
    params=[
        pytest.param((3, 8), id="trials3-concurrency8"),
        # The bigger sweep: more of every kind, many bombs in flight at once.
        pytest.param((10, 32), id="trials10-concurrency32", marks=pytest.mark.full),
    ],
)
def hostile_run(request, shared_data, tmp_path_factory):
    trials, concurrency = request.param
    root = tmp_path_factory.mktemp("hostile")
    canary = root / "CANARY"
    suite = root / "hostile.yaml"
    suite.write_text(hostile_suite(shared_data, trials))  # JSON is YAML
    handler = HostileHandler(str(canary))
    with FakeServer(handler=handler, record_bodies=False) as server:
        code, stdout, stderr, rss_mb, seconds = run_cli(
            [
                "run",
                "--suite",
                str(suite),
                "--model",
                "openai/fake-model",
                "--api-base",
                server.url,
                "--judge-model",
                "stub",
                "--concurrency",
                str(concurrency),
                "--timeout",
                "30",
                "--max-attempts",
                "2",
                "--retry-delay",
                "0.01",
                "--episode-timeout",
                str(EPISODE_TIMEOUT_S),
                "--no-cache",
                "--quiet",
                "--out",
                str(root / "run"),
            ],
            root,
        )
    print(
        f"hostile run: exit {code}, {seconds:.1f} s, peak RSS {rss_mb:.0f} MB, served {dict(handler.served)}"
    )
    return {
        "trials": trials,
        "root": root,
        "run": root / "run",
        "canary": canary,
        "code": code,
        "stdout": stdout,
        "stderr": stderr,
        "rss_mb": rss_mb,
        "served": handler.served,
    }


def test_the_hostile_server_sends_every_kind(hostile_run):
    assert len(KINDS) >= 30
    assert set(hostile_run["served"]) == set(KINDS), sorted(set(KINDS) - set(hostile_run["served"]))


def test_no_crash_and_every_sample_and_trial_is_recorded(hostile_run):
    assert hostile_run["code"] in (0, 1), hostile_run["stderr"][-3000:]
    assert "Traceback" not in hostile_run["stderr"], hostile_run["stderr"][-3000:]
    manifest = json.loads((hostile_run["run"] / "manifest.json").read_text())
    planned = sum(n for subsets in manifest["planned"].values() for n in subsets.values())
    assert planned >= 17
    records = read_records(hostile_run["run"] / "samples.jsonl").latest
    assert len(records) == planned * hostile_run["trials"]
    benchmarks = {r["benchmark"] for r in records.values()}
    assert benchmarks == {"bfcl", "tau2", "finmcp", "vitabench"}
    # Hostile model output is the model's failure, scored: not every record an infra error.
    assert any(r["status"] == "ok" for r in records.values())


def test_every_line_written_is_standard_json(hostile_run):
    def refuse(name):
        raise ValueError(name)

    text = (hostile_run["run"] / "samples.jsonl").read_text(encoding="utf-8")
    lines = text.split("\n")[:-1]
    # Every record of the run was read: a check over an empty file proves nothing.
    recorded = read_records(hostile_run["run"] / "samples.jsonl").latest
    assert len(lines) >= len(recorded) > 0
    for line in lines:
        json.loads(line, parse_constant=refuse)


def test_nothing_was_executed(hostile_run):
    assert not hostile_run["canary"].exists()
    assert not list(hostile_run["root"].rglob("CANARY*"))


def test_peak_memory_stays_under_one_gigabyte(hostile_run):
    assert hostile_run["rss_mb"] < 1024


def episode_seconds(record: dict) -> float:
    """How long the episode ran: its own wall time, or (for an episode that ended
    in an error, without a trajectory) the time until its record (no scoring)."""
    trajectory = record.get("trajectory") or {}
    wall = (trajectory.get("extra") or {}).get("wall_time_s")
    return float(wall) if wall is not None else float(record["latency_s"])


def test_the_episode_timeout_is_honoured_within_twice_its_value(hostile_run):
    records = read_records(hostile_run["run"] / "samples.jsonl").latest.values()
    durations = sorted(episode_seconds(r) for r in records)
    assert durations[-1] < 2 * EPISODE_TIMEOUT_S, durations[-5:]
    timed_out = [r for r in records if (r.get("error") or {}).get("type") == "TimeoutError"]
    assert timed_out, "the hang payload should have run into the episode timeout"


def test_every_sample_of_the_hostile_run_opens_in_chromium(hostile_run, tmp_path):
    out = tmp_path / "report.html"
    summary = build_report([hostile_run["run"]], out, ReportOptions(plots=False))
    records = read_records(hostile_run["run"] / "samples.jsonl").latest
    assert summary.samples == len(records)
    assert out.stat().st_size < 50_000_000
    keep_artifact(out)
    result = open_every_sample(tmp_path, out)
    assert result["opened"] == len(records), result
    assert not result["failed"] and not result["errors"], result
    assert "pwned" not in result["title"]


# -- arguments nested past the parse bound, through BFCL's decoders ------------------


def _levels(value) -> int:
    """How many lists and objects nest in ``value`` (0 for a scalar)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            stack.extend(
                (child, level + 1) for child in (item.values() if isinstance(item, dict) else item)
            )
    return deepest


def deep_replies(depth: int):
    """Every reply one call whose argument nests ``depth`` lists deep: as FC tool
    calls when the request offers tools, else as prompt-mode text."""

    def handler(request: dict) -> Reply:
        tools = request.get("tools") or []
        if tools:
            arguments = '{"a": ' + "[" * depth + "]" * depth + "}"
            return Reply.calls((tools[0]["function"]["name"], arguments))
        named = re.search(r'"name": "([^"]+)"', str(request["messages"][0].get("content")))
        name = named.group(1) if named else "f"
        return Reply.text(f"[{name}(a={'[' * depth}{']' * depth})]")

    return handler


@pytest.mark.parametrize("mode", ["fc", "prompt"])
@pytest.mark.parametrize("depth", [150, 500, 960])
def test_arguments_nested_past_the_bound_are_scored_and_regraded(depth, mode, tmp_path):
    from harness.boundary.sanitise import MAX_DEPTH

    suite = tmp_path / "deep.yaml"
    suite.write_text(
        "name: deep\nentries:\n  - benchmark: bfcl\n"
        "    subsets: [simple_python, multiple, parallel, irrelevance, live_simple, "
        "multi_turn_base]\n    limit: 2\n    options: {max_steps_per_turn: 3}\n"
    )
    out = tmp_path / "run"
    flags = ["--prompt-mode"] if mode == "prompt" else []
    # The CLI in a process of its own: how deep json.loads gets depends on the stack
    # it starts from, and a command's stack is shallower than this test's.
    with FakeServer(handler=deep_replies(depth)) as server:
        code, _, stderr, _, _ = run_cli(["run", "--suite", str(suite), "--model", "openai/fake-model",
                                         "--api-base", server.url, "--no-cache", "--quiet",
                                         "--out", str(out), *flags], tmp_path)  # fmt: skip
        served = len(server.chat_requests)
    assert code == 0, stderr[-3000:]
    assert served >= 12
    records = read_records(out / "samples.jsonl").latest
    assert len(records) == 12
    assert {r["status"] for r in records.values()} == {"ok"}  # no score_error
    code, _, stderr, _, _ = run_cli(["score", str(out)], tmp_path)
    assert code == 0, stderr[-3000:]
    scores = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    assert scores["regrade"] == {"regraded": 12, "changed": 0, "failed": 0}
    assert not [k for k, r in scores["records"].items() if r["score_error"]]
    # Nothing deeper than the bound entered a parsed call: each is a parse error.
    calls = [
        call
        for record in records.values()
        for turn in record["trajectory"]["turns"]
        for call in turn["tool_calls"]
    ]
    assert max((_levels(call["arguments"]) for call in calls), default=0) <= MAX_DEPTH
    if mode == "fc":
        assert calls and all("nested more than 100 deep" in call["parse_error"] for call in calls)
    single = [r for r in records.values() if r["subset"] in ("simple_python", "parallel")]
    assert single and not any(r["score"]["passed"] for r in single)  # a reply that did not decode


# -- the reply cap through litellm (--client litellm) --------------------------------

SIZE_KINDS = ("chunked_400mb", "content_length_400mb", "gzip_bomb_400mb")


def test_oversized_replies_through_litellm_are_refused_within_one_gigabyte(tmp_path):
    suite = tmp_path / "sizes.yaml"
    suite.write_text(
        json.dumps(
            {
                "name": "sizes",
                "trials": 1,
                "user_model": "scripted",
                "entries": [{"benchmark": "bfcl", "subsets": ["simple_python"], "limit": 3}],
            }
        )
    )
    handler = HostileHandler(str(tmp_path / "CANARY"), kinds=list(SIZE_KINDS))
    with FakeServer(handler=handler, record_bodies=False) as server:
        code, _, stderr, rss_mb, seconds = run_cli(
            [
                "run",
                "--suite",
                str(suite),
                "--model",
                "openai/fake-model",
                "--api-base",
                server.url,
                "--client",
                "litellm",
                "--concurrency",
                "3",
                "--max-attempts",
                "2",
                "--retry-delay",
                "0.01",
                "--no-cache",
                "--quiet",
                "--out",
                str(tmp_path / "run"),
            ],
            tmp_path,
        )
        served = len(server.chat_requests)
    print(f"litellm size run: exit {code}, {seconds:.1f} s, peak RSS {rss_mb:.0f} MB")
    assert code in (0, 1), stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    assert dict(handler.served) == dict.fromkeys(SIZE_KINDS, 1)
    assert served == 3  # each refused once: the refusal is not retried
    records = read_records(tmp_path / "run" / "samples.jsonl").latest.values()
    assert [(r["status"], r["error"]["type"]) for r in records] == [
        ("infra_error", "ReplyTooLarge")
    ] * 3
    assert rss_mb < 1024


# -- server text on the terminal ------------------------------------------------------

# Clear screen, a window title (OSC ... BEL), a C1 CSI, a carriage return, and a
# right-to-left override that shows "exe.sqli" as "ilqs.exe".
CLEAR, TITLE, C1_CSI, RLO = "\x1b[2J", "\x1b]0;pwned\x07", "\x9b2J", "\u202e"
HOSTILE_TEXT = f"evil{CLEAR}{TITLE}{C1_CSI}\r{RLO}exe.sqli\u2066x\u200f"
TERMINAL_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def test_terminal_text_escapes_what_acts_on_a_terminal():
    shown = terminal_text(HOSTILE_TEXT + "\n\tok é 中文 \u2028")
    assert not TERMINAL_UNSAFE.search(shown)
    assert shown == (
        "evil\\x1b[2J\\x1b]0;pwned\\x07\\x9b2J\\x0d\\u202eexe.sqli\\u2066x\\u200f\n\tok é 中文 \u2028"
    )
    assert terminal_text("\ud800") == "\\ud800"  # a lone surrogate: no encoding error


def test_server_sent_text_reaches_the_terminal_escaped(toy_suite, tmp_path, capsys):
    out = tmp_path / "runs"
    base = ["run", "--suite", str(toy_suite), "--model", "openai/fake-model", "--no-cache"]
    codes = []
    # 1. /v1/models lists hostile ids; the run's model is not one of them.
    with FakeServer(model_name=HOSTILE_TEXT) as server:
        codes.append(main([*base, "--api-base", server.url, "--out", str(out / "a")]))
    # 2. The preflight's refusal carries it in its error body.
    refusal = Reply.http_error(400, f"refused: {HOSTILE_TEXT}")
    with FakeServer(preflight_reply=refusal) as server:
        codes.append(main([*base, "--api-base", server.url, "--out", str(out / "b")]))
    # 3. Every chat reply is an error with it; the run records and reports them.
    with FakeServer(handler=lambda request: Reply.http_error(401, HOSTILE_TEXT)) as server:
        codes.append(
            main([*base, "--api-base", server.url, "--max-attempts", "1", "--out", str(out / "c")])
        )
    # 4. A served model that logs it and exits: the error shows the log's end.
    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    command = shlex.join(
        [sys.executable, str(TESTS / "fake_llm_server.py"), "--log-line", HOSTILE_TEXT,
         "--exit-at-start", "3"]
    ) + " --port {port} --model-name {model}"  # fmt: skip
    codes.append(
        main(
            [
                *base[:-1],
                "--serve",
                "custom",
                "--checkpoint",
                str(checkpoint),
                "--serve-command",
                command,
                "--serve-timeout",
                "20",
                "--out",
                str(out / "d"),
            ]
        )  # fmt: skip
    )
    captured = capsys.readouterr()
    streams = captured.out + captured.err
    assert codes == [2, 2, 1, 2], streams[-3000:]  # 1: every sample an infrastructure error
    assert "does not serve" in streams and "refused:" in streams
    raw = TERMINAL_UNSAFE.findall(streams)
    assert raw == []
    # Shown, escaped: the model ids, the refusal, the log's tail.
    assert streams.count("evil\\x1b[2J\\x1b]0;pwned\\x07\\x9b2J") >= 3
    assert streams.count("\\u202eexe.sqli\\u2066x\\u200f") >= 3
