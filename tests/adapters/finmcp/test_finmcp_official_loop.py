"""FinMCP end to end against the official pipeline (a faithful test-only reference).

One deterministic scripted model answers both the harness's episode and the
reference's official inference loop (finmcp_official_reference.py). Its replies
depend only on the gold history it is given and on how many replies it already
made in the turn, so both pipelines see the same replies. It makes every kind of
mistake (wrong, missing and extra tools, text-only answers, runaway loops past the
per-turn cap) and several kinds of malformed tool-call arguments, some of which
the official loop drops the item for and some it does not. The harness's
aggregate must equal the official evaluation in every cell, and the items it
reports as dropped must be exactly the official loop's error records.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pytest
from finmcp_official_reference import Reply, StreamedCall, evaluate, infer_all

from harness.adapters.finmcp import FinMCPAdapter
from harness.adapters.finmcp.data import load_source
from harness.adapters.finmcp.gold import gold_turns
from harness.models.base import ModelClient
from harness.strategies.plain import PlainStrategy
from harness.task.contract import RecordView, Sample, Services
from harness.types import AssistantTurn, SamplingParams, ToolCall, Trajectory

# Parity with the official evaluator: marked slow, so in `make test-slow` (and CI).
pytestmark = pytest.mark.slow

# Items (by position) that get a malformed reply, and whether the official loop
# drops them for it.
MALFORMED = {
    3: ("invalid_json", True),
    9: ("empty_arguments", True),
    15: ("whitespace_arguments", True),
    21: ("no_name", True),
    27: ("invalid_json_second_reply", True),
    33: ("not_an_object", False),
    39: ("invalid_json_after_cap", False),
    45: ("empty_arguments_after_cap", True),
}
PLAIN_KINDS = ("gold", "wrong_tool", "extra_call", "text_only", "first_call_only", "runaway")
OTHER_TOOL = "GetFundsBasicInfo"


def _key(prefix: list[dict]) -> str:
    text = json.dumps(prefix, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _calls(message: dict, tag: str) -> list[StreamedCall]:
    return [
        StreamedCall(f"{tag}_{i}", c["function"]["name"], c["function"]["arguments"])
        for i, c in enumerate(message.get("tool_calls") or [])
    ]


def _first_call(replies: list[dict], tag: str) -> StreamedCall:
    for reply in replies:
        if reply.get("tool_calls"):
            return _calls(reply, tag)[0]
    return StreamedCall(f"{tag}_0", OTHER_TOOL, '{"fundCode": "000001"}')


def _script(kind: str, replies: list[dict], tag: str) -> list[Reply]:
    """The scripted replies of one turn; after them the model answers with text."""
    gold = [Reply(r.get("content"), _calls(r, f"{tag}_{n}")) for n, r in enumerate(replies)]
    gold = [r for r in gold if r.calls]
    first = _first_call(replies, tag)

    def bad(arguments: str, name: str | None = None) -> Reply:
        return Reply(
            None, [StreamedCall(f"{tag}_bad", first.name if name is None else name, arguments)]
        )

    loop = [
        Reply(None, [StreamedCall(f"{tag}_l{n}", first.name, first.arguments)]) for n in range(21)
    ]
    scripts = {
        "gold": gold,
        "wrong_tool": [Reply(None, [StreamedCall(first.id, OTHER_TOOL, first.arguments)])]
        + gold[1:],
        "extra_call": gold + [Reply(None, [first])],
        "text_only": [],
        "first_call_only": [Reply(None, [first])],
        "runaway": loop,  # 21 calls run, the 22nd reply is kept unexecuted
        "invalid_json": [bad('{"fundCode": ')],
        "empty_arguments": [bad("")],
        "whitespace_arguments": [bad("  ")],
        "no_name": [bad(first.arguments, name="")],
        "invalid_json_second_reply": [Reply(None, [first]), bad("{fundCode: 1}")],
        "not_an_object": [bad("[1, 2]")] + gold,
        "invalid_json_after_cap": loop + [bad("{")],
        "empty_arguments_after_cap": loop + [bad("")],
    }
    return scripts[kind]


def build_plans(items: list[dict]) -> dict[str, list[Reply]]:
    """Scripted replies keyed by the gold history of each turn."""
    plans = {}
    for position, item in enumerate(items):
        kind = MALFORMED.get(position, (PLAIN_KINDS[position % len(PLAIN_KINDS)], False))[0]
        messages = item["messages"]
        for t, turn in enumerate(gold_turns(messages)):
            prefix = [*turn.history, turn.user_message]
            # Malformed replies only in the first turn; later turns play the gold.
            turn_kind = kind if t == 0 or kind in PLAIN_KINDS else "gold"
            plans[_key(prefix)] = _script(turn_kind, turn.replies, f"i{position}t{t}")
    return plans


def policy_for(plans: dict[str, list[Reply]]):
    def policy(messages: list[dict]) -> Reply:
        last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
        done = sum(1 for m in messages[last_user + 1 :] if m.get("role") == "assistant")
        script = plans[_key(messages[: last_user + 1])]
        return script[done] if done < len(script) else Reply("Here is the answer.")

    return policy


class PolicyClient(ModelClient):
    """The scripted policy behind the harness's model interface (native tool calls)."""

    name = "scripted-policy"

    def __init__(self, policy):
        self.policy = policy

    async def complete(self, messages, tools, params) -> AssistantTurn:
        reply = self.policy(messages)
        calls = [
            ToolCall.from_openai(
                {"id": c.id, "function": {"name": c.name, "arguments": c.arguments}}
            )
            for c in reply.calls
        ]
        return AssistantTurn(
            content=reply.content, tool_calls=calls, finish_reason="tool_calls" if calls else "stop"
        )


