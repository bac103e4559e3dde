"""Self-consistency per step: K sampled replies, the majority's tool calls executed.

``VotingClient`` wraps the actor model, so the episode loop is unchanged: at every
step it samples K replies (temperature > 0, a distinct seed each), files each
under a canonical key (tool names with canonical JSON arguments, order-free;
every text-only reply in one bucket) and returns the first reply of the largest
bucket (ties go to the bucket seen first). Its usage is the sum of the K calls.
The votes of every step are recorded in ``extra["self_consistency"]``.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TypedDict

from harness.boundary.json_value import JsonObject, JsonValue
from harness.errors import ConfigError
from harness.models.base import ModelClient, WrappedClient
from harness.strategies.base import Strategy
from harness.strategies.committed import (
    CommittedLayer,
    LayerFactory,
    SampleRun,
    finish,
    gather_all,
    run_committed,
)
from harness.strategies.prompts import PROMPT_VERSION
from harness.strategies.settings import StrategySettings, derive_seed
from harness.strategies.world_model import probe_layers
from harness.task.contract import Sample, Services
from harness.types import AssistantTurn, SamplingParams, ToolCall, Trajectory, Usage

TEXT_BUCKET = "text"


def canonical_call(call: ToolCall) -> str:
    if call.arguments is not None:
        arguments = json.dumps(
            call.arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":")
        )
    else:  # unparseable arguments vote as the text the model wrote
        arguments = "raw:" + call.raw_arguments.strip()
    return f"{call.name}({arguments})"


def canonical_key(turn: AssistantTurn) -> str:
    """The vote a reply casts: its calls in canonical, order-free form, or "text"."""
    if not turn.tool_calls:
        return TEXT_BUCKET
    return " | ".join(sorted(canonical_call(call) for call in turn.tool_calls))


class Bucket(TypedDict):
    """The replies that cast one vote: how many, and the first one's index."""

    key: str
    count: int
    first: int


class Vote(TypedDict):
    """One step's vote: its buckets and the index of the reply chosen."""

    step: int
    buckets: list[Bucket]
    chosen: int
    key: str


def vote_json(vote: Vote) -> JsonObject:
    """A vote as stored in ``extra["self_consistency"]`` (its keys in the same order)."""
    buckets: list[JsonValue] = [
        {"key": bucket["key"], "count": bucket["count"], "first": bucket["first"]}
        for bucket in vote["buckets"]
    ]
    return {"step": vote["step"], "buckets": buckets, "chosen": vote["chosen"], "key": vote["key"]}


def majority(keys: list[str]) -> tuple[str, list[Bucket]]:
    """The winning key (most votes; ties to the first seen) and the tally."""
    tally: dict[str, Bucket] = {}
    for index, key in enumerate(keys):
        entry = tally.setdefault(key, {"key": key, "count": 0, "first": index})
        entry["count"] += 1
    buckets = list(tally.values())  # in order of first appearance
    winner = max(buckets, key=lambda b: (b["count"], -b["first"]))
    return winner["key"], buckets


class VotingClient(WrappedClient):
    def __init__(self, inner: ModelClient, k: int, temperature: float):
        super().__init__(inner)
        self.k = k
        self.temperature = temperature
        self.votes: list[Vote] = []

    async def complete(self, messages, tools, params) -> AssistantTurn:
        step = len(self.votes)

        def sample_params(j: int) -> SamplingParams:
            seed = derive_seed(params.seed, f"vote:{step}", j)
            return dataclasses.replace(params, temperature=self.temperature, seed=seed)

        replies = await gather_all(
            [self.inner.complete(messages, tools, sample_params(j)) for j in range(self.k)]
        )
        keys = [canonical_key(reply) for reply in replies]
        winner, buckets = majority(keys)
        chosen = keys.index(winner)
        self.votes.append({"step": step, "buckets": buckets, "chosen": chosen, "key": winner})
        usage = Usage()
        for reply in replies:
            usage.add(reply.usage)
        picked = replies[chosen]
        return dataclasses.replace(picked, usage=usage)

    def cache_identity(self) -> dict[str, object]:
        # A vote is not the reply its inner client gives to the same request.
        return {**self.inner.cache_identity(), "votes": self.k, "temperature": self.temperature}


class VotingLayer(CommittedLayer):
    """The actor of the committed episode votes over K sampled replies per step."""

    def __init__(self, k: int, temperature: float, voters: list[VotingClient]):
        self.k = k
        self.temperature = temperature
        self.voters = voters  # the strategy reads the votes from here

    def actor(self, actor: ModelClient) -> ModelClient:
        self.voters.append(VotingClient(actor, self.k, self.temperature))
        return self.voters[-1]


class SelfConsistencyStrategy(Strategy):
    """``self-consistency:K``."""

    def __init__(self, k: int, settings: StrategySettings, rehearser: ModelClient | None = None):
        if k < 1:
            raise ConfigError("self-consistency needs K >= 1 samples per step")
        self.k = k
        self.settings = settings
        self.rehearser = rehearser
        self.name = f"self-consistency:{k}"

    def describe(self) -> JsonObject:
        s = self.settings
        info: JsonObject = {
            "name": self.name,
            "k": self.k,
            "temperature": s.temperature,
            "env_feedback": s.env_feedback,
        }
        if s.measure_world_model:
            info.update(
                measure_world_model=True,
                prompt_version=PROMPT_VERSION,
                rehearser_model=s.rehearser_model,
                rehearser_api_base=s.rehearser_api_base,
                think_switch=s.think_switch,
            )
        return info

    async def run(
        self, sample: Sample, model: ModelClient, services: Services, params: SamplingParams
    ) -> Trajectory:
        run = SampleRun(sample, model, services, params, self.settings, self.rehearser or model)
        voters: list[VotingClient] = []

        layers: list[LayerFactory] = [
            lambda _run: VotingLayer(self.k, self.settings.temperature, voters),
            *probe_layers(self.settings),
        ]
        trajectory, notes = await run_committed(run, layers)
        votes: list[JsonValue] = [vote_json(vote) for vote in voters[0].votes]
        trajectory.extra["self_consistency"] = {"k": self.k, "votes": votes}
        return finish(trajectory, run, notes)
