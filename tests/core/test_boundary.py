"""Values from outside are made safe where they enter: valid UTF-8, bounded parses,
no non-finite numbers in any file; one sample's failure never stops a run."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.boundary.sanitise import (
    MAX_DEPTH,
    BoundsError,
    check_depth,
    dumps_safe,
    loads_bounded,
    loads_within_depth,
    sanitise,
)
from harness.errors import ModelOutputError
from harness.models.base import ModelClient, ModelError
from harness.models.calls import try_parse_python_calls
from harness.models.openai_http import parse_reply_body
from harness.models.prompt_mode import HermesPromptFormat
from harness.report import samples as report_data
from harness.report.html import ReportOptions, build_report
from harness.run.runner import INFRA_ERROR, Runner, WorkItem
from harness.store.run_store import OK, RunStore, read_records
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Services
from harness.task.registry import get_adapter, register_adapter
from harness.types import AssistantTurn, SamplingParams, ToolCall


def strict_loads(text: str):
    """JSON as a browser's JSON.parse reads it: no NaN, no Infinity."""

    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def reply(message: dict, finish="stop") -> dict:
    return {"id": "r", "choices": [{"index": 0, "message": message, "finish_reason": finish}]}


def body_of(value) -> bytes:
    # ensure_ascii writes lone surrogates as "\ud800" escapes, as a broken server does.
    return json.dumps(value, ensure_ascii=True).encode("ascii")


# --- the parse bounds -----------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments, reason",
    [
        ('{"a": ' + "[" * 960 + "]" * 960 + "}", "nested more than"),
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested more than"),
        ('{"n": ' + "7" * 4301 + "}", "4300 digits"),
        ('{"n": NaN}', "NaN"),
        ('{"n": -Infinity}', "Infinity"),
        ('{"n": 1e999}', "out of range"),
        ('{"a": [' + ",".join(["1"] * 300_000) + "]}", "more than"),
    ],
)
def test_arguments_over_a_bound_are_a_parse_error_the_agent_sees(arguments, reason):
    call = ToolCall.from_openai({"id": "c", "function": {"name": "f", "arguments": arguments}})
    assert call.arguments is None and reason in call.parse_error
    json.dumps(call.to_dict(), allow_nan=False).encode("utf-8")


def test_arguments_as_an_object_are_held_to_the_same_bounds():
    deep: dict = {}
    node = deep
    for _ in range(MAX_DEPTH + 5):
        node["x"] = {}
        node = node["x"]
    call = ToolCall.from_openai({"id": "c", "function": {"name": "f", "arguments": deep}})
    assert call.arguments is None and "nested" in call.parse_error
    fine = ToolCall.from_openai({"id": "c", "function": {"name": "f", "arguments": {"a": [1]}}})
    assert fine.arguments == {"a": [1]} and fine.parse_error is None


def test_lone_surrogates_everywhere_in_a_reply_are_replaced_and_counted():
    evil = "\ud800"
    call = {
        "id": f"call{evil}",
        "type": "function",
        "function": {"name": f"add{evil}", "arguments": json.dumps({f"k{evil}": f"v{evil}"})},
    }
    raw = reply({"role": "assistant", "content": f"hi{evil}", "tool_calls": [call]}, evil)
    turn = parse_reply_body(body_of(raw))
    parsed = turn.tool_calls[0]
    assert parsed.id == "call\ufffd" and parsed.name == "add\ufffd"
    assert parsed.arguments == {"k\ufffd": "v\ufffd"} and parsed.parse_error is None
    assert turn.finish_reason == "\ufffd" and turn.content == "hi\ufffd"
    assert turn.text_repairs >= 5  # content, id, name, finish_reason; arguments inside the text
    dumps_safe(turn.to_dict()).encode("utf-8")
    assert AssistantTurn.from_dict(turn.to_dict()).text_repairs == turn.text_repairs


