"""The command line: a toy suite end to end, clear errors with exit code 2, lazy imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from harness.cli import main


@pytest.fixture
def toy_env(monkeypatch, tmp_path):
    monkeypatch.setenv("HARNESS_ADAPTERS", "toy=toy_adapter:ToyAdapter")
    monkeypatch.chdir(tmp_path)
    suite = tmp_path / "toy.yaml"
    suite.write_text("name: toy\ntrials: 2\nentries:\n  - benchmark: toy\n    subsets: all\n")
    return suite


def test_run_then_score_then_leaderboard(toy_env, tmp_path, capsys):
    assert main(["run", "--suite", str(toy_env), "--model", "oracle", "--quiet"]) == 0
    run_dir = tmp_path / "results" / "toy__oracle__plain"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["trials"] == 2 and manifest["planned"] == {"toy": {"easy": 5, "hard": 3}}
    assert manifest["not_run"][0]["subset"] == "keyed"
    assert manifest["versions"]["harness"] and manifest["user_model"] is None
    assert len((run_dir / "samples.jsonl").read_text().splitlines()) == 16
    # Rerunning the same command resumes: nothing left to do.
    assert main(["run", "--suite", str(toy_env), "--model", "oracle", "--quiet"]) == 0
    assert len((run_dir / "samples.jsonl").read_text().splitlines()) == 16
    capsys.readouterr()
    assert main(["score", str(run_dir)]) == 0
    out = capsys.readouterr().out  # the compact table; the full ones in the run folder
    assert out.startswith("run") and "toy__oracle__plain" in out and "100.0" in out
    full = (run_dir / "leaderboard.md").read_text()
    assert "| toy__oracle__plain | oracle | plain |" in full and "keyed" in full
    assert main(["leaderboard", str(run_dir), "--format", "csv"]) == 0
    assert "toy,toy__oracle__plain,oracle" in capsys.readouterr().out


def test_a_different_model_cannot_resume_into_the_same_folder(toy_env, tmp_path, capsys):
    out = str(tmp_path / "shared")
    assert main(["run", "--suite", str(toy_env), "--model", "oracle", "--out", out, "--quiet"]) == 0
    assert main(["run", "--suite", str(toy_env), "--model", "null", "--out", out, "--quiet"]) == 2
    assert "different model" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "--suite", "no-such-suite", "--model", "oracle"], "unknown suite 'no-such-suite'"),
        (
            ["run", "--suite", "smoke", "--model", "oracle", "--bogus"],
            "unrecognized arguments: --bogus",
        ),
        (
            ["run", "--suite", "smoke", "--model", "oracle", "--strategy", "magic"],
            "unknown strategy",
        ),
        (["score", "/nonexistent/run"], "is not a run folder"),
    ],
)
def test_bad_commands_give_one_line_and_exit_code_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_bad_suite_file_gives_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("entries:\n  - subsets: all\n")
    assert main(["run", "--suite", str(bad), "--model", "oracle"]) == 2
    assert "needs a 'benchmark'" in capsys.readouterr().err


@pytest.mark.slow
def test_help_does_not_import_heavy_packages():
    code = (
        "import sys\n"
        "from harness.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('litellm', 'pandas', 'tau2', 'bfcl_eval', 'datasets', 'torch') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy()
    )
    assert "usage: harness" in out.stdout
    assert "HEAVY=\n" in out.stdout or out.stdout.rstrip().endswith("HEAVY=")


def test_shards_partition_the_work_without_overlap_or_gap(toy_env, tmp_path):
    keys_by_shard = []
    for index in (1, 2, 3):
        args = [
            "run",
            "--suite",
            str(toy_env),
            "--model",
            "oracle",
            "--quiet",
            "--shard",
            f"{index}/3",
        ]
        assert main(args) == 0
        run_dir = tmp_path / "results" / f"toy__oracle__plain__shard-{index}of3"
        manifest = json.loads((run_dir / "manifest.json").read_text())
        assert manifest["shard"] == f"{index}/3"
        lines = (run_dir / "samples.jsonl").read_text().splitlines()
        keys_by_shard.append({json.loads(line)["key"] for line in lines})
    assert main(["run", "--suite", str(toy_env), "--model", "oracle", "--quiet"]) == 0
    whole = (tmp_path / "results" / "toy__oracle__plain" / "samples.jsonl").read_text().splitlines()
    all_keys = {json.loads(line)["key"] for line in whole}
    assert set.union(*keys_by_shard) == all_keys and len(all_keys) == 16
    assert sum(len(keys) for keys in keys_by_shard) == 16  # no overlap
    assert all(keys for keys in keys_by_shard)  # every shard got work


@pytest.mark.parametrize("bad", ["0/3", "4/3", "a/b", "3"])
def test_bad_shard_is_a_one_line_error(toy_env, bad, capsys):
    assert main(["run", "--suite", str(toy_env), "--model", "oracle", "--shard", bad]) == 2
    assert "--shard" in capsys.readouterr().err


def test_export_bfcl_writes_the_official_result_layout(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    suite = tmp_path / "b.yaml"
    suite.write_text(
        "name: b\nentries:\n  - benchmark: bfcl\n    subsets: [simple_python, multi_turn_base]\n"
        "    limit: 2\n"
    )
    assert main(["run", "--suite", str(suite), "--model", "oracle", "--quiet", "--out", "run"]) == 0
    assert main(["export-bfcl", "run", "out"]) == 0
    files = sorted(p.relative_to(tmp_path / "out") for p in (tmp_path / "out").rglob("*.json"))
    assert [f.name for f in files] == [
        "BFCL_v4_multi_turn_base_result.json",
        "BFCL_v4_simple_python_result.json",
    ]
    lines = (tmp_path / "out" / files[1]).read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["simple_python_0", "simple_python_1"]
    assert main(["export-bfcl", "run", "out2", "--model-name", "bad_name"]) == 2


def test_a_bad_adapter_option_is_a_one_line_error(tmp_path, capsys):
    suite = tmp_path / "bad-option.yaml"
    suite.write_text(
        "entries:\n  - benchmark: bfcl\n    subsets: [simple_python]\n    options: {mode: bogus}\n"
    )
    assert (
        main(["run", "--suite", str(suite), "--model", "oracle", "--out", str(tmp_path / "r")]) == 2
    )
    err = capsys.readouterr().err.strip()
    assert "mode must be one of" in err and len(err.splitlines()) == 1


def test_vitabench_offline_end_to_end_shows_user_and_judge(shared_data, tmp_path, capsys):
    args = [
        "run",
        "--suite",
        "vitabench-en",
        "--model",
        "oracle",
        "--user-model",
        "scripted",
        "--judge-model",
        "stub",
        "--data-dir",
        str(shared_data / "vitabench"),
        "--limit",
        "3",
        "--out",
        str(tmp_path / "vita"),
    ]
    assert main(args) == 0
    captured = capsys.readouterr()
    # ota and cross have no local data here: listed as not run, with where it looked.
    assert "not run: vitabench/ota" in captured.err
    leaderboard = (tmp_path / "vita" / "leaderboard.md").read_text()
    row = next(line for line in leaderboard.splitlines() if line.startswith("| vita |"))
    assert "| scripted | stub |" in row
    manifest = json.loads((tmp_path / "vita" / "manifest.json").read_text())
    assert (manifest["user_model"], manifest["judge_model"]) == ("scripted", "stub")
    # which prompts the run used is in the manifest and beside the score
    source = manifest["versions"]["vitabench.prompt_source"]
    assert source in ("official", "harness")
    assert f"prompt_source: {source}" in leaderboard


def test_vitabench_default_judge_is_the_benchmarks_own(shared_data, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    args = ["run", "--suite", "vitabench-en", "--model", "oracle", "--user-model", "scripted"]
    args += ["--data-dir", str(shared_data / "vitabench"), "--limit", "1"]
    assert main([*args, "--out", str(tmp_path / "vita")]) == 2
    err = capsys.readouterr().err.strip()
    assert "'anthropic/claude-3-7-sonnet-20250219' needs ANTHROPIC_API_KEY" in err


def test_reading_a_run_without_scores_json_writes_nothing_into_it(toy_env, tmp_path, capsys):
    """A read-only folder (another user's run) is read as any other: the scores are
    computed from the records and shown, and the folder is left as it was."""
    assert main(["run", "--suite", str(toy_env), "--model", "oracle", "--quiet"]) == 0
    run_dir = tmp_path / "results" / "toy__oracle__plain"
    (run_dir / "scores.json").unlink()
    before = sorted(path.name for path in run_dir.iterdir())
    capsys.readouterr()
    for argv in (["leaderboard", str(run_dir)], ["compare", str(run_dir), str(run_dir)]):
        assert main([*argv, "--n-boot", "20"]) == 0
    assert "100.00" in capsys.readouterr().out
    assert sorted(path.name for path in run_dir.iterdir()) == before
