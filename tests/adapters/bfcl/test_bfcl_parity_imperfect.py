"""An imperfect model through the real network path, in FC and prompt mode: our BFCL
scores equal the official evaluator's on the exported results, category by category."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from support import REPO

from harness.adapters.bfcl import BFCLAdapter
from harness.cli import main
from harness.models.calls import format_python_call
from harness.store.run_store import read_records
from harness.testing.fake_server import FakeServer, Reply
from harness.types import SamplingParams

sys.path.insert(0, str(REPO / "scripts"))
from bfcl_official_parity import run_official  # noqa: E402

# Parity with the official evaluator: marked slow, so in `make test-slow` (and CI).
pytestmark = pytest.mark.slow

CATEGORIES = [
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "irrelevance",
    "live_simple",
    "live_irrelevance",
]
PER_CATEGORY = 6


def gold_replies() -> dict[str, list]:
    """First user message text -> the oracle's tool calls for that sample."""
    adapter = BFCLAdapter()
    table = {}
    for category in CATEGORIES:
        for sample in adapter.load(category)[:PER_CATEGORY]:
            turn = asyncio.run(
                adapter.oracle(sample).complete(
                    sample.initial_messages, sample.tools, SamplingParams()
                )
            )
            question = sample.initial_messages[-1]["content"]
            table[question] = turn.tool_calls
    return table


def imperfect_handler(gold: dict[str, list], prompt_mode: bool):
    """Right on every other question; otherwise wrong arguments, or no call at all."""

    def reply(request: dict) -> Reply:
        question = request["messages"][-1]["content"]
        calls = gold.get(question)
        if calls is None:  # prompt mode puts the question after BFCL's system prompt
            calls = next((c for q, c in gold.items() if q in question), [])
        index = sorted(gold).index(next(q for q in gold if gold[q] is calls))
        if index % 2 == 1:
            if index % 4 == 1 or not calls:
                return Reply.text("I am not sure which function to use.")
            calls = [type(c)(c.id, c.name, {k: "wrong" for k in c.arguments}) for c in calls]
        if prompt_mode:
            if not calls:
                return Reply.text("None of the functions can be used.")
            text = "[" + ", ".join(format_python_call(c.name, c.arguments) for c in calls) + "]"
            return Reply.text(text)
        if not calls:
            return Reply.text("None of the functions can be used.")
        return Reply.calls(*[(c.name.replace(".", "_"), c.arguments) for c in calls])

    return reply


@pytest.mark.parametrize("prompt_mode", [False, True], ids=["fc", "prompt"])
def test_imperfect_model_scores_equal_the_official_evaluator(prompt_mode, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    suite = tmp_path / "bfcl-part.yaml"
    suite.write_text(
        "name: bfcl-part\nentries:\n  - benchmark: bfcl\n"
        f"    subsets: [{', '.join(CATEGORIES)}]\n    limit: {PER_CATEGORY}\n"
        f"    options: {{mode: {'prompt' if prompt_mode else 'fc'}}}\n"
    )
    gold = gold_replies()
    with FakeServer(model_name="imperfect", handler=imperfect_handler(gold, prompt_mode)) as server:
        args = [
            "run",
            "--suite",
            str(suite),
            "--model",
            "openai/imperfect",
            "--api-base",
            server.url,
            "--no-cache",
            "--quiet",
            "--out",
            "run",
        ]
        if prompt_mode:
            args.append("--prompt-mode")
        assert main(args) == 0
    records = list(read_records(tmp_path / "run" / "samples.jsonl").latest.values())
    assert len(records) == len(CATEGORIES) * PER_CATEGORY
    assert main(["export-bfcl", "run", "export"]) == 0
    folder = next((tmp_path / "export" / "result").iterdir()).name
    official, _ = run_official(tmp_path / "export", folder, CATEGORIES, python=None)
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())["benchmarks"]["bfcl"]
    passed_some = failed_some = False
    for category in CATEGORIES:
        ours = scores["subsets"][category]["metrics"]["accuracy"]
        assert official[category]["accuracy"] == pytest.approx(ours), category
        failed = sorted(
            r["sample_id"] for r in records if r["subset"] == category and not r["score"]["passed"]
        )
        assert official[category]["failed_ids"] == failed, category
        print(
            f"{'prompt' if prompt_mode else 'fc'} {category}: ours {ours:.4f} official {official[category]['accuracy']:.4f}"
        )
        passed_some |= ours > 0
        failed_some |= ours < 1
    assert passed_some and failed_some  # the model really is imperfect
