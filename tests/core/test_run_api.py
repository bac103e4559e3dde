"""The Python run API: ``harness.run_suite(RunConfig(...))`` in this process, as a
training loop would call it, gives the same run folder as ``harness run``."""

from __future__ import annotations

import asyncio
import json
from copy import deepcopy

import pytest

import harness
from harness import RunConfig, run_suite, run_suite_async
from harness.cli import build_parser, main
from harness.commands.run import run_config
from harness.errors import ConfigError
from harness.store.run_store import read_records


def scored(run_dir):
    records = read_records(run_dir / "samples.jsonl").latest
    return {key: (r["status"], r["score"]["passed"]) for key, r in records.items()}


def test_run_suite_in_process_on_the_smoke_suite_with_the_oracle(tmp_path, capsys):
    config = RunConfig(suite="smoke", model="oracle", out=tmp_path / "api", progress=False)
    summary = run_suite(config)
    assert summary.run_dir == tmp_path / "api"
    assert summary.ran == summary.total == summary.ok > 0
    assert summary.succeeded and summary.exit_code == 0
    # The oracle passes every sample, and the scores come back with the summary.
    assert set(summary.scores["benchmarks"]) == {"bfcl", "tau2"}
    assert all(passed for _, passed in scored(summary.run_dir).values())
    manifest = json.loads((tmp_path / "api" / "manifest.json").read_text())
    assert manifest["last_summary"]["ran"] == summary.ran
    # The same config again resumes: nothing left to run.
    again = run_suite(config)
    assert (again.ran, again.skipped) == (0, summary.total)


def test_run_suite_async_runs_on_the_callers_loop(tmp_path):
    config = RunConfig(suite="smoke", model="oracle", out=tmp_path / "run", limit=1, progress=False)

    async def training_step():
        return await run_suite_async(config)

    summary = asyncio.run(training_step())
    assert summary.ok == summary.ran > 0 and summary.exit_code == 0
    assert len(read_records(tmp_path / "run" / "samples.jsonl").latest) == summary.ran
    # The command line gives the same records.
    argv = ["run", "--suite", "smoke", "--model", "oracle", "--limit", "1", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "cli")]) == 0
    assert scored(tmp_path / "cli") == scored(tmp_path / "run")


def test_the_public_names_and_a_bad_config():
    assert harness.RunConfig is RunConfig and callable(harness.run_suite)
    with pytest.raises(AttributeError):
        harness.no_such_name  # noqa: B018
    with pytest.raises(ConfigError, match="--concurrency must be a positive number"):
        run_suite(RunConfig(suite="smoke", model="oracle", concurrency=0))
    with pytest.raises(ConfigError, match="--tool-choice"):
        RunConfig(suite="smoke", model="oracle", tool_choice="sometimes").check()


def test_planning_leaves_the_config_and_the_flags_unchanged(tmp_path):
    gguf = tmp_path / "model-q4.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 100)
    args = build_parser().parse_args(
        ["run", "--suite", "smoke", "--serve", "llamacpp", "--checkpoint", str(gguf)]
    )
    before = dict(vars(args))
    config = run_config(args)
    copy = deepcopy(config)
    from harness.serving.plan import plan_endpoint

    plan = plan_endpoint(config, check_installed=False)
    assert plan.model == "openai/model-q4" and plan.api_base == plan.url
    assert vars(args) == before and config == copy and config.model is None


def test_the_default_run_folder_names_suite_model_strategy_and_shard():
    config = RunConfig(suite="tasks/smoke.yaml", strategy="self-consistency:3", shard="2/4")
    assert str(config.run_dir("openai/m")) == (
        "results/smoke__openai-m__self-consistency-3__shard-2of4"
    )
    options = RunConfig(suite="smoke", env_feedback="augmented", strategy_options={"a": 1})
    assert options.run_dir("m").name == "smoke__m__plain-a-1-env_feedback-augmented"


def test_record_and_manifest_round_trip_keep_what_this_version_does_not_know():
    from harness.store.manifest import Manifest, ManifestError
    from harness.store.records import Record, RecordError

    line = {"key": "b/s/1#0", "benchmark": "b", "subset": "s", "sample_id": "1", "trial": 0}
    line.update(status="ok", score={"passed": True}, added_later={"x": 1})
    record = Record.from_dict(line)
    assert record.passed is True and record.extra == {"added_later": {"x": 1}}
    assert {k: v for k, v in record.to_dict().items() if v is not None} == line
    with pytest.raises(RecordError, match="trial: a boolean, not a whole number"):
        Record.from_dict({**line, "trial": True})
    old = {"run_id": "r", "model": {"name": "m"}, "trials": 2, "from_the_future": [1]}
    manifest = Manifest.from_dict(old)
    assert manifest.trials == 2 and manifest.to_dict()["from_the_future"] == [1]
    assert "server" not in manifest.to_dict() and manifest.to_dict()["limit"] is None
    with pytest.raises(ManifestError, match="'trials' is not int"):
        Manifest.from_dict({**old, "trials": "2"})


def test_the_typed_choices_of_run_config_are_the_ones_checked_at_run_time():
    from typing import get_args

    from harness.config import run_config
    from harness.models.openai_wire import TOOL_CHOICES as WIRE_TOOL_CHOICES
    from harness.models.reasoning import INLINE_REASONING
    from harness.models.settings import CLIENT_KINDS

    assert get_args(run_config.ClientKind) == CLIENT_KINDS
    assert get_args(run_config.InlineReasoning) == INLINE_REASONING
    assert run_config.TOOL_CHOICES == WIRE_TOOL_CHOICES
    assert run_config.ENV_FEEDBACK == ("standard", "augmented")


def test_a_score_s_verdict_is_written_as_a_json_boolean():
    """numpy's boolean (a verdict computed with numpy) is no bool: JSON would write
    it as the text "True", which the typed record check refuses when read back."""
    import numpy as np

    from harness.store.records import parse_record
    from harness.store.run_store import record_line
    from harness.types import Score

    score = Score(passed=np.float64(1.0) >= 1.0, reward=1.0)
    line = {"key": "b/s/1#0", "benchmark": "b", "subset": "s", "sample_id": "1", "trial": 0}
    record = parse_record({**line, "status": "ok", "score": score.to_dict()})
    written = json.loads(record_line(record))
    assert written["score"]["passed"] is True and parse_record(written).passed is True
