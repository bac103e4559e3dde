"""World-model fidelity: how well the rehearser predicts the real environment.

With ``measure_world_model`` on, ``PredictingEnvironment`` asks the rehearser for
every real tool call of the committed episode *before* the real call runs (so the
prediction cannot peek), then runs it; both go to
``trajectory.extra["world_model"]`` as ``{call, predicted, actual}``. The
prediction never reaches the agent.

Metrics per call (``call_fidelity``):
- status agreement: predicted and real result agree on error vs success (a
  prediction the rehearser did not format readably agrees with nothing);
- exact match: the same JSON value (or, for text, the same stripped text);
- key overlap: Jaccard index of the top-level keys, where both are JSON objects
  (0 where only one is an object; not applicable where neither is);
- value agreement: share of the shared top-level keys whose values are equal
  (applicable where both are objects sharing at least one key).
``summarize`` averages them over calls (each call weighs the same; the last two
over the calls where they apply) and ``aggregate_world_model`` does it per
benchmark and subset over a run's stored records.
"""

from __future__ import annotations

from harness.boundary.json_value import JsonObject
from harness.boundary.tool_checks import result_status
from harness.episode.tap import ConversationTap
from harness.models.base import ModelError
from harness.strategies.committed import CommittedLayer, LayerNotes, SampleRun
from harness.strategies.prompts import PROMPT_VERSION
from harness.strategies.rehearser import (
    Prediction,
    Rehearser,
    call_dict,
    rehearser_for,
    reply_text,
)
from harness.strategies.settings import StrategySettings
from harness.task.contract import Environment, WrappedEnvironment
from harness.types import ToolCall, ToolResult, ToolSchema


class PredictingEnvironment(WrappedEnvironment):
    """The real environment, with the rehearser's prediction recorded before each call."""

    def __init__(
        self,
        inner: Environment,
        rehearser: Rehearser,
        tap: ConversationTap,
        tools: list[ToolSchema],
    ):
        super().__init__(inner)
        self.rehearser = rehearser
        self.tap = tap
        self.default_tools = tools
        self.records: list[JsonObject] = []
        # Earlier real calls and results of this episode: the rehearser's examples.
        self.examples: list[tuple[ToolCall, str]] = []
        self.failure: BaseException | None = None

    async def execute(self, call: ToolCall) -> ToolResult:
        try:
            prediction = await self.rehearser.predict(
                call,
                self.tap.tools or self.default_tools,
                self.tap.messages,
                reply_text(self.tap.reply),
                list(self.examples),
            )
        except ModelError as exc:
            # A measurement with holes is not a measurement: end the episode as an
            # infrastructure error (the real call below still runs for this step).
            self.failure = exc
            self.tap.abort = exc
            prediction = None
        try:
            actual = await self.inner.execute(call)
        except Exception as exc:
            actual = ToolResult(f"Error: {type(exc).__name__}: {exc}", True)
            self._record(call, prediction, actual)
            raise
        self._record(call, prediction, actual)
        self.examples.append((call, actual.content))
        return actual

    def _record(self, call: ToolCall, prediction: Prediction | None, actual: ToolResult) -> None:
        if prediction is None:
            return
        self.records.append(
            {
                "call": call_dict(call),
                "predicted": prediction.to_dict(),
                "actual": {
                    "content": actual.content,
                    "is_error": actual.is_error,
                    "status": result_status(actual.content, actual.is_error),
                },
            }
        )


# ---------------------------------------------------------------- metrics


class _ProbeLayer(CommittedLayer):
    def __init__(self, run: SampleRun):
        self.run = run
        self.predictor: PredictingEnvironment | None = None

    def environment(self, environment: Environment, tap: ConversationTap) -> Environment:
        run = self.run
        rehearser = rehearser_for(run.rehearser_model, run.settings, run.ledger, run.params)
        self.predictor = PredictingEnvironment(environment, rehearser, tap, run.sample.tools)
        return self.predictor

    def notes(self) -> LayerNotes:
        return {} if self.predictor is None else {"world_model": self.predictor.records}


class WorldModelProbe:
    """``measure_world_model`` as a layer of the committed episode: every real call
    is also predicted by the rehearser, and the predictions kept for fidelity."""

    def __init__(self, settings: StrategySettings):
        self.settings = settings

    def __call__(self, run: SampleRun) -> CommittedLayer:
        return _ProbeLayer(run)

    def describe(self) -> JsonObject:
        s = self.settings
        return {
            "measure_world_model": True,
            "prompt_version": PROMPT_VERSION,
            "rehearser_model": s.rehearser_model,
            "rehearser_api_base": s.rehearser_api_base,
            "think_switch": s.think_switch,
            "max_examples": s.max_examples,
            "max_prompt_chars": s.max_prompt_chars,
        }


def probe_layers(settings: StrategySettings) -> list[WorldModelProbe]:
    """The world-model probe, when the settings ask for it."""
    return [WorldModelProbe(settings)] if settings.measure_world_model else []
