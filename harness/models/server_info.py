"""What an OpenAI-compatible server says about itself, asked once before a run.

``GET {api_base}/models`` lists the models a server serves (OpenAI, vLLM,
SGLang, llama.cpp, Ollama all answer it) and, depending on the server, each
one's ``root`` (the weights' path or hub id) and ``created``; llama.cpp's own
server also answers ``GET /props`` (beside ``/v1``) with the model file's path,
its build and chat template. The run uses this to refuse, up front, a model
name the server does not serve, and to fingerprint the weights behind an
``--api-base`` (harness/models/fingerprint.py).

Synchronous (urllib): it runs once, before the event loop starts.
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
from dataclasses import dataclass

from harness.boundary.json_value import JsonObject, JsonValue
from harness.errors import ConfigError
from harness.models.probes import open_probe
from harness.models.redact import redact_url
from harness.models.urls import join_url, server_root

PROBE_TIMEOUT_S = 5.0
# /props fields that say which weights and template answer (llama.cpp).
PROPS_FIELDS = ("model_path", "build_info", "model_alias")


@dataclass
class ServerInfo:
    """One server's answers; None where it did not answer that question."""

    api_base: str
    reachable: bool
    models: list[JsonObject] | None = None  # /v1/models entries
    props: JsonObject | None = None  # llama.cpp /props
    problem: str | None = None  # why it did not answer (when it did not)

    def model_ids(self) -> list[str] | None:
        if self.models is None:
            return None
        return [str(entry.get("id")) for entry in self.models]


def _get_json(url: str, api_key: str | None, timeout: float) -> tuple[str | None, JsonValue]:
    """(why it did not answer, or None when it did; parsed JSON or None)."""
    headers = {"Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    try:
        with open_probe(url, timeout=timeout, headers=headers) as response:
            body = response.read(4 * 1024 * 1024)
    except urllib.error.HTTPError:
        return None, None  # it answered, just not this question
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return _no_answer(exc, timeout), None
    try:
        parsed: JsonValue = json.loads(body)
        return None, parsed
    except (ValueError, RecursionError):
        return None, None


def _no_answer(exc: BaseException, timeout: float) -> str:
    """Why a request got no answer, in a few words."""
    reason = getattr(exc, "reason", exc)
    if isinstance(reason, TimeoutError):  # socket.timeout is TimeoutError
        return f"no answer within {timeout:g} s"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    return f"{type(reason).__name__}: {reason}"[:200]


def probe_server(
    api_base: str, api_key: str | None = None, timeout: float = PROBE_TIMEOUT_S
) -> ServerInfo:
    """Ask ``api_base`` for its models (and llama.cpp's /props); never raises."""
    base = api_base.rstrip("/")
    problem, listing = _get_json(join_url(base, "models"), api_key, timeout)
    info = ServerInfo(api_base=base, reachable=problem is None, problem=problem)
    if problem is not None:
        return info
    entries = listing.get("data") if isinstance(listing, dict) else None
    if isinstance(entries, list):
        info.models = [entry for entry in entries if isinstance(entry, dict)]
    _, props = _get_json(join_url(server_root(base), "props"), api_key, timeout)
    if isinstance(props, dict):
        info.props = props
    return info


def unchecked_line(served: str, info: ServerInfo) -> str | None:
    """One line when the server did not answer the question that checks the
    model name in time (the run goes on without the check), else None. A
    server that cannot be reached at all (nothing listening, a name that does
    not resolve) is said by the preflight, or by the run's first error, instead."""
    if info.reachable or not (info.problem or "").startswith("no answer within"):
        return None
    return (
        f"the server at {redact_url(info.api_base)} did not answer GET /models "
        f"({info.problem or 'no answer'}): '{served}' is not checked to be what it serves"
    )


def check_model_served(served: str, info: ServerInfo) -> None:
    """ConfigError (one line) when the server lists its models and ``served`` is not one."""
    ids = info.model_ids()
    if not ids or served in ids:
        return
    shown = ", ".join(sorted(ids)[:5]) + (" ..." if len(ids) > 5 else "")
    raise ConfigError(
        f"the server at {redact_url(info.api_base)} does not serve '{served}' (it serves: {shown})"
    )


def self_description(info: ServerInfo, served: str, now: float) -> JsonObject:
    """What the server says about the weights behind ``served``, for the fingerprint.

    ``created`` is kept only when it is a property of the model: vLLM and SGLang
    answer with the time of the request, which would make every run look like
    new weights; a value within a minute of ``now`` is taken to be that.
    """
    described: JsonObject = {"reachable": info.reachable}
    if info.models is not None:
        described["ids"] = [*sorted(info.model_ids() or [])]
        for entry in info.models:
            if str(entry.get("id")) != served:
                continue
            if entry.get("root") is not None:
                described["root"] = str(entry["root"])
            created = entry.get("created")
            if isinstance(created, (int, float)) and abs(now - float(created)) > 60:
                described["created"] = int(created)
    if info.props is not None:
        props: JsonObject = {key: info.props[key] for key in PROPS_FIELDS if key in info.props}
        template = info.props.get("chat_template")
        if isinstance(template, str):
            props["chat_template_sha256"] = hashlib.sha256(template.encode("utf-8")).hexdigest()
        described["props"] = props
    return described


@dataclass(frozen=True)
class ContextWindow:
    """The longest request (prompt and reply, in tokens) a server takes, and
    where that was read (shown to the user)."""

    tokens: int
    source: str


def _positive_int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def context_window(info: ServerInfo, served: str) -> ContextWindow | None:
    """The context window the server reports for ``served``: vLLM and SGLang give
    ``max_model_len`` in its /v1/models entry, llama.cpp's server ``n_ctx`` (per
    slot) in /props. None when it says nothing about it."""
    for entry in info.models or []:
        if str(entry.get("id")) == served:
            tokens = _positive_int(entry.get("max_model_len"))
            if tokens is not None:
                return ContextWindow(tokens, "max_model_len in its /v1/models")
    props = info.props or {}
    settings = props.get("default_generation_settings")
    for where, value in (
        (
            "default_generation_settings.n_ctx",
            (settings or {}).get("n_ctx") if isinstance(settings, dict) else None,
        ),
        ("n_ctx", props.get("n_ctx")),
    ):
        tokens = _positive_int(value)
        if tokens is not None:
            return ContextWindow(tokens, f"{where} in its /props")
    return None


# The context-window flags of the servers the harness starts (llama-cpp-python,
# llama.cpp's own server, vLLM, SGLang).
CONTEXT_FLAGS = ("--n_ctx", "--ctx-size", "-c", "--max-model-len", "--context-length")


def context_window_of_arguments(arguments: list[str]) -> ContextWindow | None:
    """The context window a server is started with, from its command line (the
    last such flag wins, as in the servers' own parsers); None when none is given
    or it is 0 (llama-cpp-python: the model's own)."""
    found: ContextWindow | None = None
    for index, argument in enumerate(arguments):
        flag, sep, value = argument.partition("=")
        if flag not in CONTEXT_FLAGS:
            continue
        if not sep:
            value = arguments[index + 1] if index + 1 < len(arguments) else ""
        try:
            tokens = int(value)
        except ValueError:
            continue
        found = (
            ContextWindow(tokens, f"{flag} {tokens} in its start command") if tokens > 0 else None
        )
    return found
