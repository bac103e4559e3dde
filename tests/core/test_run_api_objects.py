"""``RunConfig.model`` may be a ModelClient object and ``RunConfig.strategy`` a
Strategy object (a training loop passes its own client): the run calls them as it
would the named ones, with the run's retries and records, and the manifest says
what was passed in."""

from __future__ import annotations

import json

import pytest

from harness import RunConfig, run_suite
from harness.errors import ConfigError
from harness.models.base import ModelClient, ModelError, NullClient
from harness.store.run_store import read_records
from harness.strategies.plain import PlainStrategy
from harness.types import AssistantTurn


def outcomes(run_dir):
    """Each record's verdict and what the model said: what must not depend on how
    the model or strategy was named."""
    latest = read_records(run_dir / "samples.jsonl").latest
    return {
        key: (r["status"], r["score"], [m.get("content") for m in r["trajectory"]["messages"]])
        for key, r in latest.items()
    }


def manifest(run_dir):
    return json.loads((run_dir / "manifest.json").read_text())


def config(tmp_path, name, **fields):
    fields.setdefault("model", "null")
    fields.setdefault("limit", 2)
    return RunConfig(suite="smoke", out=tmp_path / name, progress=False, **fields)


def test_a_null_client_object_gives_the_records_of_model_null(tmp_path):
    by_name = run_suite(config(tmp_path, "name"))
    by_object = run_suite(config(tmp_path, "object", model=NullClient()))
    assert by_object.ran == by_name.ran > 0
    assert outcomes(by_object.run_dir) == outcomes(by_name.run_dir)
    written = manifest(by_object.run_dir)
    assert written["model"]["name"] == "null"
    assert written["model_client"]["object"] == "harness.models.base.NullClient"
    assert written["fingerprint"]["source"] == "object"
    # Nothing says which weights a client object calls: no response cache.
    assert written["cache"] is None


def test_a_plain_strategy_object_gives_the_records_of_strategy_plain(tmp_path):
    by_name = run_suite(config(tmp_path, "name", model="oracle"))
    by_object = run_suite(config(tmp_path, "object", model="oracle", strategy=PlainStrategy()))
    assert outcomes(by_object.run_dir) == outcomes(by_name.run_dir)
    assert all(status == "ok" for status, _, _ in outcomes(by_object.run_dir).values())
    assert manifest(by_object.run_dir)["strategy"] == manifest(by_name.run_dir)["strategy"]


class Flaky(ModelClient):
    """Fails its first call with a transient error, then never calls a tool."""

    name = "my-checkpoint"

    def __init__(self) -> None:
        self.calls = 0
        self.closed = False

    async def aclose(self) -> None:
        self.closed = True

    async def complete(self, messages, tools, params) -> AssistantTurn:
        self.calls += 1
        if self.calls == 1:
            raise ModelError("server busy", transient=True)
        return AssistantTurn(content="no tool for me")


def test_a_client_object_gets_the_runs_retries_and_is_left_open(tmp_path):
    client = Flaky()
    summary = run_suite(config(tmp_path, "flaky", model=client, retry_delay=0.0, limit=1))
    assert summary.ok == summary.ran > 0  # the 503 was retried, not recorded
    assert client.calls > summary.ran
    written = manifest(summary.run_dir)
    assert written["model"]["name"] == "my-checkpoint"
    assert written["model_client"]["object"].endswith("test_run_api_objects.Flaky")
    assert not client.closed  # the caller's to close (a training loop calls it again)


def test_a_client_object_with_a_revision_keeps_a_cache_and_pins_the_weights(tmp_path):
    first = run_suite(config(tmp_path, "rev", model=NullClient(), model_revision="step-100"))
    written = manifest(first.run_dir)
    assert written["cache"] is not None
    assert written["fingerprint"]["revision"] == "step-100"
    # Other weights in the same folder are refused, as with a named model.
    with pytest.raises(ConfigError, match="other weights"):
        run_suite(config(tmp_path, "rev", model=NullClient(), model_revision="step-200"))


class MyStrategy(PlainStrategy):
    name = "mine"


def test_a_strategy_object_of_the_callers_own_class_is_named_in_the_manifest(tmp_path):
    summary = run_suite(config(tmp_path, "mine", model="oracle", strategy=MyStrategy()))
    assert summary.ok == summary.ran > 0
    entry = manifest(summary.run_dir)["strategy"]
    assert entry["object"].endswith("test_run_api_objects.MyStrategy")


@pytest.mark.parametrize(
    ("fields", "flag"),
    [
        ({"api_base": "http://127.0.0.1:9/v1"}, "--api-base"),
        ({"tool_choice": "required"}, "--tool-choice"),
        ({"client": "direct"}, "--client"),
        ({"inline_reasoning": "keep"}, "--inline-reasoning"),
        ({"local_server": True}, "--local-server"),
    ],
)
def test_settings_that_build_a_client_are_refused_with_a_client_object(tmp_path, fields, flag):
    with pytest.raises(ConfigError, match=f"client object .*{flag}"):
        run_suite(config(tmp_path, "bad", model=NullClient(), **fields))


@pytest.mark.parametrize(
    ("fields", "flag"),
    [
        ({"strategy_options": {"max_examples": 2}}, "--strategy-opt"),
        ({"env_feedback": "augmented"}, "--env-feedback"),
        ({"measure_world_model": True}, "--measure-world-model"),
    ],
)
def test_strategy_settings_are_refused_with_a_strategy_object(tmp_path, fields, flag):
    with pytest.raises(ConfigError, match=f"strategy is an object .*{flag}"):
        run_suite(config(tmp_path, "bad", strategy=PlainStrategy(), **fields))


def test_a_strategy_that_is_not_a_strategy_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="neither a --strategy value nor a strategy object"):
        run_suite(config(tmp_path, "bad", strategy=object()))  # type: ignore[arg-type]
