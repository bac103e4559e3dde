"""inputs.jsonl: each sample's input kept once per sample, shared parts once, through
resume and merge; run folders without it still read."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from harness.boundary.sanitise import dumps_safe
from harness.config.suites import Suite, SuiteEntry
from harness.run.runner import Runner
from harness.run.suite_samples import load_suite_samples
from harness.store import inputs
from harness.store.inputs import INPUTS, InputsFile, SampleInput, merge_inputs, read_inputs
from harness.store.run_store import RunStore
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Services
from harness.task.registry import get_adapter, register_adapter
from harness.types import SamplingParams

POLICY = "You are a careful agent. " * 40  # a task set's shared system prompt


@pytest.fixture(autouse=True)
def toy_registered():
    register_adapter("toy", "toy_adapter:ToyAdapter")


def run_toy(root, trials=1, ids=None):
    suite = Suite(name="toy", entries=[SuiteEntry(benchmark="toy", subsets=["easy", "hard"])])
    plan = load_suite_samples(suite, ids=ids)
    store = RunStore(root)
    store.write_manifest({"run_id": root.name, "planned": plan.planned_counts()})
    store.open_for_append()
    try:
        runner = Runner(
            store,
            PlainStrategy(),
            lambda sample: get_adapter("toy").oracle(sample),
            Services(),
            SamplingParams(),
            load_options=plan.load_options,
        )
        asyncio.run(runner.run(plan.samples, trials))
    finally:
        store.close()
    return store


def input_lines(root):
    return [json.loads(line) for line in (root / INPUTS).read_text().splitlines()]


def sample_input(number: int, tools: list) -> SampleInput:
    return SampleInput(
        key=f"b/s/{number}",
        benchmark="b",
        subset="s",
        sample_id=str(number),
        messages=[
            {"role": "system", "content": POLICY},
            {"role": "user", "content": f"question {number}"},
        ],
        tools=tools,
        gold={"expected": [f"call_{number}()"]},
    )


def test_a_run_keeps_each_sample_input_once_whatever_its_trials(tmp_path):
    store = run_toy(tmp_path / "run", trials=3)
    assert len(store.records()) == 8 * 3
    lines = [line for line in input_lines(store.root) if "key" in line]
    assert sorted(line["key"] for line in lines) == sorted(
        f"toy/{s}/{s}-{i}" for s, n in (("easy", 5), ("hard", 3)) for i in range(n)
    )
    kept = read_inputs(store.root)["toy/hard/hard-1"]
    assert kept.messages == [{"role": "user", "content": "Reach 20."}]
    assert kept.tool_names == ["add"]
    assert kept.gold == {"target": 20}


def test_a_shared_system_prompt_and_tool_list_are_written_once(tmp_path):
    tools = [
        {"type": "function", "function": {"name": f"tool_{i}", "description": "x" * 50}}
        for i in range(4)
    ]
    writer = InputsFile(tmp_path / INPUTS)
    writer.open()
    for number in range(5):
        writer.add(sample_input(number, tools))
    writer.close()
    text = (tmp_path / INPUTS).read_text()
    assert text.count("You are a careful agent.") == 40  # one copy of the policy
    assert text.count('"tool_0"') == 1
    inputs = read_inputs(tmp_path)
    assert len(inputs) == 5
    assert inputs["b/s/3"].messages[0] == {"role": "system", "content": POLICY}
    assert inputs["b/s/3"].messages[1]["content"] == "question 3"
    assert inputs["b/s/3"].tool_names == ["tool_0", "tool_1", "tool_2", "tool_3"]
    # Reopened (a resume): what is there is known, nothing is written twice.
    again = InputsFile(tmp_path / INPUTS)
    again.open()
    assert again.has("b/s/4") and not again.has("b/s/5")
    again.add(sample_input(5, tools))
    again.close()
    assert (tmp_path / INPUTS).read_text().count('"tool_0"') == 1
    assert len(read_inputs(tmp_path)) == 6


def test_a_value_shared_by_many_samples_is_digested_once(tmp_path, monkeypatch):
    digested: list[object] = []
    real = inputs.digest_of

    def counting(value):
        digested.append(value)
        return real(value)

    monkeypatch.setattr(inputs, "digest_of", counting)
    tools = [{"type": "function", "function": {"name": "t", "description": "x" * 120}}]
    writer = InputsFile(tmp_path / INPUTS)
    writer.open()
    for number in range(4):
        # Equal values, fresh objects each sample (as an adapter builds them).
        writer.add(sample_input(number, json.loads(json.dumps(tools))))
    writer.close()
    assert len(digested) == 2  # the policy and the tool list, once each
    assert len(read_inputs(tmp_path)) == 4


@pytest.mark.parametrize(
    "value",
    [
        [{"name": "plain", "description": "é" * 120}],
        [{"name": "not a number", "x": float("nan"), "d": "y" * 120}],
        [{"name": "lone surrogate \udc80", "d": "y" * 120}],
        [{"name": "an object", "o": Path("/p"), "d": "y" * 120}],
    ],
)
def test_a_shared_line_is_the_standard_json_of_its_value(tmp_path, value):
    writer = InputsFile(tmp_path / INPUTS)
    writer.open()
    writer.add(sample_input(0, value))
    writer.close()
    lines = (tmp_path / INPUTS).read_text().splitlines()
    digest = inputs.digest_of(value)
    assert dumps_safe({"shared": digest, "value": value}, default=str) in lines


def test_a_torn_last_line_is_skipped_and_closed_off(tmp_path):
    writer = InputsFile(tmp_path / INPUTS)
    writer.open()
    writer.add(sample_input(0, []))
    writer.close()
    with (tmp_path / INPUTS).open("a") as handle:
        handle.write('{"key": "b/s/1", "mess')  # killed mid-write
    writer = InputsFile(tmp_path / INPUTS)
    writer.open()
    writer.add(sample_input(2, []))
    writer.close()
    assert sorted(read_inputs(tmp_path)) == ["b/s/0", "b/s/2"]


def test_a_resumed_old_run_folder_gets_the_inputs_of_its_done_samples(tmp_path):
    root = tmp_path / "run"
    run_toy(root, ids=["easy-0", "hard-0"])
    (root / INPUTS).unlink()  # a run folder written before inputs were kept
    assert read_inputs(root) == {}
    run_toy(root)  # resumed with every sample
    assert len(read_inputs(root)) == 8
    keys = [line["key"] for line in input_lines(root) if "key" in line]
    assert len(keys) == len(set(keys)) == 8


def test_merged_shards_carry_every_input_once(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    run_toy(first, ids=["easy-0", "easy-1", "hard-0"])
    run_toy(second, ids=["easy-1", "hard-2"])  # easy-1 in both (its trials split)
    out = tmp_path / "merged"
    out.mkdir()
    assert merge_inputs([first, second], out) == 4
    assert sorted(read_inputs(out)) == [
        "toy/easy/easy-0",
        "toy/easy/easy-1",
        "toy/hard/hard-0",
        "toy/hard/hard-2",
    ]
    assert (out / INPUTS).read_text().count('"name": "add"') == 1
    # Folders that kept no inputs merge into none.
    for folder in (first, second):
        (folder / INPUTS).unlink()
    assert merge_inputs([first, second], out) == 0
    assert not (out / INPUTS).exists()


def test_a_failed_score_carries_its_adapters_explanation_and_a_passed_one_none(tmp_path):
    from harness.models.base import NullClient
    from harness.run.explanations import with_explanation
    from harness.types import Score, Trajectory

    store = RunStore(tmp_path / "run")
    suite = Suite(name="toy", entries=[SuiteEntry(benchmark="toy", subsets=["hard"])])
    plan = load_suite_samples(suite)
    store.write_manifest({"run_id": "run", "planned": plan.planned_counts()})
    store.open_for_append()
    try:
        runner = Runner(
            store, PlainStrategy(), lambda s: NullClient(), Services(), SamplingParams()
        )
        asyncio.run(runner.run(plan.samples, 1))
    finally:
        store.close()
    scores = [r["score"] for r in store.records().values()]
    assert {s["explanation"] for s in scores} == {
        "the counter reached 0, the target is 10",
        "the counter reached 0, the target is 20",
        "the counter reached 0, the target is 30",
    }
    adapter = get_adapter("toy")
    passed = with_explanation(adapter, plan.samples[0], Trajectory(), Score(True, 1.0))
    assert "explanation" not in passed.to_dict()

    class Broken(type(adapter)):
        def explain_failure(self, sample, trajectory, score):
            raise KeyError("total")

    failed = with_explanation(Broken(), plan.samples[0], Trajectory(), Score(False, 0.0))
    assert failed.explanation == "(no explanation: KeyError: 'total')"
