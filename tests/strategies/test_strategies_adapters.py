"""Rehearsal on every adapter: no real environment is built or touched while it
rehearses, and the committed trajectory still scores. The model is a fake that
calls a tool, answers in text, critiques and distils."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from support import shared_path
from test_strategies_fakes import RoleModel, result

from harness.strategies.registry import build_strategy
from harness.strategies.sandbox import EnvironmentGuard
from harness.task.contract import Sample, Services
from harness.task.registry import get_adapter
from harness.types import AssistantTurn, SamplingParams, ToolCall, Trajectory

SAMPLE_VALUES = {
    "string": "x",
    "integer": 1,
    "number": 1.0,
    "boolean": True,
    "array": [],
    "object": {},
}


def arguments_for(tool: dict[str, Any]) -> dict[str, Any]:
    """Values for a tool's required arguments, from its schema."""
    parameters = tool["function"].get("parameters") or {}
    properties = parameters.get("properties") or {}
    arguments = {}
    for name in parameters.get("required") or []:
        schema = properties.get(name) or {}
        if schema.get("enum"):
            arguments[name] = schema["enum"][0]
        else:
            kind = schema.get("type")
            arguments[name] = SAMPLE_VALUES.get(kind if isinstance(kind, str) else "string", "x")
    return arguments


def generic_actor(messages, tools):
    """Calls the first offered tool once per user turn, then answers in text."""
    last = next((m for m in reversed(messages) if m.get("role") in ("user", "tool")), None)
    if last is None or last.get("role") == "tool" or not tools:
        return "Thank you, that is done."
    tool = tools[0]
    arguments = arguments_for(tool)
    return AssistantTurn(
        tool_calls=[
            ToolCall(
                id="",
                name=tool["function"]["name"],
                arguments=arguments,
                raw_arguments=json.dumps(arguments),
            )
        ]
    )


def generic_model(actor=generic_actor) -> RoleModel:
    return RoleModel(
        actor=actor,
        rehearser=lambda m, t: result({"status": "ok"}),
        critic=lambda m, t: "Check the arguments against the tool descriptions first.",
        distil=lambda m, t: "<memory>Check the arguments against the tool descriptions.</memory>",
    )


CASES = [
    ("bfcl", "multi_turn_base", ["multi_turn_base_101"], {}),
    ("bfcl", "multi_turn_miss_func", None, {}),
    ("bfcl", "simple_python", None, {}),
    ("tau2", "airline", None, {}),
    ("tau2", "retail", None, {}),
    ("tau2", "telecom", None, {}),
    ("vitabench", "delivery", None, {"language": "en"}),
    ("finmcp", "multi_turn", None, {}),
    ("finmcp", "single_tool", None, {}),
]
# The benchmarks whose data comes from ../shared/data (the others' is installed).
DATA = {"vitabench": "vitabench", "finmcp": "finmcp"}


def offline_services(benchmark: str) -> Services:
    """No user or judge model: each benchmark's offline stand-ins."""
    if benchmark == "vitabench":
        from harness.adapters.vitabench.judge import OrdersStubJudge

        return Services(user_model="scripted", judge_client=OrdersStubJudge(), judge_model="stub")
    return Services(seed=1)


def load_one(benchmark: str, subset: str, ids, options) -> Sample:
    data_dir: Path | None = shared_path("data") / DATA[benchmark] if benchmark in DATA else None
    samples = get_adapter(benchmark).load(subset, ids=ids, data_dir=data_dir, options=options)
    return samples[0]


def rehearse(sample: Sample, model, spec: str, services: Services) -> Trajectory:
    strategy = build_strategy(spec)
    params = SamplingParams(temperature=0.0, seed=1)
    trajectory = asyncio.run(strategy.run(sample, model, services, params))
    return Trajectory.from_dict(json.loads(json.dumps(trajectory.to_dict(), ensure_ascii=False)))


@pytest.mark.parametrize(("benchmark", "subset", "ids", "options"), CASES)
def test_rehearsal_never_touches_the_real_environment(benchmark, subset, ids, options):
    sample = load_one(benchmark, subset, ids, options)
    guard = EnvironmentGuard(sample.make_environment)
    guarded = dataclasses.replace(sample, make_environment=guard)
    services = offline_services(benchmark)
    trajectory = rehearse(guarded, generic_model(), "rehearsal-sequential:2", services)

    assert guard.violations == []
    assert guard.built == 1  # the committed episode's environment, and no other
    costs = trajectory.extra["costs"]
    assert costs["rehearsal"]["env_calls"] == 0
    assert costs["committed"]["env_calls"] == guard.calls
    rehearsals = trajectory.extra["rehearsal"]["rehearsals"]
    assert [r["skipped"] for r in rehearsals] == [None, None]
    if not sample.limits.single_step:
        # The rehearsals did call tools, and the rehearser answered them all.
        assert all(r["simulated_calls"] for r in rehearsals)
        assert costs["rehearsal"]["rehearser"]["calls"] > 0
    assert costs["rehearsal"]["critic"]["calls"] == 3
    # The committed trajectory is an ordinary one for the benchmark's scorer.
    score = asyncio.run(get_adapter(benchmark).score(sample, trajectory, services))
    assert score.reward >= 0.0


def test_tau2_telecom_user_actions_during_rehearsal_stay_imagined():
    """The scripted user performs its own tool calls on whatever environment it
    holds: during rehearsal that is the simulated one, whose answer is a recorded
    placeholder; in the committed episode it is the real one."""
    adapter = get_adapter("tau2")
    samples = adapter.load("telecom")
    sample = next(
        s
        for s in samples
        if any(a["requestor"] == "user" for a in s.gold["evaluation_criteria"]["actions"] or [])
    )
    guard = EnvironmentGuard(sample.make_environment)
    guarded = dataclasses.replace(sample, make_environment=guard)
    model = generic_model(actor=adapter.oracle(sample))
    services = Services(seed=1)
    trajectory = rehearse(guarded, model, "rehearsal-parallel:1", services)
    assert guard.violations == [] and guard.built == 1
    rehearsal = trajectory.extra["rehearsal"]["rehearsals"][0]
    user_side = [c for c in rehearsal["simulated_calls"] if c.get("requestor") == "user"]
    assert user_side and all(c["prediction"]["kind"] == "placeholder" for c in user_side)
    hidden = [m for m in rehearsal["messages"] if m.get("hidden") and m["role"] == "tool"]
    assert hidden and all(m["content"].startswith("(imagined:") for m in hidden)
    # The committed episode ran the gold script on the real environment: it passes.
    score = asyncio.run(adapter.score(sample, trajectory, services))
    assert score.passed


def test_bfcl_memory_rehearsal_is_skipped_and_recorded_not_crashed():
    sample = get_adapter("bfcl").load("memory_rec_sum")[0]
    trajectory = rehearse(sample, generic_model(), "rehearsal-parallel:2", Services())
    rehearsals = trajectory.extra["rehearsal"]["rehearsals"]
    assert all("imagined environment" in r["skipped"] for r in rehearsals)
    assert trajectory.extra["rehearsal"]["memory"] == ""
    assert trajectory.extra["costs"]["rehearsal"]["actor"]["calls"] == 0
    assert trajectory.extra["costs"]["committed"]["actor"]["calls"] > 0  # the real episode ran
