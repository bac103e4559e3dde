"""BFCL's decoders and turn rules, checked against the package's own functions.

The official Python decoder eval()s arithmetic; it is called here only on text
written in this file (never on model output) to show that ours reads every
case the same way without evaluating anything."""

from __future__ import annotations

import asyncio
import json

import pytest

from harness.adapters.bfcl import BFCLAdapter, export_bfcl, official
from harness.adapters.bfcl.decode import (
    DecodeError,
    decode_ast,
    decode_execute,
    decode_prompt_ast,
    fc_reply_undecodable,
    jsonable,
)
from harness.adapters.bfcl.executor import execute_string
from harness.adapters.bfcl.export import entry_result
from harness.adapters.bfcl.simulators import SimulatorSet
from harness.models.base import ScriptedClient
from harness.models.openai_http import OpenAIHTTPClient
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Services
from harness.testing.fake_server import FakeServer, Reply
from harness.types import AssistantTurn, SamplingParams, ToolCall, Trajectory

ADAPTER = BFCLAdapter()

# Replies the official decoder reads without raising; ours must read them alike.
DECODABLE = [
    "[f(a=1, b='x'), g()]",
    "```\nf(a=[1, 2])\n```",
    "[f(a=b)]",
    "[f(a=1+2*3, b='ab' * 2, c=[1] + [2], d=7 // 2, e=2 ** 10)]",
    "[f(a=+5, b=-2.5, c=not True, d=~3)]",
    "[f(a=g(x=1), b=h(2), c=h())]",
    "[f(**{'a': 1})]",
    "[f(a=..., b=None, c=True)]",
    "[f(a=(1, 2), b=[(3, 4)], c={'k': (5,)})]",
    "[f('positional', a=1)]",
    "[f(g(1), a=1)]",
    "[f(a=x[0], b=x.y[1:2])]",
    "[math.factorial(number=5), a.b.c(d=1)]",
    "[f(a={1: 'x', 'y': {'z': 2}})]",
    "[]",
    "f(a=1)",
]
# Replies the official decoder fails on; ours must fail too.
UNDECODABLE = [
    "I cannot help with that.",
    "Sure: [f(a=1)]",
    "[f(a=lambda: 1)]",
    "[f(a={1, 2})]",
    "[f(a=-x)]",
    "[f(a=-'s')]",
    "[f(a={**x})]",
    "[f(a=f'{x}')]",
    "[f(a=1 if b else 2)]",
    "[(f(a=1), g())]",
    "[f(a=1)][g()]",
    "[1, 2]",
    "[f(a=[1, 2)]",
    "[f(a=-(1 - 3))]",  # a unary operator reads its operand's .value: a BinOp has none
    "'[f(a=1)]'",  # the brackets are added outside the quotes
]


def official_ast(text: str):
    utils = official.module("bfcl_eval.model_handler.utils")
    return utils.default_decode_ast_prompting(text)


@pytest.mark.parametrize("text", DECODABLE)
def test_python_decoder_reads_what_bfcl_reads(text):
    ours = decode_prompt_ast(text)
    assert ours == official_ast(text)
    assert [type(v) for item in ours for args in item.values() for v in args.values()] == [
        type(v) for item in official_ast(text) for args in item.values() for v in args.values()
    ]  # tuples stay tuples


@pytest.mark.parametrize("text", UNDECODABLE)
def test_python_decoder_fails_where_bfcl_fails(text):
    with pytest.raises(Exception):  # noqa: B017 - the official decoder raises anything
        official_ast(text)
    with pytest.raises(DecodeError):
        decode_prompt_ast(text)


def test_unary_plus_reads_as_minus_like_bfcl():
    assert decode_prompt_ast("[f(n=+5)]") == [{"f": {"n": -5}}] == official_ast("[f(n=+5)]")


def test_arithmetic_on_names_or_calls_is_never_evaluated():
    for text in ["[f(a=len('abc') + 1)]", "[f(a=__import__('os').getpid() + 0)]", "[f(a=x * 2)]"]:
        with pytest.raises(DecodeError):
            decode_prompt_ast(text)


@pytest.mark.parametrize("text", [t for t in DECODABLE if "**" not in t])
def test_execution_strings_equal_bfcl(text):
    utils = official.module("bfcl_eval.model_handler.utils")
    try:
        theirs = utils.default_decode_execute_prompting(text)
    except Exception:
        with pytest.raises(DecodeError):
            decode_execute(text, prompt_mode=True)
        return
    assert decode_execute(text, prompt_mode=True) == theirs