def test_invalid_bytes_in_a_body_are_replaced_not_a_server_error():
    body = body_of(reply({"role": "assistant", "content": "PLACEHOLDER"})).replace(
        b"PLACEHOLDER", b"caf\xe9 \xff"
    )
    turn = parse_reply_body(body)
    assert turn.content == "caf\ufffd \ufffd" and turn.text_repairs == 2


def test_a_huge_integer_in_a_reply_body_does_not_fail_the_reply():
    body = b'{"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}], "n": ' + (
        b"9" * 5000 + b"}"
    )
    turn = parse_reply_body(body)
    assert turn.content == "x"
    json.dumps(turn.raw, allow_nan=False)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "f", "arguments": {"n": ' + "1" * 5000 + "}}</tool_call>",
        '<tool_call>{"name": "f", "arguments": {"n": ' + "[" * 960 + "]" * 960 + "}}</tool_call>",
        '<tool_call>{"name": "f", "arguments": {"n": NaN}}</tool_call>',
        "[f(n=0x" + "f" * 5000 + ")]",
        "[f(n=1e999)]",
        "[f(n=" + "[" * 150 + "]" * 150 + ")]",
        "[f(n={(1, 2): 3})]",
    ],
)
def test_prompt_mode_calls_over_a_bound_are_parse_errors(text):
    _, calls = HermesPromptFormat().parse(text)
    assert calls and all(c.parse_error and c.arguments is None for c in calls)
    for call in calls:
        json.dumps(call.to_dict(), allow_nan=False).encode("utf-8")


def test_legitimate_calls_parse_as_before():
    assert loads_bounded('{"a": [1, 2.5, "x", null, true, {"b": -3}]}').value == {
        "a": [1, 2.5, "x", None, True, {"b": -3}]
    }
    parsed = try_parse_python_calls("[f(a=1, b='x', c=[1, 2], d={'k': -1.5})]")
    assert parsed.error is None
    assert parsed.calls[0].arguments == {"a": 1, "b": "x", "c": [1, 2], "d": {"k": -1.5}}


def test_sanitise_writes_any_value_as_standard_json():
    loop: list = []
    loop.append(loop)
    value = {
        "nan": float("nan"),
        "inf": float("-inf"),
        "big": 10**5000,
        "text": "\udfff",
        1.5: "float key",
        (1, 2): "tuple key",
        "loop": loop,
        "deep": json.loads("[" * 900 + "]" * 900),
        "object": object(),
    }
    text = dumps_safe(value)
    data = strict_loads(text)
    assert data["nan"] == "NaN" and data["inf"] == "-Infinity" and data["text"] == "\ufffd"
    assert data["big"].startswith("[integer of") and data["loop"] == ["[circular reference]"]
    assert sanitise({"\ud800": 1}).replaced == 1


# --- containment per sample -----------------------------------------------------------


@pytest.fixture(autouse=True)
def toy_registered():
    register_adapter("toy", "toy_adapter:ToyAdapter")


def toy_samples():
    return get_adapter("toy").load("easy")


class OneTurn(ModelClient):
    """Answers with one given turn (or raises), then with plain text."""

    name = "one-turn"

    def __init__(self, turn: AssistantTurn | Exception):
        self.turn = turn
        self.used = False

    async def complete(self, messages, tools, params):
        if self.used:
            return AssistantTurn(content="done")
        self.used = True
        if isinstance(self.turn, Exception):
            raise self.turn
        return self.turn


def make_runner(store: RunStore, provider, strategy=None) -> Runner:
    return Runner(store, strategy or PlainStrategy(), provider, Services(), SamplingParams())


class ModelBreaksScoring(PlainStrategy):
    async def run(self, sample, model, services, params):
        raise ModelOutputError("the model's answer cannot be scored")


class CircularScore(PlainStrategy):
    """A trajectory whose extra holds a circular value (no JSON form)."""

    async def run(self, sample, model, services, params):
        trajectory = await super().run(sample, model, services, params)
        loop: list = []
        loop.append(loop)
        trajectory.extra["loop"] = loop
        trajectory.extra["nan"] = float("nan")
        return trajectory


