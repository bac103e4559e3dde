"""τ²'s estimate of an episode's model calls in a row (the run starts the longest first)."""

from __future__ import annotations

from harness.adapters.tau2 import Tau2Adapter

ADAPTER = Tau2Adapter()


def gold_actions(sample, requestor: str) -> int:
    actions = (sample.gold.get("evaluation_criteria") or {}).get("actions") or []
    return sum(1 for action in actions if action.get("requestor") == requestor)


def test_the_estimate_grows_with_the_gold_actions():
    for subset in ("airline", "telecom"):
        samples = ADAPTER.load(subset, limit=40)
        for sample in samples:
            agent, user = gold_actions(sample, "assistant"), gold_actions(sample, "user")
            assert ADAPTER.expected_model_calls(sample) == 4 + agent + 2 * user
        by_estimate = sorted(samples, key=ADAPTER.expected_model_calls)
        fewest, most = by_estimate[0], by_estimate[-1]
        assert gold_actions(fewest, "assistant") < gold_actions(most, "assistant") or (
            gold_actions(fewest, "user") < gold_actions(most, "user")
        )


def test_a_task_without_gold_actions_is_the_conversation_alone():
    sample = next(s for s in ADAPTER.load("airline") if not gold_actions(s, "assistant"))
    assert ADAPTER.expected_model_calls(sample) == 4 + 2 * gold_actions(sample, "user")
