"""The real-model tier: every adapter against a real llama.cpp server.

Run with ``pytest -m real_model tests/real_model`` after
``eval "$(bash scripts/real_model_env.sh)"`` (``.ci/run`` does both). The runs
happen once per session (the ``tier`` fixture); each test reads its own
assertion off their records and the server's token counts. The figures per
benchmark go to ``test-artifacts/real-model-tier.md`` and pytest's summary.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import harness_process, shared_path

from harness.serving.process import HOST, ManagedServer, free_port
from harness.serving.specs import LlamaCppSpec
from harness.store.run_store import read_records

from real_model_tier import (
    ARGUMENT_MAX_LENGTH,
    GGUF_VARIABLE,
    LANES,
    MAX_TOKENS,
    PYTHON_VARIABLE,
    REPORT,
    SAMPLING,
    SHARED_DATA,
    TAU2_CHECKOUT,
    TAU3_CONTEXT_TOKENS,
    TAU3_SUITE,
    TRUNCATING_MAX_TOKENS,
    BenchmarkFigures,
    benchmark_suites,
    bfcl_suite_yaml,
    figures_by_benchmark,
    parse_errors,
    report_table,
    server_arguments,
)

# The whole tier runs in the first test's setup, in two lanes (see LANES).
pytestmark = [pytest.mark.real_model, pytest.mark.timeout(3600)]


@dataclass
class TierRun:
    name: str
    folder: Path
    exit_code: int
    wall_s: float
    records: list[dict[str, Any]]
    planned: int
    cpu_s: float  # the run's process and its server

    @property
    def figures(self) -> dict[str, BenchmarkFigures]:
        return figures_by_benchmark(self.records)


BENCHMARKS = ("bfcl", "tau2", "vitabench", "finmcp")


@dataclass
class Tier:
    runs: dict[str, TierRun]
    gguf: Path

    @property
    def records(self) -> list[dict[str, Any]]:
        return [record for run in self.runs.values() for record in run.records]

    @property
    def benchmark_records(self) -> list[dict[str, Any]]:
        """The records of the four benchmarks' own runs (not the strategies')."""
        return [record for name in BENCHMARKS for record in self.runs[name].records]


def _gguf() -> Path:
    python, gguf = os.environ.get(PYTHON_VARIABLE), os.environ.get(GGUF_VARIABLE)
    if not python or not gguf or not Path(gguf).is_file():
        pytest.fail(
            f"the real-model tier needs {PYTHON_VARIABLE} and {GGUF_VARIABLE}: "
            'run eval "$(bash scripts/real_model_env.sh)" first'
        )
    return Path(gguf)


@dataclass(frozen=True)
class PlannedRun:
    """One ``harness run`` of the tier: its suite, extra flags and server window."""

    name: str
    suite: str
    extra: tuple[str, ...] = ()
    context_tokens: int = 2048
    flash_attention: bool = False  # the strategies' runs: short prompts (see TierSuite)


def _planned_runs() -> list[PlannedRun]:
    strategy_suite = bfcl_suite_yaml("real-model-strategies", "simple_python", 2)
    return [
        *(
            PlannedRun(
                suite.name,
                suite.yaml,
                context_tokens=suite.context_tokens,
                flash_attention=suite.flash_attention,
            )
            for suite in benchmark_suites(SHARED_DATA)
        ),
        # tau2-bench v1.0.1 from its checkout: its environments and runner rules.
        PlannedRun(
            "tau3",
            TAU3_SUITE,
            ("--data-dir", f"tau3={TAU2_CHECKOUT}"),
            context_tokens=TAU3_CONTEXT_TOKENS,
            flash_attention=True,
        ),
        PlannedRun("rehearsal-parallel-2", strategy_suite, ("--strategy", "rehearsal-parallel:2")),
        PlannedRun(
            "self-consistency-3",
            strategy_suite,
            ("--strategy", "self-consistency:3", "--strategy-opt", "temperature=0.7"),
        ),
        # Calls written as text and cut off: malformed output, for sure.
        PlannedRun(
            "truncated-prompt-mode",
            bfcl_suite_yaml("real-model-truncated", "simple_python", 2),
            (
                "--prompt-mode",
                "--tool-parser",
                "none",
                f"--max-tokens={TRUNCATING_MAX_TOKENS}",
            ),
        ),
    ]


def _lanes(runs: list[PlannedRun]) -> list[list[PlannedRun]]:
    """tau2 (the longest prompts: about half the tier's CPU time) and the two
    shortest runs in one lane; every other run in the other (measured in CI:
    856 s for tau2; 439, 274, 157 and 56 s for BFCL, VitaBench, FinMCP and
    rehearsal; 24 and 12 s for self-consistency and the truncated run)."""
    first = [
        run for run in runs if run.name in ("tau2", "self-consistency-3", "truncated-prompt-mode")
    ]
    return [first, [run for run in runs if run not in first]][:LANES]


def _run(planned: PlannedRun, folder: Path, gguf: Path) -> TierRun:
    """``harness run`` as a child process (two lanes run at once), with its own
    server; its CPU time (harness and server) is read when it ends."""
    suite_file = folder / f"{planned.name}.yaml"
    suite_file.write_text(planned.suite, encoding="utf-8")
    out = folder / planned.name
    argv = [
        "run",
        "--suite",
        str(suite_file),
        "--serve",
        "llamacpp",
        "--checkpoint",
        str(gguf),
        "--out",
        str(out),
        "--concurrency",
        "1",
        "--max-tokens",
        str(MAX_TOKENS),
        "--timeout",
        "600",
        "--no-cache",
        "--quiet",
        f"--argument-max-length={ARGUMENT_MAX_LENGTH}",
        # llama.cpp reuses the previous request's prompt cache, and this small model's
        # greedy replies change with it: the tier keeps one order, the benchmark's.
        "--start-order",
        "load",
        *server_arguments(planned.context_tokens, planned.flash_attention),
        *SAMPLING,
        *planned.extra,
    ]
    start = time.monotonic()
    with open(folder / f"{planned.name}.log", "w", encoding="utf-8") as log:
        process = harness_process(argv, stdout=log, stderr=subprocess.STDOUT)
        # wait4: this child's CPU seconds, with those of the server it waited for.
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - start
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    per_subset = [count for subsets in manifest["planned"].values() for count in subsets.values()]
    planned_items = sum(per_subset) * int(manifest["trials"])
    records = list(read_records(out / "samples.jsonl").latest.values())
    return TierRun(
        planned.name,
        out,
        process.returncode,
        wall,
        records,
        planned_items,
        usage.ru_utime + usage.ru_stime,
    )


def _run_lane(lane: list[PlannedRun], folder: Path, gguf: Path) -> list[TierRun]:
    return [_run(planned, folder, gguf) for planned in lane]


@pytest.fixture(scope="session")
def tier(tmp_path_factory: pytest.TempPathFactory) -> Tier:
    for kind in ("data", "tau2-bench"):  # skipped without them (in CI: failed)
        shared_path(kind)
    gguf = _gguf()
    REPORT.unlink(missing_ok=True)  # the summary shows this session's figures only
    folder = tmp_path_factory.mktemp("real-model-tier")
    planned = _planned_runs()
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=LANES) as pool:
        lanes = list(pool.map(lambda lane: _run_lane(lane, folder, gguf), _lanes(planned)))
    wall = time.monotonic() - started
    done = {run.name: run for lane in lanes for run in lane}
    runs = [done[p.name] for p in planned]
    result = Tier({run.name: run for run in runs}, gguf)
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(
        report_table(
            {run.name: run.figures for run in runs},
            {run.name: run.wall_s for run in runs},
            {run.name: run.cpu_s for run in runs},
            wall,
        )
        + "\n",
        encoding="utf-8",
    )
    return result


def test_every_sample_and_trial_is_scored_without_infrastructure_errors(tier):
    for run in tier.runs.values():
        statuses = {r["key"]: r["status"] for r in run.records}
        assert len(statuses) == run.planned, run.name
        bad = {key: s for key, s in statuses.items() if s != "ok"}
        assert not bad, f"{run.name}: {bad}"
        assert all(r["score"] is not None for r in run.records), run.name
        assert run.exit_code == 0, run.name


def test_every_benchmark_ran(tier):
    figures = figures_by_benchmark(tier.benchmark_records)
    assert set(figures) == set(BENCHMARKS)
    subsets = {(r["benchmark"], r["subset"]) for r in tier.benchmark_records}
    assert {s for b, s in subsets if b == "tau2"} == {"airline", "retail", "telecom"}
    assert {s for b, s in subsets if b == "vitabench"} == {"delivery", "instore"}
    assert {s for b, s in subsets if b == "finmcp"} == {"single_tool", "multi_tool", "multi_turn"}


def test_a_well_formed_call_ran_against_each_benchmarks_environment(tier):
    figures = figures_by_benchmark(tier.benchmark_records)
    executed = {name: entry.calls.executed for name, entry in figures.items()}
    assert all(count >= 1 for count in executed.values()), executed


def test_the_strategies_ran_their_extra_model_calls(tier):
    for name, factor in (("rehearsal-parallel-2", 2), ("self-consistency-3", 3)):
        run = tier.runs[name]
        assert len(run.records) == 2
        for record in run.records:
            usage = record["trajectory"]["usage"]
            calls = sum(role["calls"] for role in usage.values())
            # N rehearsals or K samples per step: several times one episode's calls.
            assert calls >= factor, (name, usage)


def test_tau3_runs_on_tau2_bench_v1_0_1_and_follows_its_runner_rule(tier):
    """The banking_knowledge episode on tau2-bench v1.0.1's own environment: scored
    as tau2-bench scores it, or (a message its code raises on, e.g. an empty reply)
    run again, the model asked on every attempt, then binned as its runner bins it."""
    (record,) = tier.runs["tau3"].records
    assert record["status"] == "ok" and record["score"] is not None
    assert record["metadata"]["retrieval"] == "bm25"
    void = record["trajectory"]["extra"].get("void_attempts") or []
    calls = record["trajectory"]["usage"]["actor"]["calls"]
    if record["score"].get("excluded"):
        assert record["score"]["details"]["attempts"] == 4 and len(void) == 3
        assert calls >= 4  # every attempt asked the server again
    else:
        assert record["score"]["details"]["termination"] in ("user_stop", "max_steps")
        assert calls >= 1


def test_malformed_model_output_is_a_scored_failure_with_its_parse_error(tier):
    malformed = [r for r in tier.records if parse_errors(r)]
    assert tier.runs["truncated-prompt-mode"].records
    assert all(parse_errors(r) for r in tier.runs["truncated-prompt-mode"].records)
    for record in malformed:
        assert record["status"] == "ok"
        assert record["score"] is not None
        assert all(isinstance(e, str) and e for e in parse_errors(record))


def _chat(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{url}/chat/completions",
        data=json.dumps(body).encode("utf-8"),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=600) as reply:
        return json.loads(reply.read())


def test_the_tools_reached_the_model(tier, tmp_path):
    """The server's own prompt-token count for a BFCL request with its tools is far
    above the same messages sent without them."""
    record = next(
        r
        for r in tier.runs["bfcl"].records
        if r["subset"] == "simple_python" and r["trajectory"]["turns"]
    )
    with_tools = record["trajectory"]["turns"][0]["usage"]["prompt_tokens"]
    from harness.task.registry import get_adapter

    (sample,) = get_adapter("bfcl").load("simple_python", ids=[record["sample_id"]])
    spec = LlamaCppSpec(str(tier.gguf), "probe", tool_parser="chatml-function-calling")
    port = free_port()
    with ManagedServer(
        command=spec.command(HOST, port),
        port=port,
        model="probe",
        log_path=tmp_path / "server.log",
        label="llamacpp",
    ) as server:
        plain = _chat(
            server.url,
            {"model": "probe", "messages": sample.initial_messages, "max_tokens": 1},
        )
    without_tools = plain["usage"]["prompt_tokens"]
    assert with_tools >= 2 * without_tools + 50, (with_tools, without_tools)
