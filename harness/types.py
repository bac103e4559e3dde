"""Plain data types shared by every part of the harness.

Messages are OpenAI chat-format dicts (``{"role": ..., "content": ...}``) so that
they go to any model client unchanged and serialise to JSON as they are.
Everything here is JSON-serialisable through ``to_dict`` / ``from_dict``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any, TypedDict

from harness.boundary.json_value import JsonMapping, JsonObject, JsonValue
from harness.boundary.sanitise import BoundsError, clean_str, clean_value, dumps_safe, loads_bounded

# Raw argument text kept in a record when the arguments could not be used.
MAX_RAW_ARGUMENT_CHARS = 100_000

Message = dict[str, Any]
ToolSchema = dict[
    str, Any
]  # {"type": "function", "function": {"name", "description", "parameters"}}


@dataclass
class ToolCall:
    """One tool call as the model wrote it.

    ``arguments`` is the parsed JSON object, or None when ``raw_arguments`` could not
    be parsed into an object; ``parse_error`` then says why. A call with a parse
    error is never executed: the agent is shown the error instead.

    ``raw_verbatim`` says that ``raw_arguments`` is the text the call came with:
    the arguments string of a model's reply (``from_openai``, the reply parsers),
    or of a stored record. That text goes back to the model as it is in later
    requests, an empty one included, as official handlers put the model's
    output items back into the history as they came. A call built in code from its
    ``arguments`` (an oracle's, a parsed Python call) has no such text; when its
    ``raw_arguments`` is empty it is sent, and recorded, as the JSON of its
    arguments (``arguments_text``). The flag is no key of the record (older code
    builds ``ToolCall(**record)``): a record's ``raw_arguments`` is always the text
    the conversation carried.
    """

    id: str
    name: str
    arguments: JsonObject | None
    raw_arguments: str = ""
    parse_error: str | None = None
    # Characters replaced with U+FFFD while parsing the arguments text (escaped
    # lone surrogates); kept in the record when not 0.
    text_repairs: int = 0
    raw_verbatim: bool = field(default=False, compare=False, repr=False, kw_only=True)

    def arguments_text(self) -> str:
        """The arguments as the conversation carries them: the model's own text as
        it came ("" included); for a call built in code without text, the JSON of
        its arguments."""
        if self.raw_arguments or self.raw_verbatim or self.arguments is None:
            return self.raw_arguments
        return json.dumps(self.arguments, ensure_ascii=False)

    def to_openai(self) -> JsonObject:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments_text()},
        }

    def to_dict(self) -> JsonObject:
        # The keys older code reads; raw_arguments is the text the conversation
        # carried, so only a call built in code without text reads otherwise than
        # before (its JSON instead of "").
        data: JsonObject = {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "raw_arguments": self.arguments_text(),
            "parse_error": self.parse_error,
        }
        if self.text_repairs:
            data["text_repairs"] = self.text_repairs
        return data

    @classmethod
    def from_dict(cls, data: JsonMapping) -> ToolCall:
        # Keys of another version are left out, as Record keeps them apart.
        arguments = data["arguments"]
        call = cls(
            id=_stored_text(data["id"]),
            name=_stored_text(data["name"]),
            arguments=arguments if isinstance(arguments, dict) else None,
            raw_arguments=_stored_text(data.get("raw_arguments", "")),
            parse_error=_optional_text(data.get("parse_error")),
            text_repairs=whole_number(data.get("text_repairs", 0)),
        )
        # A record's raw_arguments is the text the conversation carried: sent back
        # as it is. The one exception is a record older code wrote for a call built
        # in code: "" beside arguments that are not empty (a model's "" parses to
        # {}), which stands for their JSON, as it did then.
        call.raw_verbatim = not (call.raw_arguments == "" and bool(call.arguments))
        return call

    @classmethod
    def from_openai(cls, data: JsonMapping) -> ToolCall:
        """Build from an OpenAI ``tool_calls`` entry, parsing its arguments safely.

        Text is made valid UTF-8 and arguments are held to the parse bounds of
        harness.boundary.sanitise; arguments over a bound become a parse error.
        """
        function = data.get("function")
        if not isinstance(function, dict):
            function = {}
        name = clean_str(_text_of(function.get("name") or ""))[0]
        call_id = clean_str(_text_of(data.get("id") or ""))[0]
        raw = function.get("arguments")
        if isinstance(raw, dict):
            try:
                arguments = clean_value(raw).value
            except BoundsError as exc:
                raw_text = dumps_safe(raw)[:MAX_RAW_ARGUMENT_CHARS]
                return cls(call_id, name, None, raw_text, f"arguments are not usable: {exc}")
            return cls(call_id, name, arguments, json.dumps(arguments, ensure_ascii=False))
        raw_text = clean_str("" if raw is None else _text_of(raw))[0]
        arguments, error, replaced = _parse_arguments(raw_text)
        return cls(
            call_id, name, arguments, raw_text, error, text_repairs=replaced, raw_verbatim=True
        )


def _text_of(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else dumps_safe(value)


def parse_arguments(raw: str) -> tuple[JsonObject | None, str | None]:
    """Parse a JSON arguments string into an object, never raising.

    An empty string means "no arguments" (some servers send it for zero-argument
    calls). Text that is not JSON, is over the parse bounds (nesting depth,
    number of values, integer size) or holds NaN/Infinity is an error.
    """
    arguments, error, _ = _parse_arguments(raw)
    return arguments, error


def _parse_arguments(raw: str) -> tuple[JsonObject | None, str | None, int]:
    """parse_arguments, plus how many characters were replaced to make it valid text."""
    if raw.strip() == "":
        return {}, None, 0
    try:
        cleaned = loads_bounded(raw)
    except BoundsError as exc:
        return None, f"arguments are not usable: {exc}", 0
    except ValueError as exc:
        return None, f"arguments are not valid JSON: {exc}", 0
    if not isinstance(cleaned.value, dict):
        kind = type(cleaned.value).__name__
        return None, f"arguments must be a JSON object, got {kind}", cleaned.replaced
    return cleaned.value, None, cleaned.replaced


def whole_number(value: JsonValue) -> int:
    """A stored count as an int, as ``int()`` reads it (TypeError for None, a
    list or an object, as ``int()`` gives)."""
    if isinstance(value, bool | int | float | str):
        return int(value)
    raise TypeError(f"a count cannot be {type(value).__name__}")


def _stored_text(value: JsonValue) -> str:
    if not isinstance(value, str):
        raise TypeError(f"text expected, not {type(value).__name__}")
    return value


def _optional_text(value: JsonValue) -> str | None:
    return None if value is None else _stored_text(value)


def _number(value: JsonValue) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    raise TypeError(f"a number expected, not {type(value).__name__}")


def _optional_number(value: JsonValue) -> float | None:
    return None if value is None else _number(value)


def _optional_count(value: JsonValue) -> int | None:
    return None if value is None else whole_number(value)


def _objects(value: JsonValue) -> list[JsonObject]:
    """The objects of a stored list (None: none)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"a list expected, not {type(value).__name__}")
    return [item for item in value if isinstance(item, dict)]


