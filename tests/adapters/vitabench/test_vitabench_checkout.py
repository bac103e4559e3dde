"""VitaBench's own prompts from a checkout of its repository named as the data folder:
the one step a user takes (clone at the pinned commit, --data-dir vitabench=PATH)
gives all task sets and the official agent, user and judge prompts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from harness.adapters.vitabench import VitaBenchAdapter, official
from harness.errors import ConfigError
from harness.task.contract import Services
from harness.types import Trajectory

TEMPLATES = official.PINNED_TEMPLATES


@pytest.fixture(autouse=True)
def fresh_lookup():
    official.official_prompt_dir.cache_clear()
    official.templates_in.cache_clear()
    yield
    official.official_prompt_dir.cache_clear()
    official.templates_in.cache_clear()


def make_clone(shared_data: Path, target: Path, edit: str | None = None) -> Path:
    """The repository's layout (src/vita/prompts, data/vita/domains) made of links to
    the vendored code and the shared task files, which are the commit's own."""
    vendor = shared_data.parent / "vendor" / "vitabench" / official.CHECKOUT_PROMPTS
    prompts = target / official.CHECKOUT_PROMPTS
    prompts.mkdir(parents=True)
    for name in TEMPLATES:
        if name == edit:
            (prompts / name).write_text((vendor / name).read_text() + "\n# edited\n")
        else:
            (prompts / name).symlink_to(vendor / name)
    domains = target / "data" / "vita" / "domains" / "delivery"
    domains.mkdir(parents=True)
    (domains / "tasks_en.json").symlink_to(shared_data / "vitabench" / "delivery" / "tasks_en.json")
    return target


def official_text(shared_data: Path, name: str) -> str:
    path = shared_data.parent / "vendor" / "vitabench" / official.CHECKOUT_PROMPTS / name
    return yaml.safe_load(path.read_text(encoding="utf-8"))["english"]


def test_a_checkout_as_the_data_folder_gives_the_official_prompts(shared_data, tmp_path):
    clone = make_clone(shared_data, tmp_path / "VitaBench")
    adapter = VitaBenchAdapter()
    sample = adapter.load("delivery", data_dir=clone, options={"language": "en"})[0]
    assert sample.metadata["prompt_source"] == "official"
    assert "VitaBench checkout" in sample.metadata["prompt_origin"]
    assert official.CHECKOUT_COMMIT[:7] in sample.metadata["prompt_origin"]
    task = sample.gold
    expected = adapter.load("delivery", data_dir=clone, options={"language": "en"})[0]
    template = official_text(shared_data, "agent_system_prompt.yaml")
    assert template.split("{", 1)[0] in sample.initial_messages[0]["content"]
    assert expected.initial_messages == sample.initial_messages
    assert adapter.versions()["prompts_from"].startswith("VitaBench checkout")
    # The judge of this sample reads the checkout's template too.
    trajectory = Trajectory(messages=[], termination="max_steps")
    score = asyncio.run(adapter.score(sample, trajectory, Services()))
    assert score.details["prompt_source"] == "official"
    assert task.language == "en"


def test_a_checkout_of_another_commit_is_refused_naming_the_file(shared_data, tmp_path):
    clone = make_clone(shared_data, tmp_path / "VitaBench", edit="user_system_prompt.yaml")
    with pytest.raises(ConfigError) as refused:
        VitaBenchAdapter().load("delivery", data_dir=clone, options={"language": "en"})
    text = str(refused.value)
    assert "\n" not in text
    assert "src/vita/prompts/user_system_prompt.yaml differs" in text
    assert "git clone https://github.com/meituan-longcat/VitaBench" in text


def test_a_folder_of_task_files_only_uses_this_projects_wording_and_says_why(shared_data):
    sample = VitaBenchAdapter().load(
        "delivery", data_dir=shared_data / "vitabench", options={"language": "en"}
    )[0]
    if official.official_prompt_dir() is not None:
        pytest.skip("a vita package is installed in this environment")
    assert sample.metadata["prompt_source"] == "harness"
    assert "no VitaBench checkout" in sample.metadata["prompt_origin"]
    assert "prompt_checkout" not in sample.metadata
