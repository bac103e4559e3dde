"""harness.testing.check_adapter: the toy and every shipped adapter pass it on a few
samples, offline; adapters that break the contract fail it, naming the check."""

from __future__ import annotations

import inspect

import pytest
from support import shared_path

from harness.models.base import ScriptedClient
from harness.task import registry
from harness.testing import ConformanceError, check_adapter
from harness.types import AssistantTurn, ToolCall

from toy_adapter import ToyAdapter

EVERY_CHECK = [
    "adapter",
    "subsets",
    "official_set",
    "known_options",
    "versions",
    "load",
    "load ids",
    "tools",
    "environment",
    "gold view",
    "oracle",
    "score range",
    "explanation",
    "aggregate",
    "estimators",
    "no score unscored",
]


def test_the_toy_adapter_passes_every_check_and_the_registry_is_left_as_it_was():
    before = dict(registry._registered)
    report = check_adapter(ToyAdapter, subset=["easy", "hard"], limit=2)
    assert report.passed == EVERY_CHECK
    assert (report.adapter, report.subsets, report.samples) == ("toy", ["easy", "hard"], 4)
    assert report.estimators_checked == ["overall"]
    assert registry._registered == before


def test_the_default_subset_is_the_first_that_can_run_here():
    report = check_adapter(ToyAdapter, limit=1)
    assert (report.subsets, report.samples) == (["easy"], 1)


def test_an_instance_other_than_the_registered_one_is_refused(monkeypatch):
    # A run scores with the registered instance; checking another would check
    # something no run uses.
    monkeypatch.setitem(registry._registered, "toy", "toy_adapter:ToyAdapter")
    registry.get_adapter.cache_clear()
    with pytest.raises(ConformanceError, match="check 'adapter' failed for adapter 'toy'"):
        check_adapter(ToyAdapter())
    assert check_adapter(registry.get_adapter("toy"), limit=1).samples == 1


def test_bfcl_single_turn_multi_turn_and_memory():
    from harness.adapters.bfcl import BFCLAdapter

    report = check_adapter(BFCLAdapter, subset=["simple_python", "multi_turn_base", "memory_kv"])
    assert report.passed == EVERY_CHECK and report.samples == 6
    # overall_run's estimator reproduces its headline value too.
    assert report.estimators_checked == ["overall", "overall_run"]


def test_tau2_with_the_scripted_user():
    from harness.adapters.tau2 import Tau2Adapter

    report = check_adapter(Tau2Adapter, subset=["airline", "telecom"], limit=1)
    assert report.passed == EVERY_CHECK and report.samples == 2


def test_tau3_with_the_scripted_user_stub_judge_and_bm25():
    from harness.adapters.tau2 import Tau3Adapter

    checkout = shared_path("tau2-bench")
    report = check_adapter(
        Tau3Adapter,
        subset="banking_knowledge",
        limit=1,
        data_dir=checkout,
        options={"retrieval": "bm25"},
    )
    assert report.passed == EVERY_CHECK and report.samples == 1


def test_vitabench_with_the_scripted_user_and_stub_judge(shared_data):
    from harness.adapters.vitabench import VitaBenchAdapter

    report = check_adapter(VitaBenchAdapter, subset="delivery", data_dir=shared_data / "vitabench")
    assert report.passed == EVERY_CHECK and report.samples == 2


def test_finmcp_single_and_multi_turn(shared_data):
    from harness.adapters.finmcp import FinMCPAdapter

    report = check_adapter(
        FinMCPAdapter, subset=["single_tool", "multi_turn"], data_dir=shared_data / "finmcp"
    )
    assert report.passed == EVERY_CHECK and report.samples == 4
    assert "micro_f1" in report.estimators_checked


# --- adapters that break the contract (module level: the runner imports them by name) ---


class DuplicateIds(ToyAdapter):
    name = "toy-duplicate-ids"

    def load(self, subset, *, limit=None, ids=None, data_dir=None, options=None):
        samples = super().load(subset, limit=limit, ids=ids, data_dir=data_dir, options=options)
        for sample in samples:
            sample.benchmark, sample.id = self.name, "same"
        return samples


