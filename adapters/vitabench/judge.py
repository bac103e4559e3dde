"""VitaBench's sliding-window rubric judge.

The task's rubrics start unmet. The stored conversation (greeting and tool
messages included) is cut into windows of 10 messages overlapping by 2; the judge
model sees one window at a time, with the current rubric states, and returns the
updated states. The episode passes (reward 1) only when every rubric ends met;
the fraction of met rubrics is the partial score.

Replies are read as the benchmark's evaluator reads them: ``json_repair`` first,
then ``json.loads``, so trailing commas, single quotes, ``True`` and text around
the JSON are accepted. Each element names its rubric by ``rubric_idx``; a missing
``justification`` becomes "No justification provided", a null one stays null (and
is shown so to later windows), and ``meetExpectation`` is taken as written and read
as a boolean (pydantic's lax rules) only at the end. Where the benchmark's code
raises on a reply (nothing to repair, a lone object, elements that are not
objects), the window here keeps the previous states and the reply counts as a
parse failure; by default the judge is asked once per window, as in the benchmark
(``judge_attempts`` asks again). DEVIATIONS.md lists every difference.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field

from harness.boundary.json_value import JsonList, JsonObject, JsonValue, object_field
from harness.models.base import ModelClient
from harness.types import AssistantTurn, Message, SamplingParams, Usage, parse_arguments

from .data import VitaTask
from .prompts import JUDGE_INPUT, PromptSet, time_with_weekday

WINDOW_SIZE = 10
WINDOW_OVERLAP = 2
JUDGE_ATTEMPTS = 1  # judge calls per window; the benchmark makes one
# The benchmark calls the judge at temperature 0, without tools.
JUDGE_PARAMS = SamplingParams(temperature=0.0)
NOT_EVALUATED = "Not evaluated yet"
NO_JUSTIFICATION = "No justification provided"
# json_repair's time grows steeply with deeply nested or very long input (seconds
# for a few thousand unclosed brackets); replies beyond these bounds are not
# repaired and count as unreadable. Real replies are far below both.
MAX_REPLY_CHARS = 100_000
MAX_REPLY_BRACKETS = 1_000


# ------------------------------------------------------------------ windows


def window_bounds(count: int) -> list[tuple[int, int]]:
    """``[start, end)`` of each window over ``count`` messages."""
    if count <= WINDOW_SIZE:
        return [(0, count)]
    step = WINDOW_SIZE - WINDOW_OVERLAP
    bounds = []
    start = 0
    while True:
        bounds.append((start, min(start + WINDOW_SIZE, count)))
        if start + WINDOW_SIZE >= count:
            return bounds
        start += step


def render_call(call: Mapping[str, object]) -> str:
    """``name(key='value', n=2)``: arguments as Python literals."""
    function = object_field(call.get("function"))
    name = str(function.get("name") or "")
    raw = function.get("arguments")
    if isinstance(raw, dict):
        arguments: Mapping[str, object] | None = raw
    else:
        arguments, _ = parse_arguments("" if raw is None else str(raw))
    if arguments is None:  # unreadable arguments are shown as the model wrote them
        return f"{name}({raw})"
    return f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"


def render_line(index: int, message: Message) -> str | None:
    """One judge input line, ``[index] role: content``, or None when the message
    has no content and no tool calls (it still takes its index)."""
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    calls = message.get("tool_calls") or []
    if not text and not calls:
        return None
    if calls:
        rendered = ".".join(render_call(call) for call in calls)
        text = f"{text} {rendered}" if text else rendered
    return f"[{index}] {message.get('role')}: {text}"


def window_lines(messages: list[Message], start: int, end: int) -> list[str]:
    lines = []
    for position, message in enumerate(messages[start:end]):
        line = render_line(start + position + 1, message)
        if line is not None:
            lines.append(line)
    return lines


# ------------------------------------------------------------------ states


@dataclass
class RubricState:
    rubric: str
    justification: JsonValue = NOT_EVALUATED
    meet_expectation: JsonValue = False  # as the judge wrote it; read as a boolean at the end


_TRUE_WORDS = {"true", "t", "yes", "y", "on", "1"}
_FALSE_WORDS = {"false", "f", "no", "n", "off", "0"}


def as_boolean(value: object) -> bool | None:
    """pydantic's lax boolean (how the benchmark reads ``met``); None when it is
    not one. Words are case-insensitive and not stripped."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    return None


