"""``--argument-max-length N``: the offered tools' string parameters carry
``maxLength: N`` (servers that write arguments under a schema grammar with no
token cap stop there), and the run says so in its manifest and cache key."""

from __future__ import annotations

import asyncio
import copy
import json

import pytest

from harness.cli import main
from harness.config.run_config import RunConfig
from harness.errors import ConfigError
from harness.models.argument_bounds import BoundedStringArguments, bound_string_arguments
from harness.models.base import ScriptedClient
from harness.testing.fake_server import FakeServer, Reply
from harness.types import AssistantTurn


def tool(parameters):
    return {"type": "function", "function": {"name": "f", "parameters": parameters}}


NESTED = tool(
    {
        "type": "object",
        "properties": {
            "order_id": {"type": "string"},
            "note": {"type": ["string", "null"]},
            "short": {"type": "string", "maxLength": 4},
            "kind": {"type": "string", "enum": ["a", "b"]},
            "count": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "where": {"anyOf": [{"type": "string"}, {"type": "number"}]},
            "address": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
        "required": ["order_id"],
    }
)


def test_every_free_string_gets_the_bound_and_nothing_else_changes():
    original = copy.deepcopy(NESTED)
    (bounded,) = bound_string_arguments([NESTED], 32)
    assert NESTED == original  # the benchmark's own schema is not touched
    props = bounded["function"]["parameters"]["properties"]
    assert props["order_id"]["maxLength"] == 32
    assert props["note"]["maxLength"] == 32
    assert props["tags"]["items"]["maxLength"] == 32
    assert props["where"]["anyOf"][0]["maxLength"] == 32
    assert props["address"]["properties"]["city"]["maxLength"] == 32
    # Bounded already (its own maxLength, an enum) or not a string: as given.
    assert props["short"]["maxLength"] == 4
    assert "maxLength" not in props["kind"] and "maxLength" not in props["count"]
    assert "maxLength" not in props["where"]["anyOf"][1]


def test_a_schema_that_is_not_a_mapping_is_passed_through():
    odd = [{"type": "function", "function": {"name": "g"}}, {"type": "function"}]
    assert bound_string_arguments(odd, 8) == odd


def test_the_wrapper_bounds_the_tools_and_keys_the_cache_on_it():
    seen = []

    class Recording(ScriptedClient):
        async def complete(self, messages, tools, params):
            seen.append(tools)
            return AssistantTurn(content="ok")

    inner = Recording([])
    client = BoundedStringArguments(inner, 16)
    asyncio.run(client.complete([{"role": "user", "content": "hi"}], [NESTED], None))
    assert seen[0][0]["function"]["parameters"]["properties"]["order_id"]["maxLength"] == 16
    assert client.cache_identity() != inner.cache_identity()
    assert client.cache_identity()["argument_max_length"] == 16
    assert BoundedStringArguments(inner, 8).cache_identity() != client.cache_identity()


def string_parameters(schema, found):
    if isinstance(schema, dict):
        if schema.get("type") == "string" and "enum" not in schema:
            found.append(schema)
        for value in schema.values():
            string_parameters(value, found)
    elif isinstance(schema, list):
        for value in schema:
            string_parameters(value, found)
    return found


BFCL_SUITE = (
    "name: two\nentries:\n  - benchmark: bfcl\n    subsets: [simple_python]\n    limit: 2\n"
)


def run_bfcl(server, out, *extra):
    suite = out.parent / "two.yaml"
    suite.write_text(BFCL_SUITE)
    argv = ["run", "--suite", str(suite), "--model", "openai/fake-model", "--api-base"]
    argv += [server.url, "--quiet", "--no-cache", "--out", str(out)]
    return main([*argv, *extra])


def test_a_run_offers_bounded_tools_and_records_the_bound(tmp_path):
    with FakeServer(handler=lambda request: Reply.text("no call")) as server:
        assert run_bfcl(server, tmp_path / "bounded", "--argument-max-length", "24") == 0
        bounded = [r.body for r in server.chat_requests if r.body.get("tools")]
        server.clear()
        assert run_bfcl(server, tmp_path / "as-given") == 0
        as_given = [r.body for r in server.chat_requests if r.body.get("tools")]
    strings = string_parameters([body["tools"] for body in bounded], [])
    assert strings and all(s["maxLength"] == 24 for s in strings)
    assert not [
        s for s in string_parameters([b["tools"] for b in as_given], []) if "maxLength" in s
    ]
    manifest = json.loads((tmp_path / "bounded" / "manifest.json").read_text())
    assert manifest["model"]["argument_max_length"] == 24
    plain = json.loads((tmp_path / "as-given" / "manifest.json").read_text())
    assert plain["model"]["argument_max_length"] is None


def test_a_bound_below_one_is_a_config_error(tmp_path, capsys):
    with FakeServer(handler=lambda request: Reply.text("no call")) as server:
        assert run_bfcl(server, tmp_path / "r", "--argument-max-length", "0") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["harness: error: --argument-max-length must be a positive number (got 0)"]
    with pytest.raises(ConfigError):
        RunConfig(suite="smoke", model="oracle", argument_max_length=-3).check()
