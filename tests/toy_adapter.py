"""A tiny benchmark for testing the core: count to a target with an `add` tool.

Each sample asks the agent to reach a target number by calling add(n=...)
(each call adds n to a counter); it passes when the counter equals the target.
Its headline ``overall`` is the mean over subsets of the accuracy; the aggregate
and the bootstrap interval both compute it with ``overall_of``. It also adds a
command, ``harness toy-targets``. docs/adapters.md walks through this file.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Mapping
from typing import Any

from harness.models.base import ModelClient, ModelError, ScriptedClient
from harness.task.contract import (
    Adapter,
    BenchmarkResult,
    Environment,
    EpisodeLimits,
    RecordView,
    Reporting,
    Sample,
    SubsetResult,
)
from harness.task.estimators import Estimator, mean_of, subset_means
from harness.types import AssistantTurn, Score, ToolCall, ToolResult, Trajectory

ADD_TOOL = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add n to the counter.",
        "parameters": {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    },
}


class CounterEnvironment(Environment):
    def __init__(self) -> None:
        self.total = 0

    async def execute(self, call: ToolCall) -> ToolResult:
        if call.name != "add":
            return ToolResult(f"Error: unknown tool {call.name}", True)
        n = call.arguments.get("n") if call.arguments else None
        if not isinstance(n, int) or isinstance(n, bool):
            return ToolResult("Error: n must be an integer", True)
        self.total += n
        return ToolResult(str(self.total))

    def final_state(self) -> dict:
        return {"total": self.total}


def overall_of(accuracy: Mapping[str, Any]) -> Any:
    """The headline: the plain mean of the subsets' accuracies (floats or arrays)."""
    return mean_of(list(accuracy.values())) if accuracy else 0.0


ESTIMATORS = {
    "overall": Estimator(
        "overall",
        ("passed",),  # per task: the mean over its trials of Score.passed
        lambda sums, counts: overall_of(subset_means(sums, counts)),
        "mean over subsets of the accuracy",
    )
}


class ToyAdapter(Adapter):
    name = "toy"
    reporting = Reporting(label="Toy", primary_metric="overall", primary_quantity="pass rate")

    def subsets(self) -> list[str]:
        return ["easy", "hard", "keyed"]

    def unavailable_reason(self, subset: str) -> str | None:
        return "needs TOY_KEY" if subset == "keyed" else None

    def known_options(self) -> dict[str, str]:
        # Credentials a benchmark's judge could take; the toy only carries them,
        # so that tests can see they never reach what a run writes.
        return {
            "api_key": "a key for the (absent) judge",
            "judge_api_key": "another one",
        }

    def load(self, subset, *, limit=None, ids=None, data_dir=None, options=None) -> list[Sample]:
        count = 5 if subset == "easy" else 3
        samples = []
        for i in range(count):
            target = i + 1 if subset == "easy" else 10 * (i + 1)
            sample_id = f"{subset}-{i}"
            if ids is not None and sample_id not in ids:
                continue
            samples.append(
                Sample(
                    id=sample_id,
                    benchmark="toy",
                    subset=subset,
                    tools=[ADD_TOOL],
                    initial_messages=[{"role": "user", "content": f"Reach {target}."}],
                    make_environment=CounterEnvironment,
                    limits=EpisodeLimits(max_steps=10),
                    gold={"target": target},
                    metadata={"target": target},
                )
            )
        return samples if limit is None else samples[:limit]

    async def score(self, sample, trajectory: Trajectory, services) -> Score:
        total = (trajectory.final_state or {}).get("total")
        passed = total == sample.gold["target"]
        return Score(passed=passed, reward=float(passed), details={"total": total})

    def gold_view(self, sample: Sample) -> dict[str, Any]:
        return {"target": sample.gold["target"]}

    def explain_failure(self, sample: Sample, trajectory: Trajectory, score: Score) -> str:
        total = (trajectory.final_state or {}).get("total")
        return f"the counter reached {total}, the target is {sample.gold['target']}"

    def aggregate(self, records: list[RecordView]) -> BenchmarkResult:
        subsets: dict[str, SubsetResult] = {}
        for subset in sorted({r.subset for r in records}):
            group = [r for r in records if r.subset == subset]
            scored = [r for r in group if r.score is not None]
            accuracy = sum(r.score.passed for r in scored) / len(group) if group else 0.0
            subsets[subset] = SubsetResult(
                metrics={"accuracy": accuracy},
                n_samples=len({r.sample_id for r in group}),
                n_records=len(group),
                n_infra_errors=len(group) - len(scored),
            )
        overall = overall_of({name: s.metrics["accuracy"] for name, s in subsets.items()})
        return BenchmarkResult("toy", {"overall": overall}, subsets)

    def estimators(self) -> dict[str, Estimator]:
        return ESTIMATORS

    def commands(self) -> dict[str, str]:
        return {"toy-targets": "toy_adapter"}  # this module: HELP, add_arguments, run

    def oracle(self, sample: Sample) -> ModelClient:
        call = ToolCall(id="c1", name="add", arguments={"n": sample.gold["target"]})
        return ScriptedClient([AssistantTurn(tool_calls=[call])], name="oracle")


class FlakyOracle(ModelClient):
    """Fails with a permanent error on chosen sample targets, else plays the oracle."""

    name = "flaky"

    def __init__(self, sample: Sample, fail_targets: set[int], delay: float = 0.0):
        self.sample = sample
        self.inner = ToyAdapter().oracle(sample)
        self.fail_targets = fail_targets
        self.delay = delay

    async def complete(self, messages, tools, params):
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.sample.gold["target"] in self.fail_targets:
            raise ModelError("server unavailable", transient=True)
        return await self.inner.complete(messages, tools, params)


# --- the command this adapter contributes: ``harness toy-targets SUBSET`` ---------

HELP = "print the targets of a toy subset"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("subset", choices=ToyAdapter().subsets())


def run(args: argparse.Namespace) -> int:
    for sample in ToyAdapter().load(args.subset):
        print(f"{sample.id}: {sample.gold['target']}")
    return 0