def rubric_key(index: int) -> str:
    return f"rubric_{index}"


def states_json(states: list[RubricState]) -> str:
    rows = [
        {
            "rubric_idx": rubric_key(index),
            "rubric": state.rubric,
            "justification": state.justification,
            "meetExpectation": state.meet_expectation,
        }
        for index, state in enumerate(states)
    ]
    return json.dumps(rows, indent=2, ensure_ascii=False)


class UnreadableReply(ValueError):
    """A judge reply the benchmark's evaluator would fail on."""


def read_judge_reply(text: str | None) -> JsonValue:
    """The JSON value in a judge reply, read as the benchmark does
    (``json.loads(repair_json(text))``); raises ``UnreadableReply`` where that
    raises, and for replies too large to repair in reasonable time."""
    if not isinstance(text, str):
        raise UnreadableReply("the judge reply has no text")
    if len(text) > MAX_REPLY_CHARS or text.count("{") + text.count("[") > MAX_REPLY_BRACKETS:
        raise UnreadableReply("the judge reply is too large to repair")
    from json_repair import repair_json

    try:
        return json.loads(repair_json(text))
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise UnreadableReply(f"the judge reply holds no JSON ({type(exc).__name__})") from None


def judgement_updates(
    states: list[RubricState], value: JsonValue
) -> list[tuple[RubricState, JsonObject]]:
    """The (state, element) pairs a read reply updates, in order.

    Mirrors the benchmark's loop: elements whose ``rubric_idx`` is empty or
    unknown are skipped. Where the benchmark keeps the states and warns (an empty
    value) or raises (a lone object or a string is iterated, an element is not an
    object, a ``rubric_idx`` cannot be a key), this raises ``UnreadableReply``
    before any state changes."""
    if not value:
        raise UnreadableReply("the judge reply is empty")
    if not isinstance(value, list):
        raise UnreadableReply(f"the judge reply is a JSON {type(value).__name__}, not a list")
    by_key = {rubric_key(index): state for index, state in enumerate(states)}
    updates = []
    for element in value:
        if not isinstance(element, dict):
            raise UnreadableReply("an element of the judge reply is not an object")
        key = element.get("rubric_idx")
        if not key:
            continue
        if not isinstance(key, Hashable):
            raise UnreadableReply("a rubric_idx of the judge reply is not a plain value")
        if key in by_key:
            updates.append((by_key[key], element))
    return updates


def apply_judgement(states: list[RubricState], value: JsonValue) -> None:
    """Update the states from a read reply (all or nothing, see judgement_updates)."""
    for state, element in judgement_updates(states, value):
        state.justification = element.get("justification", NO_JUSTIFICATION)
        state.meet_expectation = element.get("meetExpectation", state.meet_expectation)


# ------------------------------------------------------------------ judging


@dataclass
class WindowRecord:
    window: int
    start: int
    end: int
    prompt: str  # the user message; the system message is rebuilt from the task
    replies: list[str] = field(default_factory=list)
    parsed: bool = False


@dataclass
class Judgement:
    reward: float
    progress: float | None
    rubrics: JsonList
    windows: list[WindowRecord]
    parse_failures: int
    usage: Usage
    note: str = ""
    states: list[RubricState] = field(default_factory=list)  # the final states, as written

    def details(self) -> dict[str, object]:
        if self.note:
            return {"rubrics": self.rubrics, "info": {"note": self.note}}
        return {
            "rubrics": self.rubrics,
            "info": {
                "evaluation_method": "sliding_window",
                "num_windows": len(self.windows),
                "window_size": WINDOW_SIZE,
            },
            "judge_parse_failures": self.parse_failures,
            "judge_windows": [window.__dict__ for window in self.windows],
            "judge_usage": self.usage.to_dict(),
        }


