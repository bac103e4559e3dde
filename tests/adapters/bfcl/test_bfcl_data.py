"""BFCL data loading, tool schemas and samples."""

from __future__ import annotations

import json

import pytest

from harness.adapters.bfcl import BFCLAdapter
from harness.adapters.bfcl.categories import ALL_CATEGORIES, CATEGORY_SIZES, kind_of, result_folder
from harness.adapters.bfcl.data import load_entries
from harness.adapters.bfcl.tools import official_tools, openai_tools

ADAPTER = BFCLAdapter()
QUICK = ["simple_python", "simple_java", "live_multiple", "multi_turn_miss_func", "memory_rec_sum"]


def test_every_category_is_a_subset():
    assert ADAPTER.subsets() == ALL_CATEGORIES
    assert len(ALL_CATEGORIES) == 22
    assert sum(CATEGORY_SIZES.values()) == 5106


@pytest.mark.parametrize("category", QUICK)
def test_category_sizes_match_the_published_data(category):
    assert len(load_entries(category)) == CATEGORY_SIZES[category]


@pytest.mark.parametrize("category", QUICK + ["parallel", "web_search_base"])
def test_tools_match_the_packages_converter(category):
    for entry in load_entries(category)[:25]:
        assert openai_tools(entry.functions) == official_tools(entry.functions)
        for docs in entry.missed_function.values():
            offered = entry.functions + docs
            assert openai_tools(offered) == official_tools(offered)


def test_tool_conversion_examples():
    entry = load_entries("simple_python", ids=["simple_python_0"])[0]
    before = json.dumps(entry.functions)
    (tool,) = openai_tools(entry.functions)
    assert json.dumps(entry.functions) == before  # docs untouched
    assert tool["type"] == "function"
    assert tool["function"]["parameters"]["type"] == "object"
    doc = {
        "name": "geo.distance",
        "description": "d",
        "parameters": {
            "type": "dict",
            "properties": {
                "scale": {"type": "float", "description": "s."},
                "points": {"type": "tuple", "items": {"type": "float"}, "description": "p."},
                "opts": {"type": "dict", "properties": {"x": {"type": "any"}}, "description": "o."},
                "odd": {"type": "weird", "description": "w."},
            },
            "required": [],
        },
    }
    (tool,) = openai_tools([doc])
    props = tool["function"]["parameters"]["properties"]
    assert tool["function"]["name"] == "geo_distance"
    assert props["scale"] == {
        "type": "number",
        "format": "float",
        "description": "s. This is a float type value.",
    }
    assert props["points"]["type"] == "array" and props["points"]["items"]["type"] == "number"
    assert props["opts"]["properties"]["x"]["type"] == "string"
    assert props["odd"]["type"] == "string"
    assert openai_tools([doc]) == official_tools([doc])


def test_entries_carry_gold_and_docs():
    java = load_entries("simple_java", ids=["simple_java_0"])[0]
    assert java.checker_functions[0]["parameters"]["properties"]["controller"]["type"] == "any"
    assert java.functions[0]["parameters"]["properties"]["controller"]["type"] == "string"
    assert "Java 8 SDK syntax" in java.functions[0]["description"]
    miss = load_entries("multi_turn_miss_func", ids=["multi_turn_miss_func_0"])[0]
    assert list(miss.missed_function) == [3]
    assert miss.turns[3] == []
    assert miss.missed_function[3][0]["name"] == "sort"
    assert "sort" not in {doc["name"] for doc in miss.functions}
    assert len(miss.ground_truth) == len(miss.turns)
    memory = load_entries("memory_rec_sum", ids=["memory_rec_sum_154-notetaker-24"])[0]
    assert [p.id for p in memory.prerequisites][0] == "memory_rec_sum_prereq_32-notetaker-0"
    assert memory.ground_truth and memory.involved_classes == ["MemoryAPI_rec_sum"]


def test_samples_and_options():
    single = ADAPTER.load("simple_python", ids=["simple_python_3"])
    assert [s.id for s in single] == ["simple_python_3"]
    sample = single[0]
    assert sample.benchmark == "bfcl" and sample.subset == "simple_python"
    assert sample.metadata == {"mode": "fc", "kind": "ast"}
    assert sample.initial_messages == sample.gold.turns[0]
    multi = ADAPTER.load("multi_turn_base", ids=["multi_turn_base_5"])[0]
    assert multi.initial_messages == [] and multi.limits.max_steps is None
    assert ADAPTER.load("simple_python", options={"mode": "prompt"})[0].metadata["mode"] == "prompt"
    with pytest.raises(ValueError):
        ADAPTER.load("simple_python", options={"mode": "xml"})
    with pytest.raises(ValueError):
        ADAPTER.load("format_sensitivity")
    assert ADAPTER.versions()["bfcl-eval"] == "2026.3.23"


def test_result_folders():
    assert result_folder("simple_python") == "non_live"
    assert result_folder("live_relevance") == "live"
    assert result_folder("multi_turn_base") == "multi_turn"
    assert result_folder("web_search_base") == "agentic"
    assert result_folder("memory_rec_sum") == "agentic/memory/rec_sum"
    assert {kind_of(c).value for c in ALL_CATEGORIES} == {
        "ast",
        "irrelevance",
        "relevance",
        "multi_turn",
        "memory",
        "web_search",
    }


@pytest.mark.parametrize("category", ["simple_java", "simple_javascript", "live_simple"])
def test_offered_docs_equal_the_official_hinted_load(category):
    from harness.adapters.bfcl import official

    utils = official.module("bfcl_eval.utils")
    hinted = {raw["id"]: raw["function"] for raw in utils.load_dataset_entry(category)}
    for entry in load_entries(category):
        assert entry.functions == hinted[entry.id]
        assert len(entry.turns) == 1


@pytest.mark.parametrize(
    "category", ["simple_python", "live_multiple", "multi_turn_miss_func", "memory_kv"]
)
def test_a_partial_load_equals_the_same_entries_of_a_whole_load(category):
    whole = load_entries(category)
    assert load_entries(category, limit=3) == whole[:3]
    picked = [whole[-1].id, whole[len(whole) // 2].id]
    # File order, whatever order the ids come in.
    assert load_entries(category, ids=picked) == [whole[len(whole) // 2], whole[-1]]
    assert load_entries(category, ids=picked, limit=1) == [whole[len(whole) // 2]]


def test_a_partial_memory_load_keeps_the_prerequisite_chain():
    (first,) = load_entries("memory_kv", limit=1)
    assert first.prerequisites  # the conversations the question depends on
    assert first.prerequisites == load_entries("memory_kv")[0].prerequisites


def test_the_adapter_loads_only_the_first_samples_asked_for():
    samples = ADAPTER.load("multi_turn_base", limit=2)
    assert [s.id for s in samples] == [s.id for s in ADAPTER.load("multi_turn_base")[:2]]
    assert samples[0].tools == ADAPTER.load("multi_turn_base")[0].tools