class FailingOracle(ToyAdapter):
    name = "toy-failing-oracle"

    def load(self, subset, *, limit=None, ids=None, data_dir=None, options=None):
        samples = super().load(subset, limit=limit, ids=ids, data_dir=data_dir, options=options)
        for sample in samples:
            sample.benchmark = self.name
        return samples

    def oracle(self, sample):
        call = ToolCall(id="c1", name="add", arguments={"n": sample.gold["target"] + 1})
        return ScriptedClient([AssistantTurn(tool_calls=[call])], name="oracle")


class IgnoresLimit(ToyAdapter):
    name = "toy-ignores-limit"

    def load(self, subset, *, limit=None, ids=None, data_dir=None, options=None):
        samples = super().load(subset, ids=ids, data_dir=data_dir, options=options)
        for sample in samples:
            sample.benchmark = self.name
        return samples


class NoSubsets(ToyAdapter):
    name = "toy-no-subsets"

    def subsets(self):
        return []


class ScoreFromNothing(FailingOracle):
    """Aggregates records none of which was scored into a pass rate of 1."""

    name = "toy-score-from-nothing"

    def oracle(self, sample):
        return ToyAdapter.oracle(self, sample)

    def aggregate(self, records):
        result = super().aggregate(records)
        result.benchmark = self.name
        if all(r.score is None for r in records):
            result.headline["overall"] = 1.0
        return result


class GoldViewNotJson(FailingOracle):
    name = "toy-gold-view-not-json"

    def oracle(self, sample):
        return ToyAdapter.oracle(self, sample)

    def gold_view(self, sample):
        return {"target": {sample.gold["target"]}}  # a set: no JSON


class ExplanationRaises(GoldViewNotJson):
    name = "toy-explanation-raises"

    def gold_view(self, sample):
        return ToyAdapter.gold_view(self, sample)

    def explain_failure(self, sample, trajectory, score):
        return score.details["no such detail"]


@pytest.mark.parametrize(
    ("adapter", "check", "words"),
    [
        (GoldViewNotJson, "gold view", "gold_view of toy-gold-view-not-json/easy/easy-0 is not"),
        (ExplanationRaises, "explanation", "explain_failure() raised KeyError"),
        (DuplicateIds, "load", "repeats sample ids same"),
        (IgnoresLimit, "load", "gave 5 samples for limit 2"),
        (FailingOracle, "oracle", "did not pass"),
        (NoSubsets, "subsets", "subsets() is empty"),
        (ScoreFromNothing, "no score unscored", "none of which was scored"),
    ],
)
def test_a_broken_adapter_fails_naming_the_check_and_the_adapter(adapter, check, words):
    before = dict(registry._registered)
    with pytest.raises(ConformanceError) as caught:
        check_adapter(adapter)
    message = str(caught.value)
    assert message.startswith(f"check '{check}' failed for adapter '{adapter.name}': ")
    assert words in message and "\n" not in message
    assert caught.value.check == check and isinstance(caught.value, AssertionError)
    assert registry._registered == before


def test_every_adapter_takes_what_follows_the_subset_by_keyword():
    keyword = inspect.Parameter.KEYWORD_ONLY
    expected = [("subset", inspect.Parameter.POSITIONAL_OR_KEYWORD)] + [
        (name, keyword) for name in ("limit", "ids", "data_dir", "options")
    ]
    adapters = [ToyAdapter] + [type(registry.get_adapter(n)) for n in registry.benchmark_names()]
    assert len(adapters) > 4
    for adapter in adapters:
        parameters = list(inspect.signature(adapter.load).parameters.values())[1:]
        assert [(p.name, p.kind) for p in parameters] == expected, adapter.__name__
        assert all(p.default is None for p in parameters[1:]), adapter.__name__
    with pytest.raises(TypeError):
        ToyAdapter().load("easy", 2)  # type: ignore[misc]