def test_fc_decoding_fails_on_empty_and_non_object_arguments():
    assert decode_execute([{"cd": '{"folder": "a"}'}], prompt_mode=False) == ["cd(folder='a')"]
    for raw in ["", "{oops", "[1, 2]", "null"]:
        with pytest.raises(DecodeError):
            decode_execute([{"cd": raw}], prompt_mode=False)


def _deep_json(levels: int) -> str:
    return '{"a": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"


def _deep_python(levels: int) -> str:
    return "[f(a=" + "[" * (levels - 1) + "]" * (levels - 1) + ")]"


@pytest.mark.parametrize("levels", [101, 150, 500, 960])
def test_arguments_deeper_than_the_parse_bound_do_not_decode(levels):
    # The harness's own bound (boundary.MAX_DEPTH, 100): deeper arguments never
    # reach the checkers, the executor or the stored details, in either mode.
    fc = [{"f": _deep_json(levels)}]
    for decode in (
        lambda: decode_ast(fc, prompt_mode=False),
        lambda: decode_execute(fc, prompt_mode=False),
        lambda: decode_ast(_deep_python(levels), prompt_mode=True),
        lambda: decode_execute(_deep_python(levels), prompt_mode=True),
    ):
        with pytest.raises(DecodeError):
            decode()
    call = ToolCall("c", "f", None, raw_arguments=_deep_json(levels))
    assert fc_reply_undecodable(AssistantTurn(tool_calls=[call]))


def test_arguments_within_the_bound_decode_as_before():
    fc = [{"f": _deep_json(100)}]
    assert decode_ast(fc, prompt_mode=False)[0]["f"] == json.loads(_deep_json(100))
    assert decode_execute(fc, prompt_mode=False)[0].startswith("f(a=[[")
    call = ToolCall("c", "f", None, raw_arguments=_deep_json(100))
    assert not fc_reply_undecodable(AssistantTurn(tool_calls=[call]))
    # f(a=...) inside the reply's list: the arguments object is level 1, as in FC.
    decoded = decode_ast(_deep_python(100), prompt_mode=True)
    assert decoded == [{"f": {"a": json.loads(_deep_json(100))["a"]}}]


def test_jsonable_bounds_what_it_is_given():
    value: list = []
    for _ in range(5_000):
        value = [value]
    text = json.dumps(jsonable(value))  # no RecursionError, in the walk or the dump
    assert "[nested too deep]" in text


def test_executor_runs_nested_calls_first_and_dict_arguments_as_written():
    sample = ADAPTER.load("multi_turn_base")[0]
    entry = sample.gold
    sims = SimulatorSet(entry.involved_classes, entry.initial_config)
    before = sims.instances["GorillaFileSystem"]._current_dir.name
    text, failed = execute_string("ls(a=cd(folder='no_such_dir'))", sims)
    assert failed is False or "Error during execution" in text
    assert execute_string("no_such(x=1)", sims) == (
        "Error during execution: name 'no_such' is not defined",
        True,
    )
    assert (
        execute_string("pwd(x=nan)", sims)[0] == "Error during execution: name 'nan' is not defined"
    )
    assert execute_string("kill(x=1)", sims)[0].endswith("Function call kill is not allowed.")
    assert sims.instances["GorillaFileSystem"]._current_dir.name == before


def run(sample, turns):
    trajectory = asyncio.run(
        PlainStrategy().run(sample, ScriptedClient(turns), Services(), SamplingParams())
    )
    return Trajectory.from_dict(trajectory.to_dict())


def fc_call(name: str, raw: str) -> ToolCall:
    return ToolCall.from_openai({"id": "c", "function": {"name": name, "arguments": raw}})


def test_fc_empty_arguments_end_the_turn_and_are_exported_as_sent(tmp_path):
    sample = ADAPTER.load("multi_turn_base")[0]
    turns = [AssistantTurn(tool_calls=[fc_call("pwd", "")])] + [AssistantTurn(content="ok")] * 10
    trajectory = run(sample, turns)
    assert not any(m["role"] == "tool" for m in trajectory.messages)  # nothing ran
    users = [m for m in trajectory.messages if m["role"] == "user"]
    assert len(users) == len(sample.gold.turns)  # the next turns still came
    record = {
        "benchmark": "bfcl",
        "subset": sample.subset,
        "sample_id": sample.id,
        "status": "ok",
        "trajectory": trajectory.to_dict(),
        "metadata": sample.metadata,
    }
    assert entry_result(record)[0][0] == [{"pwd": ""}]


