"""VitaBench's sliding-window rubric judge.

The task's rubrics start unmet. The stored conversation (greeting and tool
messages included) is cut into windows of 10 messages overlapping by 2; the judge
model sees one window at a time, with the current rubric states, and returns the
updated states. The episode passes (reward 1) only when every rubric ends met;
the fraction of met rubrics is the partial score.

A judge reply that cannot be read as a JSON list is asked for again (up to
``MAX_JUDGE_ATTEMPTS`` calls per window); if every attempt fails, the window
leaves the states as they were. The benchmark's code means to do the same, but
with current ``json_repair`` versions it crashes the episode instead and, after
repeated failures, drops it from the results.
"""

from __future__ import annotations

import json
import re
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from harness.models.base import ModelClient
from harness.types import AssistantTurn, Message, SamplingParams, Usage, parse_arguments

from .data import VitaTask
from .prompts import JUDGE_INPUT, judge_system_prompt, time_with_weekday

WINDOW_SIZE = 10
WINDOW_OVERLAP = 2
MAX_JUDGE_ATTEMPTS = 3
# The benchmark calls the judge at temperature 0, without tools.
JUDGE_PARAMS = SamplingParams(temperature=0.0)
NOT_EVALUATED = "Not evaluated yet"
NO_JUSTIFICATION = "No justification provided"


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


def render_call(call: dict[str, Any]) -> str:
    """``name(key='value', n=2)``: arguments as Python literals."""
    function = call.get("function") or {}
    name = str(function.get("name") or "")
    raw = function.get("arguments")
    if isinstance(raw, dict):
        arguments: dict[str, Any] | None = raw
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
    justification: Any = NOT_EVALUATED
    meet_expectation: Any = False  # as the judge wrote it; read as a boolean at the end


_TRUE_WORDS = {"true", "t", "yes", "y", "on", "1"}
_FALSE_WORDS = {"false", "f", "no", "n", "off", "0"}


def as_boolean(value: Any) -> bool | None:
    """Lenient boolean reading (as pydantic does); None when it is not a boolean."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
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


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def parse_judge_reply(text: str | None) -> list[Any] | None:
    """The JSON list in a judge reply (fenced or bare), or None if there is none."""
    if not text:
        return None
    candidates = [match.group(1) for match in _FENCE.finditer(text)]
    candidates.append(text)
    first, last = text.find("["), text.rfind("]")
    if 0 <= first < last:
        candidates.append(text[first : last + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate.strip())
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, list):
            return value
    return None


def apply_judgement(states: list[RubricState], elements: list[Any]) -> None:
    """Update the states named by ``rubric_idx``; unknown keys and rubrics that are
    not mentioned are left alone."""
    by_key = {rubric_key(index): state for index, state in enumerate(states)}
    for element in elements:
        if not isinstance(element, dict):
            continue
        state = by_key.get(str(element.get("rubric_idx")))
        if state is None:
            continue
        state.justification = element.get("justification") or NO_JUSTIFICATION
        if "meetExpectation" in element and as_boolean(element["meetExpectation"]) is not None:
            state.meet_expectation = element["meetExpectation"]


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
    rubrics: list[dict[str, Any]]
    windows: list[WindowRecord]
    parse_failures: int
    usage: Usage

    def details(self) -> dict[str, Any]:
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
    orders_match: bool | None = None,
) -> Judgement:
    """Run the sliding-window judge over a stored conversation."""
    states = [RubricState(rubric=text) for text in task.rubrics]
    if not states:  # nothing to check: the benchmark gives full reward
        return Judgement(1.0, None, [], [], 0, Usage())
    bounds = window_bounds(len(messages))
    records: list[WindowRecord] = []
    usage = Usage()
    failures = 0
    token = ORDERS_MATCH_HINT.set(orders_match)
    try:
        for number, (start, end) in enumerate(bounds, start=1):
            system = judge_system_prompt(
                env_info(task), task.instructions, number, len(bounds), task.language
            )
            prompt = JUDGE_INPUT.format(
                lines="\n".join(window_lines(messages, start, end)), states=states_json(states)
            )
            record = WindowRecord(window=number, start=start, end=end, prompt=prompt)
            records.append(record)
            judge_input = [
                {"role": "system", "content": system},
                {"role": "user", "content": prompt},
            ]
            for _ in range(MAX_JUDGE_ATTEMPTS):
                reply: AssistantTurn = await client.complete(judge_input, [], JUDGE_PARAMS)
                usage.add(reply.usage)
                record.replies.append(reply.content or "")
                elements = parse_judge_reply(reply.content)
                if elements is not None:
                    apply_judgement(states, elements)
                    record.parsed = True
                    break
                failures += 1
    finally:
        ORDERS_MATCH_HINT.reset(token)
    met = [as_boolean(state.meet_expectation) is True for state in states]
    rubrics = [
        {"nl_rubric": s.rubric, "met": m, "justification": s.justification}
        for s, m in zip(states, met, strict=True)
    ]
    reward = 1.0 if all(met) else 0.0
    return Judgement(reward, sum(met) / len(met), rubrics, records, failures, usage)


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

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": type(self).__name__, "stub": True}
