"""Merging shards: 1/3 + 2/3 + 3/3 equals the unsharded run; overlaps, gaps and strangers refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fake_llm_server import toy_agent
from support import without_timing

from harness.cli import main
from harness.store.inputs import read_inputs
from harness.store.run_store import read_records
from harness.testing.fake_server import FakeServer


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """An unsharded run and its three shards, against the same fake agent."""
    root = tmp_path_factory.mktemp("merge")
    patch = pytest.MonkeyPatch()
    patch.setenv("HARNESS_ADAPTERS", "toy=toy_adapter:ToyAdapter")
    suite = root / "toy.yaml"
    suite.write_text("name: toy\nentries:\n  - benchmark: toy\n    subsets: [easy, hard]\n")
    with FakeServer(handler=toy_agent(0.6)) as server:

        def run(out: Path, *extra: str) -> None:
            argv = ["run", "--suite", str(suite), "--model", "openai/fake-model"]
            argv += ["--api-base", server.url, "--trials", "3", "--no-cache", "--quiet"]
            assert main([*argv, "--out", str(out), *extra]) == 0

        run(root / "whole")
        for index in (1, 2, 3):
            run(root / f"shard{index}", "--shard", f"{index}/3")
        run(root / "hot", "--shard", "2/3", "--temperature", "0.7")
    yield root
    patch.undo()


def merge(*args: str) -> int:
    return main(["merge", *args, "--quiet"])


def shards(root: Path) -> list[str]:
    return [str(root / f"shard{i}") for i in (1, 2, 3)]


def test_three_shards_merged_equal_the_unsharded_run(runs, tmp_path):
    out = tmp_path / "merged"
    assert merge(*shards(runs), "--out", str(out)) == 0
    whole = read_records(runs / "whole" / "samples.jsonl").latest
    merged = read_records(out / "samples.jsonl").latest
    assert len(merged) == 8 * 3 and set(merged) == set(whole)
    assert {k: without_timing(r) for k, r in merged.items()} == {
        k: without_timing(r) for k, r in whole.items()
    }
    assert 0 < sum(r["score"]["passed"] for r in merged.values()) < 24  # a real mix
    whole_scores = json.loads((runs / "whole" / "scores.json").read_text())
    merged_scores = json.loads((out / "scores.json").read_text())
    assert merged_scores["benchmarks"] == whole_scores["benchmarks"]
    assert merged_scores["records"] == whole_scores["records"]
    assert merged_scores["missing_samples"] == {}
    # Every sample's input, once, as the unsharded run kept it.
    assert read_inputs(out) == read_inputs(runs / "whole")
    assert len(read_inputs(out)) == 8
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["shard"] == "merged from 1/3, 2/3, 3/3"
    assert manifest["planned"] == manifest["planned_full"] == {"toy": {"easy": 5, "hard": 3}}
    assert [s["shard"] for s in manifest["shards"]] == ["1/3", "2/3", "3/3"]
    # A merged folder is an ordinary run folder; merging again replaces it.
    assert main(["leaderboard", str(out), "--format", "csv"]) == 0
    assert merge(*shards(runs), "--out", str(out)) == 0


def test_a_missing_shard_is_an_error_naming_it(runs, tmp_path, capsys):
    out = tmp_path / "merged"
    present = [shards(runs)[0], shards(runs)[2]]
    assert merge(*present, "--out", str(out)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "no folder of shard 2/3" in err and "--allow-gaps" in err
    assert not (out / "samples.jsonl").exists()
    assert merge(*present, "--out", str(out), "--allow-gaps") == 0
    assert "gaps (merged with --allow-gaps)" in capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["merge_gaps"]["pairs"] > 0 and "2/3" in manifest["merge_gaps"]["what"]
    records = read_records(out / "samples.jsonl").latest
    assert manifest["merge_gaps"]["pairs"] + len(records) == 8 * 3


def test_a_missing_trial_is_named_exactly(runs, tmp_path, capsys):
    partial = tmp_path / "shard1"
    shutil.copytree(runs / "shard1", partial)
    lines = (partial / "samples.jsonl").read_text().splitlines()
    every_key = set(read_records(runs / "whole" / "samples.jsonl").latest)
    # A trial whose sample keeps other trials in the shards: it can be named exactly.
    index, dropped = next(
        (i, json.loads(line)["key"])
        for i, line in enumerate(lines)
        if any(
            k.rsplit("#", 1)[0] == json.loads(line)["key"].rsplit("#", 1)[0]
            and k != json.loads(line)["key"]
            for k in every_key
        )
    )
    (partial / "samples.jsonl").write_text("\n".join(lines[:index] + lines[index + 1 :]) + "\n")
    assert merge(str(partial), *shards(runs)[1:], "--out", str(tmp_path / "m")) == 2
    err = capsys.readouterr().err
    assert f"missing {dropped}" in err and "the shards miss 1 planned" in err


def test_overlapping_shards_are_refused(runs, tmp_path, capsys):
    twin = tmp_path / "twin"
    shutil.copytree(runs / "shard1", twin)
    assert merge(*shards(runs), str(twin), "--out", str(tmp_path / "m")) == 2
    assert "is in two shards" in capsys.readouterr().err


def test_a_record_in_the_wrong_shard_is_refused(runs, tmp_path, capsys):
    bad = tmp_path / "shard1"
    shutil.copytree(runs / "shard1", bad)
    stranger = (runs / "shard2" / "samples.jsonl").read_text().splitlines()[0]
    with (bad / "samples.jsonl").open("a") as handle:
        handle.write(stranger + "\n")
    assert merge(str(bad), *shards(runs)[1:], "--out", str(tmp_path / "m")) == 2
    assert "holds records of another shard than its 1/3" in capsys.readouterr().err


def test_shards_of_different_runs_are_refused(runs, tmp_path, capsys):
    mixed = [shards(runs)[0], str(runs / "hot"), shards(runs)[2]]
    assert merge(*mixed, "--out", str(tmp_path / "m")) == 2
    err = capsys.readouterr().err
    assert "is not a shard of the same run" in err and "sampling" in err


def test_merging_into_an_existing_run_is_refused(runs, capsys):
    assert merge(*shards(runs), "--out", str(runs / "whole")) == 2
    assert "not a merge" in capsys.readouterr().err


def test_merged_shards_add_up_their_server_time(runs, tmp_path):
    # Each shard's own server held its GPUs: the merged run's GPU-seconds are the sum.
    copies = []
    for index, root in enumerate(shards(runs), 1):
        copy = tmp_path / f"shard{index}"
        shutil.copytree(root, copy)
        manifest = json.loads((copy / "manifest.json").read_text())
        manifest["server_spans"] = [{"kind": "vllm", "seconds": 10.0 * index, "gpus": 2}]
        (copy / "manifest.json").write_text(json.dumps(manifest))
        copies.append(str(copy))
    out = tmp_path / "merged"
    assert merge(*copies, "--out", str(out)) == 0
    spans = json.loads((out / "manifest.json").read_text())["server_spans"]
    assert [s["seconds"] for s in spans] == [10.0, 20.0, 30.0]