def test_fc_multi_turn_sends_the_models_arguments_back_as_it_sent_them():
    """BFCL's handlers put the model's output items back into the history as they
    came: the next turn's request carries the model's "" (not "{}") and its
    whitespace, while the oracle's calls (built in code) carry their JSON."""
    sample = ADAPTER.load("multi_turn_base")[0]
    spaced = '\n {"a": 1} '
    with FakeServer() as server:
        server.enqueue(Reply.calls(("pwd", ""), ("ls", spaced)))
        client = OpenAIHTTPClient("openai/fake-model", server.url, timeout=10.0)

        async def main():
            try:
                return await PlainStrategy().run(sample, client, Services(), SamplingParams())
            finally:
                await client.aclose()

        trajectory = asyncio.run(main())
        bodies = [request.body for request in server.chat_requests]
    assert len(bodies) > 1
    later = [m for m in bodies[1]["messages"] if m["role"] == "assistant" and m.get("tool_calls")]
    sent = [call["function"]["arguments"] for call in later[0]["tool_calls"]]
    assert sent == ["", spaced]
    # The record keeps the same text, and the verdict reads it (BFCL: "" ends the turn).
    stored = Trajectory.from_dict(json.loads(json.dumps(trajectory.to_dict())))
    assert [c.raw_arguments for c in stored.turns[0].tool_calls] == ["", spaced]
    assert not any(m["role"] == "tool" for m in trajectory.messages[:3])
    played = asyncio.run(
        PlainStrategy().run(sample, ADAPTER.oracle(sample), Services(), SamplingParams())
    )
    oracle_calls = [c for m in played.messages for c in m.get("tool_calls") or []]
    assert oracle_calls and all(
        isinstance(json.loads(c["function"]["arguments"]), dict) for c in oracle_calls
    )


def test_fc_reply_whose_text_repeats_its_calls_stays_fc(tmp_path):
    sample = next(s for s in ADAPTER.load("simple_python") if "." in s.gold.functions[0]["name"])
    ((name, params),) = sample.gold.ground_truth[0].items()
    args = {k: v[0] for k, v in params.items() if v[0] != ""}
    text = f"[{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})]"
    reply = AssistantTurn(
        content=text, tool_calls=[fc_call(name.replace(".", "_"), json.dumps(args))]
    )
    trajectory = run(sample, [reply])
    result = asyncio.run(ADAPTER.score(sample, trajectory, Services()))
    assert result.details["prompt_mode"] is False and result.passed
    record = {
        "benchmark": "bfcl",
        "subset": sample.subset,
        "sample_id": sample.id,
        "trial": 0,
        "status": "ok",
        "trajectory": trajectory.to_dict(),
        "metadata": sample.metadata,
        "score": result.to_dict(),
    }
    plain = {**record, "sample_id": "simple_python_0"}
    written = export_bfcl([record, plain], tmp_path)  # never refused
    rows = [json.loads(line) for line in written[0].read_text().splitlines()]
    assert rows[-1]["result"] == [{name.replace(".", "_"): json.dumps(args)}]


# Credentials that BFCL's own data gives the model (in a question, a scenario, the
# gold answer), by entry: data the model must send back, never the run's secrets.
BENCHMARK_CREDENTIALS = {
    "live_multiple_1006-235-0": "gorilla-123",
    "live_multiple_106-43-4": "123123",
    "live_multiple_103-43-1": "secure_pass123",
    "simple_java_77": "P@ssw0rd!",
    "multi_turn_base_5": "securePass123",
}
# A token a model makes up (not BFCL's "abc123xyz"): its text, kept as it is.
INVENTED = "abc123xyz_x"


def credentials_suite(tmp_path) -> str:
    by_category: dict[str, list[str]] = {}
    for entry_id in BENCHMARK_CREDENTIALS:
        by_category.setdefault(entry_id.rsplit("_", 1)[0], []).append(entry_id)
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: s\nentries:\n"
        + "".join(
            f"  - benchmark: bfcl\n    subsets: [{category}]\n    ids: [{', '.join(ids)}]\n"
            for category, ids in by_category.items()
        )
    )
    return str(suite)