def official_execute(batch: list[tuple[str, object]]) -> list[str]:
    # Only tool names are scored and the policy ignores tool outputs.
    return [f"output of {name}" for name, _ in batch]


def run_harness(adapter: FinMCPAdapter, samples: list[Sample], policy) -> list[RecordView]:
    records = []
    for sample in samples:
        trajectory = asyncio.run(
            PlainStrategy().run(sample, PolicyClient(policy), Services(), SamplingParams())
        )
        stored = Trajectory.from_dict(json.loads(json.dumps(trajectory.to_dict())))
        score = asyncio.run(adapter.score(sample, stored, Services()))
        records.append(RecordView(sample.id, sample.subset, 0, "ok", score, sample.metadata))
    return records


OURS = {
    "macro_Precision": "macro_precision",
    "macro_Recall": "macro_recall",
    "macro_F1": "macro_f1",
    "micro_Precision": "micro_precision",
    "micro_Recall": "micro_recall",
    "micro_F1": "micro_f1",
    "N": "n",
    "consist_mean": "exact_match_ordered",
}
GROUP_PREFIX = {"level1": "scenario", "difficulty": "difficulty", "task": "task"}


def compare_cells(official: dict, subsets: dict) -> tuple[int, list[str]]:
    """Every official cell against ours rounded as the official script rounds."""
    cells, differences = 0, []
    tables = [("all", official["overall"])] + [
        (f"{GROUP_PREFIX[group]}:{key}", metrics)
        for group in GROUP_PREFIX
        for key, metrics in official[group].items()
    ]
    for name, metrics in tables:
        ours = subsets[name].metrics
        for official_key, our_key in OURS.items():
            cells += 1
            value = ours[our_key] if official_key == "N" else round(ours[our_key], 4)
            if value != metrics[official_key]:
                differences.append(
                    f"{name} {official_key}: ours {value}, official {metrics[official_key]}"
                )
    return cells, differences


@pytest.fixture(scope="module")
def setup(shared_data: Path):
    folder = shared_data / "finmcp"
    items = load_source(folder).subsets["all"]
    adapter = FinMCPAdapter()
    samples = adapter.load("all", data_dir=folder)
    assert len(items) == len(samples) >= 70
    plans = build_plans(items)
    return items, adapter, samples, policy_for(plans)