def test_model_output_errors_are_scored_failures_and_unwritable_values_are_contained(tmp_path):
    store = RunStore(tmp_path / "run")
    store.open_for_append()
    samples = toy_samples()
    try:
        scored = make_runner(store, lambda s: OneTurn(ValueError()), ModelBreaksScoring())
        odd = make_runner(store, lambda s: OneTurn(AssistantTurn(content="x")), CircularScore())
        summary = asyncio.run(scored.run_items([WorkItem(samples[0], 0)], 0))
        summary2 = asyncio.run(odd.run_items([WorkItem(samples[1], 0)], 0))
    finally:
        store.close()
    assert summary.ok == 1 and summary2.ok == 1
    lines = (tmp_path / "run" / "samples.jsonl").read_text(encoding="utf-8").split("\n")[:-1]
    records = [strict_loads(line) for line in lines]
    assert records[0]["status"] == OK and records[0]["score"]["passed"] is False
    assert "cannot be scored" in records[0]["score"]["details"]["model_output_error"]
    extra = records[1]["trajectory"]["extra"]
    assert extra["nan"] == "NaN" and extra["loop"] == ["[circular reference]"]


def test_an_exception_while_building_the_record_is_that_records_error(tmp_path, monkeypatch):
    import harness.run.runner as runner_module

    calls = {"n": 0}
    original = runner_module.build_record

    def failing_once(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RecursionError("maximum recursion depth exceeded")
        return original(*args, **kwargs)

    monkeypatch.setattr(runner_module, "build_record", failing_once)
    store = RunStore(tmp_path / "run")
    store.open_for_append()
    try:
        runner = make_runner(store, lambda s: OneTurn(AssistantTurn(content="x")))
        summary = asyncio.run(runner.run_items([WorkItem(s, 0) for s in toy_samples()], 0))
    finally:
        store.close()
    records = read_records(tmp_path / "run" / "samples.jsonl").latest
    assert summary.ran == len(records) == 5 and summary.infra_errors == 1
    broken = [r for r in records.values() if r["status"] == INFRA_ERROR]
    assert broken[0]["error"]["type"] == "RecursionError"


# --- the whole path, property-based ---------------------------------------------------

# Any code point, lone surrogates included (hypothesis leaves them out by default).
ANY_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, categories=None))
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | ANY_TEXT,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(ANY_TEXT, children, max_size=4)
    ),
    max_leaves=20,
)


@st.composite
def reply_bodies(draw) -> bytes:
    kind = draw(st.sampled_from(["bytes", "value", "reply", "call"]))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "value":
        return json.dumps(draw(JSON_VALUES)).encode("utf-8", errors="surrogatepass")
    if kind == "reply":
        message = {"role": "assistant", "content": draw(JSON_VALUES)}
        return body_of(reply(message, draw(JSON_VALUES)))
    arguments = draw(
        st.one_of(
            JSON_VALUES.map(lambda v: json.dumps(v)),
            st.dictionaries(ANY_TEXT, JSON_VALUES, max_size=4),
            ANY_TEXT,
        )
    )
    call = {
        "id": draw(JSON_VALUES),
        "type": "function",
        "function": {
            "name": draw(st.sampled_from(["add", "x"]) | ANY_TEXT),
            "arguments": arguments,
        },
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call, draw(JSON_VALUES)]}
    raw = body_of(reply(message, draw(JSON_VALUES)))
    if draw(st.booleans()):  # and invalid bytes on top
        raw = raw.replace(b'"assistant"', b'"assist\xff\xfeant"', 1)
    return raw