# The stub judge's side channel: the scorer sets whether the order diagnostic
# matched before the judge calls of one episode (context-local, so concurrent
# episodes do not see each other's value).
ORDERS_MATCH_HINT: ContextVar[bool | None] = ContextVar("vitabench_orders_match", default=None)


def env_info(task: VitaTask) -> str:
    # The benchmark shows the judge this Python dict literal, with an empty database.
    return str({"system_time": time_with_weekday(task.time, task.language), "database": []})


async def judge_conversation(
    task: VitaTask,
    messages: list[Message],
    client: ModelClient,
    prompts: PromptSet,
    orders_match: bool | None = None,
    attempts: int = JUDGE_ATTEMPTS,
) -> Judgement:
    """Run the sliding-window judge over a stored conversation."""
    states = [RubricState(rubric=text) for text in task.rubrics]
    if not states:
        # The benchmark gives 1.0 when the task lists no rubric; when it lists
        # expected states whose rubrics are all empty its code divides by zero
        # after judging. Both give 1.0 here, without a judge call.
        return Judgement(1.0, None, [], [], 0, Usage(), note="No rubric to evaluate")
    bounds = window_bounds(len(messages))
    records: list[WindowRecord] = []
    usage = Usage()
    failures = 0
    token = ORDERS_MATCH_HINT.set(orders_match)
    try:
        for number, (start, end) in enumerate(bounds, start=1):
            system = prompts.judge_system(env_info(task), task.instructions, number, len(bounds))
            prompt = JUDGE_INPUT.format(
                lines="\n".join(window_lines(messages, start, end)), states=states_json(states)
            )
            record = WindowRecord(window=number, start=start, end=end, prompt=prompt)
            records.append(record)
            judge_input = [
                {"role": "system", "content": system},
                {"role": "user", "content": prompt},
            ]
            for _ in range(max(1, attempts)):
                reply: AssistantTurn = await client.complete(judge_input, [], JUDGE_PARAMS)
                usage.add(reply.usage)
                record.replies.append(reply.content or "")
                try:
                    value = read_judge_reply(reply.content)
                    apply_judgement(states, value)
                except UnreadableReply:
                    failures += 1
                    continue
                record.parsed = True
                break
    finally:
        ORDERS_MATCH_HINT.reset(token)
    met = [as_boolean(state.meet_expectation) is True for state in states]
    rubrics: JsonList = [
        {"nl_rubric": s.rubric, "met": m, "justification": s.justification}
        for s, m in zip(states, met, strict=True)
    ]
    reward = 1.0 if all(met) else 0.0
    progress = sum(met) / len(met)
    return Judgement(reward, progress, rubrics, records, failures, usage, states=states)


# ------------------------------------------------------------------ stub judge

_CURRENT_RUBRICS = re.compile(r"<current_rubrics>\s*(.*?)\s*</current_rubrics>", re.DOTALL)


class OrdersStubJudge(ModelClient):
    """STUB judge for offline smoke runs; NOT the benchmark's judge.

    It marks every rubric met when the judge-free order diagnostic of the episode
    matched, and unmet otherwise. It reads the rubrics from the prompt it gets and
    the diagnostic from ``ORDERS_MATCH_HINT``; called outside the scorer it marks
    everything unmet.
    """

    name = "stub"

    async def complete(self, messages, tools, params) -> AssistantTurn:
        prompt = next(
            (m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), ""
        )
        found = _CURRENT_RUBRICS.search(prompt)
        try:
            rows = json.loads(found.group(1)) if found else []
        except json.JSONDecodeError:
            rows = []
        met = ORDERS_MATCH_HINT.get() is True
        reason = "stub judge: the order diagnostic " + ("matched" if met else "did not match")
        verdicts = [
            {
                "rubric_idx": row.get("rubric_idx"),
                "rubric": row.get("rubric"),
                "justification": reason,
                "meetExpectation": met,
            }
            for row in rows
            if isinstance(row, dict)
        ]
        text = "```json\n" + json.dumps(verdicts, ensure_ascii=False, indent=2) + "\n```"
        return AssistantTurn(content=text, finish_reason="stop")

    def describe(self) -> JsonObject:
        return {"name": self.name, "kind": type(self).__name__, "stub": True}
