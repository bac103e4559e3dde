"""A VitaBench regrade judges with the prompts the run used: where they are not there it
refuses in one line, unless another source is asked for, which is then recorded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_vitabench_checkout import make_clone

pytestmark = pytest.mark.slow

SUITE = """name: vita-regrade
user_model: scripted
judge_model: stub
entries:
  - benchmark: vitabench
    subsets: [delivery]
    limit: 1
    options: {language: en}
"""


def harness(*args: str, cwd: Path, extra_path: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    if extra_path is not None:  # a stand-in "vita" package with the official layout
        env["PYTHONPATH"] = os.pathsep.join([str(extra_path), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )


def run_folder(tmp_path: Path, data: Path, name: str) -> Path:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    out = tmp_path / name
    done = harness(
        "run",
        "--suite",
        str(suite),
        "--model",
        "oracle",
        "--quiet",
        "--data-dir",
        f"vitabench={data}",
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return out


def stored(run: Path) -> dict:
    return json.loads((run / "scores.json").read_text())


def test_an_official_prompt_run_is_not_regraded_with_other_prompts_unless_asked(
    shared_data, tmp_path
):
    clone = make_clone(shared_data, tmp_path / "VitaBench")
    run = run_folder(tmp_path, clone, "official")
    (record,) = stored(run)["records"].values()
    assert record["score"]["details"]["prompt_source"] == "official"
    shutil.rmtree(clone / "src")  # the checkout's code is gone; its data stays
    refused = harness("score", str(run), cwd=tmp_path)
    assert refused.returncode == 2
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "'official'" in lines[0] and "--option" in lines[0]
    assert list(stored(run)["records"].values()) == [record]  # nothing rewritten
    asked = harness("score", str(run), "--option", "vitabench.prompts=harness", cwd=tmp_path)
    assert asked.returncode == 0, asked.stderr
    scores = stored(run)
    assert scores["regrade_overrides"] == {"vitabench": {"prompts": "harness"}}
    (regraded,) = scores["records"].values()
    assert regraded["score"]["details"]["prompt_source"] == "harness"
    vita = scores["benchmarks"]["vitabench"]
    assert "chosen with the option prompts: harness" in vita["notes"][0]
    assert vita["nonstandard"]  # and so every table marks it
    assert "§" in asked.stdout


def test_a_run_with_this_projects_wording_is_regraded_with_it_where_vita_is_installed(
    shared_data, tmp_path
):
    run = run_folder(tmp_path, shared_data / "vitabench", "ours")
    (record,) = stored(run)["records"].values()
    assert record["score"]["details"]["prompt_source"] == "harness"
    package = tmp_path / "site"
    prompts = package / "vita" / "prompts"
    prompts.mkdir(parents=True)
    (package / "vita" / "__init__.py").write_text("raise ImportError('never imported')\n")
    vendor = shared_data.parent / "vendor" / "vitabench" / "src" / "vita" / "prompts"
    for name in (
        "agent_system_prompt.yaml",
        "user_system_prompt.yaml",
        "sliding_window_eval_template.yaml",
    ):
        shutil.copy(vendor / name, prompts / name)
    regraded = harness("score", str(run), cwd=tmp_path, extra_path=package)
    assert regraded.returncode == 0, regraded.stderr
    (again,) = stored(run)["records"].values()
    assert again["score"]["details"]["prompt_source"] == "harness"