def test_arbitrary_replies_always_give_standard_records_and_a_report_that_opens(tmp_path):
    run_dir = tmp_path / "run"
    store = RunStore(run_dir)
    store.write_manifest({"run_id": "hostile", "model": {"name": "hostile"}, "planned": {}})
    store.open_for_append()
    samples = toy_samples()
    serial = {"n": 0}

    def model_for(body: bytes):
        try:
            return OneTurn(parse_reply_body(body))
        except ModelError as exc:  # a body that is no reply: an infrastructure error
            return OneTurn(exc)

    @settings(
        max_examples=150,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(reply_bodies())
    def one(body: bytes) -> None:
        serial["n"] += 1
        runner = make_runner(store, lambda s: model_for(body))
        item = WorkItem(samples[serial["n"] % len(samples)], serial["n"])
        summary = asyncio.run(runner.run_items([item], 0))
        assert summary.ran == 1

    try:
        one()
    finally:
        store.close()
    lines = (run_dir / "samples.jsonl").read_text(encoding="utf-8").split("\n")[:-1]
    assert len(lines) == serial["n"]
    for line in lines:
        strict_loads(line)
    out = tmp_path / "report.html"
    summary = build_report([run_dir], out, ReportOptions(plots=False))
    page = out.read_text(encoding="utf-8")
    blocks = report_data.read_samples(page)
    assert summary.samples == len(blocks) == len(read_records(run_dir / "samples.jsonl").latest)
    for block in blocks:
        strict_loads(json.dumps(block, allow_nan=False))


def test_report_truncates_lists_and_objects_and_bounds_each_sample(tmp_path):
    from fake_runs import make_run, record

    big = record("toy", "easy", "big", extra={"rows": list(range(100_000))})
    wide = record("toy", "easy", "wide", extra={"map": {f"k{i}": "v" * 50 for i in range(50_000)}})
    nested = record(
        "toy", "easy", "nested", extra={"n": [[[[[[[[[[["x" * 19_000] * 30] * 30]]]]]]]]]}
    )
    run = make_run(tmp_path, "big-run", [big, wide, nested], {"toy": {"overall": 0.0}})
    out = tmp_path / "report.html"
    build_report([run], out, ReportOptions(plots=False))
    page = out.read_text(encoding="utf-8")
    assert len(page) < 8_000_000
    keys = [row[7] for row in report_data.read_index(page)["rows"]]
    details = dict(zip(keys, report_data.read_samples(page), strict=True))
    rows = details["toy/easy/big#0"]["trajectory"]["extra"]
    assert len(rows["rows"]) == 201 and "99800 more items" in rows["rows"][-1]
    wide_map = details["toy/easy/wide#0"]["trajectory"]["extra"]["map"]
    assert len(wide_map) == 201 and "49800 more keys" in wide_map["…"]
    assert all(len(json.dumps(d, ensure_ascii=False)) <= 2_000_000 for d in details.values())


@pytest.mark.slow  # about 30 s: the timeout must outlast an episode that ignores one cancellation
def test_the_episode_timeout_fires_even_when_an_episode_swallows_its_cancellation(tmp_path):
    class Stubborn(ModelClient):
        """Ignores cancellation twice (as a lost cancel in asyncio.wait_for would)."""

        name = "stubborn"

        async def complete(self, messages, tools, params):
            for _ in range(2):
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    pass
            await asyncio.sleep(30)
            return AssistantTurn(content="late")

    store = RunStore(tmp_path / "run")
    store.open_for_append()
    try:
        runner = make_runner(store, lambda s: Stubborn())
        runner.episode_timeout_s = 0.3
        start = asyncio.run(_timed(runner.run_items([WorkItem(toy_samples()[0], 0)], 0)))
    finally:
        store.close()
    record = next(iter(read_records(tmp_path / "run" / "samples.jsonl").latest.values()))
    assert record["status"] == INFRA_ERROR and record["error"]["type"] == "TimeoutError"
    assert start < 0.3 + 1.5


async def _timed(awaitable) -> float:
    import time

    start = time.monotonic()
    await awaitable
    return time.monotonic() - start


def test_a_reply_text_is_trusted_unwalked_only_when_sanitise_would_not_change_it():
    from harness.boundary.sanitise import loads_gives_sanitised, sanitise

    texts = [
        '{"choices": [{"message": {"content": "café \\u00e9 ok", "role": "assistant"}}]}',
        '{"a": [1, 2.5, -3e-7, 1.5e99, true, null, {"b": "x"}]}',
        '{"id": "chatcmpl-fake-123", "e": "E+456", "created": 1796000000}',  # no exponents
        '{"a": "\\ud800"}',  # a lone surrogate
        '{"a": "\\ud83d\\ude00"}',  # a pair: fine, but a surrogate escape all the same
        '{"a": NaN}',
        '{"a": -Infinity}',
        '{"a": 1e999}',  # inf
        '{"a": ' + "9" * 199 + "e99}",  # 1e298: finite
        '{"a": ' + "9" * 400 + ".0}",  # inf without an exponent
        '{"a": ' + "7" * 4300 + "}",  # an integer over MAX_INT_BITS
        "[" * 199 + "]" * 199,
        "[" * 201 + "]" * 201,  # nested past MAX_WRITE_DEPTH
        '{"a": "NaN as text"}',  # unsure (inside a string): walked
    ]
    trusted = 0
    for text in texts:
        value = json.loads(text)
        cleaned = sanitise(value)
        if loads_gives_sanitised(text):
            trusted += 1
            assert cleaned.replaced == 0 and cleaned.value == value, text[:60]
            assert json.dumps(value, allow_nan=False)  # writable as it is
        else:  # walked; and every text sanitise changes is among these
            pass
    assert trusted == 5  # the plain replies, the finite 1e298 and 199 levels
    changed = [t for t in texts if sanitise(json.loads(t)).value != json.loads(t)]
    changed += [t for t in texts if sanitise(json.loads(t)).replaced]
    assert changed and not [t for t in changed if loads_gives_sanitised(t)]


_ANY_TEXT = st.text(st.characters(blacklist_categories=()), max_size=8)
_JSON_LIKE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**300), max_value=10**300)
    | st.floats()
    | _ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_ANY_TEXT, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(_JSON_LIKE)
