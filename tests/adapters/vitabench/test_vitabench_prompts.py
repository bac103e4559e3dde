"""Where VitaBench's prompts come from: the installed official package, or this
project's wording; and that the choice is recorded with every score.

The official package itself is exercised in test_vitabench_official.py; here a
stand-in package with the same layout shows the lookup rules."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harness.adapters.vitabench import VitaBenchAdapter, official
from harness.adapters.vitabench.metrics import aggregate_records
from harness.adapters.vitabench.prompts import harness_prompts, prompt_set
from harness.errors import ConfigError
from harness.task.contract import RecordView, Services
from harness.types import Trajectory


@pytest.fixture(autouse=True)
def fresh_lookup():
    official.official_prompt_dir.cache_clear()
    official.templates_in.cache_clear()
    yield
    official.official_prompt_dir.cache_clear()
    official.templates_in.cache_clear()


def fake_package(root: Path, with_prompts: bool = True) -> Path:
    package = root / "vita"
    (package / "prompts").mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('never imported')\n")
    if with_prompts:
        texts = {
            "agent_system_prompt.yaml": "AGENT {time}",
            "user_system_prompt.yaml": "USER {persona} / {instructions}",
            "sliding_window_eval_template.yaml": (
                "JUDGE {env_info} {user_instruction} {window_idx}/{total_windows} {{json}}"
            ),
        }
        for name, text in texts.items():
            body = f"name: x\nchinese: 'ZH {text}'\nenglish: 'EN {text}'\n"
            (package / "prompts" / name).write_text(body, encoding="utf-8")
    return root


def test_installed_package_templates_are_used_and_formatted(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(fake_package(tmp_path)))
    prompts = prompt_set("en")
    assert prompts.source == "official"
    assert prompts.agent_system("2025-06-21 11:20:00") == "EN AGENT 2025-06-21 11:20:00 Saturday"
    assert prompts.user_system("P", "I") == "EN USER P / I"
    assert prompts.judge_system("{'e': 1}", "do it", 2, 3) == "EN JUDGE {'e': 1} do it 2/3 {json}"
    assert prompt_set("zh").agent_system("2025-06-21 11:20:00").startswith("ZH AGENT")
    assert prompt_set("en", "official").source == "official"
    assert prompt_set("en", "harness") == harness_prompts("en")


def test_without_the_package_our_wording_is_used(tmp_path, monkeypatch):
    # an unrelated package named vita (no prompt files) is not the benchmark's
    monkeypatch.syspath_prepend(str(fake_package(tmp_path, with_prompts=False)))
    assert official.official_prompt_dir() is None
    assert prompt_set("en").source == "harness"
    assert "{time}" in harness_prompts("en").agent
    with pytest.raises(ConfigError, match="need the benchmark's code"):
        prompt_set("en", "official")
    with pytest.raises(ConfigError, match="unknown VitaBench prompts option"):
        prompt_set("en", "bogus")


def test_prompt_source_is_in_metadata_score_versions_and_notes(shared_data, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(fake_package(tmp_path)))
    adapter = VitaBenchAdapter()
    data = shared_data / "vitabench"
    official_sample = adapter.load("delivery", data_dir=data, options={"language": "en"})[0]
    ours = adapter.load("delivery", data_dir=data, options={"language": "en", "prompts": "harness"})
    assert official_sample.metadata["prompt_source"] == "official"
    assert official_sample.initial_messages[0]["content"].startswith("EN AGENT ")
    assert ours[0].metadata["prompt_source"] == "harness"
    assert adapter.versions()["prompt_source"] == "harness+official"
    assert adapter.versions()["prompts_from"].startswith("vita")

    trajectory = Trajectory(messages=[], termination="max_steps")
    score = asyncio.run(adapter.score(ours[0], trajectory, Services()))
    assert score.details["prompt_source"] == "harness"
    record = RecordView(ours[0].id, "delivery", 0, "ok", score, dict(ours[0].metadata))
    result = aggregate_records("vitabench", [record])
    assert result.notes[0].startswith("prompt_source: harness (")
    # The note says why: chosen with the option, not "the package was not installed".
    assert "chosen with the option prompts: harness" in result.notes[0]
    assert "not installed" not in result.notes[0]
    assert result.nonstandard and "not VitaBench's own" in result.nonstandard[0]
    mixed = RecordView(official_sample.id, "delivery", 0, "ok", None, official_sample.metadata)
    result = aggregate_records("vitabench", [record, mixed])
    assert result.notes[0].startswith("prompt_source: mixed: harness (")
    assert "official (" in result.notes[0] and "1 record(s)" in result.notes[0]
    assert "1 of 2 record(s)" in result.nonstandard[0]
    official_only = aggregate_records("vitabench", [mixed])
    assert official_only.nonstandard == []
