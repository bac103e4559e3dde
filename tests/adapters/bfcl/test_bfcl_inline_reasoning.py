"""A BFCL run whose model writes <think> reasoning inline, through `harness run`
against the fake server: set apart by default, decoded as text with
--inline-reasoning keep (as BFCL's OpenAI handlers read a reply)."""

from __future__ import annotations

import json

import pytest

from harness.adapters.bfcl.data import load_entries
from harness.adapters.bfcl.oracle import ast_gold_calls
from harness.cli import main
from harness.models.calls import format_python_call
from harness.store.run_store import read_records
from harness.testing.fake_server import FakeServer, Reply

ENTRY = "simple_python_0"
THOUGHT = "<think>The area needs base and height.</think>\n"


def gold_reply(mode: str) -> Reply:
    (call,) = ast_gold_calls(load_entries("simple_python", [ENTRY])[0])
    if mode == "prompt":
        return Reply.text(THOUGHT + "[" + format_python_call(call.name, call.arguments) + "]")
    return Reply.calls((call.name, call.arguments), content=THOUGHT + "Calling it.")


def run(tmp_path, mode: str, inline: str) -> tuple[dict, dict]:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: think\nentries:\n  - benchmark: bfcl\n    subsets: [simple_python]\n"
        f"    ids: [{ENTRY}]\n    options: {{mode: {mode}}}\n"
    )
    out = tmp_path / f"{mode}-{inline}"
    with FakeServer(handler=lambda request: gold_reply(mode)) as server:
        argv = [
            "run",
            "--suite",
            str(suite),
            "--model",
            "openai/fake-model",
            "--api-base",
            server.url,
        ]
        argv += ["--no-cache", "--quiet", "--out", str(out), "--inline-reasoning", inline]
        argv += ["--prompt-mode"] if mode == "prompt" else []
        assert main(argv) == 0
    (record,) = read_records(out / "samples.jsonl").latest.values()
    return record, json.loads((out / "manifest.json").read_text())


@pytest.mark.parametrize("mode", ["prompt", "fc"])
def test_inline_reasoning_split_and_kept(tmp_path, mode):
    split, split_manifest = run(tmp_path, mode, "split")
    keep, keep_manifest = run(tmp_path, mode, "keep")
    assert split_manifest["model_client"]["inline_reasoning"] == "split"
    assert keep_manifest["model_client"]["inline_reasoning"] == "keep"
    (split_turn,) = split["trajectory"]["turns"]
    (keep_turn,) = keep["trajectory"]["turns"]
    assert split_turn["reasoning"] == "The area needs base and height."
    assert "<think>" not in split_turn["content"] and split["score"]["passed"]
    assert keep_turn["reasoning"] is None and keep_turn["content"].startswith(THOUGHT)
    if mode == "prompt":
        # BFCL's decoder reads the whole text: with the tags kept it does not decode.
        assert split_turn["tool_calls"] and not keep_turn["tool_calls"]
        assert not keep["score"]["passed"]
    else:
        # FC calls come apart from the text: the same calls and verdict.
        assert keep_turn["tool_calls"] == split_turn["tool_calls"]
        assert keep["score"]["passed"]
