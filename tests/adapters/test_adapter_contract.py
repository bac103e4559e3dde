"""A benchmark is added by writing an adapter, not by editing the core: the toy
adapter (tests/toy_adapter.py, walked through in docs/adapters.md) gets its
headline, its interval, its leaderboard column and its own command."""

from __future__ import annotations

import random

import pytest
from fake_runs import make_run, record

from harness.cli import main
from harness.report.leaderboard import load_run, render
from harness.results.headlines import benchmark_label, estimator_for, primary_metric
from harness.run.scoring import aggregate_records
from harness.store.records import Record


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setenv("HARNESS_ADAPTERS", "toy=toy_adapter:ToyAdapter")


def toy_records(seed: int) -> list[dict]:
    rng = random.Random(seed)
    return [
        record("toy", subset, f"{subset}-{i}", trial, passed=rng.random() < 0.6)
        for subset, count in (("easy", 12), ("hard", 7))
        for i in range(count)
        for trial in range(2)
    ]


def test_the_adapter_declares_what_headlines_it(toy):
    assert benchmark_label("toy") == "Toy"
    assert primary_metric("toy", {"n_tasks": 3, "overall": 0.5}) == "overall"
    assert estimator_for("toy").description == "mean over subsets of the accuracy"


def test_headline_interval_and_column_without_a_core_edit(toy, tmp_path):
    records = toy_records(3)
    official = aggregate_records([Record.from_dict(r) for r in records])["toy"]["headline"]
    run_dir = make_run(tmp_path, "toy-run", records, {"toy": official})
    entry = load_run(run_dir, n_boot=300).benchmarks["toy"]
    assert entry.primary == "overall" and entry.primary_value == pytest.approx(official["overall"])
    # The interval is there because the adapter's estimator recomputes the official value.
    assert entry.ci_note == "" and entry.interval is not None
    assert entry.interval.low < official["overall"] < entry.interval.high
    board = render([run_dir], "md", n_boot=300)
    summary = board.split("### ")[1]
    assert "| Toy overall (%) |" in summary
    cell = f"{100 * official['overall']:.2f} ({100 * entry.interval.low:.1f}"
    assert cell in summary
    # No composite is defined over the toy benchmark, so none is shown.
    assert "Overall" not in summary and "composite" not in board


def test_the_adapter_contributes_a_command(toy, capsys):
    assert main(["toy-targets", "hard"]) == 0
    assert capsys.readouterr().out.splitlines() == ["hard-0: 10", "hard-1: 20", "hard-2: 30"]
    assert main(["toy-targets", "nope"]) == 2


def test_user_side_tool_calls_go_through_the_environment_interface():
    from harness.strategies.monitor import REHEARSAL, SandboxViolation, phase
    from harness.strategies.sandbox import EnvironmentGuard
    from harness.types import ToolCall

    from toy_adapter import CounterEnvironment

    call = ToolCall(id="u1", name="add", arguments={"n": 1})
    # An environment without user tools refuses, as a tool error the user sees.
    refused = CounterEnvironment().execute_user_call(call)
    assert refused.is_error and "user cannot call 'add'" in refused.content
    # Wrappers forward it, so the sandbox sees (and in rehearsal refuses) user calls too.
    guard = EnvironmentGuard(CounterEnvironment)
    environment = guard()
    assert environment.execute_user_call(call).is_error
    with phase(REHEARSAL), pytest.raises(SandboxViolation):
        environment.execute_user_call(call)
    assert guard.violations == ["user call add"]


def test_reporting_defaults_and_a_benchmark_without_a_label_shows_its_name(monkeypatch):
    import dataclasses

    from harness.results.headlines import benchmark_info
    from harness.task import Adapter, Reporting, registry

    from toy_adapter import ToyAdapter

    default = Adapter.reporting
    assert default == Reporting(
        label="",
        primary_metric="",
        primary_quantity="score",
        estimators_need_metadata=False,
        table_order=100,
        family="",
        pass_hat_k_trials="",
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        default.label = "changed"  # type: ignore[misc]
    assert (default.label_for("plain"), ToyAdapter.reporting.label_for("toy")) == ("plain", "Toy")

    class Plain(ToyAdapter):
        name = "plain"
        reporting = Reporting()

    monkeypatch.setattr(registry, "find_adapter", lambda name: Plain() if name == "plain" else None)
    info = benchmark_info("plain")
    assert (info.label, info.primary, info.quantity, info.order) == ("plain", "", "score", 100)
    toy_info = benchmark_info("toy")  # not found here: neutral defaults under its name
    assert (toy_info.label, toy_info.primary) == ("toy", "")
