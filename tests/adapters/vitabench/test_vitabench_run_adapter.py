"""The VitaBench adapter on the real task files: loading, data errors, samples,
and the oracle with the scripted user on the real environment."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from harness.adapters.vitabench import VitaBenchAdapter
from harness.adapters.vitabench.data import HF_DATASET, DataNotFoundError
from harness.adapters.vitabench.judge import OrdersStubJudge
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Services
from harness.types import SamplingParams

# (scenario, language) of the task files in the shared data.
AVAILABLE = [("delivery", "zh"), ("delivery", "en"), ("instore", "en")]


@pytest.fixture()
def data_dir(shared_data) -> Path:
    return shared_data / "vitabench"


@pytest.mark.slow
def test_import_is_cheap():
    code = (
        "import sys, harness.adapters.vitabench\n"
        "heavy = [m for m in ('litellm', 'datasets', 'huggingface_hub') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_subsets_and_entry_point_name():
    adapter = VitaBenchAdapter()
    assert adapter.name == "vitabench"
    assert adapter.subsets() == ["delivery", "instore", "ota", "cross"]


def test_load_defaults_to_chinese_with_stable_ids_and_metadata(data_dir):
    adapter = VitaBenchAdapter()
    samples = adapter.load("delivery", data_dir=data_dir)
    assert len(samples) == 100
    first = samples[0]
    assert (
        first.id == "zh-10711001" and first.subset == "delivery" and first.benchmark == "vitabench"
    )
    assert first.metadata["task_id"] == "10711001"
    assert first.metadata["language"] == "zh" and first.metadata["scenario"] == "delivery"
    assert first.metadata["num_rubrics"] == 5
    assert "星期六" in first.initial_messages[0]["content"]
    assert len(first.tools) == 20
    assert len({s.id for s in samples}) == 100
    assert adapter.versions()["data:delivery-zh"].endswith("delivery/tasks.json")


def test_load_english_instore_and_filter_ids(data_dir):
    adapter = VitaBenchAdapter()
    samples = adapter.load(
        "instore",
        ids=["10826004", "en-10826247"],
        data_dir=data_dir,
        options={"language": "english"},
    )
    assert [s.id for s in samples] == ["en-10826004", "en-10826247"]
    assert len(samples[0].tools) == 24
    assert "2025-11-06 14:30:00 Thursday" in samples[0].initial_messages[0]["content"]


def test_official_repository_layout_is_accepted(tmp_path, data_dir):
    folder = tmp_path / "data" / "vita" / "domains" / "delivery"
    folder.mkdir(parents=True)
    (folder / "tasks_en.json").symlink_to(data_dir / "delivery" / "tasks_en.json")
    samples = VitaBenchAdapter().load("delivery", data_dir=tmp_path, options={"language": "en"})
    assert len(samples) == 100 and samples[0].id == "en-10711001"


def test_missing_local_data_says_where_it_looked(tmp_path):
    adapter = VitaBenchAdapter()
    with pytest.raises(DataNotFoundError) as error:
        adapter.load("cross", options={"data_dir": str(tmp_path), "language": "en"})
    message = str(error.value)
    assert str(tmp_path / "cross_domain" / "tasks_en.json") in message
    assert str(tmp_path / "data" / "vita" / "domains" / "cross_domain" / "tasks_en.json") in message
    assert f"hf download {HF_DATASET}" in message


def test_offline_without_a_folder_names_the_hub_file_and_how_to_get_it():
    def offline(relative: str) -> Path:
        raise OSError("network is unreachable")

    adapter = VitaBenchAdapter(downloader=offline)
    with pytest.raises(DataNotFoundError) as error:
        adapter.load("ota")
    message = str(error.value)
    assert HF_DATASET in message and "ota/tasks.json" in message
    assert "network is unreachable" in message and "data directory" in message


def test_hub_download_is_used_when_no_folder_is_given(data_dir):
    asked = []

    def from_cache(relative: str) -> Path:
        asked.append(relative)
        return data_dir / relative

    samples = VitaBenchAdapter(downloader=from_cache).load("delivery", options={"language": "en"})
    assert asked == ["delivery/tasks_en.json"] and len(samples) == 100


def test_unknown_language_or_scenario_is_rejected(data_dir):
    with pytest.raises(ValueError, match="language"):
        VitaBenchAdapter().load("delivery", data_dir=data_dir, options={"language": "fr"})
    with pytest.raises(ValueError, match="scenario"):
        VitaBenchAdapter().load("flights", data_dir=data_dir)


def run_oracle(adapter, sample):
    oracle = adapter.oracle(sample)
    services = Services(user_model="scripted", judge_client=OrdersStubJudge(), judge_model="stub")
    trajectory = asyncio.run(PlainStrategy().run(sample, oracle, services, SamplingParams()))
    score = asyncio.run(adapter.score(sample, trajectory, services))
    return oracle, trajectory, score


@pytest.mark.parametrize(
    ("scenario", "language", "task_id"),
    [
        ("delivery", "zh", "10711001"),
        ("delivery", "en", "D0716002"),
        ("instore", "en", "10826004"),
        ("instore", "en", "10826054"),
    ],
)
def test_oracle_with_scripted_user_matches_required_orders(data_dir, scenario, language, task_id):
    adapter = VitaBenchAdapter()
    sample = adapter.load(
        scenario, ids=[task_id], data_dir=data_dir, options={"language": language}
    )[0]
    oracle, trajectory, score = run_oracle(adapter, sample)
    assert oracle.reason is None and oracle.calls
    assert trajectory.termination == "user_stop"
    assert trajectory.tool_errors == 0
    assert score.details["orders_match"]["match"] is True, score.details["orders_match"]
    assert score.reward == 1.0


@pytest.mark.full
@pytest.mark.parametrize(("scenario", "language"), AVAILABLE)
def test_oracle_sweep_every_reachable_task_matches(data_dir, scenario, language):
    adapter = VitaBenchAdapter()
    samples = adapter.load(scenario, data_dir=data_dir, options={"language": language})
    reachable = matched = 0
    for sample in samples:
        oracle, _, score = run_oracle(adapter, sample)
        if oracle.reason is None:
            reachable += 1
            matched += bool(score.details["orders_match"]["match"])
    assert reachable > 0 and matched == reachable


def test_judge_defaults_and_the_envace_preset():
    from harness.config.suites import load_suite

    assert VitaBenchAdapter.default_judge_model == "anthropic/claude-3-7-sonnet-20250219"
    preset = load_suite("vitabench-envace")
    assert (preset.judge_model, preset.trials) == ("openai/Qwen/Qwen3-30B-A3B", 4)
    assert preset.entries[0].subsets == ["delivery", "instore", "ota", "cross"]