def test_the_store_changes_no_credential_that_is_data():
    """Masking (the store, the cache, exports) changes only values the run holds;
    a password BFCL gives the model or one the model invents is left as it is,
    without the writer knowing BFCL's data."""
    from harness.models.redact import mask

    call = "authenticate_twitter(username='dr_smith', password='securePass123')"
    args = {"username": "dr_smith", "password": INVENTED, "api_key": "gorilla-123"}
    value = {"content": call, "arguments": args, "raw": json.dumps(args)}
    assert mask(value) is value
    assert mask(f"password='{INVENTED}' password=[\"secure_pass123\"]") == (
        f"password='{INVENTED}' password=[\"secure_pass123\"]"
    )


def test_run_regrade_and_export_keep_benchmark_credentials(tmp_path, monkeypatch):
    from harness.cli import main

    monkeypatch.chdir(tmp_path)
    suite = credentials_suite(tmp_path)
    assert main(["run", "--suite", suite, "--model", "oracle", "--quiet", "--out", "run"]) == 0
    stored = (tmp_path / "run" / "samples.jsonl").read_text()
    records = [json.loads(line) for line in stored.splitlines()]
    assert len(records) == len(BENCHMARK_CREDENTIALS) and "***" not in stored
    assert all(record["score"]["passed"] for record in records)
    for record in records:
        assert BENCHMARK_CREDENTIALS[record["sample_id"]] in json.dumps(record["trajectory"])
    assert main(["score", "run"]) == 0
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert scores["regrade"] == {"regraded": len(records), "changed": 0, "failed": 0}
    assert main(["export-bfcl", "run", "export"]) == 0
    exported = "".join(path.read_text() for path in (tmp_path / "export").rglob("*_result.json"))
    assert "***" not in exported
    for credential in BENCHMARK_CREDENTIALS.values():
        assert credential in exported, credential


def test_a_token_the_model_invents_survives_the_wire_cache_and_store(tmp_path, monkeypatch):
    """Through the HTTP client, the response cache and the store: the model's
    invented credential is stored as sent; the run's key (in the environment) is
    masked even inside a tool-call argument."""
    from harness.cli import main
    from harness.testing.fake_server import FakeServer, Reply

    held = "held-provider-key-0123"
    monkeypatch.setenv("OPENAI_API_KEY", held)
    monkeypatch.chdir(tmp_path)
    arguments = {"username": "dr_smith", "password": INVENTED, "note": f"key {held}"}

    def model(request: dict) -> Reply:
        if request["messages"][-1]["role"] == "tool":
            return Reply.text(f"Logged in with password='{INVENTED}', Bearer {INVENTED}")
        return Reply.calls(("authenticate_twitter", arguments))

    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: s\nentries:\n  - benchmark: bfcl\n    subsets: [multi_turn_base]\n"
        "    ids: [multi_turn_base_5]\n"
    )
    with FakeServer(handler=model) as server:
        assert main(["run", "--suite", str(suite), "--model", "openai/fake-model", "--api-base",
                     server.url, "--quiet", "--max-attempts", "1", "--out", "run"]) == 0  # fmt: skip
    stored = (tmp_path / "run" / "samples.jsonl").read_text()
    record = json.loads(stored.splitlines()[-1])
    call = record["trajectory"]["turns"][0]["tool_calls"][0]
    assert call["arguments"] == {**arguments, "note": "key ***"}
    assert f"password='{INVENTED}', Bearer {INVENTED}" in stored
    assert held not in stored
    cached = "".join(path.read_text() for path in (tmp_path / "run" / "cache").rglob("*.json"))
    assert INVENTED in cached and held not in cached


def test_executor_drops_whitespace_before_parentheses_like_bfcl():
    """BFCL's executor rewrites "word (" to "word(" everywhere in the call string,
    string arguments included; the stored text follows."""
    sample = ADAPTER.load("memory_kv")[0]
    entry = sample.gold
    sims = SimulatorSet(entry.involved_classes, entry.initial_config)
    execute_string("core_memory_add(key='k', value='itself (maybe) f  (x)')", sims)
    assert sims.instances["MemoryAPI_kv"].core_memory["k"] == "itself(maybe) f(x)"
