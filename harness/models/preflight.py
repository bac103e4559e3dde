"""A few small requests before a run, so that a server that refuses what the run
needs says so in one line instead of as an infrastructure error per sample.

The requests are in the run's own wire format (openai_wire.chat_request): the
tools offered with the run's ``tool_choice``, and a history holding what every
benchmark sends back: an assistant turn with two parallel tool calls (content
"") and their two tool results. A server without a tool-call parser, a chat
template that cannot express parallel calls, or a server that rejects the
message shapes refuses it with a 4xx (or llama-cpp-python's 500 on request
validation); the run then stops before it starts, naming what was refused.
Beside it go the tools with a plain question, and (unless ``tool_choice`` is
"omit") the same after an empty system message: which part was refused, and
where the server shows the tools. All are sent at once, and each asks for one token,
so the preflight costs one round trip and a few short prompts' prefill.

A preflight that times out says nothing about refusals and lets the run go on
(the run's own retries deal with a slow server). A connection refused is
different: nothing listens there, and retrying every sample against it would
only turn a typo in ``--api-base`` into minutes of backoff and a table of
infrastructure errors, so the findings say so (``unreachable``) and the run
stops when no endpoint answers.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from harness.errors import ConfigError
from harness.models.openai_wire import chat_request
from harness.models.probes import open_probe
from harness.models.redact import redact_url
from harness.models.urls import join_url
from harness.types import Message, SamplingParams, ToolSchema

PING_TOOL: ToolSchema = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The current time in a city.",
        "parameters": {
            "type": "object",
            # Bounded: a server whose argument grammar ignores max_tokens
            # (models/argument_bounds.py) would otherwise be free to write one
            # city name until its window is full.
            "properties": {"city": {"type": "string", "maxLength": 24}},
            "required": ["city"],
        },
    },
}
_CALLS = [
    {"id": "call_1", "type": "function", "function": {"name": "get_time", "arguments": '{"city": "Paris"}'}},
    {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": '{"city": "Oslo"}'}},
]  # fmt: skip
TOOLS_ONLY = [{"role": "user", "content": "What time is it in Paris?"}]
PARALLEL_HISTORY: list[Message] = [
    {"role": "user", "content": "What time is it in Paris and in Oslo?"},
    {"role": "assistant", "content": "", "tool_calls": _CALLS},
    {"role": "tool", "tool_call_id": "call_1", "content": "10:00"},
    {"role": "tool", "tool_call_id": "call_2", "content": "10:00"},
    {"role": "user", "content": "And in Rome?"},
]


@dataclass
class Refusal:
    status: int
    message: str


@dataclass
class Unreachable:
    """Nothing accepted the connection (connection refused)."""

    reason: str


@dataclass
class Accepted:
    """The server answered; its prompt-token count, when it gave one."""

    prompt_tokens: int | None = None


def _prompt_tokens(text: bytes) -> int | None:
    try:
        value = json.loads(text).get("usage", {}).get("prompt_tokens")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _post(url: str, body: dict, timeout: float) -> Refusal | Accepted | Unreachable | None:
    """A Refusal, or Accepted with the reply's prompt tokens; Unreachable when the
    connection was refused; None when the server did not answer in time or
    failed otherwise (a name that does not resolve may be the network's blip)."""
    try:
        with open_probe(
            join_url(url, "chat/completions"),
            timeout=timeout,
            data=json.dumps(body).encode("utf-8"),
            # Says what the request is (in server logs; the fake test server keeps it apart).
            headers={"Content-Type": "application/json", "X-Harness-Preflight": "1"},
            method="POST",
        ) as response:
            return Accepted(_prompt_tokens(response.read(1 << 20)))
    except urllib.error.HTTPError as exc:
        text = exc.read(4000).decode("utf-8", errors="replace")
        try:
            error = json.loads(text).get("error")
            text = str(error.get("message") if isinstance(error, dict) else error or text)
        except (ValueError, AttributeError):
            pass
        if exc.code in (400, 404, 405, 415, 422, 500, 501):
            return Refusal(exc.code, " ".join(text.split())[:300])
        return None  # rate limits, overload: not a refusal
    except (urllib.error.URLError, OSError, ValueError) as exc:
        if isinstance(getattr(exc, "reason", exc), ConnectionRefusedError):
            return Unreachable("connection refused")
        return None


# An empty system message adds a few tokens of its own (role markers); a server
# that writes the tools into it adds the whole tool list (PING_TOOL: ~40 tokens).
SYSTEM_MESSAGE_SHOWS_TOOLS_TOKENS = 15


@dataclass
class PreflightFindings:
    """What the run should adapt to (it stops, with a ConfigError, on a refusal)."""

    tools_need_system_message: bool = False
    unreachable: str | None = None  # why nothing answered (connection refused), else None
    unanswered: bool = False  # no answer within the preflight's time: nothing learnt


# The longest the preflight waits for its answers (or the run's --timeout, if
# shorter): a busy one-slot server may take much longer, and the run's own
# retries deal with that; the run is not held up before it starts.
PREFLIGHT_TIMEOUT_S = 15.0


def unanswered_line(url: str, timeout: float) -> str:
    return (
        f"the server at {redact_url(url)} did not answer the preflight request within "
        f"{min(timeout, PREFLIGHT_TIMEOUT_S):g} s (busy?): the run goes on unchecked"
    )


def missing_v1_hint(url: str, status: int) -> str | None:
    """Where a 404 for ``chat/completions`` most likely comes from: an --api-base
    without the ``/v1`` under which OpenAI-compatible servers answer."""
    path = urllib.parse.urlsplit(url).path.rstrip("/")
    if status != 404 or path.endswith("/v1"):
        return None
    suggested = join_url(url, "v1")
    return (
        f"the server at {redact_url(url)} has no chat/completions there (HTTP 404): "
        f"OpenAI-compatible servers answer under /v1, try --api-base {redact_url(suggested)}"
    )


def preflight(url: str, model: str, tool_choice: str, timeout: float) -> PreflightFindings:
    """ConfigError (one line) when the server at ``url`` refuses a request with
    tools and parallel tool calls in its history; otherwise what was found out
    about where the server shows the tools."""
    params = SamplingParams(temperature=0.0, max_tokens=1)
    with_system: list[Message] = [{"role": "system", "content": ""}, *TOOLS_ONLY]
    bodies = {
        "parallel": chat_request(model, PARALLEL_HISTORY, [PING_TOOL], params, tool_choice),
        # Tools alone: which part was refused, if one was; and, beside the framed
        # one, whether the tools reach the model only inside a system message.
        "tools": chat_request(model, TOOLS_ONLY, [PING_TOOL], params, tool_choice),
    }
    if tool_choice != "omit":  # with the server's own default, where it shows them is not asked
        bodies["framed"] = chat_request(model, with_system, [PING_TOOL], params, tool_choice)
    timeout = min(timeout, PREFLIGHT_TIMEOUT_S)
    answers = _post_all(url, bodies, timeout)
    refusal = answers["parallel"]
    if isinstance(refusal, Unreachable):
        return PreflightFindings(unreachable=refusal.reason)
    if refusal is None:  # no answer in time: nothing learnt
        return PreflightFindings(unanswered=True)
    if isinstance(refusal, Accepted):
        return _findings(answers["tools"], answers.get("framed"))
    plain = answers["tools"] if isinstance(answers["tools"], Refusal) else None
    where = redact_url(url)
    hint = missing_v1_hint(url, refusal.status)
    if hint is not None:
        raise ConfigError(hint)
    if plain is not None and tool_choice not in ("auto", "omit"):
        # The server may take tools but not this tool_choice (llama-cpp-python: "required").
        auto = chat_request(model, TOOLS_ONLY, [PING_TOOL], params, "auto")
        if not isinstance(_post(url, auto, timeout), Refusal):
            raise ConfigError(
                f"the server at {where} refuses --tool-choice {tool_choice} (HTTP "
                f"{plain.status}: {plain.message or 'no message'}); use --tool-choice auto"
            )
    if plain is None:
        raise ConfigError(
            f"the server at {where} accepts tools but refuses a history with parallel tool "
            f"calls (HTTP {refusal.status}: {refusal.message or 'no message'}); its chat "
            "format cannot "
            "express them: use another tool-call parser or chat template, or --prompt-mode"
        )
    raise ConfigError(
        f"the server at {where} refuses requests with tools (HTTP {plain.status}: "
        f"{plain.message or 'no message'}); start it with a tool-call parser (vLLM: --enable-auto-tool-choice "
        "--tool-call-parser hermes), or use --prompt-mode, or --tool-choice omit"
    )


def _post_all(
    url: str, bodies: dict[str, dict], timeout: float
) -> dict[str, Refusal | Accepted | Unreachable | None]:
    """``_post`` of every body at once: the preflight costs one round trip, not
    one per request (a server with one slot still answers them one by one)."""
    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        futures = {name: pool.submit(_post, url, body, timeout) for name, body in bodies.items()}
        return {name: future.result() for name, future in futures.items()}


def _findings(
    bare: Refusal | Accepted | Unreachable | None, framed: Refusal | Accepted | Unreachable | None
) -> PreflightFindings:
    """Whether the tools reach the model only inside a system message: the same
    question costs far more prompt tokens with an empty system message first
    (``framed`` None: not asked)."""
    if not (isinstance(bare, Accepted) and isinstance(framed, Accepted)):
        return PreflightFindings()
    if bare.prompt_tokens is None or framed.prompt_tokens is None:
        return PreflightFindings()
    extra = framed.prompt_tokens - bare.prompt_tokens
    return PreflightFindings(tools_need_system_message=extra >= SYSTEM_MESSAGE_SHOWS_TOOLS_TOKENS)


def check_reachable(findings: dict[str, PreflightFindings]) -> list[str]:
    """ConfigError (one line) when no endpoint (url -> its findings) took the
    connection; else one line per endpoint that did not, for the run to print
    (a replica pool goes on without a dead replica and retries it later)."""
    dead = {url: f.unreachable for url, f in findings.items() if f.unreachable}
    if findings and len(dead) == len(findings):
        where = ", ".join(redact_url(url) for url in dead)
        reason = next(iter(dead.values()))
        raise ConfigError(
            f"nothing answers at {where} ({reason}): start the server first, or check "
            "--api-base (--no-preflight runs anyway)"
        )
    return [
        f"{redact_url(url)}: {reason}; the run goes on without it" for url, reason in dead.items()
    ]
