"""FinMCP-Bench loading, sample ids, subsets and reconstructed tool schemas."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from harness.adapters.finmcp import FinMCPAdapter
from harness.adapters.finmcp import data as finmcp_data
from harness.adapters.finmcp.data import item_id
from harness.adapters.finmcp.metrics import tool_names
from harness.adapters.finmcp.schemas import load_schema_file, merge_tools, reconstruct_tools
from harness.errors import ConfigError


@pytest.fixture(scope="module")
def finmcp_dir(shared_data: Path) -> Path:
    return shared_data / "finmcp"


@pytest.fixture(scope="module")
def demo_items(finmcp_dir: Path) -> list[dict]:
    return json.loads((finmcp_dir / "demo_infer.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def part_items(finmcp_dir: Path) -> list[dict]:
    return json.loads((finmcp_dir / "benchmark_single_tool_part.json").read_text(encoding="utf-8"))


def write(path: Path, items: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    return path


def test_shared_folder_subsets_are_derived_from_the_task_field(finmcp_dir):
    adapter = FinMCPAdapter()
    counts = {
        s: len(adapter.load(s, data_dir=finmcp_dir))
        for s in ("single_tool", "multi_tool", "multi_turn", "all")
    }
    # 73 single-step items in the part file + 6 demo items, demo item 1 being one of the 73.
    assert counts == {"single_tool": 74, "multi_tool": 2, "multi_turn": 2, "all": 78}
    assert adapter.subsets() == ["single_tool", "multi_tool", "multi_turn"]
    samples = adapter.load("multi_turn", data_dir=finmcp_dir)
    assert {s.id for s in samples} == {"602", "603"}
    assert all(s.metadata["task"] == "multi_turn" for s in samples)


def test_ids_are_the_id_field_or_a_content_hash_independent_of_position(tmp_path, part_items):
    adapter = FinMCPAdapter()
    original = [s.id for s in adapter.load("all", data_dir=write(tmp_path / "a.json", part_items))]
    shuffled_items = list(part_items)
    random.Random(7).shuffle(shuffled_items)
    shuffled = [
        s.id
        for s in FinMCPAdapter().load("all", data_dir=write(tmp_path / "b.json", shuffled_items))
    ]
    assert sorted(original) == sorted(shuffled)
    assert len(set(original)) == len(original) == 73
    assert all(i.startswith("h") and len(i) == 17 for i in original)
    assert item_id({"id": 201, "messages": []}) == "201"


def test_ids_filter_and_options_data_dir(finmcp_dir):
    adapter = FinMCPAdapter()
    samples = adapter.load("all", ids=["201", "603", "nope"], options={"data_dir": str(finmcp_dir)})
    assert [s.id for s in samples] == ["201", "603"]


def test_official_layout_reads_each_subset_from_its_file(tmp_path, part_items, demo_items):
    multi_turn = [item for item in demo_items if item["task"] == "multi turn"]
    write(tmp_path / "test" / "benchmark_single_tool.json", part_items[:5])
    write(tmp_path / "test" / "benchmark_multi_turn.json", multi_turn)
    write(tmp_path / "test" / "benchmark_all.json", part_items[:5] + demo_items)
    adapter = FinMCPAdapter()
    assert len(adapter.load("single_tool", data_dir=tmp_path)) == 5  # from its file
    assert len(adapter.load("multi_turn", data_dir=tmp_path)) == 2
    # No multi_tool file: derived from the task field of benchmark_all.json.
    assert {s.id for s in adapter.load("multi_tool", data_dir=tmp_path)} == {"201", "202"}
    assert len(adapter.load("all", data_dir=tmp_path)) == 11
    # The tool list comes from the whole pool, whatever the subset.
    single = adapter.load("single_tool", data_dir=tmp_path)[0]
    names = {t["function"]["name"] for t in single.tools}
    assert {"GetStrategyAssetClassAnalysis", "BatchGetFundTradeRules"} <= names
    versions = adapter.versions()
    assert "file:benchmark_all.json" in versions and versions["dataset"] == "DianJin/FinMCP-Bench"


def test_json_lines_files_are_read_too(tmp_path, demo_items):
    lines = "\n".join(json.dumps(item, ensure_ascii=False) for item in demo_items)
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "benchmark_all.jsonl").write_text(lines + "\n", encoding="utf-8")
    samples = FinMCPAdapter().load("multi_tool", data_dir=tmp_path)
    assert [s.id for s in samples] == ["201", "202"]


def test_missing_data_gives_one_clear_error(tmp_path, monkeypatch):
    def offline():
        raise OSError("Name or service not known")

    monkeypatch.setattr(finmcp_data, "download_from_hub", offline)
    missing = tmp_path / "nowhere"
    with pytest.raises(ConfigError) as error:
        FinMCPAdapter().load("all", data_dir=missing)
    message = str(error.value)
    assert str(missing) in message and "does not exist" in message
    assert "DianJin/FinMCP-Bench" in message and "Name or service not known" in message
    assert "huggingface-cli download DianJin/FinMCP-Bench --repo-type dataset" in message
    # An empty folder is reported as such.
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no FinMCP-Bench item files"):
        FinMCPAdapter().load("all", data_dir=tmp_path / "empty")


def test_bad_subset_and_option_are_config_errors(finmcp_dir):
    with pytest.raises(ConfigError, match="unknown subset"):
        FinMCPAdapter().load("multi_step", data_dir=finmcp_dir)
    with pytest.raises(ConfigError, match="unknown option"):
        FinMCPAdapter().load("all", data_dir=finmcp_dir, options={"mode": "fc"})


def test_metadata_carries_the_official_breakdown_keys(finmcp_dir):
    samples = {s.id: s for s in FinMCPAdapter().load("all", data_dir=finmcp_dir)}
    assert samples["202"].metadata == {
        "task": "multi_step",
        "scenario": "账户与服务管理",
        "scenery": "账户与服务管理-报告生成-投资报告",
        "difficulty": "medium",
        "error_flag": False,
        "gold_tool_count": 6,
        "gold_turns": 1,
        "malformed_arguments": "drop",
    }
    # The official script takes the level-1 scenario from `scenery`, not `first-class`.
    assert samples["602"].metadata["scenario"] == "PlatformTechnicalSupport"


def gold_call(name: str, arguments: dict, call_id: str) -> dict:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def item_with_calls(*calls: tuple[str, dict], tool_list=None) -> dict:
    messages: list[dict] = [{"role": "user", "content": "q"}]
    for n, (name, arguments) in enumerate(calls):
        messages.append({"role": "assistant", "tool_calls": [gold_call(name, arguments, f"c{n}")]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": f"out{n}"})
    return {"task": "multi step", "tool_list": tool_list or [], "messages": messages}


def test_reconstructed_schema_unions_names_types_and_required():
    items = [
        item_with_calls(("Search", {"keyword": "a", "size": 10})),
        item_with_calls(("Search", {"keyword": "b", "size": 2.5, "codes": ["x"]})),
        item_with_calls(("Search", {"keyword": "c", "flag": True, "codes": []})),
        item_with_calls(("Brief", {}), tool_list=[["Brief"], ["OnlyListed"]]),
    ]
    tools = {t["function"]["name"]: t["function"] for t in reconstruct_tools(items)}
    assert set(tools) == {"Brief", "OnlyListed", "Search"}
    search = tools["Search"]["parameters"]
    assert search["properties"] == {
        "codes": {"type": "array", "items": {"type": "string"}},
        "flag": {"type": "boolean"},
        "keyword": {"type": "string"},
        "size": {"type": "number"},  # integer and number merge
    }
    assert search["required"] == ["keyword"]  # the only key in every call
    assert tools["OnlyListed"]["parameters"] == {"type": "object", "properties": {}}
    assert "required" not in tools["Brief"]["parameters"]


def test_shared_data_schema_covers_every_gold_tool(finmcp_dir, demo_items, part_items):
    tools = FinMCPAdapter().load("all", data_dir=finmcp_dir)[0].tools
    names = {t["function"]["name"] for t in tools}
    gold = {n for item in demo_items + part_items for n in tool_names(item["messages"])}
    assert gold <= names
    by_name = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    assert by_name["SearchFunds"]["properties"]["size"] == {"type": "integer"}
    assert by_name["BatchGetFundsDetail"]["properties"]["fundCodes"]["type"] == "array"


def test_schema_file_overrides_by_name_in_three_formats(tmp_path, finmcp_dir):
    supplied = {
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "SearchFunds",
                    "description": "official",
                    "parameters": {"type": "object", "properties": {"keyword": {"type": "string"}}},
                },
            },
            {"name": "GetUserAssetView", "description": "mcp", "inputSchema": {"type": "object"}},
            {"name": "NewTool", "description": "bare", "parameters": {"type": "object"}},
        ]
    }
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(supplied), encoding="utf-8")
    samples = FinMCPAdapter().load("all", data_dir=finmcp_dir, options={"tool_schemas": str(path)})
    tools = {t["function"]["name"]: t["function"] for t in samples[0].tools}
    assert tools["SearchFunds"]["description"] == "official"
    assert tools["GetUserAssetView"]["parameters"] == {"type": "object"}
    assert "NewTool" in tools and "BatchGetFundsDetail" in tools  # reconstructed ones kept
    assert len([n for n in tools if n == "SearchFunds"]) == 1
    bad = tmp_path / "bad.json"
    bad.write_text('{"tools": [{"description": "no name"}]}', encoding="utf-8")
    with pytest.raises(ConfigError, match="has no name"):
        load_schema_file(bad)
    assert merge_tools([], []) == []


def test_system_policy_message_is_kept_in_every_turn_history(tmp_path, demo_items):
    item = json.loads(json.dumps(next(i for i in demo_items if i["id"] == 603)))
    item["messages"].insert(0, {"role": "system", "content": "Fin agent policy"})
    sample = FinMCPAdapter().load("all", data_dir=write(tmp_path / "mt.json", [item]))[0]
    assert sample.initial_messages == []
    environment = sample.make_environment()
    user = sample.make_user(environment, None)
    turns = []
    while (turn := asyncio.run(user.next_turn([]))) is not None:
        turns.append(turn)
    assert len(turns) == 3  # the trailing "###STOP###" user message is a turn too
    assert all(
        turn.history[0] == {"role": "system", "content": "Fin agent policy"} for turn in turns
    )
    assert turns[0].history == [{"role": "system", "content": "Fin agent policy"}]
    assert turns[2].messages == [item["messages"][-1]]
    assert turns[2].history == item["messages"][:-1]