def test_metrics_equal_the_official_loop_and_evaluation_exactly(setup):
    items, adapter, samples, policy = setup
    answers = infer_all(items, policy, official_execute)
    official = evaluate(answers)
    official_dropped = {samples[i].id for i, a in enumerate(answers) if a.get("error")}
    expected = {samples[p].id for p, (_, dropped) in MALFORMED.items() if dropped}
    assert official_dropped == expected and len(expected) >= 4

    result = adapter.aggregate(run_harness(adapter, samples, policy))
    cells, differences = compare_cells(official, result.subsets)
    assert differences == []
    assert cells >= 8 * 5
    assert result.subsets["dropped_items"].n_records == len(official_dropped)
    assert result.headline["n_dropped_malformed"] == len(official_dropped)
    # Sanity: the mistakes are real (neither perfect nor empty).
    assert 0.2 < official["overall"]["micro_F1"] < 0.95


def test_counting_keeps_the_items_the_official_loop_drops(setup, shared_data):
    items, _, _, policy = setup
    adapter = FinMCPAdapter()
    samples = adapter.load(
        "all", data_dir=shared_data / "finmcp", options={"malformed_arguments": "count"}
    )
    result = adapter.aggregate(run_harness(adapter, samples, policy))
    would_drop = sum(dropped for _, dropped in MALFORMED.values())
    assert result.subsets["all"].n_records == len(samples)
    assert "dropped_items" not in result.subsets
    assert result.headline["n_malformed_counted"] == would_drop
    assert result.headline["n_dropped_malformed"] == 0
    official = evaluate(infer_all(items, policy, official_execute))
    assert result.headline["micro_f1"] != pytest.approx(official["overall"]["micro_F1"], abs=1e-4)


def without_labels(items: list[dict]) -> list[dict]:
    """The items with labels taken away, as the official evaluation reads them: no
    scenery, no diff_level, a diff_level without level (skipped there), no task
    (the official task "any": not skipped)."""
    changed = json.loads(json.dumps(items))
    del changed[1]["scenery"]
    del changed[2]["diff_level"]
    del changed[4]["diff_level"]["level"]
    del changed[5]["task"]
    del changed[9]["scenery"]  # also dropped for malformed arguments: dropped first
    return changed


def test_items_the_official_evaluation_cannot_label_are_skipped_as_there(setup, tmp_path):
    items, _, _, _ = setup
    changed = without_labels(items)
    data = tmp_path / "items.json"
    data.write_text(json.dumps(changed, ensure_ascii=False), encoding="utf-8")
    adapter = FinMCPAdapter()
    samples = adapter.load("all", data_dir=data)
    policy = policy_for(build_plans(changed))
    official = evaluate(infer_all(changed, policy, official_execute))
    assert official["overall"]["N"] == len(changed) - 6 - 3  # 6 dropped, 3 skipped
    assert "any" in official["task"]

    result = adapter.aggregate(run_harness(adapter, samples, policy))
    cells, differences = compare_cells(official, result.subsets)
    assert differences == [] and cells >= 8 * 5
    assert result.subsets["skipped_items"].n_records == 3
    assert result.headline["n_skipped_unlabelled"] == 3
    assert "scenario:unknown" not in result.subsets and "difficulty:unknown" not in result.subsets
    assert any("official evaluation skips them" in note for note in result.notes)

    # The previous rule, as a labelled option: scored under "unknown".
    counted = FinMCPAdapter()
    loaded = counted.load("all", data_dir=data, options={"missing_labels": "unknown"})
    other = counted.aggregate(run_harness(counted, loaded, policy))
    assert "skipped_items" not in other.subsets and "n_skipped_unlabelled" not in other.headline
    assert other.subsets["all"].n_records == result.subsets["all"].n_records + 3
    assert other.subsets["scenario:unknown"].n_records == 1
    assert other.subsets["difficulty:unknown"].n_records == 2
    assert any(note.startswith("NOT the official protocol: missing_labels") for note in other.notes)
    assert counted.versions()["missing_labels"] == "unknown"
