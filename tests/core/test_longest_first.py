"""The runner starts the longest estimated episodes first, also on resume; a
suite whose adapter gives no estimate runs in load order."""

from __future__ import annotations

import asyncio

import pytest

from harness.config.suites import Suite, SuiteEntry
from harness.run.order import longest_first
from harness.run.runner import Runner
from harness.run.suite_samples import load_suite_samples
from harness.store.records import Record
from harness.store.run_store import RunStore
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Services
from harness.task.registry import get_adapter, register_adapter
from harness.types import SamplingParams

from toy_adapter import FlakyOracle, ToyAdapter


@pytest.fixture(autouse=True)
def toy_registered():
    register_adapter("toy", "toy_adapter:ToyAdapter")


class StartOrder:
    """A progress sink that keeps the order episodes started in."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def started(self, key: str) -> None:
        self.keys.append(key)

    def finished(self, record: Record) -> None:
        pass


def by_target(monkeypatch) -> None:
    """Toy samples whose estimated chain length is their target (1..5 easy, 10..30 hard)."""
    monkeypatch.setattr(
        ToyAdapter, "expected_model_calls", lambda self, sample: sample.gold["target"]
    )


def run_toy(tmp_path, provider, trials=1, longest=True) -> list[str]:
    """The keys in the order their episodes started (one at a time)."""
    plan = load_suite_samples(Suite(name="toy", entries=[SuiteEntry(benchmark="toy")]))
    store = RunStore(tmp_path / "run")
    store.write_manifest({"run_id": "run", "planned": plan.planned_counts()})
    store.open_for_append()
    started = StartOrder()
    try:
        runner = Runner(
            store,
            PlainStrategy(),
            provider,
            Services(),
            SamplingParams(),
            concurrency=1,
            progress=started,
            longest_first=longest,
        )
        asyncio.run(runner.run(plan.samples, trials))
    finally:
        store.close()
    return started.keys


def oracle(sample):
    return get_adapter("toy").oracle(sample)


def test_the_longest_estimated_episodes_start_first(tmp_path, monkeypatch):
    by_target(monkeypatch)
    started = run_toy(tmp_path, oracle, trials=2)
    # Load order is easy-0..4 then hard-0..2; the trials of a sample start together.
    expected = [
        f"toy/{subset}/{subset}-{i}#{trial}"
        for subset, i in [("hard", 2), ("hard", 1), ("hard", 0)]
        + [("easy", i) for i in (4, 3, 2, 1, 0)]
        for trial in (0, 1)
    ]
    assert started == expected


def test_a_resumed_run_starts_what_is_left_longest_first(tmp_path, monkeypatch):
    by_target(monkeypatch)
    # The first run fails on three samples (infrastructure errors, run again on resume).
    started = run_toy(tmp_path, lambda sample: FlakyOracle(sample, {1, 3, 20}))
    assert len(started) == 8
    resumed = run_toy(tmp_path, oracle)
    assert resumed == ["toy/hard/hard-1#0", "toy/easy/easy-2#0", "toy/easy/easy-0#0"]


def test_without_estimates_the_load_order_is_kept(tmp_path):
    started = run_toy(tmp_path, oracle, trials=2)
    load_order = [f"easy-{i}" for i in range(5)] + [f"hard-{i}" for i in range(3)]
    assert started == [
        f"toy/{name.split('-')[0]}/{name}#{trial}" for trial in (0, 1) for name in load_order
    ]


def test_ties_keep_their_order_and_each_sample_is_estimated_once(monkeypatch):
    asked: list[str] = []

    def estimate(self, sample):
        asked.append(sample.id)
        return 2 if sample.id in ("easy-3", "hard-0") else None  # None counts as one call

    monkeypatch.setattr(ToyAdapter, "expected_model_calls", estimate)
    samples = ToyAdapter().load("easy") + ToyAdapter().load("hard")
    items = [(sample, trial) for trial in range(3) for sample in samples]
    ordered = longest_first(items, lambda item: item[0])
    assert [(s.id, t) for s, t in ordered[:6]] == [
        ("easy-3", 0), ("hard-0", 0), ("easy-3", 1), ("hard-0", 1), ("easy-3", 2), ("hard-0", 2)
    ]  # fmt: skip
    assert [(s.id, t) for s, t in ordered[6:12]] == [
        ("easy-0", 0), ("easy-1", 0), ("easy-2", 0), ("easy-4", 0), ("hard-1", 0), ("hard-2", 0)
    ]  # fmt: skip
    assert sorted(asked) == sorted(s.id for s in samples)


def test_load_order_when_asked(tmp_path, monkeypatch):
    """--start-order load: estimates exist, yet samples start as the benchmark lists them."""
    from harness.cli import build_parser
    from harness.commands.run import run_config

    by_target(monkeypatch)
    started = run_toy(tmp_path, oracle, longest=False)
    load_order = [f"easy-{i}" for i in range(5)] + [f"hard-{i}" for i in range(3)]
    assert started == [f"toy/{name.split('-')[0]}/{name}#0" for name in load_order]
    args = build_parser().parse_args(["run", "--suite", "smoke", "--start-order", "load"])
    assert run_config(args).start_order == "load"
    assert run_config(build_parser().parse_args(["run", "--suite", "smoke"])).start_order == (
        "longest"
    )
