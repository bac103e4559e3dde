"""World rehearsal on the orders task: it helps where plain fails, costs add up,
sequential mode shows earlier critiques, bad model output never crashes, the
memory goes where it is told, and the real environment is never touched."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest
from test_strategies_fakes import (
    MEMORY_HINT,
    ORDER,
    RoleModel,
    orders_actor,
    orders_model,
    orders_sample,
    result,
    text_of,
)

from harness.models.base import ModelError
from harness.store.cost_totals import aggregate_costs
from harness.strategies import prompts
from harness.strategies.committed import SampleRun, finish, gather_all
from harness.strategies.monitor import REHEARSAL, RealEnvironmentMonitor, SandboxViolation, phase
from harness.strategies.registry import build_strategy
from harness.strategies.sandbox import EnvironmentGuard
from harness.strategies.settings import StrategySettings
from harness.task.contract import Sample, Services
from harness.types import SamplingParams, Trajectory

ROLES = ("actor", "rehearser", "critic", "user", "judge")
USAGE_FIELDS = ("calls", "prompt_tokens", "completion_tokens", "cached_calls")


def run(strategy_spec: str, model, sample: Sample | None = None, options=None, factory=None):
    strategy = build_strategy(strategy_spec, options or {}, factory)
    sample = sample or orders_sample()
    params = SamplingParams(temperature=0.0, seed=3)
    trajectory = asyncio.run(strategy.run(sample, model, Services(seed=3), params))
    # What the runner stores must be JSON.
    return Trajectory.from_dict(json.loads(json.dumps(trajectory.to_dict())))


def cancelled(trajectory: Trajectory) -> list[str]:
    return trajectory.final_state["cancelled"]


def test_plain_fails_and_parallel_rehearsal_fixes_the_id_prefix():
    plain = run("plain", orders_model())
    assert cancelled(plain) == []

    model = orders_model()
    rehearsed = run("rehearsal-parallel:2", model)
    assert cancelled(rehearsed) == [ORDER]
    record = rehearsed.extra["rehearsal"]
    assert record["mode"] == "parallel" and record["n"] == 2
    assert record["prompt_version"] == prompts.PROMPT_VERSION
    assert MEMORY_HINT in record["memory"] and record["memory_format_error"] is None
    assert record["memory_placements"]["system"] >= 1
    for rehearsal in record["rehearsals"]:
        # The imagined attempt made the mistake and the simulator showed it.
        simulated = rehearsal["simulated_calls"]
        assert simulated[0]["call"]["arguments"] == {"order_id": "W100"}
        assert simulated[0]["prediction"]["status"] == "error"
        assert "#" in rehearsal["critique"]
        assert rehearsal["shown_critiques"] is None
    # The committed transcript is the benchmark's: the memory is not in it.
    assert MEMORY_HINT not in text_of(rehearsed.messages)
    # The last actor prompt carried the memory in its system message.
    assert MEMORY_HINT in model.calls["actor"][-1][0]["content"]


def test_rehearsal_temperature_and_distinct_seeds():
    model = orders_model()
    run("rehearsal-parallel:3", model, options={"temperature": "0.9"})
    actor_params = model.params["actor"]
    rehearsal_params = actor_params[:-2]  # the committed episode made the last two calls
    assert {p.temperature for p in rehearsal_params} == {0.9}
    assert len({p.seed for p in rehearsal_params}) == 3
    assert {p.temperature for p in actor_params[-2:]} == {0.0}
    assert all(p.temperature == 0.9 for p in model.params["rehearser"])


def phase_sum(costs: dict, role: str, field: str) -> int:
    return costs["rehearsal"][role][field] + costs["committed"][role][field]


def test_cost_records_add_up_and_grow_n_times_with_n_rehearsals():
    runs = {n: run(f"rehearsal-parallel:{n}", orders_model()) for n in (1, 2, 3)}
    for n, trajectory in runs.items():
        costs = trajectory.extra["costs"]
        for role in ROLES:
            for field in USAGE_FIELDS:
                assert costs["total"][role][field] == phase_sum(costs, role, field)
        assert costs["rehearsal"]["env_calls"] == 0
        assert costs["committed"]["env_calls"] == 1
        assert costs["total"]["env_calls"] == 1
        assert costs["total"]["wall_time_s"] == pytest.approx(
            costs["rehearsal"]["wall_time_s"] + costs["committed"]["wall_time_s"], abs=1e-3
        )
        # Usage by role on the trajectory is the total of both phases.
        for role, usage in trajectory.usage.items():
            assert usage.to_dict() == costs["total"][role]
        # The phase is the sum of its rehearsals plus one distil call.
        per_rehearsal = [r["costs"] for r in trajectory.extra["rehearsal"]["rehearsals"]]
        assert len(per_rehearsal) == n
        assert all(c.pop("wall_time_s") >= 0 for c in per_rehearsal)
        assert all(c == per_rehearsal[0] for c in per_rehearsal)
        one = per_rehearsal[0]
        for role in ("actor", "rehearser"):
            for field in ("calls", "prompt_tokens", "completion_tokens"):
                assert costs["rehearsal"][role][field] == n * one[role][field]
        assert costs["rehearsal"]["critic"]["calls"] == n + 1
        assert costs["committed"]["rehearser"]["calls"] == 0
        assert costs["committed"]["critic"]["calls"] == 0
    one, three = runs[1].extra["costs"]["rehearsal"], runs[3].extra["costs"]["rehearsal"]
    assert one["actor"]["calls"] == 2 and three["actor"]["calls"] == 6
    assert one["rehearser"]["calls"] == 1 and three["rehearser"]["calls"] == 3
    assert three["actor"]["prompt_tokens"] == 3 * one["actor"]["prompt_tokens"] > 0


def test_plain_records_costs_with_an_empty_rehearsal_phase():
    trajectory = run("plain", orders_model())
    costs = trajectory.extra["costs"]
    assert costs["rehearsal"]["actor"]["calls"] == 0 and costs["rehearsal"]["env_calls"] == 0
    assert costs["committed"]["actor"]["calls"] == 2 and costs["committed"]["env_calls"] == 1
    assert costs["total"]["actor"] == costs["committed"]["actor"]


def numbered_critic():
    count = {"n": 0}

    def critic(messages, tools):
        count["n"] += 1
        return f"Critique number {count['n']}: check the order id format."

    return critic


def test_sequential_rehearsal_i_sees_the_critiques_of_1_to_i_minus_1():
    model = orders_model(critic=numbered_critic(), actor=lambda m, t: "I cannot do that.")
    trajectory = run("rehearsal-sequential:3", model)
    rehearsals = trajectory.extra["rehearsal"]["rehearsals"]
    assert [r["critique"][:17] for r in rehearsals] == ["Critique number 1"] * 1 + [
        "Critique number 2",
        "Critique number 3",
    ]
    # The recorded prompts: one actor call per rehearsal, then the committed one.
    actor_prompts = [text_of(p) for p in model.calls["actor"]]
    assert len(actor_prompts) == 4
    first, second, third, committed = actor_prompts
    assert "Critique number" not in first
    assert "Critique number 1" in second and "Critique number 2" not in second
    assert "Critique number 1" in third and "Critique number 2" in third
    assert "Critique number 3" not in third
    assert prompts.SEQUENTIAL_HEADER in second
    assert rehearsals[0]["shown_critiques"] is None
    assert "Critique number 1" in rehearsals[1]["shown_critiques"]
    # The critic of rehearsal 3 also saw what the actor had been told.
    assert "Critique number 2" in text_of(model.calls["critic"][2])
    # The distiller got all three critiques.
    distil_prompt = text_of(model.calls["distil"][0])
    assert all(f"Critique number {i}" in distil_prompt for i in (1, 2, 3))


def test_sequential_mode_learns_within_the_rehearsals():
    trajectory = run("rehearsal-sequential:2", orders_model())
    first, second = trajectory.extra["rehearsal"]["rehearsals"]
    assert first["simulated_calls"][0]["call"]["arguments"] == {"order_id": "W100"}
    assert second["simulated_calls"][0]["call"]["arguments"] == {"order_id": ORDER}
    assert cancelled(trajectory) == [ORDER]


@pytest.mark.parametrize(
    "rehearser_output",
    [
        "lol",
        f"{prompts.RESULT_OPEN}{prompts.RESULT_CLOSE}",
        f"{prompts.RESULT_OPEN}{{not json{prompts.RESULT_CLOSE}",
        '{"error": {"code": "MADE_UP", "message": "x"}}',
        "",
    ],
)
def test_malformed_rehearser_output_becomes_a_recorded_format_error(rehearser_output):
    model = orders_model(rehearser=lambda m, t: rehearser_output)
    trajectory = run("rehearsal-parallel:1", model)
    rehearsal = trajectory.extra["rehearsal"]["rehearsals"][0]
    prediction = rehearsal["simulated_calls"][0]["prediction"]
    assert prediction["kind"] == "format_error" and prediction["status"] == "format_error"
    assert prediction["raw"] == rehearser_output
    tool_message = next(m for m in rehearsal["messages"] if m["role"] == "tool")
    assert tool_message["content"].startswith("Error:")


@pytest.mark.parametrize("critic_output", ["", "   ", "!!! 123", "<think>only thoughts</think>"])
def test_garbage_critiques_give_an_empty_memory_and_a_plain_committed_episode(critic_output):
    model = orders_model(critic=lambda m, t: critic_output)
    trajectory = run("rehearsal-parallel:2", model)
    record = trajectory.extra["rehearsal"]
    assert [r["critique"] for r in record["rehearsals"]] == ["", ""]
    assert all(r["critique_format_error"] for r in record["rehearsals"])
    assert record["memory"] == "" and record["memory_format_error"] == "no usable critique"
    assert model.calls["distil"] == []  # nothing to distil
    assert record["memory_placements"] == {}
    assert cancelled(trajectory) == []  # no lesson, the same mistake


@pytest.mark.parametrize(
    ("distil_output", "memory", "error"),
    [
        ("", "", "empty memory"),
        ("<memory></memory>", "", "empty memory"),
        ("Use the # prefix for ids.", "Use the # prefix for ids.", "memory tags missing"),
        ("<think>hmm</think><memory>Use #W100 ids.</memory> trailing", "Use #W100 ids.", None),
    ],
)
def test_distilled_memory_is_read_leniently(distil_output, memory, error):
    trajectory = run("rehearsal-parallel:1", orders_model(distil=lambda m, t: distil_output))
    record = trajectory.extra["rehearsal"]
    assert record["memory"] == memory
    assert (record["memory_format_error"] or "").startswith(error or "")
    assert bool(record["memory_format_error"]) == bool(error)


def test_memory_is_capped_at_memory_chars():
    long_memory = "<memory>" + "Always use the # prefix for order ids. " * 50 + "</memory>"
    trajectory = run(
        "rehearsal-parallel:1",
        orders_model(distil=lambda m, t: long_memory),
        options={"memory_chars": "120"},
    )
    record = trajectory.extra["rehearsal"]
    assert 60 < len(record["memory"]) <= 120 and record["memory_truncated"] is True


def test_memory_prefixed_to_a_first_user_message_that_comes_from_the_user_side():
    model = orders_model()
    sample = orders_sample(user_in_source=True)
    trajectory = run("rehearsal-parallel:1", model, sample, {"memory_position": "first_user"})
    assert cancelled(trajectory) == [ORDER]
    committed_prompt = model.calls["actor"][-1]
    first_user = next(m for m in committed_prompt if m["role"] == "user")
    assert first_user["content"].startswith(prompts.MEMORY_HEADER)
    assert first_user["content"].endswith("Please cancel my order W100.")
    assert MEMORY_HINT not in committed_prompt[0]["content"]  # not in the system message
    # The recorded transcript holds the user's message as the user side sent it.
    assert trajectory.messages[0] == {"role": "user", "content": "Please cancel my order W100."}
    assert trajectory.extra["rehearsal"]["memory_placements"] == {"first_user": 2}


def test_memory_in_the_system_block_when_the_sample_has_no_system_message():
    model = orders_model()
    sample = orders_sample()
    sample = dataclasses.replace(sample, initial_messages=sample.initial_messages[1:])
    trajectory = run("rehearsal-parallel:1", model, sample)
    committed_prompt = model.calls["actor"][-1]
    assert committed_prompt[0]["role"] == "system"
    assert committed_prompt[0]["content"].startswith(prompts.MEMORY_HEADER)
    assert cancelled(trajectory) == [ORDER]


def test_the_rehearser_can_play_a_simulated_user():
    said = []

    def user(messages, tools):
        said.append(messages)
        return "Cancel order W100 please." if len(said) == 1 else prompts.USER_STOP

    model = orders_model(user=user)
    sample = orders_sample(user_in_source=True, benchmark="orders-chatty")
    trajectory = run("rehearsal-parallel:1", model, sample, {"rehearsal_user": "rehearser"})
    rehearsal = trajectory.extra["rehearsal"]["rehearsals"][0]
    assert rehearsal["messages"][0] == {"role": "user", "content": "Cancel order W100 please."}
    assert rehearsal["termination"] == "user_stop"
    costs = trajectory.extra["costs"]
    assert costs["rehearsal"]["user"]["calls"] == 2
    assert costs["committed"]["user"]["calls"] == 0  # the sample's scripted user there
    assert cancelled(trajectory) == [ORDER]


def test_scripted_user_turns_stay_the_tasks_even_when_the_rehearser_plays_users():
    model = orders_model()  # no "user" handler: asking it to play the user would fail
    sample = orders_sample(user_in_source=True)  # the "orders" benchmark has no simulator
    trajectory = run("rehearsal-parallel:1", model, sample, {"rehearsal_user": "rehearser"})
    assert trajectory.extra["rehearsal"]["rehearsals"][0]["messages"][0]["content"] == (
        "Please cancel my order W100."
    )


def test_a_separate_rehearser_model_answers_all_simulated_calls():
    base = RoleModel(name="base", rehearser=lambda m, t: result({"status": "cancelled"}))
    built = []

    def factory(name, api_base):
        built.append((name, api_base))
        return base

    model = orders_model()
    options = {"rehearser_model": "Qwen/Qwen3-8B", "rehearser_api_base": "http://base:8000/v1"}
    strategy = build_strategy("rehearsal-parallel:2", options, factory)
    assert built == [("Qwen/Qwen3-8B", "http://base:8000/v1")]
    assert strategy.describe()["settings"]["rehearser_model"] == "Qwen/Qwen3-8B"
    assert "rehearser=Qwen/Qwen3-8B" in strategy.describe()["label"]
    trajectory = asyncio.run(
        strategy.run(orders_sample(), model, Services(), SamplingParams(temperature=0.0))
    )
    assert len(base.calls["rehearser"]) == 2 and "rehearser" not in model.calls
    # The base model imagined success, so no lesson was learnt.
    assert cancelled(trajectory) == []


def test_a_failing_rehearser_model_is_an_infrastructure_error():
    class Down(RoleModel):
        async def complete(self, messages, tools, params):
            raise ModelError("rehearser server unavailable", transient=True)

    strategy = build_strategy(
        "rehearsal-parallel:1", {"rehearser_model": "down"}, lambda n, b: Down()
    )
    model = orders_model()
    with pytest.raises(ModelError, match="rehearser server unavailable"):
        asyncio.run(strategy.run(orders_sample(), model, Services(), SamplingParams()))
    # The actor was stopped right after the failed simulation, not left running.
    assert len(model.calls["actor"]) == 1


def test_rehearsal_never_builds_or_touches_the_real_environment():
    sample = orders_sample()
    guard = EnvironmentGuard(sample.make_environment)
    guarded = dataclasses.replace(sample, make_environment=guard)
    trajectory = run("rehearsal-sequential:2", orders_model(), guarded)
    assert guard.violations == []
    assert guard.built == 1 and guard.calls == 1  # the committed episode only
    assert trajectory.extra["costs"]["rehearsal"]["env_calls"] == 0


def test_the_guard_catches_a_leak():
    guard = EnvironmentGuard(orders_sample().make_environment)
    environment = guard()  # built outside rehearsal: allowed
    with phase(REHEARSAL):
        with pytest.raises(SandboxViolation):
            guard()
        with pytest.raises(SandboxViolation):
            asyncio.run(environment.execute(orders_actor([], []).tool_calls[0]))
        with pytest.raises(SandboxViolation):
            environment.final_state()
    assert guard.violations == ["make_environment", "execute cancel_order", "final_state"]


def test_single_step_tasks_rehearse_one_reply_and_still_get_a_memory():
    sample = orders_sample()
    sample.limits.single_step = True
    sample.limits.max_steps = None
    model = orders_model(critic=lambda m, t: "Ids need the '#' prefix: write '#W100'.")
    trajectory = run("rehearsal-parallel:2", model, sample)
    record = trajectory.extra["rehearsal"]
    assert all(r["simulated_calls"] == [] for r in record["rehearsals"])
    # The critic reviewed the reply's calls themselves.
    assert "cancel_order" in text_of(model.calls["critic"][0])
    assert MEMORY_HINT in record["memory"]
    # The committed reply (recorded, not executed) carries the corrected id.
    assert trajectory.turns[-1].tool_calls[0].arguments == {"order_id": ORDER}


def test_a_failing_parallel_rehearsal_cancels_its_siblings():
    finished = []

    async def fails():
        await asyncio.sleep(0)
        raise ModelError("down")

    async def slow():
        await asyncio.sleep(5)
        finished.append(True)

    async def main():
        with pytest.raises(ModelError):
            await gather_all([fails(), slow()])
        await asyncio.sleep(0.01)

    asyncio.run(main())
    assert finished == []


def test_the_strategys_own_monitor_refuses_and_reports_real_calls_in_rehearsal():
    monitor = RealEnvironmentMonitor()
    real = monitor.wrap(monitor.build(orders_sample().make_environment))
    asyncio.run(real.execute(orders_actor([], []).tool_calls[0]))
    with phase(REHEARSAL):
        with pytest.raises(SandboxViolation):
            monitor.build(orders_sample().make_environment)
        with pytest.raises(SandboxViolation):
            asyncio.run(real.execute(orders_actor([], []).tool_calls[0]))
    assert monitor.calls == {"committed": 1, "rehearsal": 1}
    assert monitor.violations == ["make_environment", "execute cancel_order"]
    run_state = SampleRun(
        orders_sample(),
        orders_model(),
        Services(),
        SamplingParams(),
        StrategySettings(),
        orders_model(),
    )
    run_state.monitor = monitor
    with pytest.raises(SandboxViolation, match="reached during rehearsal"):
        finish(Trajectory(), run_state, {})


def test_run_level_cost_summary_sums_and_averages_the_records():
    records = [
        {"trajectory": run(f"rehearsal-parallel:{n}", orders_model()).to_dict()} for n in (1, 3)
    ]
    records.append({"trajectory": None})  # an infrastructure error
    summary = aggregate_costs(records)
    assert summary["n_records"] == 2 and summary["n_without_costs"] == 1
    assert summary["sum"]["rehearsal"]["actor"]["calls"] == 2 + 6
    assert summary["sum"]["committed"]["env_calls"] == 2
    assert summary["mean_per_record"]["rehearsal"]["actor"]["calls"] == 4
    assert summary["sum"]["total"]["critic"]["calls"] == 2 + 4


def test_a_ledgers_total_is_the_field_by_field_sum_of_its_phases_with_extra_roles_too():
    from harness.strategies.costs import ROLES, CostLedger
    from harness.strategies.monitor import COMMITTED, REHEARSAL
    from harness.types import Usage

    ledger = CostLedger()
    ledger.add(REHEARSAL, "actor", Usage(calls=2, prompt_tokens=30, completion_tokens=7))
    ledger.add(REHEARSAL, "scout", Usage(calls=1, prompt_tokens=5))  # a role only rehearsal has
    ledger.add(COMMITTED, "actor", Usage(calls=1, prompt_tokens=11, cached_calls=1))
    ledger.add(COMMITTED, "grader", Usage(calls=4, completion_tokens=9))  # only committed's
    ledger.env_calls[REHEARSAL], ledger.env_calls[COMMITTED] = 3, 2
    ledger.wall_time_s[REHEARSAL], ledger.wall_time_s[COMMITTED] = 0.123456, 1.000049
    record = ledger.record()
    # each phase's keys in order, the roles only committed has after rehearsal's
    assert list(record["total"]) == [*ROLES, "scout", "env_calls", "wall_time_s", "grader"]
    assert list(record["total"]["scout"]) == list(record[REHEARSAL]["actor"])
    assert record["total"]["actor"] == {
        "calls": 3,
        "prompt_tokens": 41,
        "completion_tokens": 7,
        "cached_calls": 1,
    }
    assert record["total"]["scout"]["calls"] == 1 and record["total"]["grader"]["calls"] == 4
    assert record["total"]["env_calls"] == 5 and record["total"]["wall_time_s"] == 1.1235
