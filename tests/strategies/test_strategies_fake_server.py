"""Rehearsal end to end through the command line, the runner and a fake
OpenAI-compatible server, on BFCL multi-turn and tau2.

The served model makes the paper's kind of mistake: it drops an id's prefix
(BFCL user id ``USR003`` -> ``003``; tau2 order id ``#W5272531`` -> ``W5272531``)
unless its context carries the lesson. As rehearser it imagines the failure, as
critic it names the cause, as distiller it keeps the lesson. So ``plain`` fails,
and with rehearsal the committed episode succeeds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_strategies_fakes import RoleModel, result, server_handler, tool_results

from harness.adapters.bfcl.oracle import multi_turn_gold_calls
from harness.adapters.tau2.oracle import oracle_script
from harness.cli import main
from harness.store.run_store import RunStore
from harness.task.registry import get_adapter
from harness.testing.fake_server import FakeServer
from harness.types import AssistantTurn, ToolCall

BFCL_ID = "multi_turn_base_101"
TAU2_ID = "73"
BFCL_LESSON = "user ids carry the 'USR' prefix"
TAU2_LESSON = "order ids start with '#'"


def system_text(messages) -> str:
    return "\n".join(str(m.get("content")) for m in messages if m.get("role") == "system")


def the_call(messages) -> dict:
    """The call a rehearser prompt asks about, as {name, arguments}."""
    text = messages[-1]["content"].split("## The call to execute")[-1].strip()
    name, _, rest = text.partition("(")
    return {"name": name, "arguments": json.loads(rest[:-1])}


def drop_prefix(calls: list[ToolCall], key: str, prefix: str) -> list[ToolCall]:
    for call in calls:
        value = (call.arguments or {}).get(key)
        if isinstance(value, str) and value.startswith(prefix):
            call.arguments = {**call.arguments, key: value[len(prefix) :]}
            call.raw_arguments = json.dumps(call.arguments)
    return calls


def lesson_model(lesson: str, actor, failing_key: str, prefix: str, not_found: str) -> RoleModel:
    def rehearser(messages, tools):
        value = the_call(messages)["arguments"].get(failing_key)
        if isinstance(value, str) and not value.startswith(prefix):
            return result({"error": not_found.format(value=value)})
        return result({"status": "ok"})

    def critic(messages, tools):
        if "not found" in messages[-1]["content"]:
            return f"The call failed because {lesson}; use the full id with its prefix."
        return "The attempt looks right; keep the same steps."

    def distil(messages, tools):
        if lesson in messages[-1]["content"]:
            return f"<memory>Remember: {lesson}.</memory>"
        return "<memory>Keep the same steps.</memory>"

    return RoleModel(actor=actor, rehearser=rehearser, critic=critic, distil=distil)


def bfcl_model() -> RoleModel:
    entry = get_adapter("bfcl").load("multi_turn_base", ids=[BFCL_ID])[0].gold

    def actor(messages, tools):
        turn = sum(1 for m in messages if m.get("role") == "user") - 1
        if messages[-1].get("role") == "tool" or not 0 <= turn < len(entry.ground_truth):
            return "Done."
        calls = multi_turn_gold_calls(entry, turn)
        if BFCL_LESSON not in system_text(messages):
            calls = drop_prefix(calls, "receiver_id", "USR")
        return AssistantTurn(tool_calls=calls)

    return lesson_model(
        BFCL_LESSON, actor, "receiver_id", "USR", "Receiver ID '{value}' not found."
    )


def tau2_model() -> RoleModel:
    sample = get_adapter("tau2").load("retail", ids=[TAU2_ID])[0]
    task = oracle_script(get_adapter("tau2").task_of(sample))  # the gold script, one reply a step

    def actor(messages, tools):
        own = sum(1 for m in messages if m.get("role") == "assistant") - 1
        if not 0 <= own < len(task):
            return "Is there anything else I can help you with?"
        step = task[own]
        calls = [ToolCall.from_dict(c.to_dict()) for c in step.tool_calls]
        if TAU2_LESSON not in system_text(messages):
            calls = drop_prefix(calls, "order_id", "#")
        return AssistantTurn(content=step.content, tool_calls=calls)

    return lesson_model(TAU2_LESSON, actor, "order_id", "#", "Order {value} not found")


SUITES = {
    "bfcl": {"benchmark": "bfcl", "subsets": ["multi_turn_base"], "ids": [BFCL_ID]},
    "tau2": {"benchmark": "tau2", "subsets": ["retail"], "ids": [TAU2_ID]},
}
MODELS = {"bfcl": bfcl_model, "tau2": tau2_model}


@pytest.fixture(scope="module")
def server():
    with FakeServer() as fake:
        yield fake


def run_cli(server: FakeServer, tmp_path: Path, benchmark: str, strategy: str) -> dict:
    model = MODELS[benchmark]()
    server.clear()
    server.set_handler(server_handler(model))
    suite = tmp_path / f"{benchmark}.yaml"
    suite.write_text(json.dumps({"name": f"tts-{benchmark}", "entries": [SUITES[benchmark]]}))
    out = tmp_path / f"{benchmark}-{strategy.replace(':', '-')}"
    code = main(
        [
            "run",
            "--suite",
            str(suite),
            "--model",
            "openai/fake-model",
            "--api-base",
            server.url,
            "--strategy",
            strategy,
            "--user-model",
            "scripted",
            "--out",
            str(out),
            "--no-cache",
            "--quiet",
            "--max-attempts",
            "1",
        ]
    )
    assert code == 0
    # Every model call of the run went over the wire.
    assert len(server.chat_requests) == sum(len(c) for c in model.calls.values()) > 0
    (record,) = RunStore(out).records().values()
    assert record["status"] == "ok", record.get("error")
    record["model"] = model
    record["manifest"] = RunStore(out).read_manifest()
    return record


@pytest.mark.parametrize("benchmark", ["bfcl", "tau2"])
def test_rehearsal_fixes_what_plain_gets_wrong(server, tmp_path, benchmark):
    plain = run_cli(server, tmp_path, benchmark, "plain")
    assert plain["score"]["passed"] is False
    assert plain["trajectory"]["extra"]["costs"]["rehearsal"]["actor"]["calls"] == 0

    for strategy in ("rehearsal-parallel:2", "rehearsal-sequential:2"):
        record = run_cli(server, tmp_path, benchmark, strategy)
        assert record["score"]["passed"] is True, (strategy, record["score"])
        extra = record["trajectory"]["extra"]
        lesson = BFCL_LESSON if benchmark == "bfcl" else TAU2_LESSON
        assert lesson in extra["rehearsal"]["memory"]
        assert record["manifest"]["strategy"]["name"] == strategy
        costs = extra["costs"]
        assert costs["rehearsal"]["env_calls"] == 0 and costs["committed"]["env_calls"] > 0
        for role in ("actor", "rehearser", "critic"):
            for field in ("calls", "prompt_tokens", "completion_tokens"):
                total = costs["rehearsal"][role][field] + costs["committed"][role][field]
                assert costs["total"][role][field] == total
        assert costs["rehearsal"]["critic"]["calls"] == 3
        # Token counts come from the server's usage, through litellm.
        assert costs["rehearsal"]["rehearser"]["prompt_tokens"] > 0
        # The runner stored usage by role as the total of both phases.
        stored = record["trajectory"]["usage"]
        assert stored["actor"]["calls"] == costs["total"]["actor"]["calls"]
        # The rehearsals made the mistake and were answered by the rehearser.
        for rehearsal in extra["rehearsal"]["rehearsals"][:1]:
            assert any(c["prediction"]["status"] == "error" for c in rehearsal["simulated_calls"])
            assert tool_results(rehearsal["messages"])


def test_sequential_prompts_on_the_wire_carry_earlier_critiques(server, tmp_path):
    record = run_cli(server, tmp_path, "bfcl", "rehearsal-sequential:2")
    actor_prompts = [system_text(p) for p in record["model"].calls["actor"]]
    first_critique = record["trajectory"]["extra"]["rehearsal"]["rehearsals"][0]["critique"]
    assert first_critique
    shown = [first_critique in text for text in actor_prompts]
    # Runs of the actor's calls: rehearsal 1 (not shown), rehearsal 2 (shown), committed.
    runs = [shown[0]] + [b for a, b in zip(shown, shown[1:], strict=False) if a != b]
    assert runs == [False, True, False]
