"""`harness sweep`: every checkpoint served and evaluated, resumed without re-serving, plotted.

Each "checkpoint" is a folder whose ``fake_skill`` file sets how well the fake
server (tests/fake_llm_server.py, started through ``--serve custom``) plays.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support import TESTS, without_timing

from harness.cli import main
from harness.store.run_store import read_records

FAKE = f"{sys.executable} {TESTS / 'fake_llm_server.py'}"
TEMPLATE = f"{FAKE} --port {{port}} --model-name {{model}} --checkpoint {{checkpoint}}"


@pytest.fixture
def training_run(toy_suite, tmp_path):
    """A toy suite and three checkpoints that get better with training."""
    for step, skill in ((100, 0.2), (200, 0.6), (300, 1.0)):
        add_checkpoint(tmp_path, step, skill)
    return toy_suite


def add_checkpoint(root: Path, step: int, skill: float) -> Path:
    folder = root / "ckpts" / f"step_{step}"
    folder.mkdir(parents=True)
    (folder / "fake_skill").write_text(str(skill))
    return folder


def sweep(suite: Path, out: Path, *extra: str) -> int:
    argv = ["sweep", "--checkpoints", str(suite.parent / "ckpts" / "step_*"), "--suite", str(suite)]
    argv += ["--serve", "custom", "--serve-command", TEMPLATE, "--no-cache", "--out", str(out)]
    return main([*argv, *extra])


def starts(run_dir: Path) -> int:
    """How many times a server was started for this run folder."""
    log = run_dir / "server.log"
    return log.read_text().count("=== harness: starting") if log.exists() else 0


def overall(run_dir: Path) -> float:
    records = read_records(run_dir / "samples.jsonl").latest.values()
    return sum(r["score"]["passed"] for r in records) / len(records)


@pytest.mark.slow
def test_a_sweep_evaluates_each_checkpoint_then_resumes_without_serving(
    training_run, tmp_path, capsys
):
    out = tmp_path / "sweep"
    assert sweep(training_run, out) == 0
    captured = capsys.readouterr()
    folders = [out / f"step_{s}" for s in (100, 200, 300)]
    for step, folder in zip((100, 200, 300), folders, strict=True):
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest["step"] == step and manifest["checkpoint"].endswith(f"step_{step}")
        assert manifest["model"]["name"] == f"openai/step_{step}"
        assert starts(folder) == 1
    assert overall(folders[0]) < overall(folders[1]) < overall(folders[2]) == 1.0
    # The table has a row per checkpoint with its step; the plot is written.
    rows = [line.split() for line in captured.out.splitlines() if line.startswith("step_")]
    assert [row[:2] for row in rows] == [
        ["step_100", "100"],
        ["step_200", "200"],
        ["step_300", "300"],
    ]
    for step in (100, 200, 300):
        full = (out / f"step_{step}" / "leaderboard.md").read_text()
        assert f"| step_{step} | openai/step_{step} | plain |" in full
    assert (out / "step.png").stat().st_size > 0 and (out / "step.pdf").exists()
    # Rerun: nothing to do, no server started.
    assert sweep(training_run, out, "--quiet") == 0
    assert [starts(f) for f in folders] == [1, 1, 1]
    assert captured.err.count("nothing left to run") == 0
    assert capsys.readouterr().err.count("nothing left to run; the server is not started") == 3


@pytest.mark.slow
def test_a_rerun_serves_only_new_and_unfinished_checkpoints(training_run, tmp_path):
    out = tmp_path / "sweep"
    assert sweep(training_run, out, "--quiet") == 0
    # step_200 was cut short; step_400 is a new checkpoint.
    samples = out / "step_200" / "samples.jsonl"
    samples.write_text("\n".join(samples.read_text().splitlines()[:3]) + "\n")
    add_checkpoint(tmp_path, 400, 1.0)
    assert sweep(training_run, out, "--quiet") == 0
    assert [starts(out / f"step_{s}") for s in (100, 200, 300, 400)] == [1, 2, 1, 1]
    assert len(read_records(samples).latest) == 8


@pytest.mark.slow
def test_a_checkpoint_whose_server_fails_does_not_stop_the_sweep(training_run, tmp_path, capsys):
    (tmp_path / "ckpts" / "step_200" / "fake_broken").write_text("")
    out = tmp_path / "sweep"
    assert sweep(training_run, out, "--quiet") == 1
    err = capsys.readouterr().err
    assert "sweep: step_200: the custom server exited with code 3 before it was ready" in err
    assert (out / "step_100" / "scores.json").exists() and (
        out / "step_300" / "scores.json"
    ).exists()


@pytest.mark.slow
def test_parts_merged_equal_one_job_per_checkpoint(training_run, tmp_path):
    assert sweep(training_run, tmp_path / "whole", "--quiet") == 0
    assert sweep(training_run, tmp_path / "parts", "--quiet", "--parts", "2") == 0
    for step in (100, 200, 300):
        whole = read_records(tmp_path / "whole" / f"step_{step}" / "samples.jsonl").latest
        parts = read_records(tmp_path / "parts" / f"step_{step}" / "samples.jsonl").latest
        assert {k: without_timing(r) for k, r in parts.items()} == {
            k: without_timing(r) for k, r in whole.items()
        }
        manifest = json.loads((tmp_path / "parts" / f"step_{step}" / "manifest.json").read_text())
        assert manifest["shard"] == "merged from 1/2, 2/2" and manifest["step"] == step


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--model", "openai/x"], "drop --checkpoint/--model"),
        (["--parts", "2", "--shard", "1/2"], "drop --shard"),
        (["--parts", "0"], "--parts must be positive"),
    ],
)
def test_bad_sweep_flags_are_one_line_and_exit_code_2(
    training_run, tmp_path, capsys, extra, message
):
    assert sweep(training_run, tmp_path / "sweep", *extra) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "sweep").exists()


def test_a_sweep_needs_its_server_installed_and_checkpoints_that_exist(
    training_run, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("PATH", "/nonexistent")
    base = ["sweep", "--suite", str(training_run), "--out", str(tmp_path / "s")]
    assert main([*base, "--checkpoints", str(tmp_path / "ckpts" / "step_*")]) == 2
    assert "--serve vllm needs vLLM" in capsys.readouterr().err  # vllm is the default
    assert main([*base, "--checkpoints", str(tmp_path / "nothing_*")]) == 2
    assert "matches nothing" in capsys.readouterr().err


def test_the_ray_executor_without_ray_is_one_clear_error(
    training_run, tmp_path, capsys, monkeypatch
):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    assert sweep(training_run, tmp_path / "sweep", "--executor", "ray") == 2
    out, err = capsys.readouterr()
    # The refusal is all there is: no "sweep: N checkpoint(s)..." line before it.
    assert (out + err).strip().splitlines() == [
        "harness: error: --executor ray needs Ray: pip install 'harness[ray]' (or pip install ray)"
    ]


@pytest.mark.slow
def test_run_sweep_is_the_python_face_of_harness_sweep(training_run, tmp_path):
    """The same sweep from Python: typed config in, typed summary out."""
    from harness import RunConfig, ServeConfig, SweepConfig, run_sweep

    serve = ServeConfig(serve="custom", serve_command=TEMPLATE, quiet=True)
    base = RunConfig(suite=str(training_run), serve=serve, cache=False, progress=False)
    pattern = str(training_run.parent / "ckpts" / "step_*")
    summary = run_sweep(SweepConfig(run=base, checkpoints=(pattern,), out=tmp_path / "sweep"))
    assert summary.ok and summary.sweep_dir == tmp_path / "sweep"
    assert [d.name for d in summary.run_dirs] == ["step_100", "step_200", "step_300"]
    assert [r.exit_code for r in summary.results] == [0, 0, 0]
    assert overall(summary.run_dirs[0]) < overall(summary.run_dirs[2]) == 1.0


def test_a_sweep_config_without_checkpoints_is_one_clear_error(toy_suite):
    from harness import RunConfig, SweepConfig, run_sweep
    from harness.errors import ConfigError

    with pytest.raises(ConfigError, match="names no checkpoint"):
        run_sweep(SweepConfig(run=RunConfig(suite=str(toy_suite)), checkpoints=()))