def test_a_trusted_reply_text_is_one_sanitise_leaves_as_it_is(value):
    from harness.boundary.sanitise import loads_gives_sanitised

    text = json.dumps(value)  # what a server may send: NaN, Infinity, \\ud800 included
    if loads_gives_sanitised(text):
        parsed = json.loads(text)
        cleaned = sanitise(parsed)
        assert cleaned.replaced == 0 and cleaned.value == parsed
        json.dumps(parsed, allow_nan=False).encode("utf-8")  # writable as it is


def nested_text(levels: int) -> str:
    """An arguments object holding ``levels`` containers in all (itself included)."""
    return '{"a": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"


def test_the_depth_bound_counts_as_the_parser_counts():
    # MAX_DEPTH containers pass both, one more fails both: one bound, one count.
    assert loads_within_depth(nested_text(MAX_DEPTH)) == loads_bounded(nested_text(MAX_DEPTH)).value
    for parse in (loads_within_depth, loads_bounded):
        with pytest.raises(BoundsError):
            parse(nested_text(MAX_DEPTH + 1))


@pytest.mark.parametrize("levels", [500, 960, 5_000, 100_000])
def test_deep_values_are_refused_without_recursing(levels):
    with pytest.raises(BoundsError, match=f"nested more than {MAX_DEPTH} deep"):
        loads_within_depth(nested_text(levels))
    value: list = []
    for _ in range(levels):  # built in code: deeper than json.loads could ever make it
        value = [value]
    with pytest.raises(BoundsError):
        check_depth(value)


def test_the_depth_check_keeps_what_json_loads_reads():
    # Only the bound is added: NaN and big integers read as json.loads reads them.
    assert loads_within_depth('{"x": NaN, "n": 1e400}')["n"] == float("inf")
    with pytest.raises(ValueError):
        loads_within_depth("{oops")
    circular: list = []
    circular.append(circular)
    with pytest.raises(BoundsError):
        check_depth(circular)