@dataclass
class ToolResult:
    """What the environment answered to one tool call."""

    content: str
    is_error: bool = False


@dataclass
class Usage:
    """Token and call counts of model calls."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_calls: int = 0

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_calls += other.cached_calls

    def to_dict(self) -> dict[str, int]:
        # Written out: dataclasses.asdict deep-copies and is a hot spot here.
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_calls": self.cached_calls,
        }

    @classmethod
    def from_dict(cls, data: JsonMapping) -> Usage:
        return cls(
            calls=whole_number(data.get("calls", 0)),
            prompt_tokens=whole_number(data.get("prompt_tokens", 0)),
            completion_tokens=whole_number(data.get("completion_tokens", 0)),
            cached_calls=whole_number(data.get("cached_calls", 0)),
        )


@dataclass
class AssistantTurn:
    """One reply of a model: text, tool calls, reasoning (kept apart), usage."""

    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str | None = None
    usage: Usage = field(default_factory=Usage)
    raw: object = None  # the provider's reply, for the record
    finish_reason: str | None = None
    # Characters of the reply replaced with U+FFFD because they were not valid
    # UTF-8 (lone surrogates, invalid bytes); kept in the record when not 0.
    text_repairs: int = 0

    def to_message(self) -> Message:
        message: Message = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        return message

    def to_dict(self) -> JsonObject:
        data: JsonObject = {
            "content": self.content,
            "tool_calls": [call.to_dict() for call in self.tool_calls],
            "reasoning": self.reasoning,
            "usage": {**self.usage.to_dict()},
            "finish_reason": self.finish_reason,
        }
        if self.text_repairs:
            data["text_repairs"] = self.text_repairs
        return data

    @classmethod
    def from_dict(cls, data: JsonMapping) -> AssistantTurn:
        usage = data.get("usage")
        return cls(
            content=_optional_text(data.get("content")),
            tool_calls=[ToolCall.from_dict(c) for c in _objects(data.get("tool_calls"))],
            reasoning=_optional_text(data.get("reasoning")),
            usage=Usage.from_dict(usage if isinstance(usage, dict) else {}),
            finish_reason=_optional_text(data.get("finish_reason")),
            text_repairs=whole_number(data.get("text_repairs") or 0),
        )


@dataclass
class SamplingParams:
    """Sampling settings sent with every model call (None = the server's default)."""

    temperature: float | None = 0.0
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    extra: JsonObject = field(default_factory=dict)
    # Which attempt of a simulation this is, where the benchmark's own runner runs
    # a simulation again (EpisodeLimits.max_attempts). Never sent to the model; part
    # of the cache key from the second attempt on, so a rerun asks the model again.
    attempt: int = 1

    def to_dict(self) -> JsonObject:
        data: JsonObject = asdict(self)
        if self.attempt == 1:
            del data["attempt"]  # a first attempt reads (and keys the cache) as before
        return data


class _NotPlain(Exception):
    """A value _plain_copy leaves to dataclasses.asdict."""


def _plain_copy(value: object) -> JsonValue:
    """A copy of JSON-like data (dicts with text keys, lists, text, numbers, None),
    the same as dataclasses.asdict makes of it; _NotPlain for anything else."""
    if value is None or type(value) is str or type(value) is int:
        return value
    if type(value) is float or type(value) is bool:
        return value
    if type(value) is dict:
        return {_plain_key(key): _plain_copy(item) for key, item in value.items()}
    if type(value) is list:
        return [_plain_copy(item) for item in value]
    raise _NotPlain


def _plain_key(key: object) -> str:
    if type(key) is not str:
        raise _NotPlain  # asdict keeps such keys as they are
    return key


@dataclass
class Score:
    """The score of one (sample, trial).

    ``passed`` is the benchmark's pass/fail; ``reward`` its numeric reward;
    ``progress`` partial credit in [0, 1] (None where the benchmark has none);
    tool-call counts where the benchmark scores tool calls. ``excluded`` says why
    the benchmark's own rules leave this trial out of its metrics (e.g. a
    simulation its runner bins as an infrastructure error): such a trial counts
    as not scored everywhere, and is counted apart.
    """

    passed: bool
    reward: float
    progress: float | None = None
    tool_tp: int | None = None
    tool_fp: int | None = None
    tool_fn: int | None = None
    details: dict[str, Any] = field(default_factory=dict)  # the adapter's own, JSON
    excluded: str | None = None
    # Why the trial failed, in plain words (Adapter.explain_failure); "" when none.
    explanation: str = ""

    def __post_init__(self) -> None:
        # A verdict computed with numpy is numpy's boolean, which JSON would write
        # as the text "True": a record the typed check refuses when read back.
        if not isinstance(self.passed, bool):
            self.passed = bool(self.passed)

    def to_dict(self) -> JsonObject:
        # Written out for plain JSON-like details (every adapter's): dataclasses.asdict
        # costs ~40 µs a record; anything else in them gets asdict's own rules.
        try:
            details = _plain_copy(self.details)
        except _NotPlain:
            data = asdict(self)
        else:
            data = {
                "passed": self.passed,
                "reward": self.reward,
                "progress": self.progress,
                "tool_tp": self.tool_tp,
                "tool_fp": self.tool_fp,
                "tool_fn": self.tool_fn,
                "details": details,
                "excluded": self.excluded,
                "explanation": self.explanation,
            }
        if data["excluded"] is None:
            del data["excluded"]  # records of benchmarks without the rule stay as they were
        if not data["explanation"]:
            del data["explanation"]  # records of passed trials read as they always did
        return data

    @classmethod
    def from_dict(cls, data: JsonMapping) -> Score:
        # A stored score without a reward or a verdict (another writer's) reads as
        # the estimators read it (results.stats.trial_values): reward 0, passed
        # when the reward is full.
        reward = _number(data.get("reward") or 0.0)
        passed = data.get("passed")
        details = data.get("details", {})
        if not isinstance(details, dict):
            raise TypeError(f"a score's details are an object, not {type(details).__name__}")
        return cls(
            passed=reward >= 1.0 if passed is None else bool(passed),
            reward=reward,
            progress=_optional_number(data.get("progress")),
            tool_tp=_optional_count(data.get("tool_tp")),
            tool_fp=_optional_count(data.get("tool_fp")),
            tool_fn=_optional_count(data.get("tool_fn")),
            details=details,
            excluded=_optional_text(data.get("excluded")),
            explanation=_stored_text(data.get("explanation", "")),
        )


class TerminationReason(str, Enum):
    """Why an episode ended (``Trajectory.termination``): the text a record keeps.

    The episode loop's own ends and limits, and the ends the benchmarks' user
    simulators and stop rules give (in each benchmark's own words, as its runner
    records them). A record written by another version may hold another text; it
    is read back as it is.
    """

    COMPLETED = "completed"  # the user (or a single turn) ended it
    SKIPPED = "skipped"  # nothing ran (a rehearsal that was not needed)
    CONTEXT_OVERFLOW = "context_overflow"  # the model's context limit: a scored failure
    MAX_STEPS = "max_steps"
    MAX_MESSAGES = "max_messages"
    MAX_TOKENS = "max_tokens"
    WALL_TIME = "wall_time"
    MAX_TOOL_ERRORS = "max_tool_errors"
    MAX_STEPS_PER_TURN = "max_steps_per_turn"
    USER_STOP = "user_stop"
    AGENT_STOP = "agent_stop"
    TOO_MANY_ERRORS = "too_many_errors"  # a benchmark's own tool-error limit
    AGENT_ERROR = "agent_error"  # the agent sent what the benchmark's code refuses
    USER_ERROR = "user_error"  # the user did
    ABORTED = "aborted"  # a void simulation, run again
    INVALID_AGENT_MESSAGE = "invalid_agent_message"  # an empty agent reply
    REHEARSER_USER_SILENT = "rehearser_user_silent"  # a rehearsal's simulated user said nothing

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


class TrajectoryExtra(TypedDict, total=False):
    """What an episode and its strategy note beside the transcript
    (``Trajectory.extra``); each key is there only when it was written."""

    wall_time_s: float  # the episode's seconds (episode/loop.py)
    final_state_error: str  # why the environment's final state could not be read
    void_attempts: list[JsonObject]  # attempts run again (episode/attempts.py)
    costs: JsonObject  # by phase and role (strategies/costs.py)
    world_model: list[JsonObject]  # {call, predicted, actual} (strategies/world_model.py)
    env_feedback: JsonObject  # how tool results were rewritten (strategies/committed.py)
    rehearsal: JsonObject  # the rehearsals of a rehearsal strategy
    self_consistency: JsonObject  # the votes of each step


def trajectory_extra(data: object) -> TrajectoryExtra:
    """A stored ``extra`` as a TrajectoryExtra: the keys it declares, each when it
    has its type (a key of another version is not read)."""
    extra = TrajectoryExtra()
    if not isinstance(data, dict):
        return extra
    wall_time, error = data.get("wall_time_s"), data.get("final_state_error")
    if isinstance(wall_time, int | float) and not isinstance(wall_time, bool):
        extra["wall_time_s"] = wall_time
    if isinstance(error, str):
        extra["final_state_error"] = error
    costs, feedback = data.get("costs"), data.get("env_feedback")
    rehearsal, votes = data.get("rehearsal"), data.get("self_consistency")
    if isinstance(costs, dict):
        extra["costs"] = costs
    if isinstance(feedback, dict):
        extra["env_feedback"] = feedback
    if isinstance(rehearsal, dict):
        extra["rehearsal"] = rehearsal
    if isinstance(votes, dict):
        extra["self_consistency"] = votes
    attempts, predictions = data.get("void_attempts"), data.get("world_model")
    if isinstance(attempts, list):
        extra["void_attempts"] = [entry for entry in attempts if isinstance(entry, dict)]
    if isinstance(predictions, list):
        extra["world_model"] = [entry for entry in predictions if isinstance(entry, dict)]
    return extra


@dataclass
class Trajectory:
    """Everything an episode produced, enough to score it again without a model.

    ``messages`` is the transcript: every message produced during the episode, in
    order (user turns, assistant replies, tool results), after the sample's
    ``initial_messages``. ``context_resets`` lists transcript indexes at which the
    model's visible context was replaced by a given history (teacher forcing); the
    replacement histories are in ``reset_histories`` (same order).
    ``turns`` holds the parsed assistant turns (tool calls with parse errors,
    reasoning, usage) in transcript order.
    """

    messages: list[Message] = field(default_factory=list)
    turns: list[AssistantTurn] = field(default_factory=list)
    # A TerminationReason; a record of another version may hold another text.
    termination: str = TerminationReason.COMPLETED
    tool_calls: int = 0
    tool_errors: int = 0
    usage: dict[str, Usage] = field(default_factory=dict)  # by role: actor, user, ...
    context_resets: list[int] = field(default_factory=list)
    reset_histories: list[list[Message]] = field(default_factory=list)
    final_state: JsonValue = None  # the environment's state at the end, as JSON
    extra: TrajectoryExtra = field(default_factory=TrajectoryExtra)

    def add_usage(self, role: str, usage: Usage) -> None:
        self.usage.setdefault(role, Usage()).add(usage)

    def assistant_tool_calls(self) -> list[ToolCall]:
        return [call for turn in self.turns for call in turn.tool_calls]

    def to_dict(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "turns": [turn.to_dict() for turn in self.turns],
            "termination": str(self.termination),
            "tool_calls": self.tool_calls,
            "tool_errors": self.tool_errors,
            "usage": {role: usage.to_dict() for role, usage in self.usage.items()},
            "context_resets": self.context_resets,
            "reset_histories": self.reset_histories,
            "final_state": self.final_state,
            "extra": self.extra,
        }

    @classmethod
    def from_dict(cls, data: JsonMapping) -> Trajectory:
        usage = data.get("usage") or {}
        resets = data.get("context_resets") or []
        histories = data.get("reset_histories") or []
        if not isinstance(usage, dict) or not isinstance(resets, list):
            raise TypeError("a trajectory's usage is an object and its context_resets a list")
        if not isinstance(histories, list):
            raise TypeError("a trajectory's reset_histories are a list")
        return cls(
            messages=_objects(data.get("messages")),
            turns=[AssistantTurn.from_dict(t) for t in _objects(data.get("turns"))],
            termination=_stored_text(data.get("termination", TerminationReason.COMPLETED.value)),
            tool_calls=whole_number(data.get("tool_calls", 0)),
            tool_errors=whole_number(data.get("tool_errors", 0)),
            usage={r: Usage.from_dict(u) for r, u in usage.items() if isinstance(u, dict)},
            context_resets=[whole_number(index) for index in resets],
            reset_histories=[_objects(history) for history in histories],
            final_state=data.get("final_state"),
            extra=trajectory_extra(data.get("extra")),
        )
